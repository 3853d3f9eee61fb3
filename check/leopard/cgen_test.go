package leopard

import (
	"math/rand/v2"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// cgen is a concurrent executor with client intervals for BlindW-RW (each op
// reads or blindly writes a uniformly chosen key): up to one transaction per
// client is in flight, and their operations interleave. Every step executes
// one operation (or a commit) of a client that is not waiting for a
// response, at the next integer point of a global clock; the client-side
// interval of the operation is [b, a] with b between the client's previous
// response and the point, and a up to lat after the point (the client waits
// for the response before it sends the next request). So transactions of
// different clients overlap in real time and in their intervals, as they do
// against a real server with many connections.
//
// The executor implements the mechanisms of one profile, so the history it
// produces is correct for it:
//
//   - cgenSSI (postgres:serializable): snapshot at the first operation,
//     exclusive write locks (NOWAIT: a conflicting write aborts the
//     requester), first-updater-wins (a write of a key with a version
//     committed after the snapshot aborts), and a certifier stricter than
//     PostgreSQL's SSI (Ports & Grittner, VLDB 2012): a transaction aborts
//     at commit when it has both an incoming and an outgoing rw
//     anti-dependency with a transaction that did not abort, or an
//     outgoing one to a committed transaction that has an outgoing one.
//   - cgenInnoDB (mysql:repeatable-read): read view at the first operation,
//     exclusive write locks (NOWAIT), no first-updater check: a write
//     overwrites the newest committed version.
//
// Clients also roll back on their own with probability abort. Per-key
// version lists and SIREAD marks are trimmed to what active transactions
// can still see, and transactions keep no pointers to finished ones, so
// the generator's memory is flat (benchmarks measure the verifier's heap).
type cgen struct {
	r       *rand.Rand
	mode    int
	ops     int
	abort   float64
	lat     int64
	now     int64
	commits int64 // logical commit counter (snapshots are counter values)
	val     int32
	idx     int32
	keys    []ckey
	cl      []cclient
	out     []*history.Txn

	// noCert disables the certifier (cgenSSI): snapshot isolation, whose
	// write skews the serialization certifier check must catch.
	noCert bool

	aborted, conflicts int64
}

const (
	cgenSSI = iota
	cgenInnoDB
)

type cver struct {
	val int32
	cts int64
	w   *ctxn // the writer (cgenSSI: its rw edges)
}

type cwrite struct{ key, val int32 }

type ckey struct {
	vers    []cver // committed versions, oldest first
	lock    *ctxn
	readers []*ctxn // SIREAD marks (cgenSSI)
}

type cclient struct {
	busy  int64 // the client waits for a response until then
	lastA int64
	seq   int32
	t     *ctxn
}

type ctxn struct {
	h       *history.Txn
	snap    int64
	cts     int64 // commit counter value, 0 while active
	aborted bool
	next    int
	plan    []int32  // key per op, negative = write of key -k-1
	writes  []cwrite // buffered until commit
	// in, out: an rw anti-dependency into / out of the transaction with a
	// transaction that had not aborted when the edge appeared.
	in, out bool
	// pivotOut: an outgoing rw edge to a committed transaction that
	// had an outgoing one.
	pivotOut bool
}

func newCGen(seed uint64, mode, clients, keys, ops int, abort float64) *cgen {
	g := &cgen{r: rand.New(rand.NewPCG(seed, seed*13+5)), mode: mode, ops: ops, abort: abort, lat: 24,
		keys: make([]ckey, keys), cl: make([]cclient, clients)}
	return g
}

// next returns the next completed transaction (completion order, so each
// client's transactions come in session order).
func (g *cgen) next() *history.Txn {
	for len(g.out) == 0 {
		g.step()
	}
	t := g.out[0]
	g.out[0] = nil
	g.out = g.out[1:]
	if len(g.out) == 0 {
		g.out = g.out[:0:0]
	}
	return t
}

// step executes one operation, commit or rollback of a ready client.
func (g *cgen) step() {
	g.now++
	n := len(g.cl)
	c := -1
	for off, i := g.r.IntN(n), 0; i < n; i++ {
		if j := (off + i) % n; g.cl[j].busy < g.now {
			c = j
			break
		}
	}
	if c < 0 {
		// Nobody is ready: jump to the earliest response.
		m := g.cl[0].busy
		for i := range g.cl {
			m = min(m, g.cl[i].busy)
		}
		g.now = m + 1
		for i := range g.cl {
			if g.cl[i].busy < g.now {
				c = i
				break
			}
		}
	}
	cl := &g.cl[c]
	p := g.now
	b := max(cl.lastA, p-g.r.Int64N(g.lat))
	a := p + 1 + g.r.Int64N(g.lat)
	cl.busy, cl.lastA = a, a
	if cl.t == nil {
		t := &ctxn{h: &history.Txn{Session: int32(c), Seq: cl.seq, Status: history.Committed, HasTime: true, Invoke: b},
			snap: g.commits, plan: make([]int32, g.ops)}
		cl.seq++
		t.h.Ops = make([]history.Op, 0, g.ops)
		for i := range t.plan {
			k := int32(g.r.IntN(len(g.keys)))
			if g.r.IntN(2) == 1 {
				k = -k - 1
			}
			t.plan[i] = k
		}
		cl.t = t
	}
	t := cl.t
	if t.next == len(t.plan) {
		if g.r.Float64() < g.abort || !g.certify(t) {
			g.finish(c, history.Aborted, a)
		} else {
			g.finish(c, history.Committed, a)
		}
		return
	}
	k := t.plan[t.next]
	t.next++
	op := history.Op{Value: history.NoValue}
	if k >= 0 {
		op.Kind, op.Key = history.Read, k
		op.Value = g.read(t, k)
	} else {
		k = -k - 1
		op.Kind, op.Key = history.Write, k
		if !g.write(t, k) {
			g.conflicts++
			g.finish(c, history.Aborted, a)
			return
		}
		g.val++
		op.Value = g.val
		set := false
		for i := range t.writes {
			if t.writes[i].key == k {
				t.writes[i].val, set = g.val, true
			}
		}
		if !set {
			t.writes = append(t.writes, cwrite{key: k, val: g.val})
		}
	}
	t.h.Ops = append(t.h.Ops, op)
	t.h.SetOpTime(len(t.h.Ops)-1, b, a)
}

func (g *cgen) read(t *ctxn, k int32) int32 {
	for i := range t.writes {
		if t.writes[i].key == k {
			return t.writes[i].val
		}
	}
	ks := &g.keys[k]
	v := history.NoValue
	for i := len(ks.vers) - 1; i >= 0; i-- {
		if ks.vers[i].cts <= t.snap {
			v = ks.vers[i].val
			break
		}
	}
	if g.mode == cgenSSI {
		// rw to the writers whose versions this snapshot misses: the
		// committed newer versions and the lock holder.
		for i := len(ks.vers) - 1; i >= 0 && ks.vers[i].cts > t.snap; i-- {
			t.out = true
			if ks.vers[i].w.out {
				t.pivotOut = true
			}
		}
		if ks.lock != nil && ks.lock != t {
			t.out = true
			ks.lock.in = true
		}
		ks.readers = append(ks.readers, t)
	}
	return v
}

// write takes k's lock (NOWAIT) and applies first-updater-wins; false
// aborts t.
func (g *cgen) write(t *ctxn, k int32) bool {
	ks := &g.keys[k]
	if ks.lock != nil && ks.lock != t {
		return false
	}
	if g.mode == cgenSSI {
		if n := len(ks.vers); n > 0 && ks.vers[n-1].cts > t.snap {
			return false // first-updater-wins
		}
		for _, r := range ks.readers {
			if r == t || r.aborted {
				continue
			}
			if r.cts == 0 || r.cts > t.snap {
				// r -rw-> t (r active, or committed after t's snapshot).
				r.out = true
				t.in = true
			}
		}
	}
	ks.lock = t
	return true
}

// certify is the conservative SSI rule (see cgen).
func (g *cgen) certify(t *ctxn) bool {
	if g.mode != cgenSSI || g.noCert {
		return true
	}
	return !(t.in && t.out) && !t.pivotOut
}

// finish commits or aborts the client's transaction at point-interval end
// a (the client's response).
func (g *cgen) finish(c int, st history.Status, a int64) {
	cl := &g.cl[c]
	t := cl.t
	cl.t = nil
	t.h.Status = st
	t.h.Complete = a
	t.h.Index = g.idx
	t.h.ID = ""
	g.idx++
	if st == history.Committed {
		g.commits++
		t.cts = g.commits
	} else {
		t.aborted = true
		g.aborted++
	}
	low := g.commits
	for i := range g.cl {
		if x := g.cl[i].t; x != nil && x.snap < low {
			low = x.snap
		}
	}
	for _, w := range t.writes {
		ks := &g.keys[w.key]
		if ks.lock == t {
			ks.lock = nil
		}
		if st == history.Committed {
			ks.vers = append(ks.vers, cver{val: w.val, cts: t.cts, w: t})
		}
		g.trim(ks, low)
	}
	for _, o := range t.h.Ops {
		if o.Kind == history.Read {
			g.trim(&g.keys[o.Key], low)
		}
	}
	t.writes, t.plan = nil, nil
	g.out = append(g.out, t.h)
}

// trim drops versions no active or future snapshot (>= low) can see and
// SIREAD marks of transactions no active or future writer is concurrent
// with.
func (g *cgen) trim(ks *ckey, low int64) {
	i := 0
	for i+1 < len(ks.vers) && ks.vers[i+1].cts <= low {
		i++
	}
	if i > 0 {
		n := copy(ks.vers, ks.vers[i:])
		clear(ks.vers[n:])
		ks.vers = ks.vers[:n]
	}
	rs := ks.readers[:0]
	for _, r := range ks.readers {
		if r.aborted || (r.cts != 0 && r.cts <= low) {
			continue
		}
		rs = append(rs, r)
	}
	clear(ks.readers[len(rs):])
	ks.readers = rs
}

// TestConcurrentExecutor: histories of the concurrent executor (interleaved
// transactions of 16 clients) are valid under the profile whose mechanisms
// it implements, really are concurrent (many live transactions, uncertain
// dependencies, conflict aborts), and break the mechanisms it does not
// implement: without its certifier it is snapshot isolation (write skew:
// sc under postgres:serializable), and InnoDB's lock-only writes give
// concurrent committed writers of one key (fuw under a first-updater-wins
// profile).
func TestConcurrentExecutor(t *testing.T) {
	gen := func(mode int, noCert bool, keys int) (*history.History, *cgen) {
		g := newCGen(3, mode, 16, keys, 8, 0.02)
		g.noCert = noCert
		h := history.New()
		h.Evidence.OpTime = true
		for i := 0; i < 20000; i++ {
			h.Add(*g.next())
		}
		return h, g
	}
	for _, c := range []struct {
		mode   int
		noCert bool
		keys   int
		prof   string
		want   string
	}{
		{cgenSSI, false, 200, "postgres:serializable", ""},
		{cgenSSI, false, 10000, "postgres:serializable", ""},
		{cgenInnoDB, false, 200, "mysql:repeatable-read", ""},
		{cgenInnoDB, false, 10000, "mysql:repeatable-read", ""},
		{cgenSSI, true, 200, "postgres:repeatable-read", ""},
		{cgenSSI, true, 200, "postgres:serializable", model.SC},
		{cgenInnoDB, false, 200, "postgres:repeatable-read", model.FUW},
	} {
		h, g := gen(c.mode, c.noCert, c.keys)
		r := run(t, h, c.prof)
		t.Logf("mode %d nocert %v keys %d under %s: %s %v; peak live %v, uncertain ratio %.4f, aborts %d (conflicts %d), gc versions %v",
			c.mode, c.noCert, c.keys, c.prof, r.Verdict, r.AnomalyTypes, r.Stats["peak_live_txns"], r.Stats["uncertain_ratio"],
			g.aborted, g.conflicts, r.Stats["gc_versions"])
		if c.want == "" {
			if r.Verdict != check.Valid {
				for _, a := range r.Anomalies[:min(3, len(r.Anomalies))] {
					t.Logf("%s: %s", a.Type, a.Explanation)
				}
				t.Fatalf("mode %d keys %d under %s: %s %v", c.mode, c.keys, c.prof, r.Verdict, r.AnomalyTypes)
			}
			if live := r.Stats["peak_live_txns"].(int64); live < 10 {
				t.Fatalf("peak live transactions %d: the executor is not concurrent", live)
			}
			if r.Stats["uncertain_ratio"].(float64) == 0 {
				t.Fatalf("no uncertain dependency: intervals never overlap")
			}
			continue
		}
		if r.Verdict != check.Invalid || !has(r, c.want) {
			t.Fatalf("mode %d nocert %v under %s: want %s, got %s %v", c.mode, c.noCert, c.prof, c.want, r.Verdict, r.AnomalyTypes)
		}
	}
}
