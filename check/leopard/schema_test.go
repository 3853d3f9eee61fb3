package leopard

import (
	"strconv"
	"strings"
	"testing"

	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/model"
)

// TestDeclaredTableRegions: a predicate read on a declared table (key
// pattern and row columns, history/schema.go) identifies its records by
// evaluating the clause on each row version. T0 writes a row (committed
// at ts0end); T1 reads by predicate during [31, 32]. A row whose every
// visible version satisfies the clause and was not returned is a phantom
// (consistent-read violation); a row whose visible version is deleted or
// belongs to another customer is legally absent.
func TestDeclaredTableRegions(t *testing.T) {
	const hdr = `{"txray":1,"evidence":{"op_time":true},"tables":[{"name":"orders","key":"o:{o_w_id}:{o_id}","columns":["o_c_id"]},{"name":"new_order","key":"no:{no_w_id}:{no_o_id}"}]}` + "\n"
	t0 := func(end int, ops string) string {
		return `{"id":"T0","session":"a","status":"committed","invoke":0,"complete":` + strconv.Itoa(end) + `,"ops":[` + ops + `]}` + "\n"
	}
	t1 := func(table, where, result string) string {
		return `{"id":"T1","session":"b","status":"committed","invoke":30,"complete":40,"ops":[{"f":"rp","table":"` + table + `","where":"` + where +
			`","result":[` + result + `],"invoke":31,"complete":32}]}` + "\n"
	}
	ins := `{"f":"w","k":"o:1:7","v":10,"row":{"o_c_id":5},"invoke":5,"complete":6}`
	for _, c := range []struct {
		name, body, prof, want string
	}{
		{"phantom-row-column", t0(20, ins) + t1("orders", "o_w_id = 1 AND o_c_id = 5", ""), "postgres:serializable", model.CR},
		{"phantom-key-columns", t0(20, `{"f":"w","k":"no:1:7","v":10,"invoke":5,"complete":6}`) + t1("new_order", "no_w_id = 1", ""), "postgres:read-committed", model.CR},
		{"returned", t0(20, ins) + t1("orders", "o_w_id = 1 AND o_c_id = 5", `["o:1:7",10]`), "postgres:serializable", ""},
		{"other-customer", t0(20, ins) + t1("orders", "o_w_id = 1 AND o_c_id = 6", ""), "postgres:serializable", ""},
		{"overlapping-commit", t0(35, ins) + t1("orders", "o_w_id = 1 AND o_c_id = 5", ""), "postgres:serializable", ""},
		{"deleted-before", t0(20, `{"f":"w","k":"no:1:7","v":10,"invoke":5,"complete":6},{"f":"w","k":"no:1:7","v":11,"row":null,"invoke":7,"complete":8}`) +
			t1("new_order", "no_w_id = 1", ""), "postgres:serializable", ""},
		{"deleted-by-another-before", t0(20, `{"f":"w","k":"no:1:8","v":10,"invoke":5,"complete":6}`) +
			`{"id":"T2","session":"c","status":"committed","invoke":21,"complete":25,"ops":[{"f":"w","k":"no:1:8","v":12,"row":null,"invoke":22,"complete":23}]}` + "\n" +
			t1("new_order", "no_w_id = 1", ""), "postgres:serializable", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := jsonl.Decode(strings.NewReader(hdr+c.body), history.DecodeOptions{Name: "t.jsonl"})
			if err != nil {
				t.Fatal(err)
			}
			r := run(t, h, c.prof)
			if u := r.Stats["pred_regions_undecided"].(int64); u != 0 {
				t.Fatalf("undecided regions %d", u)
			}
			if !wantVerdict(t, r, c.want) {
				return
			}
			t.Log(r.Anomalies[0].Explanation)
		})
	}
}
