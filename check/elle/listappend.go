package elle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/graph"
	"github.com/txray/txray/history"
	"github.com/txray/txray/internal/mem"
	"github.com/txray/txray/model"
)

// List-append inference (Kingsbury & Alvaro, "Elle", VLDB 2020, §3–§5).
//
// Every key is a list; transactions append unique elements and read whole
// lists. Because every read shows the order of all appends before it, the
// version order of a key is recovered from its longest read: every other
// read must be a prefix of it (else incompatible-order). From that order:
//
//   - ww: T1 appended e, and T2 appended the element right after e;
//   - wr: T2 read a list whose last element T1 appended;
//   - rw: T1 read a list ending at e (or the empty list), and T2 appended
//     the element right after e (the first element).
//
// An append that no read shows still came after every element some read
// shows (Elle's previously-appended-element): it gets ww/rw edges from the
// last observed element. Committed and unknown-outcome transactions are
// graph nodes (an observed append of an unknown transaction means it
// committed); aborted ones only feed G1a and dirty-update.
//
// Unknown-outcome transactions that carry read results: one whose append a
// judged read shows committed, so it is judged like a committed one (its
// reads give edges and are checked for G1a, G1b, internal, future reads and
// lost updates); one nobody observed may have aborted, so its reads are
// ignored (they would make edges out of a transaction that may never have
// run: false rejects). Judged: committed, or unknown with an append some
// judged read shows (transitively). Found by the polygraph checker's
// exhaustive-search test on tiny list histories.

// laIndex indexes a history for list-append analysis.
type laIndex struct {
	h      *history.History
	nk, nv int
	opBase []int32 // global op id of each txn's first op
	// interm marks appends (by global op id) that are not their
	// transaction's last append to that key (for G1b).
	interm bitset
	// luRead marks a committed transaction's first read of a key when the
	// transaction's first append to that key comes after it (Elle's
	// lost-update).
	luRead bitset
	// reads: known list reads by committed and unknown-outcome
	// transactions, grouped by key (CSR). apps: appends by every
	// transaction, grouped by key.
	readStart, appStart []int32
	reads               []laRead
	apps                []laApp
	// judged marks the transactions whose reads count (see above); nil when
	// the history has no unknown-outcome transaction (then: committed).
	judged []bool
	// unsupported lists up to 8 transactions holding ops other than appends
	// and list reads; unsupportedN counts them all.
	unsupported  []int32
	unsupportedN int
	nReadOps     int
	nAppendOps   int
}

// laRead is a known list read, with what the per-key pass needs inline so
// it never chases pointers into the history.
type laRead struct {
	list      []int32
	t, o      int32
	committed bool
	lu        bool // luRead
}

func (r *laRead) ref() opRef { return opRef{r.t, r.o} }

// laApp is an append.
type laApp struct {
	t, o, v int32
	st      history.Status
	interm  bool
}

func (a *laApp) ref() opRef { return opRef{a.t, a.o} }

// readList returns the list a read op observed. A nil read (list unknown,
// or a scalar read with no value) in a committed transaction is the empty
// list, as in Elle; in any other transaction it is unknown (ok=false).
func readList(t *history.Txn, o *history.Op) (l []int32, ok bool) {
	if o.IsList && !o.ListUnknown {
		return t.ListOf(o), true
	}
	if t.Status == history.Committed {
		return nil, true
	}
	return nil, false
}

// validate checks ids and op kinds; it returns an InputError for ids out of
// range (a malformed history) and records unsupported op kinds.
func validateTxn(h *history.History, ti int, nk, nv int, allowList bool) (unsupported bool, err error) {
	t := &h.Txns[ti]
	if t.Status > history.Unknown {
		return false, history.Errorf("", 0, fmt.Sprintf("txns[%d].status", ti), "invalid status %d", t.Status)
	}
	for j := range t.Ops {
		o := &t.Ops[j]
		field := func(f string) string { return fmt.Sprintf("txns[%d].ops[%d].%s", ti, j, f) }
		switch o.Kind {
		case history.Read, history.Write, history.Append:
		default:
			unsupported = true
			continue
		}
		if o.Key < 0 || int(o.Key) >= nk {
			return false, history.Errorf("", 0, field("k"), "key id %d out of range (history has %d keys)", o.Key, nk)
		}
		if o.Kind == history.Read && o.IsList {
			// List elements are range-checked where they are used as
			// indices (laKeys.validList), to keep this pass cheap.
			if !allowList {
				unsupported = true
			}
			continue
		}
		if o.Value != history.NoValue && (o.Value < 0 || int(o.Value) >= nv) {
			return false, history.Errorf("", 0, field("v"), "value id %d out of range (history has %d values)", o.Value, nv)
		}
		if o.Kind != history.Read && o.Value == history.NoValue {
			return false, history.Errorf("", 0, field("v"), "%s without a value", o.Kind)
		}
	}
	return unsupported, nil
}

// isJudged reports whether transaction t's reads count: it committed, or
// its outcome is unknown but a judged read shows one of its appends.
func (x *laIndex) isJudged(t int) bool {
	if x.judged != nil {
		return x.judged[t]
	}
	return x.h.Txns[t].Status == history.Committed
}

// judgeUnknown computes x.judged when h has unknown-outcome transactions:
// committed ones, then unknown ones whose appends judged reads show.
func (x *laIndex) judgeUnknown() {
	h := x.h
	unknown := false
	for i := range h.Txns {
		unknown = unknown || h.Txns[i].Status == history.Unknown
	}
	if !unknown {
		return
	}
	appender := map[[2]int32][]int32{} // (key, element) -> unknown-outcome appenders
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if t.Status != history.Unknown {
			continue
		}
		for j := range t.Ops {
			if o := &t.Ops[j]; o.Kind == history.Append {
				appender[[2]int32{o.Key, o.Value}] = append(appender[[2]int32{o.Key, o.Value}], int32(ti))
			}
		}
	}
	x.judged = make([]bool, len(h.Txns))
	var work []int32
	for ti := range h.Txns {
		if h.Txns[ti].Status == history.Committed {
			x.judged[ti] = true
			work = append(work, int32(ti))
		}
	}
	for len(work) > 0 {
		ti := work[len(work)-1]
		work = work[:len(work)-1]
		t := &h.Txns[ti]
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind != history.Read {
				continue
			}
			l, ok := readList(t, o)
			if !ok {
				continue
			}
			for _, e := range l {
				for _, w := range appender[[2]int32{o.Key, e}] {
					if !x.judged[w] {
						x.judged[w] = true
						work = append(work, w)
					}
				}
			}
		}
	}
}

// buildLA indexes h. It returns an error only for a malformed history.
func buildLA(h *history.History) (*laIndex, error) {
	x := &laIndex{h: h, nk: h.Keys.Len(), nv: h.Values.Len()}
	x.judgeUnknown()
	n := len(h.Txns)
	x.opBase = make([]int32, n+1)
	total := 0
	for i := range h.Txns {
		x.opBase[i] = int32(total)
		total += len(h.Txns[i].Ops)
	}
	x.opBase[n] = int32(total)
	if total > 1<<31-2 {
		return nil, fmt.Errorf("history too large: %d micro-ops", total)
	}
	x.interm = newBitset(total)
	x.luRead = newBitset(total)
	nk := x.nk
	readCnt := make([]int32, nk+1)
	appCnt := make([]int32, nk+1)
	// Stamps (txn index + 1) on dense per-key arrays avoid clearing.
	seenApp := make([]int32, nk)   // backward pass: a later append of k exists
	readStamp := make([]int32, nk) // forward pass: k was read (first read in readAt)
	readAt := make([]int32, nk)
	luDone := make([]int32, nk)
	for ti := range h.Txns {
		t := &h.Txns[ti]
		bad, err := validateTxn(h, ti, nk, x.nv, true)
		if err != nil {
			return nil, err
		}
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind == history.Write || (o.Kind == history.Read && !o.IsList && o.Value != history.NoValue) {
				bad = true
			}
		}
		if bad {
			x.unsupportedN++
			if len(x.unsupported) < 8 {
				x.unsupported = append(x.unsupported, int32(ti))
			}
			continue
		}
		stamp := int32(ti + 1)
		base := x.opBase[ti]
		for j := len(t.Ops) - 1; j >= 0; j-- {
			o := &t.Ops[j]
			if o.Kind != history.Append {
				continue
			}
			if seenApp[o.Key] == stamp {
				x.interm.set(base + int32(j))
			}
			seenApp[o.Key] = stamp
		}
		for j := range t.Ops {
			o := &t.Ops[j]
			switch o.Kind {
			case history.Append:
				appCnt[o.Key]++
				x.nAppendOps++
				// Only a transaction's first append to k counts, and only
				// if it read k before (Elle's lost-update-cases).
				if luDone[o.Key] != stamp {
					luDone[o.Key] = stamp
					if x.isJudged(ti) && readStamp[o.Key] == stamp {
						x.luRead.set(base + readAt[o.Key])
					}
				}
			case history.Read:
				x.nReadOps++
				if t.Status == history.Aborted || t.Status == history.Unknown && !x.isJudged(ti) {
					continue
				}
				if _, ok := readList(t, o); !ok {
					continue
				}
				readCnt[o.Key]++
				if readStamp[o.Key] != stamp {
					readStamp[o.Key] = stamp
					readAt[o.Key] = int32(j)
				}
			}
		}
	}
	// CSR offsets.
	x.readStart = make([]int32, nk+1)
	x.appStart = make([]int32, nk+1)
	var rs, as int32
	for k := 0; k < nk; k++ {
		x.readStart[k], x.appStart[k] = rs, as
		rs += readCnt[k]
		as += appCnt[k]
	}
	x.readStart[nk], x.appStart[nk] = rs, as
	x.reads = mem.Make[laRead](int(rs), 1<<20)
	x.apps = mem.Make[laApp](int(as), 1<<20)
	rfill := readCnt[:nk]
	afill := appCnt[:nk]
	copy(rfill, x.readStart[:nk])
	copy(afill, x.appStart[:nk])
	if x.unsupportedN > 0 {
		return x, nil
	}
	for ti := range h.Txns {
		t := &h.Txns[ti]
		for j := range t.Ops {
			o := &t.Ops[j]
			switch o.Kind {
			case history.Append:
				g := x.opBase[ti] + int32(j)
				x.apps[afill[o.Key]] = laApp{t: int32(ti), o: int32(j), v: o.Value, st: t.Status, interm: x.interm.has(g)}
				afill[o.Key]++
			case history.Read:
				if t.Status == history.Aborted || t.Status == history.Unknown && !x.isJudged(ti) {
					continue
				}
				l, ok := readList(t, o)
				if !ok {
					continue
				}
				g := x.opBase[ti] + int32(j)
				x.reads[rfill[o.Key]] = laRead{list: l, t: int32(ti), o: int32(j), committed: x.isJudged(ti), lu: x.luRead.has(g)}
				rfill[o.Key]++
			}
		}
	}
	return x, nil
}

// laInternal finds internal and future-read anomalies in committed
// transactions (Elle's op-internal-case and op-future-read-case; Cerone,
// Bernardi & Gotsman's INT axiom). One of each at most per transaction.
func laInternal(x *laIndex, col *collector) {
	h := x.h
	lastStamp := make([]int32, x.nk)
	lastPos := make([]int32, x.nk)
	var prevSame []int32
	var appended []int32
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if !x.isJudged(ti) || len(t.Ops) < 2 {
			continue
		}
		stamp := int32(ti + 1)
		prevSame = slices.Grow(prevSame[:0], len(t.Ops))[:len(t.Ops)]
		for j := range t.Ops {
			k := t.Ops[j].Key
			if k < 0 || int(k) >= x.nk {
				prevSame[j] = -1
				continue
			}
			if lastStamp[k] == stamp {
				prevSame[j] = lastPos[k]
			} else {
				prevSame[j] = -1
				lastStamp[k] = stamp
			}
			lastPos[k] = int32(j)
		}
		internalDone, futureDone, ownDone := false, false, false
		for j := range t.Ops {
			o := &t.Ops[j]
			switch o.Kind {
			case history.Read:
				if internalDone && ownDone {
					continue
				}
				l, ok := readList(t, o)
				if !ok {
					continue // an unknown-outcome transaction's unknown result
				}
				// A read missing an element the transaction itself appended
				// earlier is also not-my-own-write, which every model
				// prohibits (Elle's internal covers re-reads too, which
				// read committed allows).
				if !ownDone {
					for i := prevSame[j]; i >= 0; i = prevSame[i] {
						p := &t.Ops[i]
						if p.Kind != history.Append || slices.Contains(l, p.Value) {
							continue
						}
						ownDone = true
						ti32, j32, i32, miss := int32(ti), j, i, p.Value
						col.add(model.NotMyOwnWrite, func() check.Anomaly {
							return check.Anomaly{
								Txns: []int32{ti32},
								Key:  h.KeyName(o.Key),
								Explanation: fmt.Sprintf("%s appended %s to key %s (op %d), then read key %s = %s (op %d), without it: a transaction's read of a key it wrote must show its own writes (not-my-own-write)",
									h.TxnName(ti32), h.ValueName(miss), h.KeyName(o.Key), i32, h.KeyName(o.Key), h.ListString(l), j32),
								Ops: check.TxnOps(h, ti32),
							}
						})
						break
					}
				}
				if internalDone {
					continue
				}
				appended = appended[:0]
				base := int32(-1)
				for i := prevSame[j]; i >= 0; i = prevSame[i] {
					p := &t.Ops[i]
					if p.Kind == history.Append {
						appended = append(appended, p.Value)
					} else if p.Kind == history.Read {
						if _, ok := readList(t, p); ok {
							base = i
						}
						break
					}
				}
				if base < 0 && len(appended) == 0 {
					continue
				}
				slices.Reverse(appended)
				var baseList []int32
				bad := false
				if base >= 0 {
					baseList, _ = readList(t, &t.Ops[base])
					bad = len(l) != len(baseList)+len(appended) ||
						!slices.Equal(l[:len(baseList)], baseList) ||
						!slices.Equal(l[len(baseList):], appended)
				} else {
					bad = len(l) < len(appended) || !slices.Equal(l[len(l)-len(appended):], appended)
				}
				if !bad {
					continue
				}
				internalDone = true
				exp := expectedString(h, base >= 0, baseList, appended)
				ti32, j32, baseCopy := int32(ti), j, base
				col.add(aInternal, func() check.Anomaly {
					var how string
					if baseCopy >= 0 {
						how = fmt.Sprintf("its earlier read of key %s returned %s", h.KeyName(o.Key), h.ListString(baseList))
						if len(appended) > 0 {
							how += " and it then appended " + valuesString(h, appended)
						}
					} else {
						how = "it had appended " + valuesString(h, appended) + " to key " + h.KeyName(o.Key) + " (on top of an unknown prefix)"
					}
					return check.Anomaly{
						Txns: []int32{ti32},
						Key:  h.KeyName(o.Key),
						Explanation: fmt.Sprintf("%s read key %s = %s (op %d), but %s, so that read should have returned %s: a transaction must observe its own earlier reads and appends (internal consistency)",
							h.TxnName(ti32), h.KeyName(o.Key), h.ListString(l), j32, how, exp),
						Ops: check.TxnOps(h, ti32),
					}
				})
			case history.Append:
				if futureDone {
					continue
				}
				first := int32(-1)
				for i := prevSame[j]; i >= 0; i = prevSame[i] {
					p := &t.Ops[i]
					if p.Kind != history.Read {
						continue
					}
					l, _ := readList(t, p)
					if slices.Contains(l, o.Value) {
						first = i
					}
				}
				if first < 0 {
					continue
				}
				futureDone = true
				ti32, j32, r := int32(ti), int32(j), first
				col.add(aFutureRead, func() check.Anomaly {
					l, _ := readList(t, &t.Ops[r])
					return check.Anomaly{
						Txns: []int32{ti32},
						Key:  h.KeyName(o.Key),
						Explanation: fmt.Sprintf("%s read key %s = %s (op %d), which contains %s, but %s appends %s to key %s only later (op %d): a transaction observed its own future write (future read)",
							h.TxnName(ti32), h.KeyName(o.Key), h.ListString(l), r, h.ValueName(o.Value), h.TxnName(ti32), h.ValueName(o.Value), h.KeyName(o.Key), j32),
						Ops: check.TxnOps(h, ti32),
					}
				})
			}
		}
	}
}

func valuesString(h *history.History, vs []int32) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = h.ValueName(v)
	}
	return strings.Join(parts, ", ")
}

func expectedString(h *history.History, known bool, base, appended []int32) string {
	if known {
		return h.ListString(append(append([]int32(nil), base...), appended...))
	}
	return "[... " + strings.TrimPrefix(h.ListString(appended), "[")
}

// dupAppend records a value appended to one key more than once, which
// breaks list-append's inference (Elle's verify-unique-appends).
type dupAppend struct {
	k, v          int32
	first, second opRef
}

// laKeys runs the per-key analysis.
type laKeys struct {
	x    *laIndex
	col  *collector
	sink edgeSink
	// Scratch indexed by value id: 1 + position in the key's version
	// order; 1 + index into the key's appends; a stamp.
	pos, wrIdx, mark []int32
	markN            int32
	garbage          []int32 // garbageSeen stamps (key+1), allocated on first use
	bucketStart      []int32
	bucketFill       []int32
	bucketRd         []opRef
	bucketOf         []int32
	err              error // first malformed value id found
	// longest[k] is the read whose list gives k's version order (t = -1
	// if k was never read non-empty).
	longest []opRef
	dups    []dupAppend
	nDups   int
	// stats
	edges                   [3]int64 // ww, wr, rw
	keysWithOrder, orderLen int64
}

func newLAKeys(x *laIndex, col *collector, sink edgeSink) *laKeys {
	p := &laKeys{x: x, col: col, sink: sink,
		pos: mem.Make[int32](x.nv, 1<<20), wrIdx: mem.Make[int32](x.nv, 1<<20), mark: mem.Make[int32](x.nv, 1<<20),
		longest: make([]opRef, x.nk)}
	return p
}

func (p *laKeys) add(from, to int32, rel graph.Rel, why graph.Why) {
	switch rel {
	case graph.WW:
		p.edges[0]++
	case graph.WR:
		p.edges[1]++
	case graph.RW:
		p.edges[2]++
	}
	p.sink.Add(from, to, rel, why)
}

// garbageSeen reports whether v is reported as garbage on key k for the
// first time (a per-key stamp per value: linear in the read sizes).
func (p *laKeys) garbageSeen(v, k int32) bool {
	if p.garbage == nil {
		p.garbage = make([]int32, p.x.nv)
	}
	if p.garbage[v] == k+1 {
		return false
	}
	p.garbage[v] = k + 1
	return true
}

func (p *laKeys) hasDup(l []int32) bool {
	p.markN++
	if p.markN == 0 {
		clear(p.mark)
		p.markN = 1
	}
	for _, v := range l {
		if p.mark[v] == p.markN {
			return true
		}
		p.mark[v] = p.markN
	}
	return false
}

// run analyses every key.
func (p *laKeys) run() {
	for k := int32(0); int(k) < p.x.nk && p.err == nil; k++ {
		p.key(k)
	}
}

// validList checks that every element of l is a value id in range (ids
// are only checked where the pass indexes by them).
func (p *laKeys) validList(r *laRead, k int32) bool {
	for _, v := range r.list {
		if v < 0 || int(v) >= p.x.nv {
			if p.err == nil {
				p.err = history.Errorf("", 0, fmt.Sprintf("txns[%d].ops[%d].v", r.t, r.o), "value id %d out of range (history has %d values)", v, p.x.nv)
			}
			return false
		}
	}
	return true
}

func (p *laKeys) key(k int32) {
	x := p.x
	apps := x.apps[x.appStart[k]:x.appStart[k+1]]
	reads := x.reads[x.readStart[k]:x.readStart[k+1]]
	p.longest[k] = opRef{-1, -1}

	// Writers. Elle requires unique appends per key.
	hasAborted := false
	for i := range apps {
		a := &apps[i]
		if w := p.wrIdx[a.v]; w != 0 {
			p.nDups++
			if len(p.dups) < 8 {
				p.dups = append(p.dups, dupAppend{k, a.v, apps[w-1].ref(), a.ref()})
			}
			continue
		}
		p.wrIdx[a.v] = int32(i + 1)
		if a.st == history.Aborted {
			hasAborted = true
		}
	}
	defer func() {
		for i := range apps {
			p.wrIdx[apps[i].v] = 0
		}
	}()

	// Version order: the distinct elements of the longest read.
	li := -1
	var longest []int32
	for i := range reads {
		if len(reads[i].list) > len(longest) {
			longest, li = reads[i].list, i
		}
	}
	if li >= 0 {
		if !p.validList(&reads[li], k) {
			return
		}
		p.longest[k] = reads[li].ref()
		p.keysWithOrder++
	}
	order := longest
	firstDup := len(longest)
	for i, v := range longest {
		if p.pos[v] != 0 {
			firstDup = i
			break
		}
		p.pos[v] = int32(i + 1)
	}
	if firstDup < len(longest) {
		order = append([]int32(nil), longest[:firstDup]...)
		for _, v := range longest[firstDup:] {
			if p.pos[v] == 0 {
				order = append(order, v)
				p.pos[v] = int32(len(order))
			}
		}
	}
	p.orderLen += int64(len(order))
	defer func() {
		for _, v := range order {
			p.pos[v] = 0
		}
	}()
	// Garbage: elements of the order nobody appended (Adya §3.1: a read
	// returns an installed version; list-append lists start empty).
	// firstAborted: first position whose element an aborted txn appended.
	firstAborted := len(order)
	for i, v := range order {
		w := p.wrIdx[v]
		if w == 0 {
			lr, at, vv := reads[li].ref(), i, v
			p.col.add(model.GarbageVersions, func() check.Anomaly { return p.garbageAnomaly(k, lr, at, vv) })
		} else if apps[w-1].st == history.Aborted && firstAborted == len(order) {
			firstAborted = i
		}
	}

	// A transaction's appends show in the order it made them, from its first
	// (a list is the sequence of appends; ww edges join only different
	// transactions, so without this a read of [2 1] after one transaction
	// appended 1 then 2 passed). Found by the polygraph checker's exhaustive
	// search on tiny list histories.
	// apps of one transaction are adjacent and in program order, so the next
	// append of the same transaction is the next entry, and a transaction's
	// first append is one whose predecessor entry belongs to another.
	prevW := int32(0)
	for i, v := range order {
		w := p.wrIdx[v]
		if w == 0 {
			prevW = 0
			continue
		}
		var ok bool
		if prevW != 0 && apps[prevW-1].t == apps[w-1].t {
			ok = w == prevW+1
		} else {
			ok = w == 1 || apps[w-2].t != apps[w-1].t
		}
		if !ok {
			lr, at, wa := reads[li].ref(), i, apps[w-1]
			p.col.add(aIncompatibleOrder, func() check.Anomaly { return p.appendOrderAnomaly(k, lr, at, wa) })
			break
		}
		prevW = w
	}

	// Reads: compatibility, duplicates, wr edges, G1a, G1b, buckets.
	nb := len(order) + 1
	p.bucketStart = slices.Grow(p.bucketStart[:0], nb+1)[:nb+1]
	clear(p.bucketStart)
	p.bucketOf = slices.Grow(p.bucketOf[:0], len(reads))[:len(reads)]
	incompatible, firstIncompat := 0, -1
	for i := range reads {
		r := &reads[i]
		l := r.list
		compat := len(l) <= len(longest) && slices.Equal(l, longest[:len(l)])
		var dup bool
		if compat {
			dup = len(l) > firstDup
		} else {
			if !p.validList(r, k) {
				return
			}
			incompatible++
			if firstIncompat < 0 {
				firstIncompat = i
			}
			dup = p.hasDup(l)
			for at, v := range l {
				if p.pos[v] == 0 && p.wrIdx[v] == 0 && p.garbageSeen(v, k) {
					rr, at, vv := r.ref(), at, v
					p.col.add(model.GarbageVersions, func() check.Anomaly { return p.garbageAnomaly(k, rr, at, vv) })
				}
			}
		}
		if dup {
			rr := r.ref()
			p.col.add(aDuplicateElements, func() check.Anomaly { return p.dupAnomaly(k, rr) })
		}
		b := int32(0) // bucket: 1 + position of the last element, 0 = empty read, -1 = none
		if len(l) > 0 {
			e := l[len(l)-1]
			b = p.pos[e]
			if b == 0 {
				b = -1
			}
			if w := p.wrIdx[e]; w != 0 {
				wa := &apps[w-1]
				if wa.st != history.Aborted && wa.t != r.t {
					p.add(wa.t, r.t, graph.WR, graph.Why{Key: k, V1: e, V2: history.NoValue, Op1: wa.o, Op2: r.o})
				}
				if r.committed && wa.t != r.t && wa.interm {
					war, rr := wa.ref(), r.ref()
					p.col.add(aG1b, func() check.Anomaly { return p.g1bAnomaly(k, war, rr, e) })
				}
			}
			if r.committed && hasAborted && (!compat || len(l) > firstAborted) {
				for _, e2 := range l {
					if w := p.wrIdx[e2]; w != 0 && apps[w-1].st == history.Aborted {
						war, rr, ee := apps[w-1].ref(), r.ref(), e2
						p.col.add(aG1a, func() check.Anomaly { return p.g1aAnomaly(k, war, rr, ee) })
					}
				}
			}
		}
		p.bucketOf[i] = b
		if b >= 0 {
			p.bucketStart[b+1]++
		}
	}
	if incompatible > 0 {
		fr, lr, n := reads[firstIncompat].ref(), reads[li].ref(), incompatible
		p.col.add(aIncompatibleOrder, func() check.Anomaly { return p.incompatAnomaly(k, fr, lr, n) })
	}
	// Counting sort of readers by bucket: bucket b is
	// bucketRd[bucketStart[b]:bucketStart[b+1]].
	for b := 1; b <= nb; b++ {
		p.bucketStart[b] += p.bucketStart[b-1]
	}
	p.bucketRd = slices.Grow(p.bucketRd[:0], int(p.bucketStart[nb]))[:p.bucketStart[nb]]
	p.bucketFill = append(p.bucketFill[:0], p.bucketStart[:nb]...)
	for i := range reads {
		if b := p.bucketOf[i]; b >= 0 {
			p.bucketRd[p.bucketFill[b]] = reads[i].ref()
			p.bucketFill[b]++
		}
	}

	// Appends: ww and rw edges.
	for i := range apps {
		a := &apps[i]
		if a.st == history.Aborted || p.wrIdx[a.v] != int32(i+1) {
			continue // aborted, or a duplicate append (reported above)
		}
		var at int32 // position the append takes in the order
		var note uint8
		if q := p.pos[a.v]; q != 0 {
			at = q - 1
		} else {
			at = int32(len(order))
			note = 1 // never observed: after the last observed element
		}
		prev := history.NoValue
		if at > 0 {
			prev = order[at-1]
			if w := p.wrIdx[prev]; w != 0 {
				wa := &apps[w-1]
				if wa.st != history.Aborted && wa.t != a.t {
					p.add(wa.t, a.t, graph.WW, graph.Why{Key: k, V1: prev, V2: a.v, Op1: wa.o, Op2: a.o, Note: note})
				}
			}
		}
		for _, r := range p.bucketRd[p.bucketStart[at]:p.bucketStart[at+1]] {
			if r.t != a.t {
				p.add(r.t, a.t, graph.RW, graph.Why{Key: k, V1: prev, V2: a.v, Op1: r.o, Op2: a.o, Note: note})
			}
		}
	}

	// Dirty update: an aborted append followed in the version order by a
	// committed one (unknown-outcome appends in between say nothing).
	if hasAborted {
		t1, t1Aborted, from := int32(-1), false, 0
		for i, v := range order {
			w := p.wrIdx[v]
			if w == 0 {
				continue // nobody appended it; treat as unknown outcome
			}
			t2 := apps[w-1].t
			switch apps[w-1].st {
			case history.Committed:
				if t1Aborted {
					ta, tb, vs := t1, t2, order[from:i+1]
					p.col.add(aDirtyUpdate, func() check.Anomaly { return p.dirtyAnomaly(k, ta, tb, vs) })
				}
				t1, t1Aborted, from = t2, false, i
			case history.Aborted:
				if !t1Aborted {
					t1, t1Aborted, from = t2, true, i
				}
			}
		}
	}

	// Lost update: committed transactions that read the same list of k and
	// then appended to k.
	var cand []*laRead
	for i := range reads {
		if reads[i].committed && reads[i].lu {
			cand = append(cand, &reads[i])
		}
	}
	if len(cand) >= 2 {
		sort.SliceStable(cand, func(i, j int) bool {
			a, b := cand[i].list, cand[j].list
			if len(a) != len(b) {
				return len(a) < len(b)
			}
			return slices.Compare(a, b) < 0
		})
		for i := 0; i < len(cand); {
			j := i + 1
			for j < len(cand) && slices.Equal(cand[i].list, cand[j].list) {
				j++
			}
			if j-i >= 2 {
				group := make([]opRef, 0, j-i)
				for _, r := range cand[i:j] {
					group = append(group, r.ref())
				}
				sort.Slice(group, func(a, b int) bool { return group[a].t < group[b].t })
				p.col.add(aLostUpdate, func() check.Anomaly { return p.lostAnomaly(k, group) })
			}
			i = j
		}
	}
}

func (p *laKeys) readOf(r opRef) []int32 {
	l, _ := readList(&p.x.h.Txns[r.t], &p.x.h.Txns[r.t].Ops[r.o])
	return l
}

func (p *laKeys) dupAnomaly(k int32, r opRef) check.Anomaly {
	h := p.x.h
	l := p.readOf(r)
	counts := map[int32]int{}
	var order []int32
	for _, v := range l {
		if counts[v] == 0 {
			order = append(order, v)
		}
		counts[v]++
	}
	var parts []string
	for _, v := range order {
		if counts[v] > 1 {
			parts = append(parts, fmt.Sprintf("%s appears %d times", h.ValueName(v), counts[v]))
		}
	}
	return check.Anomaly{
		Txns: []int32{r.t},
		Key:  h.KeyName(k),
		Explanation: fmt.Sprintf("%s read key %s = %s, in which %s; every element is appended once, so no list can hold it twice (duplicate elements)",
			h.TxnName(r.t), h.KeyName(k), h.ListString(l), strings.Join(parts, ", ")),
		Ops: check.TxnOps(h, r.t),
	}
}

func (p *laKeys) garbageAnomaly(k int32, r opRef, at int, v int32) check.Anomaly {
	h := p.x.h
	l := p.readOf(r)
	return check.Anomaly{
		Txns: []int32{r.t},
		Key:  h.KeyName(k),
		Explanation: fmt.Sprintf("%s read key %s = %s, which contains %s, but no transaction in the history appended %s to key %s: the read returned a version nobody wrote (garbage version)",
			h.TxnName(r.t), h.KeyName(k), listWindow(h, l, at, at), h.ValueName(v), h.ValueName(v), h.KeyName(k)),
		Ops: check.TxnOps(h, r.t),
	}
}

func (p *laKeys) appendOrderAnomaly(k int32, r opRef, at int, w laApp) check.Anomaly {
	h := p.x.h
	l := p.readOf(r)
	var mine []int32
	for j := range h.Txns[w.t].Ops {
		if o := &h.Txns[w.t].Ops[j]; o.Kind == history.Append && o.Key == k {
			mine = append(mine, o.Value)
		}
	}
	return check.Anomaly{
		Txns: []int32{w.t, r.t},
		Key:  h.KeyName(k),
		Explanation: fmt.Sprintf("%s appended %s to key %s, in that order, yet %s read key %s = %s, where %s does not directly follow %s's previous append to the key: the read does not show %s's appends in the order it made them, which no version order of the key explains",
			h.TxnName(w.t), h.ListString(mine), h.KeyName(k), h.TxnName(r.t), h.KeyName(k), listWindow(h, l, at, at), h.ValueName(w.v), h.TxnName(w.t), h.TxnName(w.t)),
		Ops: check.TxnOps(h, w.t, r.t),
	}
}

func (p *laKeys) g1aAnomaly(k int32, w, r opRef, e int32) check.Anomaly {
	h := p.x.h
	l := p.readOf(r)
	i := slices.Index(l, e)
	return check.Anomaly{
		Txns: []int32{w.t, r.t},
		Key:  h.KeyName(k),
		Explanation: fmt.Sprintf("%s appended %s to key %s and aborted, yet %s (committed) read key %s = %s, which contains %s: a committed transaction observed an aborted write (G1a, aborted read)",
			h.TxnName(w.t), h.ValueName(e), h.KeyName(k), h.TxnName(r.t), h.KeyName(k), listWindow(h, l, i, i), h.ValueName(e)),
		Ops: check.TxnOps(h, w.t, r.t),
	}
}

func (p *laKeys) g1bAnomaly(k int32, w, r opRef, e int32) check.Anomaly {
	h := p.x.h
	l := p.readOf(r)
	var later []int32
	for j := int(w.o) + 1; j < len(h.Txns[w.t].Ops); j++ {
		o := &h.Txns[w.t].Ops[j]
		if o.Kind == history.Append && o.Key == k {
			later = append(later, o.Value)
		}
	}
	return check.Anomaly{
		Txns: []int32{w.t, r.t},
		Key:  h.KeyName(k),
		Explanation: fmt.Sprintf("%s read key %s = %s, which ends with %s; but %s appended %s and then %s to key %s in the same transaction, so %s read a state %s never committed (G1b, intermediate read)",
			h.TxnName(r.t), h.KeyName(k), listTail(h, l), h.ValueName(e), h.TxnName(w.t), h.ValueName(e), valuesString(h, later), h.KeyName(k), h.TxnName(r.t), h.TxnName(w.t)),
		Ops: check.TxnOps(h, w.t, r.t),
	}
}

func (p *laKeys) incompatAnomaly(k int32, bad, long opRef, n int) check.Anomaly {
	h := p.x.h
	a, b := p.readOf(bad), p.readOf(long)
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	var why string
	if i < len(a) && i < len(b) {
		why = fmt.Sprintf("they differ at position %d (%s vs %s)", i+1, h.ValueName(a[i]), h.ValueName(b[i]))
	} else {
		why = fmt.Sprintf("the first is longer than the longest read")
	}
	more := ""
	if n > 1 {
		more = fmt.Sprintf(" (%d reads of key %s are not prefixes of the longest read)", n, h.KeyName(k))
	}
	return check.Anomaly{
		Txns: uniq(bad.t, long.t),
		Key:  h.KeyName(k),
		Explanation: fmt.Sprintf("%s read key %s = %s and %s read key %s = %s; the first is not a prefix of the second (%s), so no single order of appends to key %s explains both reads (incompatible order)%s",
			h.TxnName(bad.t), h.KeyName(k), listWindow(h, a, i, i), h.TxnName(long.t), h.KeyName(k), listWindow(h, b, i, i), why, h.KeyName(k), more),
		Ops: check.TxnOps(h, bad.t, long.t),
	}
}

func (p *laKeys) dirtyAnomaly(k, ta, tb int32, vs []int32) check.Anomaly {
	h := p.x.h
	lr := p.longest[k]
	l := p.readOf(lr)
	return check.Anomaly{
		Txns: uniq(ta, tb, lr.t),
		Key:  h.KeyName(k),
		Explanation: fmt.Sprintf("%s appended %s to key %s and aborted, yet %s read key %s = %s, in which %s's committed append of %s comes after it: %s committed a write on top of an aborted one (dirty update, values %s)",
			h.TxnName(ta), h.ValueName(vs[0]), h.KeyName(k), h.TxnName(lr.t), h.KeyName(k), listWindow(h, l, slices.Index(l, vs[0]), slices.Index(l, vs[len(vs)-1])),
			h.TxnName(tb), h.ValueName(vs[len(vs)-1]), h.TxnName(tb), h.ListString(vs)),
		Ops: check.TxnOps(h, ta, tb, lr.t),
	}
}

func (p *laKeys) lostAnomaly(k int32, group []opRef) check.Anomaly {
	h := p.x.h
	l := p.readOf(group[0])
	var txns []int32
	var parts []string
	for _, r := range group {
		txns = append(txns, r.t)
		var apps []int32
		for j := int(r.o) + 1; j < len(h.Txns[r.t].Ops); j++ {
			o := &h.Txns[r.t].Ops[j]
			if o.Kind == history.Append && o.Key == k {
				apps = append(apps, o.Value)
			}
		}
		parts = append(parts, fmt.Sprintf("%s appended %s", h.TxnName(r.t), valuesString(h, apps)))
	}
	return check.Anomaly{
		Txns: txns,
		Key:  h.KeyName(k),
		Explanation: fmt.Sprintf("%d committed transactions read key %s = %s and then appended to it (%s); each wrote on top of the same version without seeing the others' appends, so at most one of those updates can be based on the state it read (lost update)",
			len(group), h.KeyName(k), listTail(h, l), strings.Join(parts, "; ")),
		Ops: check.TxnOps(h, txns...),
	}
}

// laExplainer renders list-append edges (graph.Explainer).
type laExplainer struct {
	h       *history.History
	longest []opRef
}

func (e *laExplainer) readOf(r opRef) []int32 {
	if r.t < 0 {
		return nil
	}
	l, _ := readList(&e.h.Txns[r.t], &e.h.Txns[r.t].Ops[r.o])
	return l
}

// witness renders the longest read of k around elements a and b.
func (e *laExplainer) witness(k, a, b int32) string {
	lr := e.longest[k]
	if lr.t < 0 {
		return ""
	}
	l := e.readOf(lr)
	lo, hi := len(l)-1, len(l)-1
	if a != history.NoValue {
		lo = slices.Index(l, a)
	}
	if b != history.NoValue {
		if i := slices.Index(l, b); i >= 0 {
			hi = i
		}
	}
	if lo < 0 {
		lo = 0
	}
	return fmt.Sprintf("%s read key %s = %s", e.h.TxnName(lr.t), e.h.KeyName(k), listWindow(e.h, l, lo, hi))
}

func (e *laExplainer) Explain(from, to int32, rel graph.Rel, why graph.Why) string {
	h := e.h
	if rel&(graph.WW|graph.WR|graph.RW) == 0 || why.Key < 0 || int(why.Key) >= h.Keys.Len() {
		return orderExplain(h, from, to, rel)
	}
	k := h.KeyName(why.Key)
	a, b := h.TxnName(from), h.TxnName(to)
	switch rel {
	case graph.WR:
		l := e.readOf(opRef{to, why.Op2})
		return fmt.Sprintf("%s read key %s = %s, which ends with %s's append of %s, so %s < %s (wr)",
			b, k, listTail(h, l), a, h.ValueName(why.V1), a, b)
	case graph.WW:
		if why.Note == 0 {
			return fmt.Sprintf("%s appended %s to key %s and %s appended %s right after it (%s), so %s < %s (ww)",
				a, h.ValueName(why.V1), k, b, h.ValueName(why.V2), e.witness(why.Key, why.V1, why.V2), a, b)
		}
		return fmt.Sprintf("%s appended %s to key %s, the last element any read of key %s shows (%s); %s's append of %s was never read, so it came later, so %s < %s (ww)",
			a, h.ValueName(why.V1), k, k, e.witness(why.Key, why.V1, history.NoValue), b, h.ValueName(why.V2), a, b)
	case graph.RW:
		l := e.readOf(opRef{from, why.Op1})
		if why.V1 == history.NoValue {
			if why.Note == 0 {
				return fmt.Sprintf("%s read key %s = [] (the initial state), and %s appended %s, the first element (%s), so %s < %s (rw)",
					a, k, b, h.ValueName(why.V2), e.witness(why.Key, why.V2, why.V2), a, b)
			}
			return fmt.Sprintf("%s read key %s = [] (the initial state), and %s appended %s, which no read shows, so it came after the initial state, so %s < %s (rw)",
				a, k, b, h.ValueName(why.V2), a, b)
		}
		if why.Note == 0 {
			return fmt.Sprintf("%s read key %s = %s, and %s appended %s, the next element (%s), so %s < %s (rw)",
				a, k, listTail(h, l), b, h.ValueName(why.V2), e.witness(why.Key, why.V1, why.V2), a, b)
		}
		return fmt.Sprintf("%s read key %s = %s, which ends with the last element any read of key %s shows; %s's append of %s was never read, so it came later, so %s < %s (rw)",
			a, k, listTail(h, l), k, b, h.ValueName(why.V2), a, b)
	}
	return orderExplain(h, from, to, rel)
}

// orderExplain renders process and realtime edges.
func orderExplain(h *history.History, from, to int32, rel graph.Rel) string {
	a, b := h.TxnName(from), h.TxnName(to)
	ta, tb := &h.Txns[from], &h.Txns[to]
	switch {
	case rel&graph.Process != 0:
		sess := "the same session"
		if ta.Session >= 0 && h.Sessions != nil && int(ta.Session) < h.Sessions.Len() {
			sess = "session " + h.Sessions.String(ta.Session)
		}
		return fmt.Sprintf("%s and %s ran in %s, %s first, so %s < %s (process)", a, b, sess, a, a, b)
	case rel&graph.Realtime != 0:
		if ta.HasTime && tb.HasTime {
			return fmt.Sprintf("%s completed (at %d) before %s was invoked (at %d), so %s < %s (realtime)",
				a, ta.Complete, b, tb.Invoke, a, b)
		}
		return fmt.Sprintf("%s completed before %s was invoked, so %s < %s (realtime)", a, b, a, b)
	}
	return fmt.Sprintf("%s < %s (%s)", a, b, rel)
}

// checkListAppend is ListAppend.Check.
func checkListAppend(ctx context.Context, h *history.History, opts check.Options) (*check.Result, error) {
	if h == nil {
		return nil, errors.New("list-append: nil history")
	}
	st := newStats()
	p := planFor(opts.Model)
	r := newResult("list-append", p)
	hs := h.Stats()
	st.m["txns"], st.m["ops"], st.m["keys"] = hs.Txns, hs.Ops, hs.Keys
	st.m["committed"], st.m["aborted"], st.m["unknown"] = hs.Committed, hs.Aborted, hs.Unknown
	progress(opts, "index", 0, int64(len(h.Txns)))
	x, err := buildLA(h)
	if err != nil {
		return nil, err
	}
	st.lap("index")
	if x.unsupportedN > 0 {
		return unknownResult(r, unsupportedReason(h, "appends and list reads", x.unsupported, x.unsupportedN), st), nil
	}
	st.m["reads"], st.m["appends"] = x.nReadOps, x.nAppendOps
	if res, stop := cancelled(ctx, r, st); stop {
		return res, nil
	}
	col := newCollector(h, opts.MaxPerType())
	laInternal(x, col)
	st.lap("internal")
	b := graph.NewBuilder(len(h.Txns))
	pk := newLAKeys(x, col, b)
	progress(opts, "keys", 0, int64(x.nk))
	pk.run()
	progress(opts, "keys", int64(x.nk), int64(x.nk))
	st.lap("versions")
	if pk.err != nil {
		return nil, pk.err
	}
	if pk.nDups > 0 {
		return unknownResult(r, dupAppendReason(h, pk.dups, pk.nDups), st), nil
	}
	st.m["ww_edges"], st.m["wr_edges"], st.m["rw_edges"] = pk.edges[0], pk.edges[1], pk.edges[2]
	st.m["keys_with_order"], st.m["version_order_elements"] = pk.keysWithOrder, pk.orderLen
	if res, stop := cancelled(ctx, r, st); stop {
		return res, nil
	}
	cycleStage(ctx, h, b, p, opts, &laExplainer{h: h, longest: pk.longest}, col, r, st)
	col.into(r)
	r.Stats = st.done()
	r.Finish()
	return r, nil
}

// dupAppendReason explains why duplicate appends make the check impossible
// (Elle's verify-unique-appends: :valid? :unknown, :duplicate-appends).
func dupAppendReason(h *history.History, dups []dupAppend, n int) string {
	var b strings.Builder
	d := dups[0]
	fmt.Fprintf(&b, "value %s appended to key %s more than once (%s and %s); list-append needs every appended value to be unique per key, so version orders cannot be inferred",
		h.ValueName(d.v), h.KeyName(d.k), h.TxnString(d.first.t), h.TxnString(d.second.t))
	if n > 1 {
		fmt.Fprintf(&b, " (%d duplicate appends in all", n)
		for i, d := range dups[1:] {
			if i == 0 {
				b.WriteString(", also")
			}
			fmt.Fprintf(&b, " %s to key %s by %s;", h.ValueName(d.v), h.KeyName(d.k), h.TxnName(d.second.t))
		}
		b.WriteString(")")
	}
	return b.String()
}
