package model

import (
	"fmt"
	"sort"
	"strings"
)

// Workloads that other checkers' command lines take as a "model" (elle-cli's
// --model list-append / rw-register): in txray they name a checker, and the
// workload is read from the history itself.
var workloadNames = map[string]string{
	"list-append": "list-append", "append": "list-append",
	"rw-register": "rw-register", "register": "rw-register", "wr-register": "rw-register",
	"set": "", "bank": "", "counter": "", "long-fork": "",
}

// ErrUnknown is the error Resolve returns for a name that is neither a
// model nor a DBMS profile: the message lists the likely fix first (closest
// names, a --checker hint for elle-cli's workload names), then where to
// find every name.
type ErrUnknown struct {
	Name        string
	Suggestions []string
	Hint        string
}

func (e *ErrUnknown) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown consistency model or DBMS profile %q", e.Name)
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	if len(e.Suggestions) > 0 {
		b.WriteString("; did you mean " + strings.Join(e.Suggestions, " or ") + "?")
	}
	b.WriteString(" (models: " + strings.Join(Names(), ", ") +
		"; aliases such as si, rc, rr, ser, pl-2; profiles DB:LEVEL such as postgres:repeatable-read, mysql:serializable; docs/models.md lists them all)")
	return b.String()
}

// Resolve returns the canonical name of a model or a DBMS profile
// ("db:level", LookupProfile), or an *ErrUnknown with the closest known
// names and hints.
func Resolve(name string) (string, error) {
	if p, ok := LookupProfile(name); ok {
		return p.Name, nil
	}
	if m, err := Canonical(name); err == nil {
		return m, nil
	}
	return "", &ErrUnknown{Name: name, Suggestions: Suggest(name, 3), Hint: hint(name)}
}

func hint(name string) string {
	n := normalize(name)
	if c, ok := workloadNames[n]; ok {
		if c != "" {
			return fmt.Sprintf("%q is a workload: elle-cli's --model %s is txray's --checker %s (txray reads the workload from the history; --model names the isolation level to check, e.g. serializable)", name, n, c)
		}
		return fmt.Sprintf("%q is an elle-cli workload txray does not check; --model names the isolation level to check, e.g. serializable", name)
	}
	if db, _, ok := strings.Cut(n, ":"); ok {
		if _, known := dbAliases[db]; !known && db != "tidb-optimistic" {
			return fmt.Sprintf("no DBMS profiles for %q (databases: %s)", db, strings.Join(profileDBs(), ", "))
		}
		return fmt.Sprintf("levels with a profile for %s: %s", dbAliases[db], strings.Join(profileLevels(dbAliases[db]), ", "))
	}
	return ""
}

func profileDBs() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range profiles {
		if !seen[p.DB] {
			seen[p.DB] = true
			out = append(out, p.DB)
		}
	}
	sort.Strings(out)
	return out
}

func profileLevels(db string) []string {
	var out []string
	for _, p := range profiles {
		if p.DB == db {
			out = append(out, p.Level)
		}
	}
	sort.Strings(out)
	return out
}

// Suggest returns up to n known names (canonical models, their aliases, and
// profile names) closest to name by edit distance, closest first; only names
// within a distance of about a third of their length are offered.
func Suggest(name string, n int) []string {
	q := normalize(name)
	type cand struct {
		s string
		d int
	}
	var cs []cand
	seen := map[string]bool{}
	consider := func(s, show string) {
		if seen[show] {
			return
		}
		d := editDistance(q, s)
		limit := max(1, (len(s)+2)/3)
		if d <= limit || (len(q) >= 3 && strings.HasPrefix(s, q)) {
			seen[show] = true
			cs = append(cs, cand{show, d})
		}
	}
	for a, m := range canon {
		if a == normalize(m) {
			consider(a, m)
		} else {
			consider(a, a+" ("+m+")")
		}
	}
	for _, p := range profiles {
		consider(p.Name, p.Name)
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].s < cs[j].s
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].s)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// SuggestAmong returns up to n of names closest to name by edit distance
// (within about a third of their length), closest first.
func SuggestAmong(name string, names []string, n int) []string {
	q := normalize(name)
	type cand struct {
		s string
		d int
	}
	var cs []cand
	for _, s := range names {
		d := editDistance(q, normalize(s))
		if d <= max(1, (len(s)+2)/3) {
			cs = append(cs, cand{s, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].s)
	}
	return out
}
