package polygraph

import (
	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// Temporary stand-in for package check/regread (the shared order-free
// register read checks, API in the team preamble) until it lands on main:
// the same contract (WriterOf, Initial, NoWriter, InitTxn, Anomalies), with
// only the read checks the polygraph needs to be sound (a read whose writer
// cannot be identified is reported, never silently ignored).

const (
	readInitial  int32 = -1 // the read observed the initial state
	readNoWriter int32 = -2 // no usable writer (thin air, aborted, intermediate)
)

type readAnalysis struct {
	InitTxn   int32
	Anomalies []check.Anomaly
	// writer[t] holds, per op of txn t, the writer (or readInitial /
	// readNoWriter); nil for txns with no reads.
	writer [][]int32
}

// WriterOf is regread.Analysis.WriterOf.
func (a *readAnalysis) WriterOf(t int32, i int) int32 {
	w := a.writer[t]
	if w == nil || i >= len(w) {
		return readNoWriter
	}
	return w[i]
}

type valKey struct{ k, v int32 }

type writeRef struct {
	t     int32
	op    int32
	final bool // the txn's last write of the key
}

// analyzeReads maps every register read to its writer by value (values are
// unique per key). initialZero: a read of value 0 is a read of the initial
// state when nobody writes 0 to that key.
func analyzeReads(h *history.History, initialZero bool) *readAnalysis {
	a := &readAnalysis{InitTxn: -1, writer: make([][]int32, len(h.Txns))}
	writers := map[valKey]writeRef{}
	dup := map[valKey]bool{}
	zero, hasZero := h.Values.LookupInt(0)
	for ti := range h.Txns {
		t := &h.Txns[ti]
		last := map[int32]int{}
		for j := range t.Ops {
			if o := &t.Ops[j]; o.Kind == history.Write {
				last[o.Key] = j
			}
		}
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind != history.Write || o.Value == history.NoValue {
				continue
			}
			vk := valKey{o.Key, o.Value}
			if _, ok := writers[vk]; ok {
				dup[vk] = true
				continue
			}
			writers[vk] = writeRef{int32(ti), int32(j), last[o.Key] == j}
		}
	}
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if t.Status == history.Aborted {
			continue
		}
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind != history.Read || o.IsList {
				continue
			}
			if a.writer[ti] == nil {
				a.writer[ti] = make([]int32, len(t.Ops))
				for x := range a.writer[ti] {
					a.writer[ti][x] = readNoWriter
				}
			}
			if o.Value == history.NoValue {
				if t.Status == history.Committed {
					a.writer[ti][j] = readInitial
				}
				continue
			}
			vk := valKey{o.Key, o.Value}
			w, ok := writers[vk]
			switch {
			case dup[vk]:
				a.add(h, model.DuplicateElements, int32(ti), "T read "+h.OpString(o)+", a value written to that key by more than one transaction, so its writer is ambiguous", o.Key)
			case !ok && initialZero && hasZero && o.Value == zero:
				a.writer[ti][j] = readInitial
			case !ok:
				a.add(h, model.GarbageVersions, int32(ti), "read "+h.OpString(o)+", a value no transaction wrote to that key (thin-air read)", o.Key)
			case h.Txns[w.t].Status == history.Aborted:
				a.add(h, model.G1a, int32(ti), "read "+h.OpString(o)+", written by aborted "+h.TxnName(w.t)+" (aborted read)", o.Key, w.t)
			case !w.final && w.t != int32(ti):
				a.add(h, model.G1b, int32(ti), "read "+h.OpString(o)+", an intermediate write of "+h.TxnName(w.t)+" that it later overwrote (intermediate read)", o.Key, w.t)
			default:
				a.writer[ti][j] = w.t
			}
		}
	}
	return a
}

func (a *readAnalysis) add(h *history.History, typ string, t int32, what string, key int32, others ...int32) {
	txns := append([]int32{t}, others...)
	a.Anomalies = append(a.Anomalies, check.Anomaly{Type: typ, Txns: txns, Key: h.KeyName(key),
		Explanation: h.TxnName(t) + " " + what + "."})
}
