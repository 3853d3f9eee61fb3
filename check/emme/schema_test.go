package emme

import (
	"slices"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
)

// schemaHeader declares two TPC-C-like tables: orders, whose customer
// (o_c_id) is a row column recorded per version, and new_order, whose
// columns all come from the key.
const schemaHeader = `{"txray":1,"evidence":{"version_order":true},"tables":[` +
	`{"name":"orders","key":"o:{o_w_id}:{o_id}","columns":["o_c_id"]},` +
	`{"name":"new_order","key":"no:{no_w_id}:{no_o_id}"}]}` + "\n"

func decodeSchema(t *testing.T, body string) *history.History {
	t.Helper()
	h, err := jsonl.Decode(strings.NewReader(schemaHeader+body), history.DecodeOptions{Name: "t.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestDeclaredTables: predicate dependencies over columns beyond (k, v),
// from key patterns and row images (history/schema.go; Adya 1999 §3.1.3–
// 3.1.4 predicate-read and predicate-anti dependencies).
func TestDeclaredTables(t *testing.T) {
	cases := []struct {
		name    string
		body    string
		model   string
		verdict check.Verdict
		types   []string
		reason  string
	}{
		{
			// T1's read of customer 5's orders misses T2's insert of an
			// order of customer 5 (T1 -prw-> T2), and T2 reads w:1 before
			// T1's write of it (T2 -rw-> T1): a phantom cycle, seen only
			// by evaluating o_c_id from T2's row image.
			name: "G2-phantom-on-row-column",
			body: `{"id":"T1","status":"committed","ops":[{"f":"rp","table":"orders","where":"o_w_id = 1 AND o_c_id = 5","result":[]},{"f":"w","k":"w:1","v":20}]}
{"id":"T2","status":"committed","ops":[{"f":"w","k":"o:1:7","v":10,"row":{"o_c_id":5}},{"f":"r","k":"w:1","v":null}]}
{"type":"version_order","k":"o:1:7","order":[10]}
{"type":"version_order","k":"w:1","order":[20]}
`,
			model: "serializable", verdict: check.Invalid, types: []string{"G2"},
		},
		{
			// The same, but T2's order belongs to customer 6: not in T1's
			// predicate, no predicate anti-dependency, no cycle.
			name: "no-phantom-other-customer",
			body: `{"id":"T1","status":"committed","ops":[{"f":"rp","table":"orders","where":"o_w_id = 1 AND o_c_id = 5","result":[]},{"f":"w","k":"w:1","v":20}]}
{"id":"T2","status":"committed","ops":[{"f":"w","k":"o:1:7","v":10,"row":{"o_c_id":6}},{"f":"r","k":"w:1","v":null}]}
{"type":"version_order","k":"o:1:7","order":[10]}
{"type":"version_order","k":"w:1","order":[20]}
`,
			model: "serializable", verdict: check.Valid,
		},
		{
			// T1 sees new order 7 (inserted by T0); T2 deletes it (a
			// tombstone write, row null): the deleted version no longer
			// matches, so T1 -prw-> T2; T2 -rw-> T1 on w:1. Were the
			// tombstone a live row, the key-only predicate would match it
			// too and the cycle would be missed.
			name: "G2-phantom-delete",
			body: `{"id":"T0","status":"committed","ops":[{"f":"w","k":"no:1:7","v":9}]}
{"id":"T1","status":"committed","ops":[{"f":"rp","table":"new_order","where":"no_w_id = 1","result":[["no:1:7",9]]},{"f":"w","k":"w:1","v":20}]}
{"id":"T2","status":"committed","ops":[{"f":"w","k":"no:1:7","v":11,"row":null},{"f":"r","k":"w:1","v":null}]}
{"type":"version_order","k":"no:1:7","order":[9,11]}
{"type":"version_order","k":"w:1","order":[20]}
`,
			model: "serializable", verdict: check.Invalid, types: []string{"G2"},
		},
		{
			// A version set naming the deleted version, not returned:
			// consistent (it matches nothing), and serial (T0, T2, T1).
			name: "deleted-version-in-version-set",
			body: `{"id":"T0","status":"committed","ops":[{"f":"w","k":"no:1:7","v":9}]}
{"id":"T2","status":"committed","ops":[{"f":"w","k":"no:1:7","v":11,"row":null}]}
{"id":"T1","status":"committed","ops":[{"f":"rp","table":"new_order","where":"no_w_id = 1","result":[],"vs":[["no:1:7",11]]}]}
{"type":"version_order","k":"no:1:7","order":[9,11]}
`,
			model: "serializable", verdict: check.Valid,
		},
		{
			// Returning a row whose recorded o_c_id is another customer's.
			name: "result-set-mismatch-row-column",
			body: `{"id":"T0","status":"committed","ops":[{"f":"w","k":"o:1:7","v":10,"row":{"o_c_id":6}}]}
{"id":"T1","status":"committed","ops":[{"f":"rp","table":"orders","where":"o_w_id = 1 AND o_c_id = 5","result":[["o:1:7",10]]}]}
{"type":"version_order","k":"o:1:7","order":[10]}
`,
			model: "serializable", verdict: check.Invalid, types: []string{"result-set-mismatch"},
		},
		{
			// A version without its row image: the clause cannot be
			// evaluated on it, so the verdict is unknown, not valid.
			name: "unknown-column-not-recorded",
			body: `{"id":"T0","status":"committed","ops":[{"f":"w","k":"o:1:7","v":10}]}
{"id":"T1","status":"committed","ops":[{"f":"rp","table":"orders","where":"o_w_id = 1 AND o_c_id = 5","result":[]}]}
{"type":"version_order","k":"o:1:7","order":[10]}
`,
			model: "serializable", verdict: check.Unknown, reason: "column o_c_id of row o:1:7 at version 10 is not recorded",
		},
		{
			// A version set may list only the table's own rows.
			name: "unknown-version-set-of-another-table",
			body: `{"id":"T0","status":"committed","ops":[{"f":"w","k":"w:1","v":3}]}
{"id":"T1","status":"committed","ops":[{"f":"rp","table":"new_order","where":"no_w_id = 1","result":[],"vs":[["w:1",3]]}]}
{"type":"version_order","k":"w:1","order":[3]}
`,
			model: "serializable", verdict: check.Unknown, reason: "not a row of table new_order",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, decodeSchema(t, c.body), c.model)
			if r.Verdict != c.verdict {
				t.Fatalf("verdict %v (%s), want %v; anomalies %v", r.Verdict, r.Reason, c.verdict, r.AnomalyTypes)
			}
			for _, ty := range c.types {
				if !slices.Contains(r.AnomalyTypes, ty) {
					t.Errorf("anomaly types %v lack %s", r.AnomalyTypes, ty)
				}
			}
			if c.reason != "" && !strings.Contains(r.Reason, c.reason) {
				t.Errorf("reason %q lacks %q", r.Reason, c.reason)
			}
		})
	}
}
