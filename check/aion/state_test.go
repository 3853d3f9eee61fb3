package aion

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/txray/txray/history"
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

// TestWriterRefsMatchVersions: after every Tick, the writer table's
// reference counts (applied in batches at the end of a sweep, applyRefs)
// equal the counts recomputed from the versions retained; every entry
// still in use is named by some version (none leaks); no version names a
// freed entry; and a writer keeps its transaction exactly while a version
// names it in full. Sessions overlap (NoConflict failures) and reads fail,
// so the sweeps keep and discard versions of every kind.
func TestWriterRefsMatchVersions(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	now := time.Unix(0, 0)
	c := New(Config{FinalAfter: 20 * time.Millisecond, Now: func() time.Time { return now }})
	const nkeys = 60
	for i := range 30000 {
		now = now.Add(time.Millisecond)
		sts := int64(10 * i)
		if rng.IntN(4) == 0 {
			sts -= int64(rng.IntN(300)) // late or overlapping
		}
		tx := &Txn{ID: fmt.Sprint(i), Status: history.Committed,
			StartTS: history.Timestamp{P: sts, Set: true}, CommitTS: history.Timestamp{P: int64(10*i + 5), Set: true}}
		for range 1 + rng.IntN(6) {
			o := Op{Key: c.Keys.Int(int64(rng.IntN(nkeys))), Kind: history.Write, V: Val{N: int64(i), K: 1}}
			if rng.IntN(2) == 0 {
				o.Kind, o.V = history.Read, Val{N: int64(rng.IntN(i + 1)), K: 1}
			}
			tx.Ops = append(tx.Ops, o)
		}
		if err := c.Add(tx); err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 {
			c.Tick()
			checkWriterRefs(t, c, i)
		}
	}
	if live := int(c.writers.n) - len(c.wfree); live > 20*nkeys {
		t.Errorf("%d writer entries in use for %d keys and a window of about 20 transactions", live, nkeys)
	}
}

func checkWriterRefs(t *testing.T, c *Checker, step int) {
	t.Helper()
	full, ghost := map[int32]int32{}, map[int32]int32{}
	for k := range c.keys.n {
		for _, v := range c.vers(c.keys.get(int32(k))) {
			if v.ghost {
				ghost[v.w]++
			} else {
				full[v.w]++
			}
		}
	}
	free := map[int32]bool{}
	for _, i := range c.wfree {
		if free[i] {
			t.Fatalf("step %d: writer %d freed twice", step, i)
		}
		free[i] = true
	}
	for i := range c.writers.n {
		r, w := c.writers.ref(i), c.writers.at(i)
		if free[i] {
			if full[i]+ghost[i] > 0 {
				t.Fatalf("step %d: freed writer %d is named by %d full and %d ghost versions", step, i, full[i], ghost[i])
			}
			continue
		}
		if r.full != full[i] || r.ghost != ghost[i] {
			t.Fatalf("step %d: writer %d (%s) counts full %d ghost %d, versions say %d and %d", step, i, w.id, r.full, r.ghost, full[i], ghost[i])
		}
		if full[i]+ghost[i] == 0 {
			t.Fatalf("step %d: writer %d (%s) in use but named by no version", step, i, w.id)
		}
		if (w.t == nil) != (full[i] == 0) {
			t.Fatalf("step %d: writer %d (%s) keeps its transaction %v with %d full references", step, i, w.id, w.t != nil, full[i])
		}
	}
}

// TestVersionsKeepOrderThroughGrowth: a key written many times without a
// sweep moves through the slot classes 1 → 8 → 32 → 64 (growClass: never
// 16 on the way up) and keeps every version, in commit order, with its
// writer.
func TestVersionsKeepOrderThroughGrowth(t *testing.T) {
	c := New(Config{FinalAfter: time.Hour})
	k := c.Keys.Int(7)
	var classes []uint8
	for i := range 40 {
		tx := &Txn{ID: fmt.Sprint(i), Status: history.Committed,
			StartTS: history.Timestamp{P: int64(10 * i), Set: true}, CommitTS: history.Timestamp{P: int64(10*i + 5), Set: true},
			Ops: []Op{{Key: k, Kind: history.Write, V: Val{N: int64(i), K: 1}}}}
		if err := c.Add(tx); err != nil {
			t.Fatal(err)
		}
		ks := c.keys.get(k)
		if len(classes) == 0 || classes[len(classes)-1] != ks.vcls {
			classes = append(classes, ks.vcls)
		}
		vs := c.vers(ks)
		if len(vs) != i+1 {
			t.Fatalf("after %d writes: %d versions", i+1, len(vs))
		}
		for j, v := range vs {
			if v.vN != int64(j) || v.ctsP != int64(10*j+5) || c.writers.at(v.w).id != fmt.Sprint(j) {
				t.Fatalf("after %d writes: version %d is %d (cts %d, writer %s)", i+1, j, v.vN, v.ctsP, c.writers.at(v.w).id)
			}
		}
	}
	if want := []uint8{1, 2, 4, 5}; fmt.Sprint(classes) != fmt.Sprint(want) {
		t.Fatalf("classes %v, want %v", classes, want)
	}
}

// TestPageMakerHandsOutZeroedPages: the pages a pageMaker hands out (ready
// ones from its helper or new ones) have the page's length, are zero and
// are distinct, also after the previous ones were written.
func TestPageMakerHandsOutZeroedPages(t *testing.T) {
	m := pageMaker[version]{n: 1 << 12}
	seen := map[*version]bool{}
	for i := range 20 {
		p := m.get()
		if len(p) != m.n {
			t.Fatalf("page %d: %d versions, want %d", i, len(p), m.n)
		}
		for j := range p {
			if p[j] != (version{}) {
				t.Fatalf("page %d: version %d is not zero: %+v", i, j, p[j])
			}
		}
		if seen[&p[0]] {
			t.Fatalf("page %d handed out twice", i)
		}
		seen[&p[0]] = true
		for j := range p {
			p[j] = version{vN: int64(i), ctsP: int64(j)}
		}
		if i%4 == 0 {
			time.Sleep(time.Millisecond) // let the helper make pages ready
		}
	}
}

// TestOnlyLastWriteOfAKeyIsInstalled: of a transaction's writes of one key
// only the last becomes a version; keys that share a bit of Add's filter
// of later writes (ids 64 apart) are each installed; a list op on the key
// after a write does not make the write a duplicate unless it is a write.
func TestOnlyLastWriteOfAKeyIsInstalled(t *testing.T) {
	c := New(Config{FinalAfter: time.Hour})
	var ids []int32
	for i := range 130 {
		ids = append(ids, c.Keys.Int(int64(i)))
	}
	a, b, d := ids[1], ids[65], ids[129] // same bit (id mod 64)
	w := func(k int32, v int64) Op { return Op{Key: k, Kind: history.Write, V: Val{N: v, K: 1}} }
	tx := &Txn{ID: "t", Status: history.Committed,
		StartTS: history.Timestamp{P: 1, Set: true}, CommitTS: history.Timestamp{P: 2, Set: true},
		Ops: []Op{w(a, 1), w(b, 2), w(a, 3), w(d, 4), w(b, 5), {Key: d, Kind: history.Append, List: true, V: Val{N: 9, K: 1}}}}
	if err := c.Add(tx); err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		k int32
		v int64
	}{{a, 3}, {b, 5}, {d, 4}} {
		vs := c.vers(c.keys.get(x.k))
		if len(vs) != 1 || vs[0].vN != x.v {
			t.Errorf("key %s: versions %+v, want one of value %d", c.Keys.String(x.k), vs, x.v)
		}
	}
}
