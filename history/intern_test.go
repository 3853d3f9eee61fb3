package history

import "testing"

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
