package isodiff

import (
	"strings"
	"testing"
	"time"
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

// Fig. 5 (timing): a reader of one column and a writer of it form a
// transaction-level cycle (reader -rw-> writer -wr-> reader), but the one
// read cannot both precede the writer's commit and follow it: the timing
// check removes the cycle. The positive control reads the column in one
// statement and a second column in a later one: read skew is possible.
func TestFig5TimingCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		trace string
		delta bool
	}{
		{"single-read-is-infeasible", `r	-- label: report
r	BEGIN
r	SELECT total FROM acct WHERE id = 1
r	COMMIT
w	-- label: deposit
w	UPDATE acct SET total = 5 WHERE id = 1
`, false},
		{"read-skew-is-feasible", `r	-- label: report
r	BEGIN
r	SELECT checking FROM acct WHERE id = 1
r	SELECT saving FROM acct WHERE id = 1
r	COMMIT
w	-- label: transfer
w	BEGIN
w	UPDATE acct SET checking = 1 WHERE id = 1
w	UPDATE acct SET saving = 9 WHERE id = 1
w	COMMIT
`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Analyze(app(t, tc.trace), Options{Level: ReadCommitted})
			if got := len(r.Cycles) > 0; got != tc.delta {
				t.Fatalf("Δ cycles %v, want %v: %+v", got, tc.delta, r.Cycles)
			}
			if !tc.delta && r.Stats.TimingPruned == 0 {
				t.Errorf("no cycle pruned by the timing check: %+v", r.Stats)
			}
			if tc.delta && strings.Join(targets(r), ",") != "acct.checking" && strings.Join(targets(r), ",") != "acct.saving" {
				t.Errorf("targets %v", targets(r))
			}
		})
	}
}

// Fig. 6 (correlation): T1 updates column a of a row and then reads b of
// the same row; T2 updates b and reads a. The transaction-level cycle
// T1 -rw(b)-> T2 -rw(a)-> T1 passes the timing check, but both
// dependencies put T1 and T2 on one row, so their updates of that row are
// ordered (the second writer waits for the first to commit), and either
// order contradicts one of the rw dependencies: the correlation check
// removes it. When the read and the update touch different rows (the trace
// shows different keys), nothing correlates them and the cycle stays.
func TestFig6CorrelationCheck(t *testing.T) {
	mk := func(readKey1, readKey2, readKey3 string) string {
		return `a	-- label: t1
a	BEGIN
a	UPDATE r SET a = 1 WHERE id = 1
a	SELECT b FROM r WHERE id = ` + readKey1 + `
a	COMMIT
a	BEGIN
a	UPDATE r SET a = 1 WHERE id = 2
a	SELECT b FROM r WHERE id = ` + readKey2 + `
a	COMMIT
b	-- label: t2
b	BEGIN
b	UPDATE r SET b = 1 WHERE id = 3
b	SELECT a FROM r WHERE id = ` + readKey3 + `
b	COMMIT
`
	}
	for _, tc := range []struct {
		name  string
		trace string
		delta bool
	}{
		{"same-row-is-infeasible", mk("1", "2", "3"), false},
		{"different-rows-are-feasible", mk("5", "6", "7"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := app(t, tc.trace)
			r := Analyze(a, Options{Level: ReadCommitted})
			var cross []CycleInfo
			for _, c := range r.Cycles {
				has1, has2 := false, false
				for _, e := range c.Edges {
					has1 = has1 || strings.HasPrefix(e.From, "t1")
					has2 = has2 || strings.HasPrefix(e.From, "t2")
				}
				if has1 && has2 && c.Round == 0 {
					cross = append(cross, c)
				}
			}
			if got := len(cross) > 0; got != tc.delta {
				t.Fatalf("t1/t2 Δ cycles %v, want %v: %+v", got, tc.delta, cross)
			}
			if !tc.delta && r.Stats.CorrPruned == 0 {
				t.Errorf("nothing pruned by the correlation check: %+v", r.Stats)
			}
		})
	}
}

// Under snapshot isolation a write skew (two consecutive vulnerable rw
// edges between two transactions writing different rows) is a Δ cycle.
func TestSIWriteSkew(t *testing.T) {
	tr := `a	-- label: oncall
a	BEGIN
a	SELECT count(*) FROM doctors WHERE shift = 1 AND oncall = true
a	UPDATE doctors SET oncall = false WHERE id = 1
a	COMMIT
b	-- label: oncall
b	BEGIN
b	SELECT count(*) FROM doctors WHERE shift = 1 AND oncall = true
b	UPDATE doctors SET oncall = false WHERE id = 2
b	COMMIT
`
	r := Analyze(app(t, tr), Options{Level: SnapshotIsolation})
	if len(r.Cycles) == 0 || strings.Join(targets(r), ",") != "doctors.oncall" {
		t.Fatalf("write skew not found: targets %v cycles %+v", targets(r), r.Cycles)
	}
	if !strings.Contains(r.Targets[0].Fix, "application lock") {
		t.Errorf("a predicate read needs an application lock or unique key, fix says %q", r.Targets[0].Fix)
	}
}

// Loops collapse (Thm 3.3): a transaction repeating its loop body any
// number of times is one class.
func TestLoopCollapse(t *testing.T) {
	tr := "x\tBEGIN\nx\tSELECT a FROM t WHERE id = 1\n"
	for i := 0; i < 3; i++ {
		tr += "x\tSELECT p FROM item WHERE id = " + itoa(i) + "\nx\tUPDATE stock SET q = 1 WHERE id = " + itoa(i) + "\n"
	}
	tr += "x\tCOMMIT\ny\tBEGIN\ny\tSELECT a FROM t WHERE id = 1\ny\tSELECT p FROM item WHERE id = 9\ny\tUPDATE stock SET q = 1 WHERE id = 9\ny\tCOMMIT\n"
	a := app(t, tr)
	if len(a.Classes) != 1 || a.Classes[0].Instances != 2 || len(a.Classes[0].Stmts) != 3 || a.Stats.Collapsed != 2 {
		t.Fatalf("classes %+v, collapsed %d", a.Classes, a.Stats.Collapsed)
	}
}

func TestHintsParse(t *testing.T) {
	good := `# comment
remove-class stock-level
replicas delivery 1
remove-edge a b t.c
exclusive a->b b->a:t.c
correlated a->b:t.c b->c
irreparable *.x
commutative district.d_ytd
unique orders.o_id
ignore *.ver
label new-order w:district.d_next_o_id r:stock.s_quantity
`
	h, err := ParseHints(strings.NewReader(good), "h")
	if err != nil {
		t.Fatal(err)
	}
	if !h.RemoveClass["stock-level"] || h.Replicas["delivery"] != 1 || len(h.Exclusive) != 1 || len(h.Correlated) != 1 || len(h.Labels) != 1 || len(h.Labels[0].Need) != 2 {
		t.Errorf("parsed %+v", h)
	}
	for _, bad := range []string{"replicas x", "replicas x 0", "frobnicate", "ignore nocolumn", "exclusive a b", "label x q:t.c", "remove-edge a"} {
		if _, err := ParseHints(strings.NewReader("\n"+bad+"\n"), "h"); err == nil || !strings.Contains(err.Error(), "h:2") {
			t.Errorf("%q: error %v, want one naming h:2", bad, err)
		}
	}
}

// Early-exit loop iterations (a loop body cut short, as TPC-C Delivery's
// districts without a new order) collapse into the full iteration, so the
// transactions are one class whatever iterations exit early, and the
// range read of an iteration is correlated with the DELETE of the row it
// found (the same row in every instance).
func TestLoopCollapseEarlyExit(t *testing.T) {
	var tr strings.Builder
	for s, pattern := range []string{"EEFFE", "FEEEF", "EFE", "FFEE"} {
		sess := "s" + itoa(s)
		tr.WriteString(sess + "\tBEGIN\n")
		for d, it := range pattern {
			tr.WriteString(sess + "\tSELECT no_o_id FROM new_order WHERE no_d_id = " + itoa(d+1) + "\n")
			if it == 'F' {
				o := itoa(100*s + d)
				tr.WriteString(sess + "\tDELETE FROM new_order WHERE no_d_id = " + itoa(d+1) + " AND no_o_id = " + o + "\n")
				tr.WriteString(sess + "\tUPDATE orders SET carrier = 1 WHERE o_d_id = " + itoa(d+1) + " AND o_id = " + o + "\n")
			}
		}
		tr.WriteString(sess + "\tCOMMIT\n")
	}
	a := app(t, tr.String())
	if len(a.Classes) != 1 || a.Classes[0].Instances != 4 || len(a.Classes[0].Stmts) != 3 {
		t.Fatalf("want one class of 3 statements and 4 instances, got %d classes: %+v", len(a.Classes), a.Classes)
	}
	c := a.Classes[0]
	var readRow, delRow = -1, -1
	for _, o := range c.Ops {
		if o.Table == "new_order" && o.Stmt == 0 {
			readRow = o.Row
		}
		if o.Table == "new_order" && o.Stmt == 1 {
			delRow = o.Row
		}
	}
	if readRow < 0 || readRow != delRow {
		t.Errorf("the range read (row %d) and the DELETE of the row it found (row %d) are not correlated", readRow, delRow)
	}
}

// A unique ID an instance generates (the order id New-Order takes from a
// counter) is known to another transaction only after the creator
// commits: a reader that names the new order's lines by the id must have
// learned it by a read that followed the commit, so it cannot also have
// missed the order in that read (no Δ cycle order-status -rw(orders)->
// new-order -wr(order_line)-> order-status). The positive control reads
// the district's lines without naming the order: the phantom is real.
func TestUniqueIDLearnedAfterCommit(t *testing.T) {
	mk := func(lineRead string) string {
		var b strings.Builder
		for i := 0; i < 3; i++ {
			s := "n" + itoa(i)
			o := itoa(10 + i)
			b.WriteString(s + "\t-- label: new-order\n" + s + "\tBEGIN\n")
			b.WriteString(s + "\tSELECT next_o_id FROM district WHERE d_id = " + itoa(i+1) + "\n")
			b.WriteString(s + "\tUPDATE district SET next_o_id = " + itoa(11+i) + " WHERE d_id = " + itoa(i+1) + "\n")
			b.WriteString(s + "\tINSERT INTO orders (o_d_id, o_id, o_c_id) VALUES (" + itoa(i+1) + ", " + o + ", " + itoa(7+i) + ")\n")
			b.WriteString(s + "\tINSERT INTO order_line (ol_d_id, ol_o_id, ol_number, ol_amount) VALUES (" + itoa(i+1) + ", " + o + ", 1, 5)\n")
			b.WriteString(s + "\tCOMMIT\n")
		}
		for i := 0; i < 3; i++ {
			s := "r" + itoa(i)
			b.WriteString(s + "\t-- label: order-status\n" + s + "\tBEGIN\n")
			b.WriteString(s + "\tSELECT o_id FROM orders WHERE o_d_id = " + itoa(i+1) + " AND o_c_id = " + itoa(7+i) + "\n")
			b.WriteString(s + "\t" + strings.ReplaceAll(strings.ReplaceAll(lineRead, "{D}", itoa(i+1)), "{O}", itoa(10+i)) + "\n")
			b.WriteString(s + "\tCOMMIT\n")
		}
		// Updates by key, so the trace shows how rows are identified.
		b.WriteString("u\tUPDATE orders SET o_c_id = 1 WHERE o_d_id = 1 AND o_id = 1\n")
		b.WriteString("u\tUPDATE order_line SET ol_amount = 1 WHERE ol_d_id = 1 AND ol_o_id = 1 AND ol_number = 1\n")
		return b.String()
	}
	for _, tc := range []struct {
		name, lineRead string
		delta          bool
	}{
		{"named-by-learned-id", "SELECT ol_amount FROM order_line WHERE ol_d_id = {D} AND ol_o_id = {O}", false},
		{"district-scan-is-a-phantom", "SELECT ol_amount FROM order_line WHERE ol_d_id = {D}", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := app(t, mk(tc.lineRead))
			r := Analyze(a, Options{Level: ReadCommitted})
			var cross []CycleInfo
			for _, c := range r.Cycles {
				names := ""
				for _, e := range c.Edges {
					names += e.From + " "
				}
				if c.Round == 0 && len(c.Edges) == 2 && strings.Contains(names, "order-status") && strings.Contains(names, "new-order") && slicesContain(c.RWColumns, "orders.o_c_id", "orders.o_d_id", "orders.o_id") {
					cross = append(cross, c)
				}
			}
			if got := len(cross) > 0; got != tc.delta {
				t.Fatalf("order-status/new-order phantom Δ cycles %v, want %v: %+v", got, tc.delta, cross)
			}
		})
	}
}

func slicesContain(have []string, any ...string) bool {
	for _, h := range have {
		for _, a := range any {
			if h == a {
				return true
			}
		}
	}
	return false
}

// Set-cover rounds search only the dangerous paths whose Δ cycle the new
// TargetColumn broke; on the TPC-C traces and a small synthetic
// application this gives the same TargetColumns as searching every path
// in every round.
func TestIncrementalRoundsMatchFull(t *testing.T) {
	apps := map[string]*App{
		"tpcc-postgres": loadTPCC(t, "tpcc-postgres.trace.gz"),
		"tpcc-mariadb":  loadTPCC(t, "tpcc-mariadb.trace.gz"),
		"synthetic":     synthetic(20, 6, 3, 4, 8, 0.3, 0.5, 7),
	}
	for name, a := range apps {
		for _, lv := range []string{ReadCommitted, SnapshotIsolation} {
			var h *Hints
			if strings.HasPrefix(name, "tpcc") {
				h = paperHints(t)
			}
			inc := Analyze(a, Options{Level: lv, Hints: h})
			if strings.HasPrefix(name, "tpcc") {
				full := Analyze(a, Options{Level: lv, Hints: h, FullRounds: true})
				if g, w := strings.Join(targets(inc), ","), strings.Join(targets(full), ","); g != w {
					t.Errorf("%s %s: incremental targets %s, full re-search %s", name, lv, g, w)
				}
			}
			// The cover is complete: with every TargetColumn protected, a
			// full search finds no Δ cycle.
			prot := map[string]bool{}
			for _, c := range targets(inc) {
				prot[c] = true
			}
			if left, _ := prepare(a, Options{Level: lv, Hints: h, K: 10, L: 6, CycleBudget: 50 * time.Millisecond}, prot).search(); len(left) > 0 && len(inc.Residual) == 0 {
				t.Errorf("%s %s: %d Δ cycles remain once the TargetColumns %v are protected", name, lv, len(left), targets(inc))
			}
			searched, full1 := 0, 0
			for _, r := range inc.Rounds[1:] {
				searched += r.Searched
				full1 += r.DangerousPaths
			}
			if searched > full1 {
				t.Errorf("%s %s: incremental rounds searched %d paths, more than the %d a full re-search does", name, lv, searched, full1)
			}
		}
	}
}
