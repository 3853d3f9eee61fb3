package sim

import (
	"math/rand/v2"
	"slices"

	"github.com/txray/txray/history"
)

// workload plans transactions: Keys key slots, each holding a key until it
// has received MaxWritesPerKey planned writes, then a fresh key (Elle's
// max-writes-per-key rotation); values are unique across the run (1, 2, ...).
// It has its own random stream, so the i-th planned transaction is the same
// at every level and with every fault.
type workload struct {
	cfg     Config
	r       *rand.Rand
	e       *engine
	slots   []int64
	writes  []int
	nextKey int64
	nextVal int64
	// dead: the values that are tombstones (Config.Deletes).
	dead map[int64]bool
	zipf *rand.Zipf
	hot  int
}

func newWorkload(cfg Config, r *rand.Rand, e *engine) *workload {
	w := &workload{cfg: cfg, r: r, e: e, slots: make([]int64, cfg.Keys), writes: make([]int, cfg.Keys)}
	for i := range w.slots {
		w.slots[i] = int64(i)
	}
	w.nextKey = int64(cfg.Keys)
	if cfg.Dist == Zipfian && cfg.Keys > 1 {
		w.zipf = rand.NewZipf(r, 1.1, 1, uint64(cfg.Keys-1))
	}
	w.hot = (cfg.Keys + 4) / 5
	return w
}

func (w *workload) slot() int {
	n := w.cfg.Keys
	switch {
	case w.zipf != nil:
		return int(w.zipf.Uint64())
	case w.cfg.Dist == Hotspot && w.hot < n:
		if w.r.Float64() < 0.8 {
			return w.r.IntN(w.hot)
		}
		return w.hot + w.r.IntN(n-w.hot)
	}
	return w.r.IntN(n)
}

func (w *workload) keyState(k int64) *keyState {
	ks := w.e.keys[k]
	if ks == nil {
		ks = &keyState{key: k}
		w.e.keys[k] = ks
	}
	return ks
}

// plan fills t.ops, t.res, t.writes and t.willAbort.
func (w *workload) plan(t *txn) {
	c := w.cfg
	if c.Mix != "" {
		w.planMix(t)
		return
	}
	n := c.MinOps
	if c.MaxOps > c.MinOps {
		n += w.r.IntN(c.MaxOps - c.MinOps + 1)
	}
	t.ops = make([]pop, n, n+4)
	for i := 0; i < len(t.ops); i++ {
		s := w.slot()
		ks := w.keyState(w.slots[s])
		ks.refs++
		o := &t.ops[i]
		o.ks = ks
		if w.r.Float64() < c.ReadRatio {
			o.kind = history.Read
			if c.PredicateReads > 0 && w.r.Float64() < c.PredicateReads {
				i += w.predicate(t, i, s) // skip the rows inserted
				continue
			}
			o.locking = c.LockingReads > 0 && w.r.Float64() < c.LockingReads
			continue
		}
		o.kind = history.Write
		if c.Workload == ListAppend {
			o.kind = history.Append
		}
		w.nextVal++
		o.val = w.nextVal
		if c.Deletes > 0 && w.r.Float64() < c.Deletes {
			o.kind = history.Delete
			if w.dead == nil {
				w.dead = map[int64]bool{}
			}
			w.dead[o.val] = true
		}
		w.planWrite(t, s, ks)
	}
	w.finishPlan(t)
}

// planWrite notes a planned write of ks (in slot s) by t: t's write set,
// and the slot's write count, which retires the key after MaxWritesPerKey
// writes (the slot moves on to a fresh key).
func (w *workload) planWrite(t *txn, s int, ks *keyState) {
	if !t.plansWrite(ks) {
		t.writes = append(t.writes, ks)
	}
	w.writes[s]++
	if m := w.cfg.MaxWritesPerKey; m > 0 && w.writes[s] >= m {
		ks.retired = true
		w.slots[s] = w.nextKey
		w.nextKey++
		w.writes[s] = 0
	}
}

// finishPlan sizes t's results and draws whether t will abort.
func (w *workload) finishPlan(t *txn) {
	t.res = make([]opres, len(t.ops))
	t.willAbort = w.cfg.AbortRate > 0 && w.r.Float64() < w.cfg.AbortRate
}

// predicate turns the read t.ops[i] (of slot s) into the first row of a
// predicate read over 2–4 distinct keys (at most Keys), inserting the
// other rows' reads right after it; it returns how many it inserted.
func (w *workload) predicate(t *txn, i, s int) int {
	n := min(2+w.r.IntN(3), w.cfg.Keys)
	slots := []int{s}
	for tries := 0; len(slots) < n && tries < 8*n; tries++ {
		if x := w.slot(); !slices.Contains(slots, x) {
			slots = append(slots, x)
		}
	}
	t.ops[i].predN = len(slots)
	rows := make([]pop, 0, len(slots)-1)
	for _, x := range slots[1:] {
		ks := w.keyState(w.slots[x])
		ks.refs++
		rows = append(rows, pop{kind: history.Read, ks: ks, predCont: true})
	}
	t.ops = slices.Insert(t.ops, i+1, rows...)
	return len(rows)
}
