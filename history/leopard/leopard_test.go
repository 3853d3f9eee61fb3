package leopard

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

func TestDecodeFile(t *testing.T) {
	h, err := history.DecodeFile("testdata/client0.json", "auto", history.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Header.Format != "leopard" || h.Header.Level != "repeatable-read" || h.Header.Extra["initial"] != "unknown" {
		t.Fatalf("header %+v", h.Header)
	}
	if len(h.Txns) != 2 {
		t.Fatalf("want 2 txns, got %d", len(h.Txns))
	}
	got := []string{h.TxnString(0), h.TxnString(1)}
	want := []string{"T0 (0,1) [r t0,1#c0 5, r t0,1#c1 7, w t0,1#c0 6]", "T1 (0,2) [w t1,9#c0 3] aborted"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("txn %d: got %s, want %s", i, got[i], want[i])
		}
	}
	t0 := &h.Txns[0]
	if inv, com, ok := t0.OpTime(2); !t0.HasTime || t0.Invoke != 100 || t0.Complete != 170 || !ok || inv != 140 || com != 150 {
		t.Errorf("intervals: %+v", t0)
	}
	if !h.Evidence.OpTime || !h.Evidence.Sessions {
		t.Errorf("evidence %+v", h.Evidence)
	}
	if h.Ignored["set_snapshot trace"] != 1 || h.Ignored["failed statement"] != 1 {
		t.Errorf("ignored %v", h.Ignored)
	}
}

func TestDecodeDir(t *testing.T) {
	dir := t.TempDir()
	src, _ := os.ReadFile("testdata/client0.json")
	// The second client's trace is split across numbered files; 10 must
	// come after 2 (natural order), or its commit precedes its start.
	parts := map[string]string{
		"c1.2.trace": `[{"threadID":"1","transactionID":"1,1","operationTraceType":"START","startTimestamp":100,"finishTimestamp":101},
{"threadID":"1","transactionID":"1,1","operationTraceType":"SELECT","startTimestamp":102,"finishTimestamp":103,"readTupleList":[{"table":"t0","primaryKey":"1","valueMap":{"c0":"5"}}]}]`,
		"c1.10.trace": `[{"threadID":"1","transactionID":"1,1","operationTraceType":"COMMIT","startTimestamp":104,"finishTimestamp":105}]`,
		"README":      "not a trace",
	}
	os.WriteFile(filepath.Join(dir, "c0.0.trace"), src, 0o644)
	for n, s := range parts {
		os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644)
	}
	h, err := history.DecodeFile(dir, "auto", history.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != 3 || h.Ignored["non-trace file in directory"] != 1 {
		t.Fatalf("txns %d ignored %v", len(h.Txns), h.Ignored)
	}
	for i := range h.Txns {
		if h.Txns[i].ID == "1,1" && (h.Txns[i].Status != history.Committed || len(h.Txns[i].Ops) != 1) {
			t.Fatalf("split txn: %s", h.TxnString(int32(i)))
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name, in, field string
		line            int
	}{
		{"bad-type", "[\n{\"transactionID\":\"1\",\"operationTraceType\":\"MERGE\"}]", "record 0.operationTraceType", 2},
		{"missing-txn", "[\n{\"operationTraceType\":\"START\"},\n{\"operationTraceType\":\"START\"}]", "record 0.transactionID", 2},
		{"time-order", "[{\"transactionID\":\"1\",\"operationTraceType\":\"START\"},\n{\"transactionID\":\"1\",\"operationTraceType\":\"SELECT\",\"startTimestamp\":5,\"finishTimestamp\":4}]", "record 1.finishTimestamp", 2},
		{"bad-json", "[{\"transactionID\":\"1\",\n\"operationTraceType\":}]", "record 0", 2},
		{"bad-value", "[{\"transactionID\":\"1\",\"operationTraceType\":\"SELECT\",\"readTupleList\":[{\"table\":\"t\",\"primaryKey\":\"1\",\"valueMap\":{\"c\":{}}}]}]", "record 0", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(c.in), history.DecodeOptions{Name: "x.json"})
			var ie *history.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("want InputError, got %v", err)
			}
			if ie.Field != c.field || ie.Line != c.line || ie.File != "x.json" {
				t.Fatalf("got %q line %d (%v), want %q line %d", ie.Field, ie.Line, err, c.field, c.line)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	src, _ := os.ReadFile("testdata/client0.json")
	if Sniff(src) == 0 || Sniff([]byte(`{"txray":1}`)) != 0 || Sniff([]byte("[1,2]")) != 0 {
		t.Fatal("sniff")
	}
}

func FuzzDecode(f *testing.F) {
	src, _ := os.ReadFile("testdata/client0.json")
	f.Add(src)
	f.Add([]byte(`{"transactionID":1,"operationTraceType":"COMMIT"}`))
	f.Add([]byte(`[{"threadID":2,"transactionID":"1","operationTraceType":"UPDATE","writeTupleList":[{"table":"t","primaryKey":3,"valueMap":{"a":null}}]}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Decode(bytes.NewReader(b), history.DecodeOptions{Name: "fuzz"})
		if err != nil {
			if !history.IsInputError(err) {
				t.Fatalf("non-input error %v", err)
			}
			return
		}
		for i := range h.Txns {
			_ = h.TxnString(int32(i))
		}
	})
}
