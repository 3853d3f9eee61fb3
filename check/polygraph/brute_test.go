package polygraph

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// randHistory builds a tiny register history: n committed transactions of
// 1-3 ops on keys 0..1, unique written values, reads of nil or of any value
// written to the key (by any transaction, earlier or later).
func randHistory(r *rand.Rand, n int) *history.History {
	h := history.New()
	h.Evidence.Sessions = true
	keys := []int32{h.Keys.Int(0), h.Keys.Int(1)}
	type plan struct {
		write bool
		key   int
	}
	plans := make([][]plan, n)
	written := [2][]int64{}
	val := int64(0)
	vals := make([][]int64, n)
	for i := range plans {
		for j := 0; j < 1+r.IntN(3); j++ {
			p := plan{write: r.IntN(2) == 0, key: r.IntN(2)}
			plans[i] = append(plans[i], p)
			if p.write {
				val++
				written[p.key] = append(written[p.key], val)
				vals[i] = append(vals[i], val)
			} else {
				vals[i] = append(vals[i], 0)
			}
		}
	}
	sess := []int32{h.Sessions.Int(0), h.Sessions.Int(1)}
	seq := [2]int32{}
	for i := range plans {
		c := r.IntN(2)
		t := history.Txn{Session: sess[c], Seq: seq[c]}
		switch r.IntN(10) {
		case 0:
			t.Status = history.Aborted
		case 1:
			t.Status = history.Unknown
		}
		seq[c]++
		if r.IntN(2) == 0 { // client interval (sessions are not kept sequential in time: only strict uses times)
			t.HasTime, t.Invoke = true, int64(r.IntN(10))
			t.Complete = t.Invoke + int64(r.IntN(4))
		}
		for j, p := range plans[i] {
			o := history.Op{Key: keys[p.key], Value: history.NoValue}
			if p.write {
				o.Kind, o.Value = history.Write, h.Values.Int(vals[i][j])
			} else if ws := written[p.key]; len(ws) > 0 && r.IntN(4) != 0 {
				o.Value = h.Values.Int(ws[r.IntN(len(ws))])
			}
			t.Ops = append(t.Ops, o)
		}
		h.Add(t)
	}
	return h
}

func permute(n int, f func(p []int) bool) bool {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var rec func(k int) bool
	rec = func(k int) bool {
		if k == n {
			return f(p)
		}
		for i := k; i < n; i++ {
			p[k], p[i] = p[i], p[k]
			if rec(k + 1) {
				return true
			}
			p[k], p[i] = p[i], p[k]
		}
		return false
	}
	return rec(0)
}

// readsOK: txn t's reads, seeing state st (key -> value id) plus its own writes.
// A nil read of an unknown-outcome transaction is an unknown result, not a
// read of the initial state (docs/recorder.md, Outcomes; Jepsen's :info
// convention, followed by regread and the checker): it constrains nothing
// (FuzzCheck input c21890a87219c564: the oracle called [w 0 1, r 0 nil],
// observed by a committed reader, impossible).
func readsOK(t *history.Txn, st map[int32]int32) bool {
	own := map[int32]int32{}
	for _, o := range t.Ops {
		if o.Kind == history.Write {
			own[o.Key] = o.Value
			continue
		}
		if t.Status == history.Unknown && o.Value == history.NoValue {
			continue
		}
		want, ok := own[o.Key]
		if !ok {
			want, ok = st[o.Key]
			if !ok {
				want = history.NoValue
			}
		}
		if o.Value != want {
			return false
		}
	}
	return true
}

func apply(t *history.Txn, st map[int32]int32) {
	for _, o := range t.Ops {
		if o.Kind == history.Write {
			st[o.Key] = o.Value
		}
	}
}

// rtOK reports whether order p respects real-time order (a committed
// transaction that completed before another was invoked comes first).
// An unknown-outcome transaction is never a real-time predecessor (its
// commit may have come arbitrarily late), as in the checker and package
// graph.
func rtOK(h *history.History, p []int) bool {
	return keepsOrder(h, p, func(a, b *history.Txn) bool {
		return a.HasTime && b.HasTime && a.Complete < b.Invoke && a.Status != history.Unknown
	})
}

// soOK reports whether order p respects session order: a transaction comes
// after its session's earlier committed ones (an unknown-outcome one is
// never a predecessor: its commit may have come late, as in the checker).
func soOK(h *history.History, p []int) bool {
	return keepsOrder(h, p, func(a, b *history.Txn) bool {
		return a.Session == b.Session && a.Seq < b.Seq && a.Status != history.Unknown
	})
}

// keepsOrder reports whether order p places no transaction a after a
// transaction b that a must precede (before(a, b)).
func keepsOrder(h *history.History, p []int, before func(a, b *history.Txn) bool) bool {
	for x := range p {
		for y := x + 1; y < len(p); y++ {
			if before(&h.Txns[p[y]], &h.Txns[p[x]]) { // p[y] is placed after p[x]
				return false
			}
		}
	}
	return true
}

// data is what the brute-force oracles need of a data type: the op kind
// that installs a version, a fresh (initial) state, whether txn t's reads
// are those of state st plus its own writes, and t's writes applied to st.
type data[S any] struct {
	write history.Kind
	fresh func() S
	reads func(t *history.Txn, st S) bool
	apply func(t *history.Txn, st S)
}

// registers: reads see the last write (readsOK, apply); lists: reads see
// every append in order (listReadsOK, applyList, lists_brute_test.go).
var (
	registers = data[map[int32]int32]{history.Write, func() map[int32]int32 { return map[int32]int32{} }, readsOK, apply}
	lists     = data[map[int32][]int32]{history.Append, func() map[int32][]int32 { return map[int32][]int32{} }, listReadsOK, applyList}
)

// oracle is the exhaustive search that decides model m on histories of
// data type d (of committed transactions: see possible):
//
//   - serializable: some serial order explains every read;
//   - strong-session-serializable: one that also respects session order;
//   - strict-serializable: one that respects real-time and session order
//     (strict serializable implies strong-session serializable);
//   - snapshot-isolation: some commit order and, per transaction, some
//     snapshot (a prefix of the commits before it) explain every read, and
//     of two transactions writing a common key the later one's snapshot
//     includes the earlier (Cerone et al.'s abstract-execution definition
//     of SI);
//   - strong-session-snapshot-isolation: also in session order, each
//     snapshot including the session's earlier transactions.
func oracle[S any](d data[S], m string) func(h *history.History) bool {
	switch m {
	case model.Serializable:
		return func(h *history.History) bool { return bruteSerial(d, h, false, false) }
	case model.StrongSessionSerializable:
		return func(h *history.History) bool { return bruteSerial(d, h, true, false) }
	case model.StrictSerializable:
		return func(h *history.History) bool { return bruteSerial(d, h, true, true) }
	case model.SnapshotIsolation:
		return func(h *history.History) bool { return bruteSI(d, h, false) }
	case model.StrongSessionSnapshotIsolation:
		return func(h *history.History) bool { return bruteSI(d, h, true) }
	}
	panic("no exhaustive search for " + m)
}

// bruteSerial: some serial order explains every read (respecting session
// order if session, real-time order if realtime).
func bruteSerial[S any](d data[S], h *history.History, session, realtime bool) bool {
	return permute(len(h.Txns), func(p []int) bool {
		if realtime && !rtOK(h, p) || session && !soOK(h, p) {
			return false
		}
		st := d.fresh()
		for _, i := range p {
			if !d.reads(&h.Txns[i], st) {
				return false
			}
			d.apply(&h.Txns[i], st)
		}
		return true
	})
}

// bruteSI: some commit order and, per transaction, some snapshot explain
// every read, without write-write conflicts between a transaction and the
// commits after its snapshot (see oracle); with session, in session order
// and with snapshots that include the session's earlier transactions.
func bruteSI[S any](d data[S], h *history.History, session bool) bool {
	n := len(h.Txns)
	ws := make([]map[int32]bool, n)
	for i := range ws {
		ws[i] = map[int32]bool{}
		for _, o := range h.Txns[i].Ops {
			if o.Kind == d.write {
				ws[i][o.Key] = true
			}
		}
	}
	return permute(n, func(p []int) bool {
		if session && !soOK(h, p) {
			return false
		}
		for pos, i := range p {
			ok := false
			for s := 0; s <= pos && !ok; s++ {
				conflict := false
				for q := s; q < pos && session; q++ { // strong session: the snapshot includes the session's earlier txns
					pq := &h.Txns[p[q]]
					conflict = conflict || pq.Session == h.Txns[i].Session && pq.Seq < h.Txns[i].Seq && pq.Status != history.Unknown
				}
				for q := s; q < pos; q++ { // committed before i but not in its snapshot
					for k := range ws[p[q]] {
						conflict = conflict || ws[i][k]
					}
				}
				if conflict {
					continue
				}
				st := d.fresh()
				for q := 0; q < s; q++ {
					d.apply(&h.Txns[p[q]], st)
				}
				ok = d.reads(&h.Txns[i], st)
			}
			if !ok {
				return false
			}
		}
		return true
	})
}

// possible runs f on every history that keeps the committed transactions
// and some subset of the unknown-outcome ones (aborted ones never took
// effect); it reports whether f accepts any.
func possible(h *history.History, f func(*history.History) bool) bool {
	var unk []int
	for i := range h.Txns {
		if h.Txns[i].Status == history.Unknown {
			unk = append(unk, i)
		}
	}
	for mask := 0; mask < 1<<len(unk); mask++ {
		keep := map[int]bool{}
		for b, i := range unk {
			keep[i] = mask&(1<<b) != 0
		}
		hh := *h
		hh.Txns = nil
		for i := range h.Txns {
			st := h.Txns[i].Status
			if st == history.Committed || st == history.Unknown && keep[i] {
				hh.Txns = append(hh.Txns, h.Txns[i]) // status kept: see soOK, rtOK
			}
		}
		if f(&hh) {
			return true
		}
	}
	return false
}

// TestBruteForce: on many tiny random histories, the polygraph's verdict
// for serializable and snapshot-isolation equals exhaustive search over
// every serial order / every commit order with snapshots, with and
// without session order, and for strict serializable over every serial
// order that respects real time.
func TestBruteForce(t *testing.T) {
	seeds := 800
	if testing.Short() {
		seeds = 300
	}
	counts := map[string][2]int{}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		h := randHistory(r, 2+r.IntN(4))
		for _, m := range []string{model.Serializable, model.SnapshotIsolation, model.StrongSessionSerializable, model.StrongSessionSnapshotIsolation, model.StrictSerializable} {
			want := possible(h, oracle(registers, m))
			for _, inf := range []string{"false", "true"} {
				res, err := Checker{}.Check(context.Background(), h, check.Options{Model: m, Params: map[string]string{"inference": inf}})
				if err != nil {
					t.Fatal(err)
				}
				if (res.Verdict == check.Valid) != want || res.Verdict == check.Unknown {
					var txns []string
					for i := range h.Txns {
						txns = append(txns, h.TxnString(int32(i)))
					}
					t.Fatalf("seed %d %s inference=%s: polygraph %s %v, exhaustive search valid=%v\n%v\n%s", seed, m, inf, res.Verdict, res.AnomalyTypes, want, txns, dump(res))
				}
			}
			c := counts[m]
			if want {
				c[0]++
			} else {
				c[1]++
			}
			counts[m] = c
		}
	}
	t.Logf("valid/invalid: %v", counts)
}

// FuzzCheck: arbitrary tiny histories never make the checker fail or
// panic, and it always reaches a verdict that exhaustive search confirms.
func FuzzCheck(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42} {
		f.Add(s, uint8(4))
	}
	f.Fuzz(func(t *testing.T, seed uint64, n uint8) {
		r := rand.New(rand.NewPCG(seed, 7))
		h := randHistory(r, 1+int(n%5))
		res, err := Checker{}.Check(context.Background(), h, check.Options{Model: model.Serializable, Params: map[string]string{"inference": "false"}})
		if err != nil {
			t.Fatal(err)
		}
		if (res.Verdict == check.Valid) != possible(h, oracle(registers, model.Serializable)) {
			t.Fatalf("verdict %s disagrees with exhaustive search\n%s", res.Verdict, dump(res))
		}
	})
}
