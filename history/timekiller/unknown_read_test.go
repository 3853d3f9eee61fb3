package timekiller

import (
	"bytes"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

// TestUnknownListReadRoundTrip: a list read whose result was never seen, in a
// transaction of unknown outcome, survives Encode and Decode as unknown; a
// null list read of a committed transaction still reads the empty list.
func TestUnknownListReadRoundTrip(t *testing.T) {
	in := `[
{"tid":"a","sid":"1","sts":1,"cts":2,"ops":[{"t":"a","k":1,"v":5},{"t":"r","k":2,"v":null}]},
{"tid":"b","sid":"2","sts":3,"cts":null,"status":"unknown","ops":[{"t":"a","k":1,"v":6},{"t":"r","k":1,"v":null},{"t":"r","k":2,"v":[]}]}
]`
	h, err := Decode(strings.NewReader(in), history.DecodeOptions{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	check := func(h *history.History) {
		t.Helper()
		if o := h.Txns[0].Ops[1]; !o.IsList || o.ListUnknown || o.ListLen() != 0 {
			t.Errorf("committed null list read: %+v, want the empty list", o)
		}
		if o := h.Txns[1].Ops[1]; !o.IsList || !o.ListUnknown {
			t.Errorf("unknown txn's null list read: %+v, want unknown", o)
		}
		if o := h.Txns[1].Ops[2]; !o.IsList || o.ListUnknown || o.ListLen() != 0 {
			t.Errorf("unknown txn's [] read: %+v, want the empty list", o)
		}
	}
	check(h)
	var b bytes.Buffer
	if err := Encode(&b, h); err != nil {
		t.Fatal(err)
	}
	h2, err := Decode(&b, history.DecodeOptions{Name: "y"})
	if err != nil {
		t.Fatal(err)
	}
	check(h2)
}
