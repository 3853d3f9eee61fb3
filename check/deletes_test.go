package check_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/aion"
	_ "github.com/txray/txray/check/chronos"
	_ "github.com/txray/txray/check/elle"
	_ "github.com/txray/txray/check/emme"
	_ "github.com/txray/txray/check/enne"
	_ "github.com/txray/txray/check/leopard"
	_ "github.com/txray/txray/check/polygraph"
	_ "github.com/txray/txray/check/weak"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
)

// deleteHistory is a serial history with a delete, every evidence layer
// (timestamps, client intervals, version order, expected order), and a
// read of nil after the delete that a checker without deleted versions
// would take for a read of the initial state (a false G-single / ext).
const deleteHistory = `{"txray":1,"level":"serializable","evidence":{"serial_order":"commit"}}
{"id":"a","session":"s","status":"committed","invoke":1,"complete":2,"start_ts":1,"commit_ts":2,"ops":[{"f":"w","k":1,"v":10,"invoke":1,"complete":2}]}
{"id":"b","session":"s","status":"committed","invoke":3,"complete":4,"start_ts":3,"commit_ts":4,"ops":[{"f":"d","k":1,"v":11,"invoke":3,"complete":4}]}
{"id":"c","session":"s","status":"committed","invoke":5,"complete":6,"start_ts":5,"commit_ts":6,"ops":[{"f":"r","k":1,"v":11,"invoke":5,"complete":6},{"f":"w","k":2,"v":20,"invoke":5,"complete":6}]}
{"type":"version_order","k":1,"order":[10,11]}
{"type":"version_order","k":2,"order":[20]}
`

// TestDeletesNeverMisjudged: every registered checker, given a valid
// history with a delete, either models deleted versions and says valid
// (emme, enne) or says unknown (a reason naming deletes, or one of its
// own for a model it does not judge); none panics,
// none says invalid, none ignores the delete and says valid. Aion (online)
// likewise.
func TestDeletesNeverMisjudged(t *testing.T) {
	h, err := jsonl.Decode(strings.NewReader(deleteHistory), history.DecodeOptions{Name: "d.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	models := []string{"serializable", "snapshot-isolation", "read-committed", "postgres:serializable"}
	for _, name := range check.Names() {
		c, _ := check.Lookup(name)
		for _, m := range models {
			r, err := c.Check(context.Background(), h, check.Options{Model: m})
			if err != nil {
				t.Errorf("%s %s: error %v", name, m, err)
				continue
			}
			models := name == "emme" || name == "enne"
			switch {
			case r.Verdict == check.Invalid:
				t.Errorf("%s %s: invalid on a serial history with a delete: %v %s", name, m, r.AnomalyTypes, r.Reason)
			case r.Verdict == check.Valid && !models:
				t.Errorf("%s %s: valid, but it does not model deleted versions", name, m)
			}
			if rank, why := c.Applies(h, m); rank > 0 && !models {
				t.Errorf("%s %s: applies (rank %d, %s) to a history with deletes", name, m, rank, why)
			}
		}
	}
	for _, name := range []string{"emme", "enne"} {
		c, _ := check.Lookup(name)
		if r, _ := c.Check(context.Background(), h, check.Options{Model: "serializable"}); r.Verdict != check.Valid {
			t.Errorf("%s: %s (%s) %v", name, r.Verdict, r.Reason, r.AnomalyTypes)
		}
	}
	a := aion.New(aion.Config{Model: "serializable"})
	rd := aion.NewReader(strings.NewReader(deleteHistory), a, "d.jsonl")
	for {
		tx, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("aion reader: %v", err)
		}
		if err := a.Add(tx); err != nil {
			t.Fatal(err)
		}
	}
	if r := a.Close(); r.Verdict != check.Unknown || !strings.Contains(r.Reason, "delete") {
		t.Errorf("aion: %s (%s) %v", r.Verdict, r.Reason, r.AnomalyTypes)
	}
}
