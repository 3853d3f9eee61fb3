// Package regread implements the register read checks that need no order:
// for every register read of a history it finds the write it read (or the
// initial state) and reports the reads no isolation level admits, whatever
// the version, commit or session order is. Every register checker (elle's
// rw-register, polygraph, weak) runs it first and builds on WriterOf.
//
// Anomalies (names in package model; Plume, Liu et al. OOPSLA 2024, Table 1,
// after Biswas & Enea OOPSLA 2019):
//
//   - model.ThinAirRead: a read of a value nobody wrote to that key that is
//     not the initial state;
//   - model.AbortedRead: a committed transaction read a value written only by
//     an aborted transaction (implies G1a);
//   - model.IntermediateRead: a committed transaction read a value its
//     writer overwrote later in the same transaction (implies G1b);
//   - model.FutureRead: a transaction read a value it writes only later;
//   - model.NotMyOwnWrite: after writing a key, a transaction read a value
//     it never wrote to it;
//   - model.NotMyLastWrite: after writing a key several times, a
//     transaction read one of its earlier values instead of the last;
//   - model.DuplicateWrite: a value read is written to its key by two
//     transactions, or is both an initial value and written, so the read has
//     no unique writer. This is an unknown-type anomaly (model.IsUnknownType):
//     it makes a verdict unknown, not invalid, because writing a value twice
//     is the workload's choice, not the database's fault; WriterOf returns
//     NoWriter for such reads.
//
// Which reads are checked: register reads (history.Read without IsList) of
// committed transactions produce anomalies. WriterOf is also computed for
// reads of unknown-outcome transactions (no anomaly is reported for them,
// since they may never have committed); reads of aborted transactions and
// non-register ops get NoWriter. Writes of every transaction count as
// candidate writers (an aborted writer makes an aborted read, an
// unknown-outcome writer is a usable writer: it may have committed).
//
// The initial state. A read is of the initial state (WriterOf = Initial) when
//
//  1. it read no value (history.NoValue, "nil"); or
//  2. Options.InitialValue is non-empty, the value read renders as it (the
//     integer 0 or the string "0" for InitialValue "0"), and no transaction
//     writes that value to that key; or
//  3. it read a value the explicit initial transaction (Analysis.InitTxn)
//     wrote.
//
// A read of an initial value (1 or 2) that some transaction other than the
// initial transaction also writes to that key is ambiguous: it is reported
// as a duplicate write.
//
// The explicit initial transaction. Some sources (PolySI and IsoVista
// histories, PolySI's loader for dbcop) begin with a transaction that writes
// the initial value of every key. Treated as an ordinary transaction it is
// one more concurrent writer, which hides anomalies (a write skew whose
// transactions both read the initial state looks like two readers of an
// ordinary write). Analyze recognises it conservatively: the first
// transaction of the history, Txns[0], is the initial transaction when all
// of the following hold, and otherwise InitTxn is -1:
//
//   - it is committed and every op is a register write, each key at most
//     once (no reads: it observes nothing);
//   - it writes every key any other transaction reads or writes with a
//     register op;
//   - it writes one value to every key (uniform initialisation), and that
//     value is the initial value: Options.InitialValue, or 0 (the integer
//     or the string "0") when InitialValue is empty. (An ordinary first
//     transaction that happens to blind-write one non-initial value, say 1,
//     to every key is not taken: moving it before everything could break
//     session order and cause false rejects.);
//   - no other transaction writes that value to any of its keys, and no
//     committed transaction reads the initial state in sense 1 or 2 of a key
//     it writes (if someone observed the state before it, it is not the
//     initial state);
//   - it is the first transaction of its session (Seq 0), if it has one.
//
// Cost: linear in the number of ops plus keys plus values (two counting
// sorts and per-key scratch indexed by value id); no maps on the hot path.
package regread

import (
	"fmt"
	"strconv"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// Options configure Analyze.
type Options struct {
	// InitialValue is the source's initial-value convention: "" means only
	// nil/absent reads are reads of the initial state; "0" (dbcop, PolySI,
	// Cobra-style sources, TimeKiller with -p initial-value=0) means a read
	// of the value 0 of a key is also the initial state when no transaction
	// writes 0 to that key.
	InitialValue string
}

const (
	// Initial is WriterOf's answer for a read of the initial state.
	Initial int32 = -1
	// NoWriter is WriterOf's answer when the read has no usable writer:
	// thin air, aborted or future write, a wrong own write, an ambiguous
	// duplicate, or an op that is not a checked register read.
	NoWriter int32 = -2
)

// Ref names one op: transaction index and op index within it.
type Ref struct {
	T int32
	I int32
}

// Analysis is the result of Analyze.
type Analysis struct {
	// InitTxn is the index of an explicit initial transaction recognised as
	// the initial state (see the package comment), or -1.
	InitTxn int32
	// Anomalies are every order-free read violation found (uncapped;
	// callers cap for display), in history order of the reads, then the
	// duplicate writes.
	Anomalies []check.Anomaly
	// Counts counts Anomalies by type.
	Counts map[string]int
	// Reads counts the register reads checked (of committed transactions);
	// InitialReads how many of them read the initial state; InternalReads
	// how many read the transaction's own earlier write.
	Reads, InitialReads, InternalReads int
	// DuplicateWrites counts (key, value) pairs written by more than one
	// transaction (read or not); only those a checked read observes are
	// reported as anomalies.
	DuplicateWrites int
	// BadOps counts ops skipped because their key or value id is out of
	// range of the history's interners (malformed input built in memory).
	BadOps int

	h *history.History
	// judged marks unknown-outcome transactions whose writes a judged
	// transaction read (so they committed): their reads are checked like
	// committed ones. Nil when there are none.
	judged     []bool
	opBase     []int32 // op index base per transaction
	writer     []int32 // per op: WriterOf
	wStart     []int32 // CSR of register writes by key
	wRefs      []Ref
	initial    []bool // per value id: an initial value under Options (nil excluded)
	initialOpt string
}

// WriterOf returns, for op i of transaction t (a register read), the index
// of the committed (or unknown-status) transaction whose write it read,
// Initial, or NoWriter. A read of the transaction's own earlier write
// returns t. An intermediate read returns its writer (the read did observe
// that transaction; the anomaly is reported separately). Out-of-range
// arguments return NoWriter.
func (a *Analysis) WriterOf(t int32, i int) int32 {
	if t < 0 || int(t) >= len(a.opBase)-1 || i < 0 {
		return NoWriter
	}
	j := int(a.opBase[t]) + i
	if j >= int(a.opBase[t+1]) {
		return NoWriter
	}
	return a.writer[j]
}

// Writes returns the register writes of key k in history order (writes of
// every transaction, aborted ones included). The slice must not be
// modified.
func (a *Analysis) Writes(k int32) []Ref {
	if k < 0 || int(k)+1 >= len(a.wStart) {
		return nil
	}
	return a.wRefs[a.wStart[k]:a.wStart[k+1]]
}

// IsInitialValue reports whether value id v is an initial value under the
// options (nil always is).
func (a *Analysis) IsInitialValue(v int32) bool {
	if v == history.NoValue {
		return true
	}
	return v >= 0 && int(v) < len(a.initial) && a.initial[v]
}

// isRegRead reports whether o is a register read.
func isRegRead(o *history.Op) bool { return o.Kind == history.Read && !o.IsList }

// isRegWrite reports whether o is a register write.
func isRegWrite(o *history.Op) bool { return o.Kind == history.Write }

// Analyze runs the order-free read checks on h. It never fails: ops with
// out-of-range ids are skipped and counted in BadOps.
func Analyze(h *history.History, opts Options) *Analysis {
	a := analyze(h, opts, nil)
	// An unknown-outcome transaction whose write a committed transaction
	// (or another such observed transaction) read did commit, so its own
	// reads must obey the same rules (an observed writer that read an
	// intermediate write is G1b, ...). Find them from the resolved writers
	// and judge them in a second pass; histories without such transactions
	// pay nothing more.
	n := len(h.Txns)
	var judged []bool
	var work []int32
	for t := range h.Txns {
		if h.Txns[t].Status == history.Committed {
			work = append(work, int32(t))
		}
	}
	for len(work) > 0 {
		t := work[len(work)-1]
		work = work[:len(work)-1]
		for j := a.opBase[t]; j < a.opBase[t+1]; j++ {
			w := a.writer[j]
			if w < 0 || w == t || w == a.InitTxn || h.Txns[w].Status != history.Unknown || judged != nil && judged[w] {
				continue
			}
			if judged == nil {
				judged = make([]bool, n)
			}
			judged[w] = true
			work = append(work, w)
		}
	}
	if judged == nil {
		return a
	}
	return analyze(h, opts, judged)
}

// Judged reports whether transaction t's reads were checked: it committed,
// or its outcome is unknown but another judged transaction read its write.
func (a *Analysis) Judged(t int32) bool {
	if t < 0 || int(t) >= len(a.h.Txns) {
		return false
	}
	return a.h.Txns[t].Status == history.Committed || a.judged != nil && a.judged[t]
}

func analyze(h *history.History, opts Options, judged []bool) *Analysis {
	n := len(h.Txns)
	nk, nv := h.Keys.Len(), h.Values.Len()
	a := &Analysis{InitTxn: -1, Counts: map[string]int{}, h: h, initialOpt: opts.InitialValue, judged: judged}
	a.opBase = make([]int32, n+1)
	total := 0
	for i := range h.Txns {
		a.opBase[i] = int32(total)
		total += len(h.Txns[i].Ops)
	}
	a.opBase[n] = int32(total)
	a.writer = make([]int32, total)
	for i := range a.writer {
		a.writer[i] = NoWriter
	}
	a.initial = make([]bool, nv)
	if opts.InitialValue != "" {
		if id, ok := h.Values.LookupStr(opts.InitialValue); ok {
			a.initial[id] = true
		}
		if iv, err := strconv.ParseInt(opts.InitialValue, 10, 64); err == nil {
			if id, ok := h.Values.LookupInt(iv); ok {
				a.initial[id] = true
			}
		}
	}
	valid := func(o *history.Op) bool {
		ok := o.Key >= 0 && int(o.Key) < nk && o.Value >= history.NoValue && int(o.Value) < nv
		return ok
	}

	// Pass 1: count writes per key; mark intermediate writes; resolve
	// reads that follow the transaction's own write of the key; collect
	// the other (external) reads by key.
	wCnt := make([]int32, nk+1)
	rCnt := make([]int32, nk+1)
	interm := make([]bool, total) // write op is not its txn's last write of the key
	stamp := make([]int32, nk)    // txn+1 that last touched the key's scratch
	lastW := make([]int32, nk)    // op index of the txn's latest write of the key so far
	for ti := range h.Txns {
		t := &h.Txns[ti]
		st := int32(ti + 1)
		base := a.opBase[ti]
		// backward: intermediate writes
		for j := len(t.Ops) - 1; j >= 0; j-- {
			o := &t.Ops[j]
			if !isRegWrite(o) || !valid(o) {
				continue
			}
			if stamp[o.Key] == st {
				interm[base+int32(j)] = true
			}
			stamp[o.Key] = st
		}
		st = -st // second use of the stamp array in this txn
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind != history.Write && !isRegRead(o) {
				continue
			}
			if !valid(o) {
				a.BadOps++
				continue
			}
			k := o.Key
			if isRegWrite(o) {
				wCnt[k]++
				stamp[k], lastW[k] = st, int32(j)
				continue
			}
			if t.Status == history.Aborted {
				continue
			}
			if stamp[k] != st {
				rCnt[k]++ // external read, resolved per key below
				continue
			}
			a.internalRead(int32(ti), int32(j), lastW[k])
		}
	}
	// CSR of writes and external reads by key.
	a.wStart = make([]int32, nk+1)
	rStart := make([]int32, nk+1)
	for k := 0; k < nk; k++ {
		a.wStart[k+1] = a.wStart[k] + wCnt[k]
		rStart[k+1] = rStart[k] + rCnt[k]
	}
	a.wRefs = make([]Ref, a.wStart[nk])
	rRefs := make([]Ref, rStart[nk])
	wf, rf := wCnt[:nk], rCnt[:nk]
	copy(wf, a.wStart[:nk])
	copy(rf, rStart[:nk])
	clear(stamp)
	for ti := range h.Txns {
		t := &h.Txns[ti]
		st := int32(ti + 1)
		for j := range t.Ops {
			o := &t.Ops[j]
			if (o.Kind != history.Write && !isRegRead(o)) || !valid(o) {
				continue
			}
			k := o.Key
			if isRegWrite(o) {
				a.wRefs[wf[k]] = Ref{int32(ti), int32(j)}
				wf[k]++
				stamp[k] = st
				continue
			}
			if t.Status != history.Aborted && stamp[k] != st {
				rRefs[rf[k]] = Ref{int32(ti), int32(j)}
				rf[k]++
			}
		}
	}

	a.InitTxn = a.findInitTxn(rRefs, rStart)

	// Per key: the writers of each value, then every external read.
	// slot[v] = 1 + index (in the key's writes) of the first write of v;
	// multi[v] = another transaction (or the initial state) also writes v;
	// final[v] = some write of v by the first writer is its final write.
	slot := make([]int32, nv)
	multi := make([]bool, nv)
	final := make([]bool, nv)
	for k := int32(0); int(k) < nk; k++ {
		ws := a.wRefs[a.wStart[k]:a.wStart[k+1]]
		for i, w := range ws {
			v := h.Txns[w.T].Ops[w.I].Value
			if v == history.NoValue {
				continue // a write of nil: handled as a write of the initial state below
			}
			if s := slot[v]; s != 0 {
				if first := ws[s-1]; first.T != w.T && !multi[v] {
					multi[v] = true
					a.DuplicateWrites++
				}
			} else {
				slot[v] = int32(i + 1)
			}
			if ws[slot[v]-1].T == w.T && !interm[a.opBase[w.T]+w.I] {
				final[v] = true
			}
		}
		nilWriter := int32(-1) // a transaction writing nil to k
		for _, w := range ws {
			if h.Txns[w.T].Ops[w.I].Value == history.NoValue && w.T != a.InitTxn {
				nilWriter = w.T
				break
			}
		}
		nilReported := false
		for _, r := range rRefs[rStart[k]:rStart[k+1]] {
			a.externalRead(k, r, ws, slot, multi, final, nilWriter, &nilReported)
		}
		for _, w := range ws {
			if v := h.Txns[w.T].Ops[w.I].Value; v != history.NoValue {
				slot[v], multi[v], final[v] = 0, false, false
			}
		}
	}
	for _, x := range a.Anomalies {
		a.Counts[x.Type]++
	}
	return a
}

// internalRead resolves read j of transaction t that follows the
// transaction's own write lw of the same key.
func (a *Analysis) internalRead(t, j, lw int32) {
	h := a.h
	tx := &h.Txns[t]
	o := &tx.Ops[j]
	// A nil read of an unknown-outcome transaction is an unknown result
	// (history.NoValue), not a read of the initial state: not judged.
	committed := a.Judged(t) && (tx.Status == history.Committed || o.Value != history.NoValue)
	if committed {
		a.Reads++
	}
	want := tx.Ops[lw].Value
	if o.Value == want {
		a.writer[a.opBase[t]+j] = t
		if committed {
			a.InternalReads++
		}
		return
	}
	if !committed {
		return
	}
	// Did t write the value read earlier (not last)?
	earlier := int32(-1)
	for q := lw - 1; q >= 0; q-- {
		p := &tx.Ops[q]
		if isRegWrite(p) && p.Key == o.Key && p.Value == o.Value {
			earlier = q
			break
		}
	}
	key := h.KeyName(o.Key)
	if earlier >= 0 {
		a.Anomalies = append(a.Anomalies, check.Anomaly{
			Type: model.NotMyLastWrite, Txns: []int32{t}, Key: key,
			Explanation: fmt.Sprintf("%s wrote key %s = %s (op %d) and later %s = %s (op %d), then read key %s = %s (op %d): a transaction's read of a key it wrote must return its last write before the read, %s (not-my-last-write)",
				h.TxnName(t), key, h.ValueName(o.Value), earlier, key, h.ValueName(want), lw, key, h.ValueName(o.Value), j, h.ValueName(want)),
			Ops: map[int32]string{t: h.TxnString(t)},
		})
		return
	}
	a.Anomalies = append(a.Anomalies, check.Anomaly{
		Type: model.NotMyOwnWrite, Txns: []int32{t}, Key: key,
		Explanation: fmt.Sprintf("%s wrote key %s = %s (op %d), then read key %s = %s (op %d), a value it never wrote to %s: a transaction's read of a key it wrote must return its own last write, %s (not-my-own-write)",
			h.TxnName(t), key, h.ValueName(want), lw, key, h.ValueName(o.Value), j, key, h.ValueName(want)),
		Ops: map[int32]string{t: h.TxnString(t)},
	})
}

// externalRead resolves read r of key k that no own earlier write precedes.
func (a *Analysis) externalRead(k int32, r Ref, ws []Ref, slot []int32, multi, final []bool, nilWriter int32, nilReported *bool) {
	h := a.h
	tx := &h.Txns[r.T]
	o := &tx.Ops[r.I]
	v := o.Value
	committed := a.Judged(r.T) && (tx.Status == history.Committed || o.Value != history.NoValue)
	if committed {
		a.Reads++
	}
	at := a.opBase[r.T] + r.I
	if v >= 0 {
		// Fast path: one committed or unknown-outcome writer, another
		// transaction, its final write, not an initial value.
		if s := slot[v]; s > 0 && !multi[v] && final[v] && !a.initial[v] {
			if w := ws[s-1]; w.T != r.T && w.T != a.InitTxn && h.Txns[w.T].Status != history.Aborted {
				a.writer[at] = w.T
				return
			}
		}
	}
	key := h.KeyName(k)
	readDesc := func() string {
		return fmt.Sprintf("%s read key %s = %s (op %d)", h.TxnName(r.T), key, h.ValueName(v), r.I)
	}
	// dup reports an ambiguous read of a (key, value) written more than
	// once; the caller marks the pair reported so it is listed once.
	dup := func(txns []int32, what string) {
		if !committed {
			return
		}
		txns = append([]int32{r.T}, txns...)
		a.Anomalies = append(a.Anomalies, check.Anomaly{
			Type: model.DuplicateWrite, Txns: txns, Key: key,
			Explanation: readDesc() + ", but " + what + ", so the read has no unique writer and read-from inference is incomplete for it (duplicate-write: verdict unknown unless another anomaly is found)",
			Ops:         check.TxnOps(h, txns...),
		})
	}
	if v == history.NoValue {
		if nilWriter >= 0 {
			if committed && !*nilReported {
				*nilReported = true
				dup([]int32{nilWriter}, fmt.Sprintf("%s wrote nil to key %s, which is also the initial state", h.TxnName(nilWriter), key))
			}
			return
		}
		a.writer[at] = Initial
		if committed {
			a.InitialReads++
		}
		return
	}
	s := slot[v]
	if s == 0 {
		if a.initial[v] {
			a.writer[at] = Initial
			if committed {
				a.InitialReads++
			}
			return
		}
		if committed {
			a.Anomalies = append(a.Anomalies, check.Anomaly{
				Type: model.ThinAirRead, Txns: []int32{r.T}, Key: key,
				Explanation: readDesc() + fmt.Sprintf(", but no transaction in the history writes %s to key %s and %s is not the initial state: the value came out of thin air (thin-air-read)",
					h.ValueName(v), key, h.ValueName(v)),
				Ops: check.TxnOps(h, r.T),
			})
		}
		return
	}
	if s < 0 { // duplicate already reported for this (key, value)
		return
	}
	w := ws[s-1]
	if multi[v] {
		if committed {
			other := int32(-1)
			for _, x := range ws {
				if x.T != w.T && h.Txns[x.T].Ops[x.I].Value == v {
					other = x.T
					break
				}
			}
			dup([]int32{w.T, other}, fmt.Sprintf("both %s and %s wrote %s to key %s", h.TxnName(w.T), h.TxnName(other), h.ValueName(v), key))
			slot[v] = -1
		}
		return
	}
	if a.initial[v] && w.T != a.InitTxn {
		if committed {
			dup([]int32{w.T}, fmt.Sprintf("%s is the initial value of key %s under the source's convention and %s also wrote it", h.ValueName(v), key, h.TxnName(w.T)))
			slot[v] = -1
		}
		return
	}
	if w.T == a.InitTxn {
		a.writer[at] = Initial
		if committed {
			a.InitialReads++
		}
		return
	}
	wt := &h.Txns[w.T]
	switch {
	case w.T == r.T:
		if committed {
			a.Anomalies = append(a.Anomalies, check.Anomaly{
				Type: model.FutureRead, Txns: []int32{r.T}, Key: key,
				Explanation: readDesc() + fmt.Sprintf(", but the only write of %s to key %s is its own later op %d, and no earlier op of %s wrote key %s: it read a value before writing it (future-read)",
					h.ValueName(v), key, w.I, h.TxnName(r.T), key),
				Ops: check.TxnOps(h, r.T),
			})
		}
		return
	case wt.Status == history.Aborted:
		if committed {
			a.Anomalies = append(a.Anomalies, check.Anomaly{
				Type: model.AbortedRead, Txns: []int32{r.T, w.T}, Key: key,
				Explanation: readDesc() + fmt.Sprintf(" and committed, but the only write of %s to key %s is %s's op %d, and %s aborted: a committed transaction observed an aborted write (aborted-read, G1a)",
					h.ValueName(v), key, h.TxnName(w.T), w.I, h.TxnName(w.T)),
				Ops: check.TxnOps(h, r.T, w.T),
			})
		}
		return
	}
	a.writer[at] = w.T
	if !final[v] && committed {
		last := int32(-1)
		for q := len(wt.Ops) - 1; q > int(w.I); q-- {
			if p := &wt.Ops[q]; isRegWrite(p) && p.Key == k {
				last = int32(q)
				break
			}
		}
		lastVal := "?"
		if last >= 0 {
			lastVal = h.ValueName(wt.Ops[last].Value)
		}
		a.Anomalies = append(a.Anomalies, check.Anomaly{
			Type: model.IntermediateRead, Txns: []int32{r.T, w.T}, Key: key,
			Explanation: readDesc() + fmt.Sprintf(", which %s wrote (op %d) and then overwrote with %s = %s (op %d) before finishing: %s observed a state %s never committed, it should have read %s's final write %s or another version (intermediate-read, G1b)",
				h.TxnName(w.T), w.I, key, lastVal, last, h.TxnName(r.T), h.TxnName(w.T), h.TxnName(w.T), lastVal),
			Ops: check.TxnOps(h, r.T, w.T),
		})
	}
}

// findInitTxn applies the explicit-initial-transaction rule of the package
// comment to Txns[0]; rRefs/rStart are the external reads by key.
func (a *Analysis) findInitTxn(rRefs []Ref, rStart []int32) int32 {
	h := a.h
	if len(h.Txns) < 2 {
		return -1
	}
	t0 := &h.Txns[0]
	if t0.Status != history.Committed || len(t0.Ops) == 0 || (t0.Session >= 0 && t0.Seq != 0) {
		return -1
	}
	nk := len(a.wStart) - 1
	mine := make([]bool, nk)
	val := int32(history.NoValue)
	for j := range t0.Ops {
		o := &t0.Ops[j]
		if !isRegWrite(o) || o.Key < 0 || int(o.Key) >= nk || mine[o.Key] || o.Value < 0 || int(o.Value) >= len(a.initial) {
			return -1 // not a write of one interned value (ids out of range are skipped everywhere, never indexed)
		}
		if j > 0 && o.Value != val {
			return -1
		}
		val = o.Value
		mine[o.Key] = true
	}
	if !a.initial[val] {
		if a.initialOpt != "" {
			return -1
		}
		if s := h.Values.String(val); s != "0" {
			return -1
		}
	}
	// Every key another transaction touches is written by T0.
	for ti := 1; ti < len(h.Txns); ti++ {
		for j := range h.Txns[ti].Ops {
			o := &h.Txns[ti].Ops[j]
			if (isRegWrite(o) || isRegRead(o)) && o.Key >= 0 && int(o.Key) < nk && !mine[o.Key] {
				return -1
			}
		}
	}
	for k := 0; k < nk; k++ {
		if !mine[k] {
			continue
		}
		for _, w := range a.wRefs[a.wStart[k]:a.wStart[k+1]] {
			if w.T != 0 && h.Txns[w.T].Ops[w.I].Value == val {
				return -1 // someone else writes the initial value: ambiguous
			}
		}
		for _, r := range rRefs[rStart[k]:rStart[k+1]] {
			if h.Txns[r.T].Status != history.Committed {
				continue
			}
			if v := h.Txns[r.T].Ops[r.I].Value; v == history.NoValue || (v != val && v >= 0 && int(v) < len(a.initial) && a.initial[v]) {
				return -1 // observed the state before T0
			}
		}
	}
	return 0
}
