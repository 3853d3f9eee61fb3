package report

import (
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// TestEdgeValues: edge labels carry the versions behind each dependency,
// read off the transactions' ops, and nothing when the ops do not show them.
func TestEdgeValues(t *testing.T) {
	h := buildHistory("jsonl", []txnSpec{
		txn("a", "s1", ap("x", 1), ap("x", 2)),          // T0
		txn("b", "s2", rl("x", 1, 2), ap("x", 3)),       // T1: read a's version, appended after it
		txn("c", "s3", rl("x"), ap("x", 9), rl("x", 9)), // T2: read [] first, then its own
		txn("d", "s4", rr("y", -1), wr("y", 5)),         // T3: register read of nil
		txn("e", "s5", wr("y", 6), rr("y", 6)),          // T4
		txn("f", "s6", rl("z", 4)),                      // T5: no write
	})
	for _, c := range []struct {
		step check.Step
		want string
	}{
		{check.Step{From: 0, To: 1, Rel: "ww", Key: "x"}, "2→3"},
		{check.Step{From: 0, To: 1, Rel: "wr", Key: "x"}, "2"},
		{check.Step{From: 1, To: 2, Rel: "rw", Key: "x"}, "2→9"},
		{check.Step{From: 2, To: 0, Rel: "rw", Key: "x"}, "[]→1"},
		{check.Step{From: 3, To: 4, Rel: "rw", Key: "y"}, "nil→6"},
		{check.Step{From: 3, To: 4, Rel: "ww", Key: "y"}, "5→6"},
		{check.Step{From: 4, To: 3, Rel: "wr", Key: "y"}, ""}, // T3 did not read 6
		{check.Step{From: 5, To: 0, Rel: "rw", Key: "x"}, ""}, // T5 never read x
		{check.Step{From: 0, To: 5, Rel: "wr", Key: "z"}, ""}, // T0 wrote no z
		{check.Step{From: 0, To: 1, Rel: "process", Key: ""}, ""},
		{check.Step{From: 0, To: 99, Rel: "ww", Key: "x"}, ""}, // not in the history
	} {
		if got := edgeValues(h, c.step); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.step, got, c.want)
		}
	}
	// The label in the drawn graph carries them.
	a := &check.Anomaly{Type: "G-single-item", Txns: []int32{0, 1}, Cycle: []check.Step{
		{From: 0, To: 1, Rel: "ww", Key: "x", Why: "w"}, {From: 1, To: 0, Rel: "rw", Key: "x", Why: "r"}}}
	g := layoutGraph(h, a)
	if g.Edges[0].Label != "1: ww x: 2→3" || g.Edges[1].Label != "2: rw x: 2→1" {
		t.Errorf("labels %q, %q", g.Edges[0].Label, g.Edges[1].Label)
	}
}

// TestTimelineForTimestampCheckers: a chronos anomaly is drawn on database
// timestamps even when client intervals exist; other checkers' anomalies on
// client time; chronos falls back to client time without timestamps.
func TestTimelineForTimestampCheckers(t *testing.T) {
	s1 := txn("a", "s1", wr("x", 1))
	s1.invoke, s1.done, s1.start, s1.commit = 100, 200, 10, 20
	s2 := txn("b", "s2", wr("x", 2))
	s2.invoke, s2.done, s2.start, s2.commit = 150, 250, 15, 30
	h := buildHistory("jsonl", []txnSpec{s1, s2})
	a := &check.Anomaly{Type: "noconflict", Txns: []int32{0, 1}, Key: "x"}
	if tl := layoutTimelineFor(h, a, "chronos"); tl == nil || tl.Caption != "database timestamps (start → commit)" {
		t.Errorf("chronos: %+v", tl)
	}
	if tl := layoutTimelineFor(h, a, "leopard"); tl == nil || !strings.HasPrefix(tl.Caption, "client time (invoke → complete)") {
		t.Errorf("leopard: %+v", tl)
	}
	for i := range h.Txns {
		h.Txns[i].StartTS, h.Txns[i].CommitTS = history.Timestamp{}, history.Timestamp{}
	}
	if tl := layoutTimelineFor(h, a, "chronos"); tl == nil || !strings.HasPrefix(tl.Caption, "client time (invoke → complete)") {
		t.Errorf("chronos without timestamps: %+v", tl)
	}
}
