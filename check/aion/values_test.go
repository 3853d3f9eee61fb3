package aion

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/txray/txray/check"
)

// readers: one Reader per checker (decodeOne)
var readers = map[*Checker]*Reader{}

// decodeOne decodes one JSON Lines transaction with c's Reader (interning
// its string values, as a Reader in another goroutine would).
func decodeOne(t *testing.T, c *Checker, line string) *Txn {
	t.Helper()
	r := readers[c]
	if r == nil {
		r = NewBytesReader(nil, c, "test")
		readers[c] = r
	}
	r.Reset([]byte(line+"\n"), 0)
	tx, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// TestValueTableBoundedOnNewStrings (issue 12): a stream whose every write
// brings a new string value (a register overwritten with ever-new strings,
// read back right after) keeps the table of string values within
// MaxValueBytes (plus what one tick adds), and stays valid: dropping the
// values nothing retained names loses nothing. Without the bound the table
// holds every value ever seen.
func TestValueTableBoundedOnNewStrings(t *testing.T) {
	now := time.Unix(0, 0)
	const budget = 64 << 10
	c := New(Config{FinalAfter: time.Millisecond, MaxValueBytes: budget, Now: func() time.Time { return now }})
	const n = 20000
	prev := "null"
	for i := 0; i < n; i++ {
		ts := int64(10*i + 10)
		v := fmt.Sprintf("%q", fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", i%40)))
		line := fmt.Sprintf(`{"id":"t%d","session":"s","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[{"f":"r","k":"x","v":%s},{"f":"w","k":"x","v":%s},{"f":"w","k":"k%d","v":%s}]}`,
			i, ts, ts+5, prev, v, i%100, v)
		prev = v
		if err := c.Add(decodeOne(t, c, line)); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Millisecond)
		if i%50 == 0 {
			c.Tick()
			if c.vals.bytes > budget+50*3*(valEntryBytes+60) {
				t.Fatalf("after %d txns the value table holds %d bytes (%d values), budget %d", i+1, c.vals.bytes, len(c.vals.byID), budget)
			}
		}
	}
	r := c.Close()
	if r.Verdict != check.Valid {
		t.Fatalf("verdict %v (%s), want valid", r.Verdict, r.Reason)
	}
	if r.Stats["forgotten_values"].(int64) == 0 {
		t.Fatalf("no value forgotten: %v", r.Stats)
	}
}

// TestForgottenValueNeverFalseInvalid (issue 12): a string value dropped
// from the table while a transaction decoded before the drop still
// carries its id, then written again (a new id for the same string), makes
// a read that compares the two ids unknown with the reason, never INVALID.
// Without the suspect rule the read "fails" (two ids, one string).
func TestForgottenValueNeverFalseInvalid(t *testing.T) {
	now := time.Unix(0, 0)
	c := New(Config{FinalAfter: time.Millisecond, MaxValueBytes: 1024, Now: func() time.Time { return now }})
	// the reader decodes T2 (a read of "s") before anything names "s"
	t2 := decodeOne(t, c, `{"id":"t2","session":"b","status":"committed","start_ts":100,"commit_ts":105,"ops":[{"f":"r","k":"x","v":"s"}]}`)
	// garbage strings fill the table; a tick drops every unnamed value, "s" too
	for i := 0; i < 100; i++ {
		decodeOne(t, c, fmt.Sprintf(`{"id":"g%d","session":"g","status":"aborted","ops":[{"f":"w","k":"g","v":"garbage-%d"}]}`, i, i))
	}
	c.Tick()
	if c.vals.dropped == 0 {
		t.Fatal("nothing dropped: the test does not exercise the bound")
	}
	// T1 writes "s" again: a new id
	t1 := decodeOne(t, c, `{"id":"t1","session":"a","status":"committed","start_ts":10,"commit_ts":15,"ops":[{"f":"w","k":"x","v":"s"}]}`)
	if t1.Ops[0].V == t2.Ops[0].V {
		t.Fatal("the string kept its id: the test does not exercise the drop")
	}
	for _, tx := range []*Txn{t1, t2} {
		if err := c.Add(tx); err != nil {
			t.Fatal(err)
		}
	}
	r := c.Close()
	if r.Verdict == check.Invalid {
		t.Fatalf("INVALID on a dropped value: %v", r.Anomalies)
	}
	if r.Verdict != check.Unknown || !strings.Contains(r.Reason, "string") || r.Stats["forgotten_value_reads"].(int64) != 1 {
		t.Fatalf("verdict %v (%s), stats %v; want unknown with the reason", r.Verdict, r.Reason, r.Stats)
	}
}

// TestValueBoundKeepsRealViolations: under a tiny value budget a stale
// read of a string that was never dropped is still INVALID.
func TestValueBoundKeepsRealViolations(t *testing.T) {
	now := time.Unix(0, 0)
	c := New(Config{FinalAfter: time.Millisecond, MaxValueBytes: 1024, Now: func() time.Time { return now }})
	for i := 0; i < 100; i++ {
		decodeOne(t, c, fmt.Sprintf(`{"id":"g%d","session":"g","status":"aborted","ops":[{"f":"w","k":"g","v":"garbage-%d"}]}`, i, i))
	}
	c.Tick()
	for _, l := range []string{
		`{"id":"t1","session":"a","status":"committed","start_ts":10,"commit_ts":15,"ops":[{"f":"w","k":"x","v":"old"}]}`,
		`{"id":"t2","session":"a","status":"committed","start_ts":20,"commit_ts":25,"ops":[{"f":"w","k":"x","v":"new"}]}`,
		`{"id":"t3","session":"b","status":"committed","start_ts":30,"commit_ts":35,"ops":[{"f":"r","k":"x","v":"old"}]}`,
	} {
		if err := c.Add(decodeOne(t, c, l)); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Millisecond)
		c.Tick()
	}
	if r := c.Close(); r.Verdict != check.Invalid {
		t.Fatalf("verdict %v (%s), want INVALID (stale read of x)", r.Verdict, r.Reason)
	}
}

// TestUnknownWritesBounded (issue 12): a stream of unknown-outcome
// transactions without timestamps, each writing a new key, keeps at most
// MaxUnknownWrites of their writes exactly (their keys can then be
// forgotten under MaxKeys), and a read of a value one of the forgotten
// writes may have written is undecided (unknown with the reason), never
// INVALID. Without the bound every such write, and its key, is kept.
func TestUnknownWritesBounded(t *testing.T) {
	now := time.Unix(0, 0)
	const max = 256
	c := New(Config{FinalAfter: time.Millisecond, MaxUnknownWrites: max, MaxKeys: 1024, Now: func() time.Time { return now }})
	add := func(l string) {
		t.Helper()
		if err := c.Add(decodeOne(t, c, l)); err != nil {
			t.Fatal(err)
		}
	}
	add(`{"id":"u0","session":"u","status":"unknown","ops":[{"f":"w","k":"x","v":7}]}`)
	for i := 1; i < 20000; i++ {
		add(fmt.Sprintf(`{"id":"u%d","session":"u","status":"unknown","ops":[{"f":"w","k":"k%d","v":%d}]}`, i, i, i))
		if i%100 == 0 {
			now = now.Add(time.Millisecond)
			c.Tick()
			if len(c.unkW) > max+100 || c.liveKeys > 1024+100 {
				t.Fatalf("after %d: %d unknown writes, %d keys retained", i, len(c.unkW), c.liveKeys)
			}
		}
	}
	// x=7 may have been written by u0 (forgotten long ago): undecided
	add(`{"id":"t1","session":"a","status":"committed","start_ts":10,"commit_ts":15,"ops":[{"f":"r","k":"x","v":7}]}`)
	r := c.Close()
	if r.Verdict != check.Unknown || r.Stats["forgotten_unknown_write_reads"].(int64) != 1 {
		t.Fatalf("verdict %v (%s), stats %v; want unknown, one read the forgotten unknown writes may explain", r.Verdict, r.Reason, r.Stats)
	}
}

// TestWindowBoundedUnderMaxWindowBytes (issue 12): transactions arriving
// faster than FinalAfter lets their reads become final keep at most about
// MaxWindowBytes in the window (the oldest reads become final early,
// counted in early_final_reads); a valid stream stays valid and a stale
// read is still found. Without the bound the window holds every
// transaction of the last FinalAfter (here: all of them).
func TestWindowBoundedUnderMaxWindowBytes(t *testing.T) {
	for _, stale := range []bool{false, true} {
		now := time.Unix(0, 0)
		const max = 64 << 10
		c := New(Config{FinalAfter: time.Hour, MaxWindowBytes: max, Now: func() time.Time { return now }})
		for i := 0; i < 20000; i++ {
			ts := int64(10*i + 10)
			rv := i - 1
			if stale && i == 15000 {
				rv = i - 2 // x = i-1 committed at ts-5, before this snapshot
			}
			v := "null"
			if rv >= 0 {
				v = fmt.Sprint(rv)
			}
			line := fmt.Sprintf(`{"id":"t%d","session":"s%d","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[{"f":"r","k":"x","v":%s},{"f":"w","k":"x","v":%d}]}`,
				i, i%5, ts, ts+5, v, i)
			if err := c.Add(decodeOne(t, c, line)); err != nil {
				t.Fatal(err)
			}
			now = now.Add(time.Microsecond)
			if i%100 == 99 {
				c.Tick()
				if c.winBytes > max || c.ptx.len() > 2000 {
					t.Fatalf("after %d txns the window holds %d bytes, %d transactions (budget %d)", i+1, c.winBytes, c.ptx.len(), max)
				}
			}
		}
		r := c.Close()
		want := check.Valid
		if stale {
			want = check.Invalid
		}
		if r.Verdict != want || r.Stats["early_final_reads"].(int64) == 0 {
			t.Fatalf("stale %v: verdict %v (%s), stats %v; want %v with reads made final early", stale, r.Verdict, r.Reason, r.Stats, want)
		}
	}
}
