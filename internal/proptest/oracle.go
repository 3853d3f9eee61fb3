package proptest

import (
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// Evidence classes a visibility predicate reports (Visibility.Classes).
// ClassCycle and ClassTimestamp accept any anomaly the judged model
// prohibits; the read classes require the named anomaly (or, for chronos,
// its axiom).
const (
	ClassG1a       = "G1a"                // a committed txn read an aborted txn's write
	ClassG1b       = "G1b"                // a committed txn read a non-final write of another txn
	ClassInternal  = "internal"           // a committed txn did not read its own last write
	ClassLostUpd   = "lost-update"        // two committed txns read one version of k and both wrote k
	ClassCycle     = "cycle"              // the observable dependency graph has a prohibited cycle
	ClassIncompat  = "incompatible-order" // two committed list reads of a key are not prefixes of one order
	ClassTimestamp = "timestamp"          // the recorded timestamps violate a Chronos axiom
)

// Visibility is the result of the visibility predicates on one history for
// one (checker, model): the evidence classes that show an anomaly the model
// prohibits. Empty means the fault is not visible to that checker.
type Visibility struct {
	Classes []string
	Why     string // first witness, for logs
}

// Visible evaluates the explicit visibility predicates (docs/detection.md)
// for checker judging model m on h. They look only at the evidence the
// checker uses, so a fault that fired but left no trace there is not
// visible:
//
//   - every checker: the read predicates G1a, G1b, internal (below), each
//     only if m prohibits that anomaly;
//   - list-append: additionally the lost-update pair, two committed reads
//     of a key that are not prefixes of one order (incompatibleOrder), and a
//     prohibited cycle in the observable dependency graph (observableCycle);
//   - rw-register: additionally the lost-update pair (its version orders
//     are only partly inferable, so cycles are not predicted);
//   - chronos: the read predicates, and a brute-force evaluation of the
//     timestamp axioms (tsViolation) unless a committed read returns a
//     write of an unknown-outcome transaction without timestamps, which no
//     replay can place (unplaceable).
func Visible(h *history.History, checker, m string) Visibility {
	var v Visibility
	add := func(class, why string) {
		v.Classes = append(v.Classes, class)
		if v.Why == "" {
			v.Why = why
		}
	}
	ix := indexWrites(h)
	if model.Prohibits(m, model.G1a) {
		if w := ix.readPredicate(h, g1a); w != "" {
			add(ClassG1a, w)
		}
	}
	if model.Prohibits(m, model.G1b) {
		if w := ix.readPredicate(h, g1b); w != "" {
			add(ClassG1b, w)
		}
	}
	if model.Prohibits(m, model.Internal) {
		if w := ix.internal(h); w != "" {
			add(ClassInternal, w)
		}
	}
	switch checker {
	case "list-append", "rw-register":
		if model.Prohibits(m, model.LostUpdate) {
			if w := ix.lostUpdatePair(h); w != "" {
				add(ClassLostUpd, w)
			}
		}
		if checker == "list-append" {
			if model.Prohibits(m, model.IncompatibleOrder) {
				if w := incompatibleOrder(h); w != "" {
					add(ClassIncompat, w)
				}
			}
			if w := observableCycle(h, ix, m); w != "" {
				add(ClassCycle, w)
			}
		}
	case "chronos":
		if ix.unplaceable(h) {
			break // Chronos cannot replay it: its verdict is unknown
		}
		if w := tsViolation(h, ix, m); w != "" {
			add(ClassTimestamp, w)
		}
	}
	return v
}

// writeRef locates a written value: the writer and whether it is the
// writer's last write to the key.
type writeRef struct {
	txn   int32
	final bool
}

type wkey struct{ k, v int32 }

type writeIndex struct {
	w map[wkey]writeRef
}

func committed(t *history.Txn) bool { return t.Status == history.Committed }

func indexWrites(h *history.History) *writeIndex {
	ix := &writeIndex{w: map[wkey]writeRef{}}
	for i := range h.Txns {
		t := &h.Txns[i]
		last := map[int32]int32{}
		for _, o := range t.Ops {
			if o.Kind == history.Write || o.Kind == history.Append {
				last[o.Key] = o.Value
			}
		}
		for _, o := range t.Ops {
			if o.Kind == history.Write || o.Kind == history.Append {
				ix.w[wkey{o.Key, o.Value}] = writeRef{t.Index, last[o.Key] == o.Value}
			}
		}
	}
	return ix
}

// unplaceable reports whether a committed transaction read (a register
// value or any list element) written by a transaction of unknown outcome
// that carries no commit timestamp: whether and when it committed is not
// in the evidence, so the timestamp axioms cannot be evaluated.
func (ix *writeIndex) unplaceable(h *history.History) bool {
	for i := range h.Txns {
		t := &h.Txns[i]
		if !committed(t) {
			continue
		}
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind != history.Read {
				continue
			}
			vals := t.ListOf(o)
			if !o.IsList {
				vals = []int32{o.Value}
			}
			for _, v := range vals {
				if w, ok := ix.w[wkey{o.Key, v}]; ok {
					if wt := &h.Txns[w.txn]; wt.Status == history.Unknown && !wt.CommitTS.Set {
						return true
					}
				}
			}
		}
	}
	return false
}

// readResult is what a read observed: the last element (lists) or the value
// (registers); ok is false for unknown results and for the initial state.
func readResult(t *history.Txn, o *history.Op) (int32, bool) {
	if o.IsList {
		l := t.ListOf(o)
		if o.ListUnknown || len(l) == 0 {
			return 0, false
		}
		return l[len(l)-1], true
	}
	if o.Value == history.NoValue {
		return 0, false
	}
	return o.Value, true
}

type readPred int

const (
	g1a readPred = iota
	g1b
)

// readPredicate: G1a — a committed transaction read (any element of a list,
// or the value of a register) written by a transaction recorded aborted;
// G1b — a committed transaction read as the value (the last element of a
// list) a write of another committed transaction that was not that
// transaction's last write to the key (Adya 1999 §4.1.2).
func (ix *writeIndex) readPredicate(h *history.History, p readPred) string {
	for i := range h.Txns {
		t := &h.Txns[i]
		if !committed(t) {
			continue
		}
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind != history.Read {
				continue
			}
			var vals []int32
			if p == g1a && o.IsList && !o.ListUnknown {
				vals = t.ListOf(o)
			} else if v, ok := readResult(t, o); ok {
				vals = []int32{v}
			}
			for _, v := range vals {
				w, ok := ix.w[wkey{o.Key, v}]
				if !ok || w.txn == t.Index {
					continue
				}
				wt := &h.Txns[w.txn]
				if p == g1a && wt.Status == history.Aborted {
					return h.TxnName(t.Index) + " read " + h.ValueName(v) + " written by aborted " + h.TxnName(w.txn)
				}
				if p == g1b && committed(wt) && !w.final {
					return h.TxnName(t.Index) + " read non-final " + h.ValueName(v) + " of " + h.TxnName(w.txn)
				}
			}
		}
	}
	return ""
}

// internal: a committed transaction's read of a key disagrees with what
// its own earlier ops on the key determine (Elle's internal consistency,
// Adya's intra-transaction reads): after a read of x, a later read of x
// returns the same value (plus, for lists, exactly the transaction's own
// appends since); after its own write, a read returns that write; after
// its own appends with no earlier read, a list read ends with them.
func (ix *writeIndex) internal(h *history.History) string {
	type st struct {
		full, hasVal bool
		list, suffix []int32
		val          int32
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		if !committed(t) {
			continue
		}
		m := map[int32]*st{}
		for j := range t.Ops {
			o := &t.Ops[j]
			s := m[o.Key]
			if s == nil {
				s = &st{}
				m[o.Key] = s
			}
			bad := false
			switch o.Kind {
			case history.Write:
				s.val, s.hasVal = o.Value, true
			case history.Append:
				if s.full {
					s.list = append(s.list[:len(s.list):len(s.list)], o.Value)
				} else {
					s.suffix = append(s.suffix, o.Value)
				}
			case history.Read:
				if o.IsList {
					if o.ListUnknown {
						s.full, s.suffix = false, nil
						continue
					}
					if s.full {
						bad = !sameState(t.ListOf(o), s.list)
					} else if n := len(s.suffix); n > 0 {
						bad = len(t.ListOf(o)) < n || !sameState(t.ListOf(o)[len(t.ListOf(o))-n:], s.suffix)
					}
					s.full, s.list, s.suffix = true, t.ListOf(o), nil
				} else {
					bad = s.hasVal && o.Value != s.val
					s.val, s.hasVal = o.Value, true
				}
			}
			if bad {
				return h.TxnName(t.Index) + "'s " + h.OpString(t, o) + " disagrees with its own earlier ops on " + h.KeyName(o.Key)
			}
		}
	}
	return ""
}

// firstAccess returns, per key, what a transaction's first access to the key
// read (if it was a read with a known result) and whether it later wrote
// the key.
type access struct {
	readFirst bool
	state     []int32 // list read, or [value] (nil = initial state)
	writes    bool
}

func accesses(t *history.Txn) map[int32]*access {
	m := map[int32]*access{}
	for j := range t.Ops {
		o := &t.Ops[j]
		a := m[o.Key]
		if a == nil {
			a = &access{}
			m[o.Key] = a
			if o.Kind == history.Read && !(o.IsList && o.ListUnknown) {
				a.readFirst = true
				if o.IsList {
					a.state = append([]int32{}, t.ListOf(o)...)
				} else if o.Value != history.NoValue {
					a.state = []int32{o.Value}
				}
			}
		}
		if o.Kind == history.Write || o.Kind == history.Append {
			a.writes = true
		}
	}
	return m
}

func sameState(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lostUpdatePair: two committed transactions whose first access to key k
// reads the same version and which both write k afterwards (Adya's P4 lost
// update; under SI one of them must abort, and it is a G-single cycle or
// Elle's lost-update anomaly).
func (ix *writeIndex) lostUpdatePair(h *history.History) string {
	type rk struct {
		k int32
		s string
	}
	seen := map[rk]int32{}
	for i := range h.Txns {
		t := &h.Txns[i]
		if !committed(t) {
			continue
		}
		for k, a := range accesses(t) {
			if !a.readFirst || !a.writes {
				continue
			}
			key := rk{k, stateKey(a.state)}
			if o, ok := seen[key]; ok {
				return h.TxnName(o) + " and " + h.TxnName(t.Index) + " both read one version of " + h.KeyName(k) + " and wrote it"
			}
			seen[key] = t.Index
		}
	}
	return ""
}

func stateKey(s []int32) string {
	b := make([]byte, 0, 4*len(s))
	for _, v := range s {
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	return string(b)
}
