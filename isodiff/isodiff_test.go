package isodiff

import (
	"strings"
	"testing"
)

// app builds an application model from a plain-format trace.
func app(t *testing.T, trace string) *App {
	t.Helper()
	es, _, err := ReadTrace(strings.NewReader(trace), "test", FormatPlain)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(DialectPostgres)
	b.Add("test", FormatPlain, es)
	a := b.Build()
	if a.Stats.Unparsable > 0 {
		t.Fatalf("unparsable: %+v", a.Stats.Unparsed)
	}
	return a
}

func targets(r *Report) []string {
	var out []string
	for _, t := range r.Targets {
		out = append(out, t.Column)
	}
	return out
}

// Fig. 1 (purchase): read the stock, write the decremented value, record
// the order. Two purchases of one item lose an update under read committed
// (a Δ cycle of two rw edges on item.quantity); snapshot isolation's
// first-updater-wins forbids it (both write the item row).
const purchase = `# purchase
s1	-- label: purchase
s1	BEGIN
s1	SELECT quantity FROM item WHERE id = 7
s1	UPDATE item SET quantity = 4 WHERE id = 7
s1	INSERT INTO orders (id, item_id, qty) VALUES (100, 7, 1)
s1	COMMIT
s2	-- label: purchase
s2	BEGIN
s2	SELECT quantity FROM item WHERE id = 8
s2	UPDATE item SET quantity = 9 WHERE id = 8
s2	INSERT INTO orders (id, item_id, qty) VALUES (101, 8, 1)
s2	COMMIT
`

func TestFig1PurchaseLostUpdate(t *testing.T) {
	a := app(t, purchase)
	if len(a.Classes) != 1 || a.Classes[0].Label != "purchase" {
		t.Fatalf("classes: %+v", a.Classes)
	}
	for _, tc := range []struct {
		level   string
		targets []string
	}{
		{ReadCommitted, []string{"item.quantity"}},
		{SnapshotIsolation, nil},
	} {
		r := Analyze(a, Options{Level: tc.level})
		if got := targets(r); strings.Join(got, ",") != strings.Join(tc.targets, ",") {
			t.Errorf("%s: targets %v, want %v (cycles %+v)", tc.level, got, tc.targets, r.Cycles)
		}
		if tc.targets != nil && !strings.Contains(r.Targets[0].Fix, "FOR UPDATE") {
			t.Errorf("%s: fix %q names no FOR UPDATE", tc.level, r.Targets[0].Fix)
		}
	}
}
