package aion

import (
	"math/rand/v2"
	"testing"
)

// TestPtxRingKeepsArrivalOrder: the window ring (ptxRing) behaves as the
// slice it replaced: entries in arrival order through pushes, drops from
// the front, growth and shrinking, wrapping around its end.
func TestPtxRingKeepsArrivalOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var r ptxRing
	var model []int64
	next := int64(0)
	for step := range 20000 {
		if rng.IntN(3) > 0 || len(model) == 0 {
			for range rng.IntN(300) {
				r.push(ptxEntry{arrived: next})
				model = append(model, next)
				next++
			}
		} else {
			j := rng.IntN(len(model) + 1)
			r.drop(j)
			model = model[j:]
		}
		if r.len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", step, r.len(), len(model))
		}
		for _, i := range []int{0, len(model) / 2, len(model) - 1} {
			if i >= 0 && i < len(model) && r.at(i).arrived != model[i] {
				t.Fatalf("step %d: entry %d is %d, want %d", step, i, r.at(i).arrived, model[i])
			}
		}
		if len(r.buf) > ptxMin && r.n < len(r.buf)/4 {
			t.Fatalf("step %d: %d entries in a ring of %d: not given back", step, r.n, len(r.buf))
		}
	}
	r.drop(r.len())
	if len(r.buf) != ptxMin {
		t.Fatalf("empty ring keeps %d entries", len(r.buf))
	}
}

// TestReadQueueReusesFreedPages: a steady window that frees more pages per
// tick than 16 allocates no new read pages once it has run one cycle (the
// queue kept at most 16 freed pages before, and allocated the rest again
// at every tick), and the pages it keeps are bounded by those in use.
func TestReadQueueReusesFreedPages(t *testing.T) {
	var q readQ
	const pages = 40
	cycle := func() {
		for range pages * readPage {
			q.push()
		}
		q.advance(q.tail - pages*readPage/2) // half the window final
	}
	cycle()
	cycle()
	if a := testing.AllocsPerRun(3, cycle); a != 0 {
		t.Fatalf("a steady cycle allocates %v times (read pages not reused)", a)
	}
	// the window's peak was 60 pages: no more are ever kept
	q.advance(q.tail)
	if len(q.pages)+len(q.spare) > 3*pages/2+16 {
		t.Fatalf("%d spare pages kept for %d in use", len(q.spare), len(q.pages))
	}
}
