package jsonl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

const certSample = `{"txray":1,"db":"postgres","level":"serializable","workload":"predicate","evidence":{"serial_order":"commit"}}
{"id":"a","status":"committed","commit_ts":3,"ops":[{"f":"rp","table":"t","where":"k >= 1 AND k <= 3","result":[[1,10]],"vs":[[1,10],[2,null],[3,7]]}]}
{"type":"version_order","k":1,"order":[10]}
`

// vsetSample has a version_set record after its transaction (fuzz seed).
const vsetSample = `{"txray":1}
{"id":"c1-0","status":"committed","ops":[{"f":"w","k":1,"v":5},{"f":"rp","table":"t","where":"k >= 1","result":[[1,5]]}]}
{"type":"version_set","txn":"c1-0","op":1,"vs":[[1,5],[2,null]]}
`

// TestVersionSetRoundTrip: a predicate read's version set ("vs", null for
// an unborn row) and the expected serialization order survive decode and
// encode; the evidence flags say so.
func TestVersionSetRoundTrip(t *testing.T) {
	h, err := Decode(strings.NewReader(certSample), history.DecodeOptions{Name: "c.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	p := h.Txns[0].PredOf(&h.Txns[0].Ops[0])
	if !p.HasVersionSet || len(p.VersionSet) != 3 || p.VersionSet[1].Value != history.NoValue ||
		h.ValueName(p.VersionSet[2].Value) != "7" || h.KeyName(p.VersionSet[0].Key) != "1" {
		t.Fatalf("version set = %+v", p)
	}
	if !h.Evidence.VersionSets || h.Evidence.SerialOrder != history.SerialCommit {
		t.Fatalf("evidence = %+v", h.Evidence)
	}
	if ts, ok := h.SerialTS(&h.Txns[0]); !ok || ts.P != 3 {
		t.Fatalf("SerialTS = %v %v", ts, ok)
	}
	var b1, b2 bytes.Buffer
	if err := Encode(&b1, h); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b1.String(), `"vs":[[1,10],[2,null],[3,7]]`) || !strings.Contains(b1.String(), `"serial_order":"commit"`) {
		t.Fatalf("encoded:\n%s", b1.String())
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

// TestVersionSetErrors: malformed version sets name the field.
func TestVersionSetErrors(t *testing.T) {
	for _, c := range []struct{ line, field string }{
		{`{"status":"ok","ops":[{"f":"rp","table":"t","where":"k>1","result":[],"vs":[[1]]}]}`, "ops[0].vs[0]"},
		{`{"status":"ok","ops":[{"f":"rp","table":"t","where":"k>1","result":[],"vs":[[1,2],[1,3]]}]}`, "ops[0].vs[1][0]"},
		{`{"status":"ok","ops":[{"f":"rp","table":"t","where":"k>1","result":[],"vs":[[1,1.5]]}]}`, "ops[0].vs[0][1]"},
	} {
		_, err := Decode(strings.NewReader(c.line), history.DecodeOptions{Name: "e.jsonl"})
		if err == nil || !history.IsInputError(err) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: error %v, want an input error naming %s", c.line, err, c.field)
		}
	}
}

// TestVersionSetRecord: a version_set record written after its
// transaction (as the recorder does once the version order is known)
// attaches to the predicate read it names; written back, the set is inline
// ("vs" on the op) and decodes the same.
func TestVersionSetRecord(t *testing.T) {
	h, err := Decode(strings.NewReader(vsetSample), history.DecodeOptions{Name: "v.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	p := h.Txns[0].PredOf(&h.Txns[0].Ops[1])
	if !p.HasVersionSet || len(p.VersionSet) != 2 || h.ValueName(p.VersionSet[0].Value) != "5" || p.VersionSet[1].Value != history.NoValue {
		t.Fatalf("version set = %+v", p)
	}
	if !h.Evidence.VersionSets {
		t.Fatal("evidence.version_sets not set")
	}
	var b bytes.Buffer
	var w = NewWriter(&b)
	if err := w.WriteVersionSet(h, &h.Txns[0], 1, p.VersionSet); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if got := b.String(); got != `{"type":"version_set","txn":"c1-0","op":1,"vs":[[1,5],[2,null]]}`+"\n" {
		t.Fatalf("written %q", got)
	}
}

// TestVersionSetRecordErrors: a version_set record that names no
// transaction, a non-predicate op, or a read that has a set already is an
// input error naming the record's line and field.
func TestVersionSetRecordErrors(t *testing.T) {
	txn := `{"id":"a","status":"committed","ops":[{"f":"w","k":1,"v":5},{"f":"rp","table":"t","where":"k >= 1","result":[],"vs":[]}]}` + "\n"
	for _, c := range []struct{ name, rec, want string }{
		{"unknown txn", `{"type":"version_set","txn":"b","op":1,"vs":[]}`, `e.jsonl:2: txn:`},
		{"missing txn", `{"type":"version_set","op":1,"vs":[]}`, `e.jsonl:2: txn:`},
		{"missing op", `{"type":"version_set","txn":"a","vs":[]}`, `e.jsonl:2: op:`},
		{"not a predicate read", `{"type":"version_set","txn":"a","op":0,"vs":[]}`, `e.jsonl:2: op:`},
		{"op out of range", `{"type":"version_set","txn":"a","op":7,"vs":[]}`, `e.jsonl:2: op:`},
		{"set twice", `{"type":"version_set","txn":"a","op":1,"vs":[[1,5]]}`, `e.jsonl:2: vs:`},
		{"missing vs", `{"type":"version_set","txn":"a","op":1}`, `e.jsonl:2: vs:`},
		{"bad pair", `{"type":"version_set","txn":"a","op":1,"vs":[[1]]}`, `e.jsonl:2: vs[0]:`},
	} {
		_, err := Decode(strings.NewReader(txn+c.rec+"\n"), history.DecodeOptions{Name: "e.jsonl"})
		if err == nil || !history.IsInputError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want an input error with %q", c.name, err, c.want)
		}
	}
}
