package history

import "testing"

// TestShape: Shape finds each op kind and the two kinds of reads, and
// MemoShape's memo answers for its own history only, until released (a
// later memo replaces it).
func TestShape(t *testing.T) {
	mk := func(ops ...Op) *History {
		h := New()
		h.Add(Txn{Ops: ops})
		return h
	}
	list := Op{Kind: Read, IsList: true}
	cases := []struct {
		name              string
		h                 *History
		kinds             []Kind
		listRead, valRead bool
	}{
		{"empty", New(), nil, false, false},
		{"nil register read", mk(Op{Kind: Read, Value: NoValue}), []Kind{Read}, false, false},
		{"value read", mk(Op{Kind: Read, Value: 3}), []Kind{Read}, false, true},
		{"list read and append", mk(list, Op{Kind: Append, Value: 1}), []Kind{Read, Append}, true, false},
		{"write and delete", mk(Op{Kind: Write, Value: 1}, Op{Kind: Delete, Value: 2}), []Kind{Write, Delete}, false, false},
		{"predicate read and increment", mk(Op{Kind: PredRead}, Op{Kind: Increment}), []Kind{PredRead, Increment}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.h.Shape()
			for k := Read; k <= Delete; k++ {
				want := false
				for _, x := range c.kinds {
					want = want || x == k
				}
				if s.Has(k) != want {
					t.Errorf("Has(%v) = %v, want %v", k, s.Has(k), want)
				}
			}
			if !s.Only(c.kinds...) {
				t.Errorf("Only(%v) = false", c.kinds)
			}
			if len(c.kinds) > 0 && s.Only() {
				t.Errorf("Only() = true with kinds %v", c.kinds)
			}
			if s.ListReads != c.listRead || s.ValueReads != c.valRead {
				t.Errorf("ListReads, ValueReads = %v, %v; want %v, %v", s.ListReads, s.ValueReads, c.listRead, c.valRead)
			}
			if c.h.HasDeletes() != s.Has(Delete) {
				t.Errorf("HasDeletes = %v", c.h.HasDeletes())
			}
		})
	}
	// The memo is the shape when taken: while it is held, changes to the
	// ops are not seen (the holder promises there are none); a copy of
	// the History, another history and the history after release compute
	// afresh.
	h := mk(Op{Kind: Write, Value: 1})
	release := h.MemoShape()
	h.Txns[0].Ops[0].Kind = Delete
	if h.HasDeletes() || h.Shape().Has(Delete) {
		t.Fatal("memo not used while held")
	}
	cp := *h
	if !cp.HasDeletes() {
		t.Fatal("a copy of the History used the memo")
	}
	other := mk(Op{Kind: Delete})
	if !other.HasDeletes() {
		t.Fatal("another history used the memo")
	}
	release()
	if !h.HasDeletes() {
		t.Fatal("memo used after release")
	}
	r1 := h.MemoShape()
	r2 := other.MemoShape()
	r1() // not r1's memo any more: r2's stays
	h.Txns[0].Ops[0].Kind = Write
	if h.HasDeletes() {
		t.Fatal("replaced memo still used")
	}
	other.Txns[0].Ops[0].Kind = Write
	if !other.HasDeletes() {
		t.Fatal("memo lost by another memo's release")
	}
	r2()
}
