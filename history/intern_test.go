package history

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
)

func TestInterner(t *testing.T) {
	in := NewInterner()
	vals := []int64{5, -1, 1 << 40, 0, 5, denseLimit - 1, denseLimit, 3000000}
	ids := map[int64]int32{}
	for _, v := range vals {
		id := in.Int(v)
		if prev, ok := ids[v]; ok && prev != id {
			t.Fatalf("%d interned twice: %d, %d", v, prev, id)
		}
		ids[v] = id
		if got := in.Get(id); got.IsStr || got.I != v {
			t.Fatalf("Get(%d) = %+v, want %d", id, got, v)
		}
		if l, ok := in.LookupInt(v); !ok || l != id {
			t.Fatalf("LookupInt(%d) = %d %v", v, l, ok)
		}
	}
	if s := in.Str("5"); s == ids[5] {
		t.Fatal(`"5" and 5 share an id`)
	}
	if _, ok := in.LookupInt(7); ok {
		t.Fatal("7 was never interned")
	}
	if in.Len() != 8 {
		t.Fatalf("Len = %d, want 8", in.Len())
	}
}

func BenchmarkInternDense(b *testing.B) {
	in := NewInterner()
	for i := 0; i < b.N; i++ {
		in.Int(int64(i % 100000))
	}
}

// TestInternerMixedResetGrow: ids of integers and strings interleaved past
// one bitset word, round trips through Get/String, Reset (ids restart at 0,
// no stale lookups) and Grow (changes no id).
func TestInternerMixedResetGrow(t *testing.T) {
	in := NewInterner()
	for round := 0; round < 2; round++ {
		var want []Scalar
		for i := 0; i < 200; i++ {
			var s Scalar
			switch i % 3 {
			case 0:
				s = Scalar{I: int64(i*7 - 300)}
			case 1:
				s = Scalar{S: "s" + string(rune('a'+i%26)) + strconv.Itoa(i), IsStr: true}
			default:
				s = Scalar{I: 1<<40 + int64(i)}
			}
			if id := in.Scalar(s); int(id) != len(want) {
				t.Fatalf("round %d: %v got id %d, want %d", round, s, id, len(want))
			}
			want = append(want, s)
			if i == 100 {
				in.Grow(1000)
			}
		}
		for id, s := range want {
			if got := in.Get(int32(id)); got != s || in.String(int32(id)) != s.String() {
				t.Fatalf("round %d: Get(%d) = %+v, want %+v", round, id, got, s)
			}
			if again := in.Scalar(s); again != int32(id) {
				t.Fatalf("round %d: %v re-interned as %d, want %d", round, s, again, id)
			}
		}
		if b := in.StrBytes([]byte(want[1].S)); b != 1 {
			t.Fatalf("StrBytes = %d, want 1", b)
		}
		in.Reset()
		if in.Len() != 0 {
			t.Fatalf("Len after Reset = %d", in.Len())
		}
		if _, ok := in.LookupInt(-300); ok {
			t.Fatal("stale integer after Reset")
		}
		if _, ok := in.LookupStr(want[1].S); ok {
			t.Fatal("stale string after Reset")
		}
	}
}

// TestIdentityInternerStoresNoSmallInts: an identity interner maps small
// non-negative integers to themselves without storing them (txray watch
// sees a new value with every write, and a table of every value ever seen
// grew without bound), keeps integers and strings distinct, and renders
// every id back to its scalar.
func TestIdentityInternerStoresNoSmallInts(t *testing.T) {
	in := NewIdentityInterner()
	for v := int64(0); v < 100000; v++ {
		if id := in.Int(v); id != int32(v) {
			t.Fatalf("Int(%d) = %d", v, id)
		}
	}
	if len(in.vals) != 0 || len(in.dense) != 0 || len(in.ints) != 0 {
		t.Fatalf("small integers were stored: %d vals, %d dense, %d ints", len(in.vals), len(in.dense), len(in.ints))
	}
	big, neg := in.Int(IdentityLimit+5), in.Int(-3)
	s1, s7 := in.Str("1"), in.Str("x7")
	ids := map[int32]Scalar{1: {I: 1}, 99999: {I: 99999}, big: {I: IdentityLimit + 5}, neg: {I: -3}, s1: {S: "1", IsStr: true}, s7: {S: "x7", IsStr: true}}
	seen := map[int32]bool{}
	for id, want := range ids {
		if seen[id] {
			t.Fatalf("id %d given twice", id)
		}
		seen[id] = true
		if got := in.Get(id); got != want {
			t.Errorf("Get(%d) = %+v, want %+v", id, got, want)
		}
		if got := in.String(id); got != want.String() {
			t.Errorf("String(%d) = %q, want %q", id, got, want.String())
		}
	}
	for _, id := range []int32{big, neg, s1, s7} {
		if id < IdentityLimit {
			t.Errorf("stored scalar got id %d below IdentityLimit", id)
		}
	}
	if in.Int(IdentityLimit+5) != big || in.Str("1") != s1 || in.Int(-3) != neg {
		t.Error("re-interning gave new ids")
	}
	if id, ok := in.LookupInt(42); !ok || id != 42 {
		t.Errorf("LookupInt(42) = %d %v", id, ok)
	}
	if id, ok := in.LookupInt(-3); !ok || id != neg {
		t.Errorf("LookupInt(-3) = %d %v", id, ok)
	}
	if _, ok := in.LookupInt(-4); ok {
		t.Error("LookupInt(-4) found an integer never interned")
	}
	if in.Len() != IdentityLimit+4 {
		t.Errorf("Len = %d", in.Len())
	}
	if got := in.String(IdentityLimit + 4); got != "?"+strconv.Itoa(IdentityLimit+4) {
		t.Errorf("String of an unassigned id = %q", got)
	}
}

// TestRecyclingInternerReusesReleasedIds: released ids leave the lookup
// tables (their scalars intern afresh), are reused oldest range first
// before new ids are appended, render as unknown until reused, and the
// tables stay bounded by the live ids however many scalars pass through.
func TestRecyclingInternerReusesReleasedIds(t *testing.T) {
	in := NewRecyclingInterner()
	for v := int64(0); v < 8; v++ {
		in.Int(v * 1000)
	}
	s := in.Str("k")
	in.Release(2, 5) // 2000, 3000, 4000
	in.Release(3, 4) // already released: no-op
	if _, ok := in.LookupInt(3000); ok {
		t.Fatal("a released integer is still found")
	}
	if got := in.String(3); got != "?3" {
		t.Errorf("String of a released id = %q", got)
	}
	if id := in.Int(1000); id != 1 {
		t.Errorf("a live integer changed id: %d", id)
	}
	in.Release(8, 9) // the string
	if _, ok := in.LookupStr("k"); ok {
		t.Fatal("a released string is still found")
	}
	want := []int32{2, 3, 4, 8, 9}
	for i, w := range want {
		var id int32
		if i%2 == 0 {
			id = in.Str("s" + strconv.Itoa(i))
		} else {
			id = in.Int(int64(-i))
		}
		if id != w {
			t.Fatalf("new scalar %d got id %d, want %d", i, id, w)
		}
	}
	if g := in.Get(2); g != (Scalar{S: "s0", IsStr: true}) {
		t.Errorf("reused id 2 = %+v", g)
	}
	if g := in.Get(3); g != (Scalar{I: -1}) {
		t.Errorf("reused id 3 = %+v", g)
	}
	_ = s
	if in.Live() != in.Len() {
		t.Errorf("Live %d, Len %d: nothing is released any more", in.Live(), in.Len())
	}
	// A stream of ever new keys, releasing all but the last 100: the
	// tables stay small.
	for v := int64(0); v < 100000; v++ {
		id := in.Int(1<<40 + v)
		if v%100 == 99 {
			in.Release(0, int32(in.Len()))
		}
		_ = id
	}
	if in.Len() > 200 || len(in.ints) > 200 || len(in.strTab) > 10 {
		t.Errorf("tables grew: Len %d, ints %d, strTab %d", in.Len(), len(in.ints), len(in.strTab))
	}
}

// TestInternerDenseTableBounded: the direct-index table's size follows the
// number of small integers interned, not the largest one. One value of
// 22,222,221 used to make a 134 MB table (the next power of two above it,
// 4 bytes an entry) in every history that held it, which any input could
// ask for.
func TestInternerDenseTableBounded(t *testing.T) {
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	in := NewInterner()
	for v := int64(0); v < 100; v++ {
		in.Int(v)
	}
	big := in.Int(22222221)
	in.Int(denseLimit - 1)
	runtime.ReadMemStats(&ms1)
	if d := ms1.TotalAlloc - ms0.TotalAlloc; d > 1<<20 {
		t.Fatalf("interning 102 integers allocated %d bytes (direct-index table %d entries)", d, len(in.dense))
	}
	if id, ok := in.LookupInt(22222221); !ok || id != big || in.Get(big).I != 22222221 {
		t.Fatalf("LookupInt(22222221) = %d %v, want %d", id, ok, big)
	}
	// Densely populated small integers still get the table.
	for v := int64(0); v < 1<<20; v++ {
		in.Int(v)
	}
	if len(in.dense) < 1<<20 {
		t.Fatalf("direct-index table has %d entries after 2^20 dense integers", len(in.dense))
	}
}

// TestInternerDenseMigration: integers interned through the map while the
// direct-index table was too sparse to grow keep their ids once it grows
// over them, and every lookup agrees with a reference map, before and
// after Reset.
func TestInternerDenseMigration(t *testing.T) {
	in := NewInterner()
	for round := 0; round < 2; round++ {
		ref := map[int64]int32{}
		r := rand.New(rand.NewPCG(uint64(round), 7))
		check := func(v int64) {
			id := in.Int(v)
			if want, ok := ref[v]; ok && want != id {
				t.Fatalf("round %d: %d got id %d, had %d", round, v, id, want)
			} else if !ok {
				if int(id) != len(ref) {
					t.Fatalf("round %d: new %d got id %d, want %d", round, v, id, len(ref))
				}
				ref[v] = id
			}
		}
		// sparse large values first (to the map), then a dense run that
		// grows the table over them, with repeats and negatives between
		for i := 0; i < 2000; i++ {
			check(int64(r.IntN(1 << 22)))
			check(-int64(r.IntN(100)))
		}
		for v := int64(0); v < 1<<19; v++ {
			check(v)
			if v%97 == 0 {
				check(int64(r.IntN(1 << 22)))
			}
		}
		if len(in.dense) < 1<<19 {
			t.Fatalf("round %d: direct-index table has %d entries", round, len(in.dense))
		}
		for v, id := range ref {
			if got, ok := in.LookupInt(v); !ok || got != id {
				t.Fatalf("round %d: LookupInt(%d) = %d %v, want %d", round, v, got, ok, id)
			}
			if s := in.Get(id); s.IsStr || s.I != v {
				t.Fatalf("round %d: Get(%d) = %+v, want %d", round, id, s, v)
			}
		}
		if _, ok := in.LookupInt(1<<22 + 1); ok {
			t.Fatal("never-interned integer found")
		}
		in.Reset()
		for v := range ref {
			if _, ok := in.LookupInt(v); ok {
				t.Fatalf("round %d: %d still interned after Reset", round, v)
			}
		}
	}
}
