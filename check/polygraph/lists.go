package polygraph

import (
	"slices"
	"strconv"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// List-append histories (Elle's list-append workload: unique appends and
// reads of whole lists) are decided by the same polygraph, as an
// independent cross-check of the list-append inference checker (check/elle):
// nothing here calls it.
//
// A list read shows a prefix of its key's version order (Kingsbury & Alvaro,
// "Elle", VLDB 2020, §3: lists are recoverable and traceable), so:
//
//   - the version read is the one installed by the transaction that
//     appended the list's last element (the empty list is the initial
//     state): the register view reads that transaction's last value;
//   - the longest read of a key (every other read must be a prefix of it)
//     orders the transactions whose elements it shows: the sequence of
//     appending transactions, consecutive elements of one transaction
//     merged, is a known version order (ww and rw edges, as a King Cobra
//     partial version order);
//   - an append no read shows came after every shown element (else the
//     longest read would show it): known ww from the last shown version to
//     each such transaction, and rw from that version's readers. Only the
//     order among those unobserved appends is left to the search (Cobra
//     constraints; two of them that read the same last version and both
//     appended are a lost update by write combining).
//
// The register view replaces each append by a write of the same value and
// each list read by a read of its last element; regread then resolves
// writers as for registers. The list-only, order-free checks are done here:
// elements nobody appended (garbage-versions), appended only by aborted
// transactions (aborted-read, G1a), a read ending in an element its writer
// followed with another append to the key (intermediate-read, G1b),
// duplicate elements, reads that are not prefixes of one order
// (incompatible-order), and a transaction's later read of a key that is not
// its earlier read plus its own appends since (internal).

// listShape classifies h's ops: list (appends and list reads, nil reads
// counting as empty lists), reg (register writes and non-nil scalar
// reads), other (any other kind).
func listShape(h *history.History) (list, reg, other bool) {
	s := h.Shape()
	list = s.Has(history.Append) || s.ListReads
	reg = s.Has(history.Write) || s.ValueReads
	other = !s.Only(history.Read, history.Write, history.Append)
	return
}

// noInitialTxn is an initial-value convention no value renders as: list
// histories start from the empty list, never from an initial transaction.
const noInitialTxn = "\x00list-append: no initial transaction"

// listRead returns the list a read observed (a nil read in a committed
// transaction is the empty list, as in Elle), or ok=false when unknown.
func listRead(t *history.Txn, o *history.Op) (l []int32, ok bool) {
	if o.IsList && !o.ListUnknown {
		return t.ListOf(o), true
	}
	if !o.IsList && o.Value == history.NoValue && t.Status == history.Committed {
		return nil, true
	}
	return nil, false
}

// listView returns the register view of list-append history h (see above),
// with VersionOrder holding, per key, the writers' last values in the
// order the longest read shows them, and the list anomalies found.
//
// counted marks the transactions that are nodes: committed ones, and
// unknown-outcome ones some counted read shows an element of (anywhere in
// the list, not only last: so they committed).
//
// givenVO is the history's own version order of list keys (elements,
// oldest first: version_order records, --version-order), turned into
// writers' last values; nil when the history has none.
func listView(h *history.History) (view *history.History, as []check.Anomaly, counted []bool, givenVO map[int32][]int32) {
	v := *h
	v.Txns = make([]history.Txn, len(h.Txns))
	v.VersionOrder = map[int32][]int32{}
	v.Evidence.VersionOrder = false
	type app struct{ t, op int32 }
	nk := h.Keys.Len()
	appender := make([]map[int32]app, nk) // per key: element -> its append
	lastApp := map[[2]int32]int32{}       // (txn, key) -> value of its last append
	apps := map[[2]int32][]int32{}        // (txn, key) -> its appends, in program order
	dup := map[[2]int32]bool{}
	for ti := range h.Txns {
		t := &h.Txns[ti]
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind != history.Append {
				continue
			}
			if appender[o.Key] == nil {
				appender[o.Key] = map[int32]app{}
			}
			if a, seen := appender[o.Key][o.Value]; seen && a.t != int32(ti) {
				dup[[2]int32{o.Key, o.Value}] = true
			}
			appender[o.Key][o.Value] = app{int32(ti), int32(j)}
			lastApp[[2]int32{int32(ti), o.Key}] = o.Value
			apps[[2]int32{int32(ti), o.Key}] = append(apps[[2]int32{int32(ti), o.Key}], o.Value)
		}
	}
	add := func(typ string, k int32, txns []int32, text string) {
		as = append(as, check.Anomaly{Type: typ, Key: h.KeyName(k), Txns: txns, Ops: check.TxnOps(h, txns...), Explanation: text})
	}
	// versionsOf maps a list of key k's elements to k's versions in the
	// register view: each appending transaction's last append to k, once
	// per run of its elements (elements nobody appended are skipped).
	versionsOf := func(k int32, elems []int32) []int32 {
		var vo []int32
		prev := int32(-1)
		for _, e := range elems {
			a, ok := appender[k][e]
			if !ok || a.t == prev {
				continue
			}
			prev = a.t
			vo = append(vo, lastApp[[2]int32{a.t, k}])
		}
		return vo
	}
	// Which transactions count: committed ones, and unknown-outcome ones
	// whose elements a counted read shows (so they committed).
	counted = make([]bool, len(h.Txns))
	var work []int32
	for ti := range h.Txns {
		if h.Txns[ti].Status == history.Committed {
			counted[ti] = true
			work = append(work, int32(ti))
		}
	}
	for len(work) > 0 {
		ti := work[len(work)-1]
		work = work[:len(work)-1]
		t := &h.Txns[ti]
		for j := range t.Ops {
			l, ok := listRead(t, &t.Ops[j])
			if !ok || t.Ops[j].Kind != history.Read {
				continue
			}
			for _, e := range l {
				if a, ok := appender[t.Ops[j].Key][e]; ok && !counted[a.t] && h.Txns[a.t].Status == history.Unknown {
					counted[a.t] = true
					work = append(work, a.t)
				}
			}
		}
	}
	longest := make([][]int32, nk)
	longBy := make([]int32, nk)
	type readRef struct{ t, op int32 }
	var reads [][]readRef = make([][]readRef, nk)
	for ti := range h.Txns {
		t := &h.Txns[ti]
		nt := history.Txn{Index: t.Index, Session: t.Session, Seq: t.Seq, Status: t.Status, HasTime: t.HasTime,
			Invoke: t.Invoke, Complete: t.Complete, StartTS: t.StartTS, CommitTS: t.CommitTS, ID: t.ID,
			Ops: make([]history.Op, len(t.Ops)), Ext: t.Ext} // Ext for op times; no op of nt refers to a predicate
		expect := map[int32][]int32{} // key -> the list this txn must read next (after a first read or own appends)
		readBefore := map[int32]bool{}
		for j := range t.Ops {
			o := &t.Ops[j]
			no := history.Op{Kind: o.Kind, Key: o.Key, Value: o.Value, HasTime: o.HasTime}
			switch o.Kind {
			case history.Append:
				no.Kind = history.Write
				expect[o.Key] = append(slices.Clone(expect[o.Key]), o.Value)
			case history.Read:
				l, ok := listRead(t, o)
				no.Value = history.NoValue
				if !ok {
					// unknown result: a read of nothing, never of the initial state
					no.Kind, no.IsList, no.ListUnknown = history.Read, true, true
					break
				}
				if len(l) > 0 {
					no.Value = l[len(l)-1]
				}
				if !counted[ti] {
					break
				}
				k := o.Key
				// internal: a later read must be the earlier one plus own appends since;
				// a first read after own appends must end with them.
				if e, has := expect[k]; has {
					bad := false
					if readBefore[k] {
						bad = !slices.Equal(l, e)
					} else {
						bad = len(l) < len(e) || !slices.Equal(l[len(l)-len(e):], e)
					}
					if bad {
						add(model.Internal, k, []int32{int32(ti)}, h.TxnName(int32(ti))+" read key "+h.KeyName(k)+" = "+h.ListString(l)+
							" (op "+strconv.Itoa(j+1)+"), but its earlier read and its own appends since say the list is "+listTail(h, e, readBefore[k])+
							": a transaction reads one snapshot plus its own writes.")
					}
				}
				readBefore[k] = true
				expect[k] = slices.Clone(l)
				// order-free element checks
				seen := map[int32]bool{}
				for i, e := range l {
					if seen[e] {
						add(model.DuplicateElements, k, []int32{int32(ti)}, h.TxnName(int32(ti))+" read key "+h.KeyName(k)+" = "+h.ListString(l)+
							", which holds "+h.ValueName(e)+" twice: every element is appended once.")
						break
					}
					seen[e] = true
					a, ok := appender[k][e]
					switch {
					case dup[[2]int32{k, e}]:
						add(model.DuplicateWrite, k, []int32{int32(ti)}, h.TxnName(int32(ti))+" read key "+h.KeyName(k)+" = "+h.ListString(l)+
							", whose element "+h.ValueName(e)+" several transactions appended: its writer is ambiguous.")
					case !ok:
						add(model.GarbageVersions, k, []int32{int32(ti)}, h.TxnName(int32(ti))+" read key "+h.KeyName(k)+" = "+h.ListString(l)+
							", whose element "+h.ValueName(e)+" no transaction appended to it.")
					case a.t == int32(ti) && a.op > int32(j):
						add(model.FutureRead, k, []int32{int32(ti)}, h.TxnName(int32(ti))+" read key "+h.KeyName(k)+" = "+h.ListString(l)+
							", whose element "+h.ValueName(e)+" it appends itself only later (op "+strconv.Itoa(int(a.op)+1)+").")
					case h.Txns[a.t].Status == history.Aborted:
						add(model.AbortedRead, k, []int32{int32(ti), a.t}, h.TxnName(int32(ti))+" read key "+h.KeyName(k)+" = "+h.ListString(l)+
							", whose element "+h.ValueName(e)+" only aborted "+h.TxnName(a.t)+" appended.")
					case i == len(l)-1 && a.t != int32(ti) && lastApp[[2]int32{a.t, k}] != e:
						add(model.IntermediateRead, k, []int32{int32(ti), a.t}, h.TxnName(int32(ti))+" read key "+h.KeyName(k)+" = "+h.ListString(l)+
							", which ends with "+h.ValueName(e)+", but "+h.TxnName(a.t)+" appended more to the key after it: an intermediate version.")
					}
				}
				// Each other transaction's appends must show as one complete run, in its
				// order: its versions are installed together (the last run may be cut
				// short only at an intermediate read, reported above).
				runs := map[int32]int{}
				for i := 0; i < len(l); {
					a, ok := appender[k][l[i]]
					end := i + 1
					for ok && end < len(l) {
						if b, ok2 := appender[k][l[end]]; !ok2 || b.t != a.t {
							break
						}
						end++
					}
					if ok && a.t != int32(ti) && h.Txns[a.t].Status != history.Aborted && !dup[[2]int32{k, l[i]}] {
						runs[a.t]++
						whole := apps[[2]int32{a.t, k}]
						switch {
						case runs[a.t] == 2:
							add(model.G0, k, []int32{int32(ti), a.t}, h.TxnName(int32(ti))+" read key "+h.KeyName(k)+" = "+h.ListString(l)+
								", in which "+h.TxnName(a.t)+"'s appends "+h.ListString(whole)+" are interleaved with another transaction's: their versions alternate in the version order (a write cycle).")
						case end < len(l) && !slices.Equal(l[i:end], whole) && slices.Equal(l[i:end], whole[:min(len(whole), end-i)]):
							add(model.G0, k, []int32{int32(ti), a.t}, h.TxnName(int32(ti))+" read key "+h.KeyName(k)+" = "+h.ListString(l)+
								", in which another transaction's append follows only part of "+h.TxnName(a.t)+"'s appends "+h.ListString(whole)+
								": their versions alternate in the version order (a write cycle).")
						case !slices.Equal(l[i:end], whole[:min(len(whole), end-i)]):
							add(model.IncompatibleOrder, k, []int32{int32(ti), a.t}, h.TxnName(int32(ti))+" read key "+h.KeyName(k)+" = "+h.ListString(l)+
								", which does not show "+h.TxnName(a.t)+"'s appends "+h.ListString(whole)+" in the order it made them, from the first: no version order explains it.")
						}
					}
					i = end
				}
				reads[k] = append(reads[k], readRef{int32(ti), int32(j)})
				if len(l) > len(longest[k]) {
					longest[k], longBy[k] = l, int32(ti)
				}
			}
			nt.Ops[j] = no
		}
		v.Txns[ti] = nt
	}
	// incompatible orders, and the version order from the longest read
	for k := int32(0); k < int32(nk); k++ {
		lg := longest[k]
		for _, r := range reads[k] {
			l, _ := listRead(&h.Txns[r.t], &h.Txns[r.t].Ops[r.op])
			if len(l) > len(lg) || !slices.Equal(l, lg[:len(l)]) {
				add(model.IncompatibleOrder, k, []int32{r.t, longBy[k]}, h.TxnName(r.t)+" read key "+h.KeyName(k)+" = "+h.ListString(l)+
					" and "+h.TxnName(longBy[k])+" read "+h.ListString(lg)+": neither is a prefix of the other, so no single version order of the key explains both.")
			}
		}
		if vo := versionsOf(k, lg); len(vo) > 0 {
			v.VersionOrder[k] = vo
		}
	}
	for k, order := range h.VersionOrder {
		if k < 0 || int(k) >= nk {
			continue
		}
		if vo := versionsOf(k, order); len(vo) > 1 {
			if givenVO == nil {
				givenVO = map[int32][]int32{}
			}
			givenVO[k] = vo
		}
	}
	return &v, as, counted, givenVO
}

func listTail(h *history.History, e []int32, read bool) string {
	if read {
		return h.ListString(e)
	}
	return "something ending in " + h.ListString(e)
}
