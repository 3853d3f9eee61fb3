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
	w, err := newLeopardWatcher("postgres:serializable", 8, "<test>", time.Second, leopardMaxKeys(900))
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
