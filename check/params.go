package check

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Param documents one checker-specific option (Options.Params, the
// command line's --param KEY=VALUE).
type Param struct {
	// Key is the option's name.
	Key string
	// Values describes the accepted values ("true|false", "null|0", "a
	// positive integer").
	Values string
	// Doc says what the option does, in a sentence.
	Doc string
}

var (
	paramMu sync.RWMutex
	params  = map[string][]Param{} // checker name -> its options
)

// RegisterParams declares the --param keys a checker reads; a checker
// package calls it from init, next to Register. `txray check --param`
// rejects a key no registered checker declares, and `txray check --help`
// and docs/models.md list them. Registering a checker's keys twice replaces
// the earlier list.
func RegisterParams(checker string, ps ...Param) {
	paramMu.Lock()
	defer paramMu.Unlock()
	params[checker] = append([]Param(nil), ps...)
}

// ParamsOf returns the keys checker declared, sorted by key.
func ParamsOf(checker string) []Param {
	paramMu.RLock()
	defer paramMu.RUnlock()
	out := append([]Param(nil), params[checker]...)
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// ParamsHelp renders every declared key per checker, one checker a line:
// "chronos: commit-order-serializes=true|false, gc=true|false, ...".
func ParamsHelp() string {
	paramMu.RLock()
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	paramMu.RUnlock()
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		ps := ParamsOf(n)
		if len(ps) == 0 {
			continue
		}
		b.WriteString("  " + n + ": ")
		for i, p := range ps {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.Key + "=" + p.Values)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ValidateParams returns an error naming every key of ps that no registered
// checker declares (RegisterParams), with the keys each checker accepts.
// A key declared by some checker is accepted even if the checker that ends
// up running does not read it: the --checker auto choice depends on the
// history.
func ValidateParams(ps map[string]string) error {
	paramMu.RLock()
	known := map[string]bool{}
	for _, l := range params {
		for _, p := range l {
			known[p.Key] = true
		}
	}
	paramMu.RUnlock()
	var bad []string
	for k := range ps {
		if !known[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("unknown --param key %s; the keys each checker reads are:\n%s", strings.Join(bad, ", "), strings.TrimRight(ParamsHelp(), "\n"))
}

// The options of the checkers in this repository's check/ subpackages that
// read Options.Params and do not declare them themselves (their packages
// read exactly these keys; see each package's doc for the semantics). A
// checker package that calls RegisterParams from its own init replaces its
// entry here (package check's init runs first).
func init() {
	boolean := "true|false"
	initial := Param{"initial-value", "null|0", "the value a key holds before any write: null (absent, the default) or 0 (TimeKiller, dbcop, PolySI and Cobra histories; TimeKiller's own examples need initial-value=0)"}
	RegisterParams("enne",
		Param{"serial-order", "commit|start", "the expected serialization order: commit-timestamp order (2PL-like) or start-timestamp order (timestamp ordering); default: the history's declared serial_order, else inferred"},
	)
	RegisterParams("rw-register",
		initial,
		Param{"wfr-keys", boolean, "writes follow reads: a transaction that read v of a key and then wrote v' orders v before v' (Elle's :wfr-keys?)"},
		Param{"sequential-keys", boolean, "each key is sequentially consistent: a session's accesses to a key order its versions (Elle's :sequential-keys?)"},
		Param{"linearizable-keys", boolean, "each key is linearizable: real-time order orders its versions (Elle's :linearizable-keys?)"},
		Param{"use-version-order", boolean, "false: ignore the history's recorded version order (version_order records) and infer every key's order (default true: a key's recorded order is used where it is consistent with the history)"},
		Param{"complete-versions", boolean, "false: do not complete partial version orders; a history whose valid verdict needs one is then unknown (default true: valid only with a witness order, docs/detection.md)"},
	)
	RegisterParams("chronos",
		initial,
		Param{"gc", boolean, "discard state no longer needed while replaying (default true)"},
		Param{"gc-every", "a positive integer", "transactions between two garbage collections (default 20000)"},
		Param{"commit-order-serializes", boolean, "for serializable: whether commit-timestamp order is a serialization order (default: decided from the history's evidence)"},
	)
	RegisterParams("leopard",
		Param{"initial", "unknown", "keys start with unknown values (traces of pre-loaded tables); otherwise read from the history header's extra \"initial\""},
	)
}
