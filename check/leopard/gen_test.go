package leopard

import (
	"math/rand/v2"

	"github.com/txray/txray/history"
)

// gen is a serial executor with client intervals (BlindW-RW: each op reads
// or blindly writes a uniformly chosen key). Transactions execute one at a
// time at increasing points; each op's client interval extends up to jitter
// around its point, so intervals of different clients overlap while the
// execution satisfies every mechanism. Keys and values are raw ids (values
// unique per write).
type gen struct {
	r        *rand.Rand
	clients  int
	keys     int
	ops      int
	abort    float64
	stale    float64 // probability of an injected stale read
	injected int
	jitter   int64 // how far an interval may begin before its point
	after    int64 // how far it may end after it
	now      int64
	last     []int64 // per client: last Complete
	cur      []int32 // per key: current value id
	prev     []int32 // per key: previous value id
	curDone  []int64 // per key: Complete of the current version's writer
	val      int32
	seq      []int32
	idx      int32
	buf      []int32
}

func newGen(seed uint64, clients, keys, ops int, abort float64) *gen {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed*7+1)), clients: clients, keys: keys, ops: ops, abort: abort, jitter: 200, after: 8,
		last: make([]int64, clients), cur: make([]int32, keys), prev: make([]int32, keys), curDone: make([]int64, keys),
		seq: make([]int32, clients)}
	for k := range g.cur {
		g.cur[k], g.prev[k] = history.NoValue, history.NoValue
	}
	return g
}

func (g *gen) next() *history.Txn {
	c := g.r.IntN(g.clients)
	t := &history.Txn{Session: int32(c), Seq: g.seq[c], Status: history.Committed, HasTime: true, Index: g.idx}
	g.seq[c]++
	g.idx++
	t.Invoke = max(g.now-g.r.Int64N(g.jitter), g.last[c]+1)
	t.Ops = make([]history.Op, g.ops)
	times := make([]history.OpTime, g.ops)
	t.SetOpTimes(times)
	prevA := t.Invoke
	type w struct{ k, v int32 }
	var writes []w
	for i := range t.Ops {
		p := max(g.now, prevA) + 1 + g.r.Int64N(3)
		b := max(prevA, p-g.r.Int64N(g.jitter))
		a := p + g.r.Int64N(g.after)
		k := int32(g.r.IntN(g.keys))
		o := &t.Ops[i]
		o.Key, o.HasTime, times[i] = k, true, history.OpTime{Invoke: b, Complete: a}
		if g.r.IntN(2) == 0 {
			o.Kind = history.Read
			o.Value = g.cur[k]
			own := false
			for j := len(writes) - 1; j >= 0; j-- {
				if writes[j].k == k {
					o.Value, own = writes[j].v, true
					break
				}
			}
			if !own && g.stale > 0 && g.cur[k] != history.NoValue && g.curDone[k] < t.Invoke && g.r.Float64() < g.stale {
				o.Value = g.prev[k]
				g.injected++
			}
		} else {
			o.Kind = history.Write
			g.val++
			o.Value = g.val
			writes = append(writes, w{k, g.val})
		}
		g.now = p
		prevA = a
	}
	cpt := max(g.now, prevA) + 1 + g.r.Int64N(3)
	t.Complete = cpt + g.r.Int64N(g.after)
	g.now = cpt
	g.last[c] = t.Complete
	if g.r.Float64() < g.abort {
		t.Status = history.Aborted
	} else {
		for _, x := range writes {
			g.prev[x.k], g.cur[x.k], g.curDone[x.k] = g.cur[x.k], x.v, t.Complete
		}
	}
	return t
}
