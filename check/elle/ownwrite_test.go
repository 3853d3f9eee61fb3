package elle

import (
	"context"
	"slices"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/model"
)

// TestNotMyOwnWriteInvalidUnderReadCommitted: a transaction that wrote a
// key and then read it without its own write breaks every model (Adya 1999
// §3.1.2; docs/models.md, not-my-own-write), read committed included. Elle
// reports it as internal only, which read committed does not prohibit (a
// re-read may differ under read committed), so both checkers said valid.
func TestNotMyOwnWriteInvalidUnderReadCommitted(t *testing.T) {
	cases := []struct {
		name string
		h    func(*testing.T) *hb
		c    check.Checker
	}{
		{"rw-register", func(t *testing.T) *hb {
			return newHB(t).add(
				ok("a", "w x 1", "r x 2"),
				ok("b", "w x 2"),
				ok("c", "w y 1"), ok("d", "r y 1"))
		}, RWRegister{}},
		{"list-append", func(t *testing.T) *hb {
			return newHB(t).add(
				ok("a", "append x 1", "r x [2]"),
				ok("b", "append x 2"),
				ok("c", "append y 1"),
				ok("d", "r y [1]", "r x [2 1]"))
		}, ListAppend{}},
	}
	for _, c := range cases {
		for _, m := range []string{model.ReadUncommitted, model.ReadCommitted} {
			t.Run(c.name+"/"+m, func(t *testing.T) {
				r, err := c.c.Check(context.Background(), c.h(t).h, check.Options{Model: m})
				if err != nil {
					t.Fatal(err)
				}
				if r.Verdict != check.Invalid || !slices.Contains(r.AnomalyTypes, model.NotMyOwnWrite) {
					t.Errorf("%v %v, want invalid with not-my-own-write", r.Verdict, r.AnomalyTypes)
				}
			})
		}
	}
}

// TestNonRepeatableReadAllowedUnderReadCommitted: a re-read that differs
// (Elle's internal) is no own-write anomaly and read committed allows it.
func TestNonRepeatableReadAllowedUnderReadCommitted(t *testing.T) {
	h := newHB(t).add(
		ok("a", "w x 1"),
		ok("b", "r x 1", "r x 2"),
		ok("c", "r x 1", "w x 2")).h
	r, err := RWRegister{}.Check(context.Background(), h, check.Options{Model: model.ReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != check.Valid || slices.Contains(r.AnomalyTypes, model.NotMyOwnWrite) {
		t.Errorf("%v %v, want valid (internal allowed)", r.Verdict, r.AnomalyTypes)
	}
}

// TestNonRepeatableReadNotInvalidUnderReadCommittedBE: Biswas-Enea read
// committed allows a re-read to return another writer's value (Plume's
// NonRepeatableRead is a read atomic pattern); Elle's internal reported it
// and read-committed-be prohibited internal, so rw-register said invalid
// where package weak says valid (sim read-committed histories).
func TestNonRepeatableReadNotInvalidUnderReadCommittedBE(t *testing.T) {
	h := newHB(t).add(
		ok("a", "w x 1"),
		ok("b", "r x 1", "r x 2"),
		ok("c", "r x 1", "w x 2")).h
	r, err := RWRegister{}.Check(context.Background(), h, check.Options{Model: model.ReadCommittedBE})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict == check.Invalid {
		t.Errorf("invalid under read-committed-be: %v", r.AnomalyTypes)
	}
	if !model.Prohibits(model.ReadAtomic, model.Internal) {
		t.Error("read-atomic must still prohibit internal (a non-repeatable read)")
	}
}

// TestG1bNotReportedForRewrittenFinalValue: a transaction that writes the
// same value twice (w x 1, w x 1) leaves 1 as its final value, so a read of 1
// is no intermediate read (Adya G1b). rw-register attributed the read to the
// first, intermediate write and reported G1b (package weak: valid).
func TestG1bNotReportedForRewrittenFinalValue(t *testing.T) {
	cases := []struct {
		name   string
		writer []string
		g1b    bool
	}{
		{"same value twice", []string{"w x 1", "w x 1"}, false},
		{"final value again", []string{"w x 1", "w x 2", "w x 1"}, false},
		{"overwritten", []string{"w x 1", "w x 1", "w x 2"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHB(t).add(ok("a", c.writer...), ok("b", "r x 1")).h
			r, err := RWRegister{}.Check(context.Background(), h, check.Options{Model: model.ReadCommitted})
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(r.AnomalyTypes, model.G1b); got != c.g1b {
				t.Errorf("G1b reported %v, want %v (%v)", got, c.g1b, r.AnomalyTypes)
			}
		})
	}
}
