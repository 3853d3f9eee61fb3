package aion

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// tx builds "id sess sts cts op..." with ops like "w x 1", "r x 1", "r x nil".
func tx(c *Checker, id, sess string, sts, cts int64, ops ...string) *Txn {
	t := &Txn{ID: id, Session: sess, Status: history.Committed,
		StartTS: history.Timestamp{P: sts, Set: true}, CommitTS: history.Timestamp{P: cts, Set: true}}
	for _, s := range ops {
		f := strings.Fields(s)
		k, _ := history.ParseKind(f[0])
		o := Op{Kind: k, Key: c.Keys.Str(f[1])}
		if f[2] != "nil" {
			var n int64
			fmt.Sscan(f[2], &n)
			o.V = Val{N: n, K: 1}
		}
		t.Ops = append(t.Ops, o)
	}
	return t
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTest(model string) (*Checker, *clock) {
	ck := &clock{t: time.Unix(1000, 0)}
	return New(Config{Model: model, FinalAfter: time.Second, Now: ck.now}), ck
}

// TestLateArrivalFlipFlop: a read first passes, a late write with an
// earlier commit timestamp makes it fail (flip), a later late write restores
// the value it read (flip back); the final verdict is valid with 2 flips.
// Aion: Ext verdicts are re-checked on late arrivals.
func TestLateArrivalFlipFlop(t *testing.T) {
	c, _ := newTest("snapshot-isolation")
	add := func(x *Txn) {
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	add(tx(c, "1", "a", 1, 2, "w x 1"))
	add(tx(c, "3", "c", 7, 8, "r x 1"))
	if st := c.Status(); st.Violations["ext (tentative)"] != 0 {
		t.Fatalf("tentative ext before late write: %v", st)
	}
	add(tx(c, "2", "b", 3, 4, "w x 2"))
	if st := c.Status(); st.Violations["ext (tentative)"] != 1 || st.Flips != 1 {
		t.Fatalf("after late write: %+v", st)
	}
	add(tx(c, "4", "d", 5, 6, "w x 1"))
	r := c.Close()
	if r.Verdict != check.Valid || r.Stats["flips"] != int64(2) {
		t.Fatalf("final %v flips %v: %v", r.Verdict, r.Stats["flips"], r.Anomalies)
	}
}

// TestFinalAfterDelayLateWriteReopens: a failing Ext read that became
// final is re-opened by a write arriving after --final-after: a version
// that now explains it withdraws the failure (valid, counted, warned); a
// late write that cannot explain it leaves it reported.
func TestFinalAfterDelayLateWriteReopens(t *testing.T) {
	for _, c := range []struct {
		name string
		late string // the late transaction's op (sts 5, cts 6)
		want check.Verdict
	}{
		{"explains", "w x 1", check.Valid},
		{"other-value", "w x 3", check.Invalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			ck, clk := newTest("snapshot-isolation")
			ck.Add(tx(ck, "1", "a", 1, 2, "w x 1"))
			ck.Add(tx(ck, "2", "b", 3, 4, "w x 2"))
			ck.Add(tx(ck, "3", "c", 7, 8, "r x 1")) // fails: x = 2 at 7
			clk.t = clk.t.Add(2 * time.Second)
			ck.Tick()
			if st := ck.Status(); st.Violations[TypeExt] != 1 {
				t.Fatalf("not final: %+v", st)
			}
			ck.Add(tx(ck, "4", "d", 5, 6, c.late))
			r := ck.Close()
			if r.Verdict != c.want {
				t.Fatalf("got %v %v %v", r.Verdict, r.AnomalyTypes, r.Anomalies)
			}
			if c.want == check.Valid && (r.Stats["ext_withdrawn"] != int64(1) || len(r.Warnings) == 0) {
				t.Fatalf("withdrawal not reported: %v %v", r.Stats, r.Warnings)
			}
		})
	}
}

// TestFinalAfterDelayLateWriteAfterPassIsUnknown: a read that became final
// as passing is not re-checked online, so a write arriving after
// --final-after with a commit timestamp at or before its snapshot (which
// may make it a stale read) turns the verdict unknown with the reason,
// never a silent valid; a late write committing after every final
// snapshot changes nothing.
func TestFinalAfterDelayLateWriteAfterPassIsUnknown(t *testing.T) {
	for _, c := range []struct {
		name     string
		sts, cts int64
		want     check.Verdict
	}{
		{"below-final-snapshot", 3, 4, check.Unknown},
		{"after-final-snapshot", 9, 10, check.Valid},
	} {
		t.Run(c.name, func(t *testing.T) {
			ck, clk := newTest("snapshot-isolation")
			ck.Add(tx(ck, "1", "a", 1, 2, "w x 1"))
			ck.Add(tx(ck, "3", "c", 7, 8, "r x 1")) // passes: x = 1 at 7
			clk.t = clk.t.Add(2 * time.Second)
			ck.Tick()
			ck.Add(tx(ck, "4", "d", c.sts, c.cts, "w x 2"))
			r := ck.Close()
			if r.Verdict != c.want {
				t.Fatalf("got %v (%s) %v", r.Verdict, r.Reason, r.Anomalies)
			}
			if c.want == check.Unknown && !strings.Contains(r.Reason, "final as passing") {
				t.Fatalf("reason does not say why: %s", r.Reason)
			}
		})
	}
}

// TestFinalAfterDelayUndecidableIsUnknown: a late write committing below
// the discarded state may explain a final failure whose deciding versions
// are gone: the verdict is unknown with the reason, never a false INVALID.
func TestFinalAfterDelayUndecidableIsUnknown(t *testing.T) {
	c, ck := newTest("snapshot-isolation")
	c.Add(tx(c, "1", "a", 1, 2, "w x 1"))
	c.Add(tx(c, "2", "b", 3, 4, "w x 2"))
	c.Add(tx(c, "3", "c", 5, 6, "r x 9")) // fails: x = 2 at 5
	c.Add(tx(c, "5", "e", 7, 8, "w x 3"))
	c.Add(tx(c, "6", "e", 9, 10, "r x 3"))
	ck.t = ck.t.Add(2 * time.Second)
	c.Tick() // watermark 9: versions before cts 8 discarded
	c.Add(tx(c, "4", "d", 1, 2, "w x 9"))
	r := c.Close()
	if r.Verdict != check.Unknown || r.Stats["ext_reopened_unknown"] != int64(1) || !strings.Contains(r.Reason, "re-opened") {
		t.Fatalf("got %v %v %q", r.Verdict, r.Stats, r.Reason)
	}
}

// TestNothingCheckedIsUnknown: closing a checker that received no
// committed transaction is not a valid verdict.
func TestNothingCheckedIsUnknown(t *testing.T) {
	c, _ := newTest("snapshot-isolation")
	if r := c.Close(); r.Verdict != check.Unknown {
		t.Fatalf("got %v", r.Verdict)
	}
	c, _ = newTest("snapshot-isolation")
	c.Add(&Txn{ID: "a", Status: history.Aborted})
	if r := c.Close(); r.Verdict != check.Unknown {
		t.Fatalf("only aborted: got %v", r.Verdict)
	}
}

// TestAxiomsOnline: one violation of each SI axiom (Chronos), arriving
// out of order.
func TestAxiomsOnline(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string
		txns func(c *Checker) []*Txn
	}{
		{"session", TypeSession, func(c *Checker) []*Txn {
			return []*Txn{tx(c, "1", "a", 1, 5, "w x 1"), tx(c, "2", "a", 3, 6, "r y nil")}
		}},
		// plain SI: a snapshot older than the session predecessor's commit
		// is allowed (the Session axiom is strong-session SI's).
		{"session-lag-si", "", func(c *Checker) []*Txn {
			return []*Txn{tx(c, "1", "a", 1, 5, "w x 1"), tx(c, "2", "a", 3, 6, "r x nil")}
		}},
		{"internal", TypeInternal, func(c *Checker) []*Txn { return []*Txn{tx(c, "1", "a", 1, 2, "w x 1", "r x 2")} }},
		{"ext-fig15", TypeExt, func(c *Checker) []*Txn {
			return []*Txn{tx(c, "3", "c", 5, 6, "r x 1"), tx(c, "2", "b", 3, 4, "w x 2"), tx(c, "1", "a", 1, 2, "w x 1")}
		}},
		{"noconflict-late", TypeNoConflict, func(c *Checker) []*Txn {
			return []*Txn{tx(c, "2", "b", 4, 7, "w x 2"), tx(c, "1", "a", 3, 6, "w x 1")}
		}},
		{"noconflict-later", TypeNoConflict, func(c *Checker) []*Txn {
			return []*Txn{tx(c, "1", "a", 3, 6, "w x 1"), tx(c, "2", "b", 4, 7, "w x 2")}
		}},
		{"valid", "", func(c *Checker) []*Txn {
			return []*Txn{tx(c, "2", "b", 3, 4, "r x 1", "w x 2"), tx(c, "1", "a", 1, 2, "w x 1"), tx(c, "3", "a", 5, 6, "r x 2")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := "snapshot-isolation"
			if tc.want == TypeSession {
				m = "strong-session-snapshot-isolation"
			}
			c, _ := newTest(m)
			for _, x := range tc.txns(c) {
				if err := c.Add(x); err != nil {
					t.Fatal(err)
				}
			}
			r := c.Close()
			got := strings.Join(r.AnomalyTypes, ",")
			if got != tc.want {
				t.Fatalf("types %q, want %q: %v", got, tc.want, r.Anomalies)
			}
			if tc.want == TypeSession && strings.Join(r.Not, ",") != "strong-session-snapshot-isolation" {
				t.Errorf("session not=%v also=%v", r.Not, r.AlsoNot)
			}
			var b strings.Builder
			for _, a := range r.Anomalies {
				b.WriteString(a.Type + ": " + a.Explanation + "\n")
			}
			golden(t, "testdata/"+tc.name+".golden", b.String())
		})
	}
}

// TestWatermark: with final-after 0, old versions are discarded; a
// transaction arriving with a snapshot older than the retained state is
// counted and makes the verdict unknown.
func TestWatermark(t *testing.T) {
	c, _ := newTest("snapshot-isolation")
	c.cfg.FinalAfter = 0
	for i := int64(0); i < 100; i++ {
		c.Add(tx(c, fmt.Sprint(i), "a", 10*i+1, 10*i+2, fmt.Sprintf("w x %d", i)))
		c.Tick()
	}
	if st := c.Status(); st.Versions > 2 {
		t.Fatalf("versions retained: %d", st.Versions)
	}
	c.Add(tx(c, "late", "b", 5, 6, "r x 0"))
	r := c.Close()
	if r.Verdict != check.Unknown || r.Stats["late_unchecked"] != int64(1) {
		t.Fatalf("got %v %v", r.Verdict, r.Stats)
	}
}

func TestReader(t *testing.T) {
	c, _ := newTest("snapshot-isolation")
	in := `{"txray":1,"db":"x"}
{"id":"a1","session":"s1","status":"committed","start_ts":1,"commit_ts":{"p":"2","l":0},"ops":[{"f":"w","k":"x","v":1}]}
[{"id":2,"session":"s2","status":"committed","start_ts":3,"commit_ts":4,"ops":[{"f":"r","k":"x","v":1},{"f":"append","k":"l","v":3}]}]
`
	rd := NewReader(strings.NewReader(in), c, "in")
	n := 0
	for {
		x, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Add(x)
		n++
	}
	if n != 2 || rd.Skipped != 1 {
		t.Fatalf("n=%d skipped=%d", n, rd.Skipped)
	}
	r := c.Close()
	if r.Verdict != check.Unknown { // the append is not checked online
		t.Fatalf("%v", r)
	}
	_, err := NewReader(strings.NewReader(`{"id":1,"status":"committed","ops":[{"f":"zz","k":1}]}`), c, "bad").Next()
	if !history.IsInputError(err) {
		t.Fatalf("want InputError, got %v", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"id":"a1","session":"s1","status":"committed","start_ts":1,"commit_ts":2,"ops":[{"f":"w","k":"x","v":1}]}`))
	f.Add([]byte(`[{"id":2,"status":"ok","start_ts":{"p":3},"commit_ts":4,"ops":[{"f":"r","k":1,"v":[1,2]}]}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, _ := newTest("snapshot-isolation")
		rd := NewReader(bytes.NewReader(b), c, "fuzz")
		for i := 0; i < 1000; i++ {
			x, err := rd.Next()
			if err != nil {
				break
			}
			c.Add(x)
		}
		c.Tick()
		c.Close()
	})
}

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs:\n got: %s\nwant: %s", path, got, want)
	}
}

// TestSerializableCommitOrder: a write skew fails the commit-order check.
// That proves non-serializability only when the database serializes in
// commit-timestamp order (Config.CommitOrderSerializes); otherwise (e.g.
// PostgreSQL SSI) the verdict is Unknown.
func TestSerializableCommitOrder(t *testing.T) {
	for _, co := range []bool{false, true} {
		ck := &clock{t: time.Unix(1000, 0)}
		c := New(Config{Model: "serializable", FinalAfter: time.Second, Now: ck.now, CommitOrderSerializes: co})
		for _, x := range []*Txn{tx(c, "1", "a", 1, 3, "r x nil", "w y 1"), tx(c, "2", "b", 2, 4, "r y nil", "w x 1")} {
			if err := c.Add(x); err != nil {
				t.Fatal(err)
			}
		}
		r := c.Close()
		if co && (r.Verdict != check.Invalid || strings.Join(r.Not, ",") != "serializable") {
			t.Errorf("commit order serializes: %v not=%v", r.Verdict, r.Not)
		}
		if !co && (r.Verdict != check.Unknown || len(r.Anomalies) != 0 || !strings.Contains(r.Reason, "commit-timestamp order")) {
			t.Errorf("commit order unknown: %v %q", r.Verdict, r.Reason)
		}
	}
}

// TestUnknownOutcomeWriter: a read of a value written only by an
// unknown-outcome transaction without timestamps (it may have committed) is
// undecided: Unknown, not an Ext violation.
func TestUnknownOutcomeWriter(t *testing.T) {
	c, _ := newTest("snapshot-isolation")
	u := tx(c, "u", "u", 0, 0, "w x 9")
	u.Status, u.StartTS, u.CommitTS = history.Unknown, history.Timestamp{}, history.Timestamp{}
	for _, x := range []*Txn{u, tx(c, "r", "a", 3, 4, "r x 9")} {
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	if r := c.Close(); r.Verdict != check.Unknown || len(r.Anomalies) != 0 {
		t.Fatalf("got %v %v %q", r.Verdict, r.AnomalyTypes, r.Reason)
	}
	// An aborted writer is a definite violation.
	c, _ = newTest("snapshot-isolation")
	a := tx(c, "u", "u", 0, 0, "w x 9")
	a.Status = history.Aborted
	for _, x := range []*Txn{a, tx(c, "r", "a", 3, 4, "r x 9")} {
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	if r := c.Close(); r.Verdict != check.Invalid {
		t.Fatalf("aborted writer: %v", r.Verdict)
	}
}

// TestIntBigTransaction: the Int axiom in a transaction of more than 64
// ops (where the last access per key is found through an index, not a
// scan) finds exactly the violations a small transaction would: the last
// access decides, list ops do not count.
func TestIntBigTransaction(t *testing.T) {
	for _, n := range []int{10, 100} {
		c, _ := newTest("snapshot-isolation")
		ops := []string{"w x 1", "r x 1", "append x 5", "w y 2"}
		for i := 0; i < n; i++ {
			ops = append(ops, fmt.Sprintf("w k%d %d", i, i))
		}
		// r x 1 passes (last access w x 1; the append is a list op),
		// r y 3 fails (last access w y 2), r x 1 after w x 7 fails, and
		// r x 7 fails (the last access is that read of 1).
		ops = append(ops, "r x 1", "r y 3", "w x 7", "r x 1", "r x 7")
		x := tx(c, "1", "a", 1, 2, ops...)
		x.Ops[2].List = true
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
		r := c.Close()
		if got := r.Stats; r.Verdict != check.Invalid || len(r.Anomalies) != 3 {
			t.Fatalf("n=%d: %v %v %v", n, r.Verdict, r.Anomalies, got)
		}
		for i, want := range []string{"op " + fmt.Sprint(n+5) + " (r y 3) follows op 3 (w y 2)",
			"op " + fmt.Sprint(n+7) + " (r x 1) follows op " + fmt.Sprint(n+6) + " (w x 7)",
			"op " + fmt.Sprint(n+8) + " (r x 7) follows op " + fmt.Sprint(n+7) + " (r x 1)"} {
			if a := r.Anomalies[i]; a.Type != TypeInternal || !strings.Contains(a.Explanation, want) {
				t.Errorf("n=%d: anomaly %d %s: %s, want %q", n, i, a.Type, a.Explanation, want)
			}
		}
	}
}

// TestGhostWriter: once a version is the one visible at the watermark, its
// writer is kept without its ops (memory stays bounded by keys, not by
// transactions); a late NoConflict against it still names the writer and
// its timestamps, while a writer above the watermark is listed in full.
func TestGhostWriter(t *testing.T) {
	c, ck := newTest("snapshot-isolation")
	for _, x := range []*Txn{tx(c, "1", "a", 1, 2, "w x 1"), tx(c, "2", "b", 3, 4, "w x 2", "w y 5")} {
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	ck.t = ck.t.Add(2 * time.Second)
	c.Tick() // watermark 3: T1's version of x is the one visible there
	if err := c.Add(tx(c, "3", "c", 1, 5, "w x 3")); err != nil {
		t.Fatal(err)
	}
	r := c.Close()
	if r.Verdict != check.Invalid || len(r.Anomalies) != 2 {
		t.Fatalf("%v %v", r.Verdict, r.Anomalies)
	}
	all := r.Anomalies[0].Explanation + "\n" + r.Anomalies[1].Explanation
	for _, want := range []string{"T(1) [ops no longer retained] (sts 1, cts 2)", "T(2) [w x 2, w y 5] (sts 3, cts 4)"} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in\n%s", want, all)
		}
	}
}

// TestKeyStateOneCacheLine: the per-key hot state is one 64-byte cache
// line, a version 32 bytes and an op 24 bytes (the layout the checker's speed rests on;
// docs/benchmarks.md, issue 17 item 4).
func TestKeyStateOneCacheLine(t *testing.T) {
	if s := unsafe.Sizeof(keyState{}); s != 64 {
		t.Errorf("keyState is %d bytes, want 64", s)
	}
	if s := unsafe.Sizeof(version{}); s != 32 {
		t.Errorf("version is %d bytes, want 32", s)
	}
	if s := unsafe.Sizeof(Op{}); s != 24 {
		t.Errorf("Op is %d bytes, want 24 (the raw key shares Op.Key; the small fields share a word)", s)
	}
}

// TestNoConflictLateWriterOverlapsTwo: a writer arriving late (T0, [0,10])
// overlaps a writer committing right after it that started later (T1,
// [19,20]: no overlap) and one committing after that which started
// earlier (T2, [6,30]: overlap). Versions are ordered by commit, not by
// start, so every later version is looked at: 2 NoConflict violations
// (T1–T2 and T0–T2), as package chronos finds offline (found by
// FuzzOnlineAgreesWithChronos).
func TestNoConflictLateWriterOverlapsTwo(t *testing.T) {
	c, _ := newTest("snapshot-isolation")
	for _, x := range []*Txn{tx(c, "2", "a", 6, 30, "w x 2"), tx(c, "1", "b", 19, 20, "w x 1"), tx(c, "0", "c", 0, 10, "w x 0")} {
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	r := c.Close()
	if r.Verdict != check.Invalid || countType(r, TypeNoConflict) != 2 {
		t.Fatalf("got %v %v", r.Verdict, r.Anomalies)
	}
}
