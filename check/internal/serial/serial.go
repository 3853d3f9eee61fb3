// Package serial is the commit-order replay shared by the order-based
// checkers: chronos' serializability replay (TimeKiller, Ext axiom in
// commit order) and enne (replay in an expected serialization order, the
// seed paper's Enne, §5). Both execute a history serially in the order of
// one transaction timestamp, checking each transaction's reads against the
// state the transactions before it left and then installing its writes;
// they differ only in what they check and how they explain a failure,
// which stays in each checker.
//
// The shared parts: Order (the transactions to replay, sorted by the
// timestamp, ties by history index), Replay (the loop over that order,
// with cancellation and progress), and State (per key, the versions
// installed so far in replay order: value, writer and the writer's
// timestamp; the last is the current state, the "frontier").
package serial

import (
	"context"
	"slices"

	"github.com/txray/txray/history"
)

// Version is one installed version of a key: its writer (transaction
// index), the timestamp the writer was replayed at, and its value (a value
// id; checkers replaying lists store the list length).
type Version struct {
	TS     history.Timestamp
	Writer int32
	Val    int32
}

// State is the replay state: per key, the versions installed so far,
// oldest first.
type State struct {
	vers [][]Version
	val  []int32 // current value per key (one load for Value)
}

// NewState returns the state of nkeys keys, all at their initial (unborn)
// version.
func NewState(nkeys int) *State {
	s := &State{vers: make([][]Version, nkeys), val: make([]int32, nkeys)}
	for i := range s.val {
		s.val[i] = history.NoValue
	}
	return s
}

// Frontier returns the current (last installed) version of k; ok is false
// when k is still at its initial state (Writer -1, Val history.NoValue).
func (s *State) Frontier(k int32) (v Version, ok bool) {
	vs := s.vers[k]
	if len(vs) == 0 {
		return Version{Writer: -1, Val: history.NoValue}, false
	}
	return vs[len(vs)-1], true
}

// Value returns the current value of k (history.NoValue: initial).
func (s *State) Value(k int32) int32 { return s.val[k] }

// Install makes v the current version of k.
func (s *State) Install(k int32, v Version) {
	s.vers[k] = append(s.vers[k], v)
	s.val[k] = v.Val
}

// Versions returns k's installed versions, oldest first (not to be
// modified).
func (s *State) Versions(k int32) []Version { return s.vers[k] }

// Keys is the number of keys.
func (s *State) Keys() int { return len(s.vers) }

// Collect discards, per key, every version older than the last one whose
// timestamp is at or before oldest (nothing replayed later can read them),
// and returns the longest version list it saw before discarding.
func (s *State) Collect(oldest history.Timestamp) (maxVers int) {
	for k, vs := range s.vers {
		if len(vs) > maxVers {
			maxVers = len(vs)
		}
		if len(vs) < 2 {
			continue
		}
		keep := len(vs) - 1
		for keep > 0 && oldest.Less(vs[keep].TS) {
			keep--
		}
		if keep > 0 {
			n := copy(vs, vs[keep:])
			s.vers[k] = vs[:n]
		}
	}
	return maxVers
}

// Order returns the indices of the transactions of h that include
// accepts, sorted by the timestamp ts gives them (by (P, L); ties in
// history order). include decides which transactions have a place.
func Order(h *history.History, include func(i int32, t *history.Txn) bool, ts func(t *history.Txn) history.Timestamp) []int32 {
	type ent struct {
		ts  history.Timestamp
		txn int32
	}
	es := make([]ent, 0, len(h.Txns))
	for i := range h.Txns {
		t := &h.Txns[i]
		if include(int32(i), t) {
			es = append(es, ent{ts(t), int32(i)})
		}
	}
	slices.SortFunc(es, func(a, b ent) int {
		switch {
		case a.ts.P != b.ts.P:
			if a.ts.P < b.ts.P {
				return -1
			}
			return 1
		case a.ts.L != b.ts.L:
			if a.ts.L < b.ts.L {
				return -1
			}
			return 1
		}
		return int(a.txn - b.txn)
	})
	out := make([]int32, len(es))
	for i, e := range es {
		out[i] = e.txn
	}
	return out
}

// Replay calls step for each transaction of order with its position,
// checking ctx (and reporting progress, if not nil) every 65,536 steps.
func Replay(ctx context.Context, order []int32, progress func(done, total int64), step func(x int32, t int32)) error {
	for x, t := range order {
		if x&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if progress != nil {
				progress(int64(x), int64(len(order)))
			}
		}
		step(int32(x), t)
	}
	return nil
}
