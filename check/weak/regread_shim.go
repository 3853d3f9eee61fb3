package weak

// TEMPORARY SHIM for package check/regread (built by the regread engineer;
// API in the team preamble). It implements only what this checker needs,
// behind the same names, and is removed as soon as check/regread lands on
// main: replace readAnalyze with regread.Analyze and the constants with
// regread.Initial / regread.NoWriter.

import (
	"fmt"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

const (
	// initialWriter: the read returned the initial state (regread.Initial).
	initialWriter int32 = -1
	// noWriter: no usable writer (thin air, aborted, intermediate, own
	// write, ambiguous) (regread.NoWriter).
	noWriter int32 = -2
)

// readAnalysis is the shim's regread.Analysis.
type readAnalysis struct {
	Anomalies []check.Anomaly
	// Ambiguous counts reads whose value two transactions wrote to the key.
	Ambiguous int
	opBase    []int32 // per txn: offset of its ops in writer
	writer    []int32 // per op: writer of a register read, or noWriter
}

// WriterOf returns the writer of op i of transaction t (register reads).
func (a *readAnalysis) WriterOf(t int32, i int) int32 { return a.writer[int(a.opBase[t])+i] }

type wref struct {
	key, txn int32
	final    bool
	dup      bool
}

// readAnalyze classifies every register read of a non-aborted transaction.
func readAnalyze(h *history.History) *readAnalysis {
	n := len(h.Txns)
	a := &readAnalysis{opBase: make([]int32, n+1)}
	total := 0
	for i := range h.Txns {
		a.opBase[i] = int32(total)
		total += len(h.Txns[i].Ops)
	}
	a.opBase[n] = int32(total)
	a.writer = make([]int32, total)
	nk := h.Keys.Len()
	byVal := make([]wref, h.Values.Len())
	for i := range byVal {
		byVal[i].txn = -1
	}
	other := map[[2]int32]wref{}
	stamp := make([]int32, nk)
	for i := range stamp {
		stamp[i] = -1
	}
	lookup := func(k, v int32) (wref, bool) {
		if v >= 0 && int(v) < len(byVal) && byVal[v].txn >= 0 && byVal[v].key == k {
			return byVal[v], true
		}
		w, ok := other[[2]int32{k, v}]
		return w, ok
	}
	put := func(k, v int32, w wref) {
		if v < 0 || int(v) >= len(byVal) {
			return
		}
		if old, ok := lookup(k, v); ok {
			if old.txn != w.txn {
				old.dup = true
			} else {
				old.final = old.final || w.final
			}
			w = old
		}
		if byVal[v].txn < 0 || byVal[v].key == k {
			byVal[v] = w
		} else {
			other[[2]int32{k, v}] = w
		}
	}
	for ti := range h.Txns {
		t := &h.Txns[ti]
		// Backwards: the first write of a key seen is the txn's final one.
		for j := len(t.Ops) - 1; j >= 0; j-- {
			o := &t.Ops[j]
			if o.Kind != history.Write {
				continue
			}
			final := stamp[o.Key] != int32(ti)
			stamp[o.Key] = int32(ti)
			put(o.Key, o.Value, wref{key: o.Key, txn: int32(ti), final: final})
		}
	}
	for i := range stamp {
		stamp[i] = -1
	}
	lastOwn := make([]int32, nk)
	for ti := range h.Txns {
		t := &h.Txns[ti]
		base := int(a.opBase[ti])
		for j := range t.Ops {
			o := &t.Ops[j]
			a.writer[base+j] = noWriter
			if o.Kind == history.Write {
				stamp[o.Key] = int32(ti)
				lastOwn[o.Key] = o.Value
				continue
			}
			if o.Kind != history.Read || o.IsList || t.Status == history.Aborted {
				continue
			}
			if stamp[o.Key] == int32(ti) {
				if o.Value != lastOwn[o.Key] {
					a.add(h, ti, j, ownWriteKind(t, j, o), "")
				}
				continue
			}
			if o.Value == history.NoValue {
				a.writer[base+j] = initialWriter
				continue
			}
			w, ok := lookup(o.Key, o.Value)
			switch {
			case !ok:
				a.add(h, ti, j, model.GarbageVersions, "thin-air read: no transaction in the history writes this value to this key")
			case w.dup:
				a.Ambiguous++
			case w.txn == int32(ti):
				a.add(h, ti, j, model.FutureRead, "future read: the transaction writes this value to this key only later")
			case h.Txns[w.txn].Status == history.Aborted:
				a.add2(h, ti, j, w.txn, model.G1a, "aborted read: "+h.TxnName(w.txn)+", which wrote it, aborted")
			case !w.final:
				a.add2(h, ti, j, w.txn, model.G1b, "intermediate read: "+h.TxnName(w.txn)+" overwrote this value of the key before committing")
			default:
				a.writer[base+j] = w.txn
			}
		}
	}
	return a
}

func ownWriteKind(t *history.Txn, j int, o *history.Op) string {
	for i := 0; i < j; i++ {
		p := &t.Ops[i]
		if p.Kind == history.Write && p.Key == o.Key && p.Value == o.Value {
			return "not-my-last-write"
		}
	}
	return "not-my-own-write"
}

func (a *readAnalysis) add(h *history.History, tx int, j int, typ, why string) {
	ti := int32(tx)
	o := &h.Txns[ti].Ops[j]
	switch typ {
	case "not-my-last-write":
		why = "not-my-last-write: the transaction wrote this key again before reading it, but the read returned an earlier own write"
		typ = model.Internal
	case "not-my-own-write":
		why = "not-my-own-write: the transaction wrote this key before reading it, but the read did not return its own write"
		typ = model.Internal
	}
	a.Anomalies = append(a.Anomalies, check.Anomaly{
		Type: typ, Txns: []int32{ti}, Key: h.KeyName(o.Key),
		Explanation: fmt.Sprintf("%s op %d (%s): %s.", h.TxnName(ti), j, h.OpString(o), why),
		Ops:         map[int32]string{ti: h.TxnString(ti)},
	})
}

func (a *readAnalysis) add2(h *history.History, tx int, j int, w int32, typ, why string) {
	a.add(h, tx, j, typ, why)
	last := &a.Anomalies[len(a.Anomalies)-1]
	last.Txns = append(last.Txns, w)
	last.Ops[w] = h.TxnString(w)
}
