package check_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
)

// TestPaperFigures: the situations the seed paper (Clark et al., "Bringing
// Order to Practical Validation of Database Isolation Levels", the Emme/Enne
// paper; an abstract describing the same checkers appears under the title
// "Validating Database System Isolation Level Implementations with Version
// Certificate Recovery", EuroSys 2024) illustrates in its Figs. 1–3, as
// histories judged by emme (version certificate), enne (expected
// serialization order) and emme on the item-only projection (what an
// item-based checker such as Elle sees).
//
// The figures themselves were not available to us: these histories are
// RECONSTRUCTED from the standard definitions the paper builds on, not
// copied. Fig. 1 (a phantom): Adya 1999 §3.1.3–3.1.4 and §4.4.3, a cycle
// through a predicate anti-dependency that no item dependency closes, so an
// item checker misses it. Fig. 2 (repeatable read vs serializable): PL-2.99
// forbids G2-item but allows G2 through predicate anti-dependencies, PL-3
// forbids both, so only predicate dependencies separate the two levels.
// Fig. 3 (expected serialization order): a two-phase-locking database
// promises commit order as a serialization order (Enne, the paper's §5); a
// history can be serializable in another order and still break that
// promise.
//
// Keys are rows (k, v); a predicate read's rows are [k, v]; "commit_ts"
// with serial_order=commit is the expected order.
func TestPaperFigures(t *testing.T) {
	type expect struct {
		checker, model string
		verdict        check.Verdict
		types          []string
	}
	cases := []struct {
		name    string
		history string
		want    []expect
	}{
		{
			// Fig. 1, the phantom: T1 counts employees of a department
			// (predicate k in [0,99]) and then reads the department's
			// head count (row 100); T2 hires (inserts row 2) and increments
			// the head count. T1 misses the insert but sees the count:
			// T1 -predicate-rw-> T2 -wr-> T1, G-single with a predicate
			// anti-dependency. The item projection has no cycle.
			name: "fig1-phantom-G-single-predicate",
			history: `{"txray":1,"evidence":{"serial_order":"commit"}}
{"id":"T0","status":"committed","commit_ts":1,"ops":[{"f":"w","k":1,"v":10},{"f":"w","k":100,"v":1}]}
{"id":"T2","status":"committed","commit_ts":2,"ops":[{"f":"r","k":100,"v":1},{"f":"w","k":2,"v":20},{"f":"w","k":100,"v":2}]}
{"id":"T1","status":"committed","commit_ts":3,"ops":[{"f":"rp","table":"emp","where":"k >= 0 AND k <= 99","result":[[1,10]],"vs":[[1,10]]},{"f":"r","k":100,"v":2}]}
{"type":"version_order","k":1,"order":[10]}
{"type":"version_order","k":2,"order":[20]}
{"type":"version_order","k":100,"order":[1,2]}
`,
			want: []expect{
				{"emme", "serializable", check.Invalid, []string{"G-single"}},
				{"emme", "snapshot-isolation", check.Invalid, []string{"G-single"}},
				{"emme", "repeatable-read", check.Valid, nil},
				{"emme-items", "serializable", check.Valid, nil},
				{"enne", "serializable", check.Invalid, []string{"ext"}},
			},
		},
		{
			// Fig. 2, repeatable read vs serializable, predicate form:
			// each transaction's range read misses the row the other
			// inserts into it (phantom write skew): two adjacent predicate
			// anti-dependencies, G2 but not G2-item. Serializable forbids
			// it; repeatable read and snapshot isolation allow it.
			name: "fig2-rr-vs-ser-G2-predicate",
			history: `{"txray":1}
{"id":"T1","status":"committed","ops":[{"f":"rp","table":"t","where":"k >= 0 AND k <= 9","result":[],"vs":[]},{"f":"w","k":15,"v":1}]}
{"id":"T2","status":"committed","ops":[{"f":"rp","table":"t","where":"k >= 10 AND k <= 19","result":[],"vs":[]},{"f":"w","k":5,"v":2}]}
{"type":"version_order","k":15,"order":[1]}
{"type":"version_order","k":5,"order":[2]}
`,
			want: []expect{
				{"emme", "serializable", check.Invalid, []string{"G2"}},
				{"emme", "repeatable-read", check.Valid, nil},
				{"emme", "snapshot-isolation", check.Valid, nil},
				{"emme-items", "serializable", check.Valid, nil},
			},
		},
		{
			// Fig. 2, item form (the contrast): the same skew over item
			// reads is G2-item, which repeatable read forbids too.
			name: "fig2-rr-vs-ser-G2-item",
			history: `{"txray":1}
{"id":"T1","status":"committed","ops":[{"f":"r","k":5,"v":null},{"f":"w","k":15,"v":1}]}
{"id":"T2","status":"committed","ops":[{"f":"r","k":15,"v":null},{"f":"w","k":5,"v":2}]}
{"type":"version_order","k":15,"order":[1]}
{"type":"version_order","k":5,"order":[2]}
`,
			want: []expect{
				{"emme", "serializable", check.Invalid, []string{"G2-item"}},
				{"emme", "repeatable-read", check.Invalid, []string{"G2-item"}},
				{"emme", "snapshot-isolation", check.Valid, nil},
			},
		},
		{
			// Fig. 3, expected serialization order: T1 reads x before T2
			// overwrites it, but T2 commits first. Serializable (T1, T2),
			// so emme finds no cycle; under two-phase locking T1's read
			// lock would have held T2's write until T1 committed, so
			// commit order must be a serialization order, and it is not:
			// enne reports the broken promise (ext).
			name: "fig3-serializable-but-not-in-commit-order",
			history: `{"txray":1,"evidence":{"serial_order":"commit"}}
{"id":"T2","status":"committed","commit_ts":1,"ops":[{"f":"w","k":"x","v":1}]}
{"id":"T1","status":"committed","commit_ts":2,"ops":[{"f":"r","k":"x","v":null},{"f":"w","k":"y","v":1}]}
{"type":"version_order","k":"x","order":[1]}
{"type":"version_order","k":"y","order":[1]}
`,
			want: []expect{
				{"emme", "serializable", check.Valid, nil},
				{"enne", "serializable", check.Invalid, []string{"ext"}},
			},
		},
		{
			// Fig. 1 with a delete instead of an insert: T1's range read
			// returned row 1, which T2 deletes before T1 reads T2's head
			// count: the returned row is an item read, so T1 -rw-> T2
			// -wr-> T1 is G-single-item; enne sees the deleted row
			// returned after the delete.
			name: "fig1-delete-G-single-item",
			history: `{"txray":1,"evidence":{"serial_order":"commit"}}
{"id":"T0","status":"committed","commit_ts":1,"ops":[{"f":"w","k":1,"v":10},{"f":"w","k":100,"v":1}]}
{"id":"T2","status":"committed","commit_ts":2,"ops":[{"f":"r","k":100,"v":1},{"f":"d","k":1,"v":11},{"f":"w","k":100,"v":0}]}
{"id":"T1","status":"committed","commit_ts":3,"ops":[{"f":"rp","table":"emp","where":"k >= 0 AND k <= 99","result":[[1,10]],"vs":[[1,10]]},{"f":"r","k":100,"v":0}]}
{"type":"version_order","k":1,"order":[10,11]}
{"type":"version_order","k":100,"order":[1,0]}
`,
			want: []expect{
				{"emme", "repeatable-read", check.Invalid, []string{"G-single-item"}},
				{"enne", "serializable", check.Invalid, []string{"ext"}},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := jsonl.Decode(strings.NewReader(c.history), history.DecodeOptions{Name: c.name + ".jsonl"})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				name, hh := w.checker, h
				if name == "emme-items" {
					name, hh = "emme", itemsOnly(h)
				}
				ck, ok := check.Lookup(name)
				if !ok {
					t.Fatalf("checker %s not registered", name)
				}
				r, err := ck.Check(context.Background(), hh, check.Options{Model: w.model})
				if err != nil {
					t.Fatal(err)
				}
				if r.Verdict != w.verdict {
					t.Errorf("%s %s: %s (%s) %v, want %s", w.checker, w.model, r.Verdict, r.Reason, r.AnomalyTypes, w.verdict)
				}
				for _, ty := range w.types {
					if !slices.Contains(r.AnomalyTypes, ty) {
						t.Errorf("%s %s: types %v lack %s", w.checker, w.model, r.AnomalyTypes, ty)
					}
				}
			}
		})
	}
}

// itemsOnly is h without its predicate reads: what an item-based checker
// observes.
func itemsOnly(h *history.History) *history.History {
	p := *h
	p.Txns = make([]history.Txn, len(h.Txns))
	for i, t := range h.Txns {
		t.Ops = slices.DeleteFunc(slices.Clone(t.Ops), func(o history.Op) bool { return o.Kind == history.PredRead })
		p.Txns[i] = t
	}
	p.Evidence.PredicateRead, p.Evidence.VersionSets = false, false
	return &p
}
