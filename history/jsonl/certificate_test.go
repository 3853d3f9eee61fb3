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

// TestVersionSetRoundTrip: a predicate read's version set ("vs", null for
// an unborn row) and the expected serialization order survive decode and
// encode; the evidence flags say so.
func TestVersionSetRoundTrip(t *testing.T) {
	h, err := Decode(strings.NewReader(certSample), history.DecodeOptions{Name: "c.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	p := h.Txns[0].Ops[0].Pred
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
