package sim

import (
	"math/rand/v2"

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
	zipf    *rand.Zipf
	hot     int
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
	n := c.MinOps
	if c.MaxOps > c.MinOps {
		n += w.r.IntN(c.MaxOps - c.MinOps + 1)
	}
	t.ops = make([]pop, n)
	t.res = make([]opres, n)
	for i := range t.ops {
		s := w.slot()
		ks := w.keyState(w.slots[s])
		ks.refs++
		o := &t.ops[i]
		o.ks = ks
		if w.r.Float64() < c.ReadRatio {
			o.kind = history.Read
			o.locking = c.LockingReads > 0 && w.r.Float64() < c.LockingReads
			continue
		}
		o.kind = history.Write
		if c.Workload == ListAppend {
			o.kind = history.Append
		}
		w.nextVal++
		o.val = w.nextVal
		if !t.plansWrite(ks) {
			t.writes = append(t.writes, ks)
		}
		w.writes[s]++
		if c.MaxWritesPerKey > 0 && w.writes[s] >= c.MaxWritesPerKey {
			ks.retired = true
			w.slots[s] = w.nextKey
			w.nextKey++
			w.writes[s] = 0
		}
	}
	t.willAbort = c.AbortRate > 0 && w.r.Float64() < c.AbortRate
}
