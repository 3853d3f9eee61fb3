package jsonl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

// schemaSample declares tables and gives row images: column values, a
// NULL, a string, and a deleted row (fuzz seed).
const schemaSample = `{"txray":1,"workload":"tpcc","tables":[{"name":"orders","key":"o:{o_w_id}:{o_id}","columns":["o_c_id","o_carrier_id","note"]},{"name":"new_order","key":"no:{no_w_id}:{no_o_id}"}]}
{"id":"a","status":"committed","ops":[{"f":"w","k":"o:1:7","v":10,"row":{"o_c_id":5,"o_carrier_id":null,"note":"x\"y"}},{"f":"w","k":"no:1:7","v":11,"row":{}}]}
{"id":"b","status":"committed","ops":[{"f":"w","k":"no:1:7","v":12,"row":null},{"f":"rp","table":"orders","where":"o_c_id = 5","result":[["o:1:7",10]]}]}
`

// TestRowImageRoundTrip: declared tables and row images survive decode and
// encode, and key patterns give key columns.
func TestRowImageRoundTrip(t *testing.T) {
	h, err := Decode(strings.NewReader(schemaSample), history.DecodeOptions{Name: "s.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Header.Tables) != 2 || h.Header.Tables[0].Columns[2] != "note" {
		t.Fatalf("tables = %+v", h.Header.Tables)
	}
	o := h.Txns[0].Ops[0]
	img, ok := h.RowImage(o.Key, o.Value)
	if !ok || img.Deleted || !img.Has[0] || img.Cols[0].V.I != 5 || !img.Cols[1].Null || img.Cols[2].V.S != `x"y` {
		t.Fatalf("row image = %+v %v", img, ok)
	}
	d := h.Txns[1].Ops[0]
	if img, ok := h.RowImage(d.Key, d.Value); !ok || !img.Deleted {
		t.Fatalf("deleted row image = %+v %v", img, ok)
	}
	if h.TableOf(o.Key) != 0 || h.TableOf(d.Key) != 1 {
		t.Fatalf("TableOf = %d, %d", h.TableOf(o.Key), h.TableOf(d.Key))
	}
	var b1, b2 bytes.Buffer
	if err := Encode(&b1, h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"row":{"o_c_id":5,"o_carrier_id":null,"note":"x\"y"}`, `"row":null`, `"row":{}`, `"key":"o:{o_w_id}:{o_id}"`} {
		if !strings.Contains(b1.String(), want) {
			t.Fatalf("encoded lacks %s:\n%s", want, b1.String())
		}
	}
	h2, err := Decode(bytes.NewReader(b1.Bytes()), history.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	Encode(&b2, h2)
	if b1.String() != b2.String() {
		t.Errorf("round trip differs:\n%s\n---\n%s", b1.String(), b2.String())
	}
}

// TestRowImageErrors: bad tables and row images are input errors naming
// the line and field.
func TestRowImageErrors(t *testing.T) {
	hdr := `{"txray":1,"tables":[{"name":"t","key":"t:{a}","columns":["c"]}]}` + "\n"
	for _, c := range []struct{ in, field string }{
		{`{"txray":1,"tables":[{"name":"t","key":"t:a"}]}`, "tables[0]"},
		{`{"txray":1,"tables":[{"name":"t","key":"t:{a}{b}"}]}`, "tables[0]"},
		{`{"txray":1,"tables":[{"name":"t","key":"t:{a}","columns":["A"]}]}`, "tables[0]"},
		{`{"txray":1,"tables":[{"key":"t:{a}"}]}`, "tables[0]"},
		{hdr + `{"status":"ok","ops":[{"f":"w","k":"u:1","v":1,"row":{"c":1}}]}`, "ops[0].row"},
		{hdr + `{"status":"ok","ops":[{"f":"w","k":"t:1","v":1,"row":{"d":1}}]}`, "ops[0].row.d"},
		{hdr + `{"status":"ok","ops":[{"f":"w","k":"t:1","v":1,"row":{"c":1.5}}]}`, "ops[0].row.c"},
		{hdr + `{"status":"ok","ops":[{"f":"w","k":"t:1","v":1,"row":[1]}]}`, "ops[0].row"},
		{hdr + `{"status":"ok","ops":[{"f":"r","k":"t:1","v":1,"row":{"c":1}}]}`, "ops[0].row"},
		{hdr + `{"status":"ok","ops":[{"f":"w","k":"t:1","v":1,"row":{"c":1}},{"f":"w","k":"t:1","v":1,"row":{"c":2}}]}`, "ops[1].row"},
		{hdr + `{"status":"ok","ops":[{"f":"w","k":"t:1","v":1,"row":{"c":1}}]}` + "\n" + `{"txray":1}`, "tables"},
		// the first bad column in input order is reported
		{hdr + `{"status":"ok","ops":[{"f":"w","k":"t:1","v":1,"row":{"c":1,"x":1,"y":2}}]}`, "ops[0].row.x:"},
		{hdr + `{"status":"ok","ops":[{"f":"w","k":"t:1","v":1,"row":{"c":1,"c":2}}]}`, "ops[0].row.c: column given twice"},
		{hdr + `{"status":"ok","ops":[{"f":"w","k":"t:1","v":1,"row":{"c":1,"C":2}}]}`, "ops[0].row.C: column given twice"},
	} {
		_, err := Decode(strings.NewReader(c.in), history.DecodeOptions{Name: "e.jsonl"})
		if err == nil || !history.IsInputError(err) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: error %v, want an input error naming %s", c.in, err, c.field)
		}
	}
}

// TestRowImageBadColumnDeterministic: with several undeclared columns the
// error names the first in input order, every time (the decoder once ranged
// over a map, so fast and reference decodes of one input named different
// columns; fuzz corpus FuzzFastSlow/b26f951aceab491e).
func TestRowImageBadColumnDeterministic(t *testing.T) {
	in := `{"txray":1,"tables":[{"name":"t","key":"t:{a}"}]}` + "\n" +
		`{"status":"ok","ops":[{"f":"w","k":"t:1","v":1,"row":{"z9":1,"z8":1,"z7":1,"z6":1,"z5":1,"z4":1,"z3":1,"z2":1,"z1":1,"z0":1}}]}`
	const want = "e.jsonl:2: ops[0].row.z9: table t has no row column z9 (columns: )"
	for i := 0; i < 50; i++ {
		_, err := Decode(strings.NewReader(in), history.DecodeOptions{Name: "e.jsonl"})
		if err == nil || err.Error() != want {
			t.Fatalf("run %d: error %v, want %s", i, err, want)
		}
	}
}
