package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// TestWatchLeopardStoresNoValueTable: watch --checker leopard sees a new
// value with nearly every write; integer values are their own ids
// (history.NewIdentityInterner), so the value table stays empty however
// long the stream (it grew by about 17 bytes per write), and anomalies
// still name the values.
func TestWatchLeopardStoresNoValueTable(t *testing.T) {
	w, err := newLeopardWatcher("postgres:serializable", 8, "<test>", time.Second, leopardMaxKeys(900), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	at := int64(0)
	for i := 0; i < 2000; i++ {
		at += 10
		w.lineLocked([]byte(fmt.Sprintf(`{"id":"t%d","session":"s","status":"committed","invoke":%d,"complete":%d,"ops":[{"f":"w","k":"k%d","v":%d,"invoke":%d,"complete":%d}]}`,
			i, at, at+5, i%50, 1000000+i, at+1, at+2)))
	}
	at += 10
	// A read of a value nobody wrote: a consistent-read violation (k1 last
	// holds 1001951, written by t1951).
	w.lineLocked([]byte(fmt.Sprintf(`{"id":"bad","session":"s","status":"committed","invoke":%d,"complete":%d,"ops":[{"f":"r","k":"k1","v":777777,"invoke":%d,"complete":%d}]}`,
		at, at+5, at+1, at+2)))
	if n, _ := w.rej.get(); n != 0 {
		t.Fatalf("%d lines rejected", n)
	}
	if got := w.dec.History().Values.Len(); got != history.IdentityLimit {
		t.Errorf("value table holds %d scalars after 2001 transactions, want none", got-history.IdentityLimit)
	}
	res := w.on.Flush()
	if res.Verdict != check.Invalid || len(res.Anomalies) == 0 {
		t.Fatalf("verdict %s %v, want the cr violation", res.Verdict, res.AnomalyTypes)
	}
	if ex := res.Anomalies[0].Explanation; !strings.Contains(ex, "777777") || !strings.Contains(ex, "1001951") {
		t.Errorf("explanation does not name the values read and written: %s", ex)
	}
}

// TestWatchLeopardBoundsKeyAndSessionTables: a stream that names a new key
// and a new session with every transaction keeps the decoder's key and
// session tables bounded under a key bound (forgotten keys' ids and idle
// sessions' ids are recycled), and the verdict stays valid: every read
// is of a key written just before, which is retained or, when its name
// matches a forgotten one in the filter, shadowed by that write.
func TestWatchLeopardBoundsKeyAndSessionTables(t *testing.T) {
	const n = 40000
	w, err := newLeopardWatcher("postgres:repeatable-read", 8, "<test>", time.Second, 4096, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	at := int64(0)
	maxKeys, maxSess := 0, 0
	for i := 0; i < n; i++ {
		at += 10
		r := "null"
		if i > 0 {
			r = fmt.Sprint(i - 1)
		}
		w.lineLocked([]byte(fmt.Sprintf(`{"id":"t%d","session":"s%d","status":"committed","invoke":%d,"complete":%d,"ops":[{"f":"r","k":"k%d","v":%s,"invoke":%d,"complete":%d},{"f":"w","k":"k%d","v":%d,"invoke":%d,"complete":%d}]}`,
			i, i, at, at+5, i-1, r, at+1, at+2, i, i, at+3, at+4)))
		if i%64 == 0 {
			w.on.Advance(at - 100)
		}
		h := w.dec.History()
		maxKeys, maxSess = max(maxKeys, h.Keys.Len()), max(maxSess, h.Sessions.Len())
	}
	if nr, _ := w.rej.get(); nr != 0 {
		t.Fatalf("%d lines rejected", nr)
	}
	if maxKeys > 4*4096 {
		t.Errorf("the key table reached %d ids for %d keys under a bound of 4096", maxKeys, n)
	}
	if maxSess > n/10 {
		t.Errorf("the session table reached %d ids for %d sessions", maxSess, n)
	}
	res := w.on.Flush()
	if res.Verdict != check.Valid {
		t.Fatalf("verdict %s %v (%s), want valid", res.Verdict, res.AnomalyTypes, res.Reason)
	}
	if res.Stats["recycled_key_chunks"] == nil || res.Stats["forgotten_sessions"] == nil {
		t.Errorf("stats %v", res.Stats)
	}
	t.Logf("key ids at most %d, session ids at most %d; stats %v", maxKeys, maxSess, res.Stats)
}
