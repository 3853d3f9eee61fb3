package history

import (
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
