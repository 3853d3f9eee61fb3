package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// MaxDrawn caps the anomalies drawn (graph + timeline) per input, and
// MaxListed the rows of an input's anomaly table; the rest are counted and
// left to report.json, so reports on huge histories stay usable.
var (
	MaxDrawn  = 50
	MaxListed = 1000
)

// WriteHTML writes dir/report.html, a self-contained page (inline CSS and
// SVG, no script, no network: a Content-Security-Policy forbids any fetch)
// with, per input: the history's statistics; the verdict of each checker and
// model and the models ruled out; a table of anomalies; and for each drawn
// anomaly its dependency cycle as an SVG graph (transactions as boxes with
// their ops, edges labelled with relation and key) next to the explanation
// and each step's evidence, plus an SVG timeline of the transactions
// involved (client intervals, else database timestamps). It also writes
// dir/report.json: a JSON array of JSON(in) for every input, complete where
// the page is capped. It returns the path of report.html.
func WriteHTML(dir string, ins []*Input) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := writeFileAtomic(filepath.Join(dir, "report.json"), func(w *bufio.Writer) error {
		return writeJSONArray(w, ins)
	}); err != nil {
		return "", err
	}
	page := buildPage(ins)
	path := filepath.Join(dir, "report.html")
	var buf strings.Builder
	if err := pageTemplate.Execute(&buf, page); err != nil {
		return "", err
	}
	// html/template escapes markup but passes control characters and
	// invalid UTF-8 through; neither belongs in a page (nor in XML).
	if err := writeFileAtomic(path, func(w *bufio.Writer) error {
		_, err := w.WriteString(clean(buf.String()))
		return err
	}); err != nil {
		return "", err
	}
	return path, nil
}

// writeJSONArray writes the inputs' JSON objects as an array, one per line.
func writeJSONArray(w *bufio.Writer, ins []*Input) error {
	w.WriteString("[\n")
	for i, in := range ins {
		if i > 0 {
			w.WriteString(",\n")
		}
		b, err := marshalNoEscape(JSON(in))
		if err != nil {
			return err
		}
		w.Write(b)
	}
	_, err := w.WriteString("\n]\n")
	return err
}

func marshalNoEscape(v any) ([]byte, error) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(sb.String(), "\n")), nil
}

// writeFileAtomic writes path via a temporary file in the same directory, so
// a reader never sees half a report.
func writeFileAtomic(path string, fill func(*bufio.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriterSize(f, 1<<16)
	if err := fill(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// --- page model -------------------------------------------------------

type page struct {
	Inputs []*inputView
	Multi  bool
	Defs   []defView
}

type inputView struct {
	N             int
	File          string
	Error         string
	Verdict       string // VALID | INVALID | UNKNOWN
	VClass        string
	Format        string
	Header        [][2]string
	Stats         *history.Stats
	Evidence      string
	Ignored       [][2]string
	Notes         []string
	Elapsed       string
	Results       []resultView
	NotApplicable [][2]string
	Rows          []anomalyRow
	MoreRows      int
	Drawn         []*anomalyView
	Undrawn       int
	Reason        string
	ModelWhy      string
	Total         int // anomalies found by the primary result, listed or not
}

type resultView struct {
	N                   int
	Checker, Model      string
	Verdict, VClass     string
	Reason              string
	Types, Not, AlsoNot string
	Found               []foundView
	Truncated           string
	Warnings            []string
}

// foundView is one anomaly type's total in the verdicts table.
type foundView struct {
	Count   string // "132" or "at least 132"
	Type    string
	DefID   string
	Plain   string // plain-language name, "" if none
	Def     string // the definition (model.Describe)
	Allowed bool
}

type anomalyRow struct {
	ID      string // anchor of the drawn anomaly, "" if not drawn
	N       int
	Result  int
	Checker string
	Type    string
	Plain   string
	Allowed bool
	Txns    string
	Key     string
}

type stepView struct {
	N             int
	From, To, Rel string
	Key           string
	Class         string
	Why           string
}

type anomalyView struct {
	ID           string
	N            int
	Type         string
	Plain, Def   string
	DefID        string
	Allowed      bool
	Checker      string
	Model        string
	Explanation  string
	Steps        []stepView
	Txns         []string
	Graph        *svgGraph
	GraphCaption string
	Timeline     *svgTimeline
}

func verdictView(v check.Verdict) (string, string) {
	return verdictWord(v), "v-" + v.String()
}

func buildPage(ins []*Input) *page {
	p := &page{Multi: len(ins) > 1}
	types := map[string]bool{}
	for i, in := range ins {
		p.Inputs = append(p.Inputs, buildInputView(i+1, in))
		for _, r := range in.Results {
			if r != nil {
				for ty := range resultCounts(r) {
					types[ty] = true
				}
			}
		}
	}
	for _, ty := range sortedKeysBool(types) {
		p.Defs = append(p.Defs, defView{ID: defID(ty), Type: ty, Plain: PlainName(ty), Def: model.Describe(ty)})
	}
	return p
}

func buildInputView(n int, in *Input) *inputView {
	v := &inputView{N: n, File: in.File, Error: in.Error, ModelWhy: in.ModelWhy}
	if v.File == "-" {
		v.File = "<stdin>"
	}
	if in.Elapsed > 0 {
		v.Elapsed = roundDuration(in.Elapsed).String()
	}
	h := in.History
	if h != nil {
		v.Format = h.Header.Format
		for _, kv := range [][2]string{{"database", h.Header.DB}, {"database version", h.Header.Version}, {"level", h.Header.Level}, {"workload", h.Header.Workload}, {"clock", h.Header.Clock}} {
			if kv[1] != "" {
				v.Header = append(v.Header, kv)
			}
		}
		var s history.Stats
		if h.Keys != nil && h.Sessions != nil {
			s = h.Stats()
		} else {
			s.Txns = len(h.Txns)
		}
		v.Stats = &s
		v.Evidence = strings.Join(evidenceNames(h.Evidence), ", ")
		if v.Evidence == "" {
			v.Evidence = "none beyond the transactions"
		}
		for _, r := range sortedKeysInt(h.Ignored) {
			v.Ignored = append(v.Ignored, [2]string{strconv.Itoa(h.Ignored[r]), r})
		}
		v.Notes = h.Notes
	}
	for _, name := range sortedKeysStr(in.NotApplicable) {
		v.NotApplicable = append(v.NotApplicable, [2]string{name, in.NotApplicable[name]})
	}
	v.Verdict, v.VClass = verdictView(check.Unknown)
	if len(in.Results) == 0 || in.Results[0] == nil {
		v.Reason = noResultReason(in)
	}
	first := true
	for ri, r := range in.Results {
		if r == nil {
			continue
		}
		rv := resultView{N: ri + 1, Checker: r.Checker, Model: r.Model, Reason: r.Reason,
			Types: strings.Join(r.AnomalyTypes, ", "), Not: strings.Join(r.Not, ", "), AlsoNot: strings.Join(r.AlsoNot, ", "),
			Warnings: r.Warnings}
		rv.Verdict, rv.VClass = verdictView(r.Verdict)
		if first {
			v.Verdict, v.VClass = rv.Verdict, rv.VClass
			first = false
			for _, c := range resultCounts(r) {
				v.Total += c
			}
		}
		var tr []string
		for _, ty := range sortedKeysInt(r.Truncated) {
			if r.Truncated[ty] > 0 {
				tr = append(tr, fmt.Sprintf("%d more %s", r.Truncated[ty], ty))
			}
		}
		rv.Truncated = strings.Join(tr, ", ")
		rv.Found = foundViews(r)
		v.Results = append(v.Results, rv)
		for ai := range r.Anomalies {
			a := &r.Anomalies[ai]
			row := anomalyRow{N: ai + 1, Result: ri + 1, Checker: r.Checker, Type: a.Type, Plain: PlainName(a.Type), Allowed: a.Allowed, Key: anomalyKeys(a)}
			var names []string
			for _, t := range a.Txns {
				names = append(names, txnName(h, t))
			}
			row.Txns = strings.Join(names, ", ")
			if len(v.Drawn) < MaxDrawn {
				row.ID = fmt.Sprintf("in%d-r%d-a%d", n, ri+1, ai+1)
				v.Drawn = append(v.Drawn, buildAnomalyView(row.ID, h, r, ai))
			} else {
				v.Undrawn++
			}
			if len(v.Rows) < MaxListed {
				v.Rows = append(v.Rows, row)
			} else {
				v.MoreRows++
			}
		}
	}
	return v
}

func buildAnomalyView(id string, h *history.History, r *check.Result, i int) *anomalyView {
	a := &r.Anomalies[i]
	av := &anomalyView{ID: id, N: i + 1, Type: a.Type, Plain: PlainName(a.Type), Def: model.Describe(a.Type), DefID: defID(a.Type),
		Allowed: a.Allowed, Checker: r.Checker, Model: r.Model, Explanation: a.Explanation}
	// The argument is given once: the explanation, plus only the steps
	// and transactions it does not already spell out (checkers' own
	// explanations usually include both).
	stepsSaid := a.Explanation != ""
	for _, s := range a.Cycle {
		if s.Why == "" || !strings.Contains(a.Explanation, s.Why) {
			stepsSaid = false
		}
	}
	if !stepsSaid {
		for j, s := range a.Cycle {
			av.Steps = append(av.Steps, stepView{N: j + 1, From: txnName(h, s.From), To: txnName(h, s.To),
				Rel: s.Rel, Key: s.Key, Class: relClass(s.Rel), Why: s.Why})
		}
	}
	for _, t := range involved(a) {
		s, ok := a.Ops[t]
		if !ok {
			s, ok = txnString(h, t)
		}
		if !ok {
			s = txnName(h, t) + " (not in the history)"
		}
		if ok && a.Explanation != "" && strings.Contains(a.Explanation, s) {
			continue
		}
		av.Txns = append(av.Txns, s)
	}
	av.Graph = layoutGraph(h, a)
	av.GraphCaption = "Dependency graph (edge: relation key: versions); hover for evidence."
	if len(a.Cycle) == 0 {
		av.GraphCaption = "Transactions involved (ops on the key in blue). Not a cycle: the text explains."
	}
	av.Timeline = layoutTimelineFor(h, a, r.Checker)
	return av
}

// anomalyKeys names the keys an anomaly is about: its Key, else the distinct
// keys of its steps in order.
func anomalyKeys(a *check.Anomaly) string {
	if a.Key != "" {
		return a.Key
	}
	var keys []string
	seen := map[string]bool{}
	for _, s := range a.Cycle {
		if s.Key != "" && !seen[s.Key] {
			seen[s.Key] = true
			keys = append(keys, s.Key)
		}
	}
	return strings.Join(keys, ", ")
}

func sortedKeysInt(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func sortedKeysBool(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func sortedKeysStr(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// foundViews lists a result's per-type totals (listed or not), prohibited
// types first.
func foundViews(r *check.Result) []foundView {
	counts := resultCounts(r)
	allowed := map[string]bool{}
	for i := range r.Anomalies {
		if r.Anomalies[i].Allowed {
			allowed[r.Anomalies[i].Type] = true
		}
	}
	var out []foundView
	for _, ok := range []bool{false, true} {
		for _, ty := range sortedKeysInt(counts) {
			if allowed[ty] != ok {
				continue
			}
			c := strconv.Itoa(counts[ty])
			if slices.Contains(r.CountsAtLeast, ty) {
				c = "at least " + c
			}
			out = append(out, foundView{Count: c, Type: ty, DefID: defID(ty), Plain: PlainName(ty), Def: model.Describe(ty), Allowed: ok})
		}
	}
	return out
}

// defView is one entry of the report's definitions section, which the
// anomaly names link to (the page stays self-contained).
type defView struct {
	ID, Type, Plain, Def string
}

func defID(ty string) string { return "def-" + ty }

// plainNames are the everyday names of the anomalies people know by one
// (Berenson et al. SIGMOD 1995; Adya 1999; Kleppmann, DDIA ch. 7).
var plainNames = map[string]string{
	"G0": "dirty write", "G1a": "aborted read (dirty read)", "G1b": "intermediate read (dirty read)",
	"G1c": "circular information flow", "G1": "dirty read",
	"G-single": "read skew", "G-single-item": "read skew",
	"G2-item": "write skew", "G2": "write skew with predicates (phantom)", "write-skew": "write skew",
	"G-nonadjacent": "non-adjacent anti-dependency cycle", "G-nonadjacent-item": "non-adjacent anti-dependency cycle",
	"lost-update": "lost update", "internal": "transaction did not see its own reads or writes",
	"future-read": "read from the future", "garbage-versions": "read a value nobody wrote",
	"incompatible-order": "two reads disagree on a key's order", "duplicate-elements": "duplicated list element",
	"dirty-update": "update built on an aborted write", "cyclic-versions": "contradictory version order",
	"G-SIa": "saw a write that began after its snapshot", "G-SIb": "missed effects", "G-cursor": "lost update through a cursor",
	"ext": "stale read (snapshot did not show the last committed write)", "noconflict": "concurrent writers both committed",
	"session": "session did not see its own earlier transaction", "realtime": "commit order contradicts real time",
	"fuw": "first-updater-wins violated", "me": "lock exclusion violated", "cr": "inconsistent snapshot read",
	"sc": "serialization certifier let a cycle commit",
}

// PlainName is the everyday name of an anomaly type ("read skew" for
// G-single-item, "write skew" for G2-item, "lost update"), with the
// -process / -realtime variants saying which order closes the cycle; ""
// when there is none.
func PlainName(ty string) string {
	base, suffix := ty, ""
	for _, v := range []struct{ s, say string }{{"-process", " (with session order)"}, {"-realtime", " (with real-time order)"}} {
		if b, ok := strings.CutSuffix(ty, v.s); ok {
			base, suffix = b, v.say
		}
	}
	if p, ok := plainNames[base]; ok {
		return p + suffix
	}
	return ""
}

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))
