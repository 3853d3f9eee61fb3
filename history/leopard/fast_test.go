package leopard

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

// decodeBoth decodes data with the general reader (encoding/json) and
// with the fast scanner; fastOK is false when the scanner left the input
// to the general reader.
func decodeBoth(data []byte) (gen, fast *history.History, genErr, fastErr error, fastOK bool) {
	b := newBuilder()
	if genErr = b.file(data, "f"); genErr == nil {
		gen = b.finish()
	}
	b = newBuilder()
	fastOK, fastErr = b.fast(data, "f")
	if fastOK && fastErr == nil {
		fast = b.finish()
	}
	return
}

// sameDecode fails unless the fast scanner, when it accepts data, gives
// the general reader's history or error exactly.
func sameDecode(t *testing.T, data []byte) bool {
	t.Helper()
	gen, fast, ge, fe, ok := decodeBoth(data)
	if !ok {
		return false
	}
	if (ge == nil) != (fe == nil) || (ge != nil && ge.Error() != fe.Error()) {
		t.Fatalf("errors differ:\n general %v\n fast    %v\ninput %q", ge, fe, data)
	}
	if ge == nil && !reflect.DeepEqual(gen, fast) {
		t.Fatalf("histories differ:\n general %+v\n fast    %+v\ninput %q", gen, fast, data)
	}
	return true
}

// encodedTrace is a trace Encode wrote from a history with reads, writes,
// string and integer values, every outcome and several sessions.
func encodedTrace(t testing.TB, n int) []byte {
	h := history.New()
	h.Header.Level = "repeatable-read"
	for i := 0; i < n; i++ {
		tx := history.Txn{Session: h.Sessions.Str(fmt.Sprintf("c%d", i%7)), ID: fmt.Sprintf("c%d-%d", i%7, i), HasTime: true,
			Invoke: int64(i * 100), Complete: int64(i*100 + 90), Status: history.Status(i % 3)}
		for j := 0; j < 1+i%4; j++ {
			o := history.Op{Kind: history.Read, Key: h.Keys.Int(int64((i + j) % 13)), Value: history.NoValue}
			if j%2 == 1 {
				o.Kind = history.Write
				o.Value = h.Values.Int(int64(i*10 + j))
				if i%5 == 0 {
					o.Value = h.Values.Str(fmt.Sprintf("s\"%d\u00e9<", i))
				}
			} else if i%3 == 1 {
				o.Value = h.Values.Int(int64(i))
			}
			tx.Ops = append(tx.Ops, o)
			tx.SetOpTime(j, tx.Invoke+int64(10*j), tx.Invoke+int64(10*j+5))
		}
		h.Add(tx)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFastMatchesGeneral: on the shapes Leopard and Encode write the fast
// scanner decodes the input itself (no fallback) and gives the general
// reader's history; on inputs it does not handle exactly it falls back;
// where it accepts an input that is an error, the error is the general
// reader's (file, line, field).
func TestFastMatchesGeneral(t *testing.T) {
	client0, err := os.ReadFile("testdata/client0.json")
	if err != nil {
		t.Fatal(err)
	}
	rec := func(extra string) string {
		return `{"threadID":"1","transactionID":"1,1","operationTraceType":"UPDATE","startTimestamp":1,"finishTimestamp":2` + extra + `}`
	}
	cases := []struct {
		name     string
		in       string
		fastPath bool // the scanner must decode it itself
	}{
		{"leopard client file", string(client0), true},
		{"encoded history", string(encodedTrace(t, 300)), true},
		{"record stream, no array", rec("") + "\n" + rec("") + rec(""), true},
		{"empty array", " [ ] ", true},
		{"empty input", "", true},
		{"numbers as ids and values", `[{"threadID":3,"transactionID":7,"operationTraceType":"INSERT","startTimestamp":-5,"finishTimestamp":0,"writeTupleList":[{"table":"t","primaryKey":12,"valueMap":{"b":1.5e3,"a":true,"c":null}}]}]`, true},
		{"null tuple, empty value map, null lists", `[` + rec(`,"writeTupleList":[null,{"table":"t","primaryKey":"1","valueMap":{}},{"table":"t","valueMap":{"c":1}}],"readTupleList":null`) + `]`, true},
		{"unknown fields skipped", `[` + rec(`,"sql":"UPDATE t SET c=1","extra":{"a":[1,2,{"b":null}]},"n":-0.5e-3`) + `]`, true},
		{"escaped strings", `[{"threadID":"1","transactionID":"1\u002c1","operationTraceType":"UPDATE","exception":null,"startTimestamp":1,"finishTimestamp":2,"writeTupleList":[{"table":"t\n","primaryKey":"\u00e9","valueMap":{"c\"":"x\ty"}}]}]`, true},
		{"record error: finish before start", `[` + "\n\n" + rec("") + ",\n" + `{"threadID":"1","transactionID":"2","operationTraceType":"SELECT","startTimestamp":5,"finishTimestamp":2}]`, true},
		{"record error: unknown type", `{"transactionID":"1","operationTraceType":"MERGE"}`, true},
		{"record error: no transaction id", "  \n" + `{"operationTraceType":"START"}`, true},
		{"field name in another case", `[` + rec(`,"ThreadID":"9"`) + `]`, false},
		{"duplicate field", `[` + rec(`,"threadID":"2"`) + `]`, false},
		{"duplicate column", `[` + rec(`,"writeTupleList":[{"table":"t","primaryKey":"1","valueMap":{"c":1,"c":2}}]`) + `]`, false},
		{"float timestamp", `[{"transactionID":"1","operationTraceType":"START","startTimestamp":1.5,"finishTimestamp":2}]`, false},
		{"string timestamp", `[{"transactionID":"1","operationTraceType":"START","startTimestamp":"1","finishTimestamp":2}]`, false},
		{"object as value", `[` + rec(`,"writeTupleList":[{"table":"t","primaryKey":"1","valueMap":{"c":{}}}]`) + `]`, false},
		{"trailing data", `[` + rec("") + `] x`, false},
		{"missing comma", `[` + rec("") + rec("") + `]`, false},
		{"truncated", `[` + rec("")[:30], false},
		{"null record", `[null]`, false},
		{"control character in a string", "[{\"transactionID\":\"a\x01\",\"operationTraceType\":\"START\"}]", false},
		{"invalid UTF-8", "[{\"threadID\":\"\xff\",\"transactionID\":\"1\",\"operationTraceType\":\"START\"}]", true},
		{"leading zero", `[{"transactionID":01,"operationTraceType":"START"}]`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok := sameDecode(t, []byte(c.in))
			if c.fastPath && !ok {
				t.Errorf("the fast scanner fell back to the general reader")
			}
			if !c.fastPath && ok {
				t.Errorf("the fast scanner accepted an input it should leave to the general reader")
			}
			// Decode (fast with fallback) always gives the general result.
			h, err := Decode(strings.NewReader(c.in), history.DecodeOptions{Name: "f"})
			gen, _, ge, _, _ := decodeBoth([]byte(c.in))
			if (err == nil) != (ge == nil) || (err != nil && err.Error() != ge.Error()) || (err == nil && !reflect.DeepEqual(h, gen)) {
				t.Errorf("Decode: %v; general: %v", err, ge)
			}
		})
	}
}

// FuzzFastMatchesGeneral: whatever the input, the fast scanner either
// falls back or gives exactly the general reader's history or error.
func FuzzFastMatchesGeneral(f *testing.F) {
	client0, _ := os.ReadFile("testdata/client0.json")
	f.Add(client0)
	f.Add(encodedTrace(f, 12))
	f.Add([]byte(`{"threadID":"1","transactionID":"1","operationTraceType":"INSERT","writeTupleList":[{"table":"t","primaryKey":"\u0031","valueMap":{"a":1,"b":"x"}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sameDecode(t, b)
	})
}

func BenchmarkDecode(b *testing.B) {
	data := encodedTrace(b, 20000)
	b.SetBytes(int64(len(data)))
	for _, mode := range []string{"general", "fast"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				bd := newBuilder()
				if mode == "general" {
					if err := bd.file(data, "f"); err != nil {
						b.Fatal(err)
					}
				} else if ok, err := bd.fast(data, "f"); !ok || err != nil {
					b.Fatal(ok, err)
				}
				bd.finish()
			}
		})
	}
}

// TestEncodeRoundTrip: a history Encode wrote decodes to the same
// transactions (keys renamed "t,K#v"): outcomes, intervals, values, and
// ops without an interval stay without one.
func TestEncodeRoundTrip(t *testing.T) {
	h := history.New()
	x, y := h.Keys.Int(1), h.Keys.Str("y")
	add := func(status history.Status, ops ...history.Op) *history.Txn {
		tx := history.Txn{Session: h.Sessions.Str("c1"), ID: fmt.Sprintf("t%d", len(h.Txns)), HasTime: true,
			Invoke: int64(100 * len(h.Txns)), Complete: int64(100*len(h.Txns) + 50), Status: status, Ops: ops}
		h.Add(tx)
		return &h.Txns[len(h.Txns)-1]
	}
	t0 := add(history.Committed, history.Op{Kind: history.Write, Key: x, Value: h.Values.Int(5)}, history.Op{Kind: history.Read, Key: y, Value: history.NoValue})
	t0.SetOpTime(0, 10, 20)
	t0.SetOpTime(1, 30, 40)
	t1 := add(history.Aborted, history.Op{Kind: history.Write, Key: y, Value: h.Values.Str("s")}, history.Op{Kind: history.Read, Key: x, Value: h.Values.Int(5)})
	t1.SetOpTime(0, 110, 120) // the read never ran: no interval
	add(history.Unknown)
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(&buf, history.DecodeOptions{Name: "enc"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"T0 (t0) [w t,1#v 5, r t,y#v nil]", "T1 (t1) [w t,y#v s, r t,1#v 5] aborted", "T2 (t2) [] unknown"}
	for i, w := range want {
		if i >= len(got.Txns) || got.TxnString(int32(i)) != w {
			t.Fatalf("txns %d: got %v, want %q", i, got.Txns, w)
		}
	}
	if _, _, ok := got.Txns[1].OpTime(1); ok {
		t.Error("the op without an interval got one")
	}
	if inv, com, ok := got.Txns[0].OpTime(1); !ok || inv != 30 || com != 40 {
		t.Errorf("op interval %d %d %v", inv, com, ok)
	}
	if g := got.Txns[0]; g.Invoke != 0 || g.Complete != 50 {
		t.Errorf("txn interval %d %d", g.Invoke, g.Complete)
	}
}
