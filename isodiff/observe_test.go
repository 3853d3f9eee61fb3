package isodiff

import (
	"strings"
	"testing"
)

// A recorded lost update between two purchases (the history's G-single
// cycle rw, ww between the transactions the trace names p1 and p2) marks
// the predicted purchase/purchase Δ cycle observed; an anomaly of a
// transaction the trace does not hold is unmapped, and one between other
// classes matches no cycle.
func TestObserveMarksPredictedCycle(t *testing.T) {
	tr := `s1	-- txn: p1
s1	BEGIN
s1	SELECT quantity FROM item WHERE id = 7
s1	UPDATE item SET quantity = 4 WHERE id = 7
s1	COMMIT
s2	-- txn: p2
s2	BEGIN
s2	SELECT quantity FROM item WHERE id = 8
s2	UPDATE item SET quantity = 9 WHERE id = 8
s2	COMMIT
s3	-- txn: r1
s3	BEGIN
s3	SELECT note FROM audit WHERE id = 1
s3	COMMIT
`
	a := app(t, tr)
	if len(a.Classes) != 2 {
		t.Fatalf("classes %+v", a.Classes)
	}
	r := Analyze(a, Options{Level: ReadCommitted})
	if len(r.Cycles) == 0 {
		t.Fatal("no Δ cycle predicted")
	}
	Observe(r, a, "h.jsonl", []HistoryAnomaly{
		{Type: "G-single-item", Txns: []string{"p2", "p1"}, Rels: []string{"rw", "ww"}},
		{Type: "G-single-item", Txns: []string{"p1", "x9"}, Rels: []string{"rw", "ww"}},
		{Type: "G2-item", Txns: []string{"p1", "r1"}, Rels: []string{"rw", "rw"}},
		{Type: "G0", Txns: []string{"p1", "p2"}, Rels: []string{"ww", "ww"}},
	})
	o := r.Observed
	if o.Anomalies != 4 || o.Mapped != 3 || o.Matched != 1 || o.CyclesObserved == 0 || len(o.Unmapped) != 1 || len(o.NotPredicted) != 1 {
		t.Fatalf("summary %+v", o)
	}
	c := r.Cycles[0]
	if c.ObservedCount != 1 || len(c.Observed) != 1 || c.Observed[0].Type != "G-single-item" || c.Observed[0].History != "h.jsonl" {
		t.Fatalf("cycle %+v", c)
	}
	var sb strings.Builder
	WriteText(&sb, r)
	if !strings.Contains(sb.String(), "OBSERVED 1 times") || !strings.Contains(sb.String(), "x9 is not in the trace") {
		t.Errorf("text report lacks the observation:\n%s", sb.String())
	}
	sb.Reset()
	if err := WriteHTML(&sb, r); err != nil || !strings.Contains(sb.String(), "OBSERVED 1×") {
		t.Errorf("HTML report lacks the observation (%v)", err)
	}
}
