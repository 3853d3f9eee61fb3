package check_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/aion"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
)

// abortedOnlyHistories have no committed transaction but every evidence
// layer a checker might want (timestamps, client and op intervals, an
// expected serial order, an empty version order): a verdict of valid on
// them would be a claim about nothing (docs/design.md §6: never "valid"
// after checking nothing).
var abortedOnlyHistories = map[string]string{
	"register-aborted": `{"txray":1,"level":"serializable","evidence":{"serial_order":"commit","version_order":true,"timestamps":true,"client_time":true,"op_time":true,"sessions":true}}
{"id":"a","session":"s","status":"aborted","invoke":1,"complete":2,"start_ts":1,"ops":[{"f":"w","k":1,"v":10,"invoke":1,"complete":2}]}
{"id":"b","session":"t","status":"aborted","invoke":3,"complete":4,"start_ts":3,"ops":[{"f":"r","k":1,"v":null,"invoke":3,"complete":4},{"f":"w","k":2,"v":20,"invoke":3,"complete":4}]}
`,
	"list-append-aborted": `{"txray":1,"level":"serializable","evidence":{"serial_order":"commit","version_order":true,"timestamps":true,"client_time":true,"op_time":true,"sessions":true}}
{"id":"a","session":"s","status":"aborted","invoke":1,"complete":2,"start_ts":1,"ops":[{"f":"append","k":1,"v":10,"invoke":1,"complete":2}]}
{"id":"b","session":"t","status":"aborted","invoke":3,"complete":4,"start_ts":3,"ops":[{"f":"r","k":1,"v":[],"invoke":3,"complete":4},{"f":"append","k":2,"v":20,"invoke":3,"complete":4}]}
`,
	"no-transactions": `{"txray":1,"level":"serializable"}
`,
}

// TestNoCheckerValidWithoutCommittedTxn: every registered checker, under
// every model, on a history none of whose transactions committed, says
// unknown (or invalid, for an observation no level admits), never valid;
// Aion (online) likewise.
func TestNoCheckerValidWithoutCommittedTxn(t *testing.T) {
	models := []string{"strict-serializable", "serializable", "snapshot-isolation", "read-committed",
		"read-atomic", "causal-cerone", "postgres:serializable", "postgres:repeatable-read", "mysql:repeatable-read"}
	for hname, text := range abortedOnlyHistories {
		h, err := jsonl.Decode(strings.NewReader(text), history.DecodeOptions{Name: hname + ".jsonl"})
		if err != nil {
			t.Fatalf("%s: %v", hname, err)
		}
		for _, name := range check.Names() {
			c, _ := check.Lookup(name)
			for _, m := range models {
				r, err := c.Check(context.Background(), h, check.Options{Model: m})
				if err != nil {
					t.Errorf("%s %s %s: error %v", hname, name, m, err)
					continue
				}
				if r.Verdict == check.Valid {
					t.Errorf("%s: %s under %s: valid, but no transaction committed", hname, name, m)
				}
			}
		}
		for _, m := range []string{"serializable", "snapshot-isolation", "strict-serializable"} {
			a := aion.New(aion.Config{Model: m})
			rd := aion.NewReader(strings.NewReader(text), a, hname+".jsonl")
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
			if r := a.Close(); r.Verdict == check.Valid {
				t.Errorf("%s: aion under %s: valid, but no transaction committed", hname, m)
			}
		}
	}
}
