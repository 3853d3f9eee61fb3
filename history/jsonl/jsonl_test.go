package jsonl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

const sample = `{"txray":1,"db":"sqlite","level":"serializable","workload":"list-append"}
{"id":"c1-0","session":"c1","seq":0,"status":"committed","invoke":10,"complete":20,"start_ts":5,"commit_ts":{"p":7,"l":1},"ops":[{"f":"append","k":"x","v":1,"invoke":11,"complete":12},{"f":"r","k":"x","v":[1]}]}

{"id":"c2-0","session":"c2","status":"aborted","ops":[{"f":"w","k":2,"v":"a"}]}
{"id":"c2-1","session":"c2","status":"unknown","ops":[{"f":"r","k":2,"v":null},{"f":"rp","table":"t","where":"v > 1","result":[[1,2],["k",3]]}]}
{"type":"version_order","k":"x","order":[1]}
`

func TestDecodeRoundTrip(t *testing.T) {
	h, err := Decode(strings.NewReader(sample), history.DecodeOptions{Name: "s.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != 3 {
		t.Fatalf("txns = %d", len(h.Txns))
	}
	t0 := h.Txns[0]
	if !t0.HasTime || t0.Invoke != 10 || t0.Complete != 20 || t0.StartTS.P != 5 || t0.CommitTS != (history.Timestamp{P: 7, L: 1, Set: true}) {
		t.Errorf("txn 0 = %+v", t0)
	}
	if got := h.TxnString(0); got != "T0 (c1-0) [append x 1, r x [1]]" {
		t.Errorf("TxnString = %q", got)
	}
	if h.Txns[1].Status != history.Aborted || h.Txns[2].Status != history.Unknown || h.Txns[2].Seq != 1 {
		t.Errorf("statuses/seq wrong: %+v %+v", h.Txns[1], h.Txns[2])
	}
	if h.Header.DB != "sqlite" || h.Header.Level != "serializable" {
		t.Errorf("header = %+v", h.Header)
	}
	if !h.Evidence.Sessions || !h.Evidence.OpTime || !h.Evidence.VersionOrder || !h.Evidence.PredicateRead {
		t.Errorf("evidence = %+v", h.Evidence)
	}
	if !h.Evidence.Timestamps {
		t.Errorf("every committed txn has start and commit timestamps, but Evidence.Timestamps is false")
	}
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	h2, err := Decode(&buf, history.DecodeOptions{})
	if err != nil {
		t.Fatalf("re-decode: %v\n%s", err, buf.String())
	}
	var b1, b2 bytes.Buffer
	Encode(&b1, h)
	Encode(&b2, h2)
	if b1.String() != b2.String() {
		t.Errorf("round trip differs:\n%s\n---\n%s", b1.String(), b2.String())
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"malformed", "{\"ops\":[", "f.jsonl:1: malformed JSON"},
		{"missing ops", `{"status":"committed"}`, `f.jsonl:1: ops: missing`},
		{"bad status", `{"status":"maybe","ops":[]}`, `f.jsonl:1: status: unknown status "maybe"`},
		{"bad op", "\n" + `{"status":"ok","ops":[{"f":"cas","k":1,"v":2}]}`, `f.jsonl:2: ops[0].f: unsupported micro-op "cas"`},
		{"write without value", `{"status":"ok","ops":[{"f":"w","k":1}]}`, `f.jsonl:1: ops[0].v: w needs a value`},
		{"float key", `{"status":"ok","ops":[{"f":"w","k":1.5,"v":2}]}`, `f.jsonl:1: ops[0].k: want an integer or a string, got 1.5`},
		{"append list", `{"status":"ok","ops":[{"f":"append","k":1,"v":[2]}]}`, `ops[0].v: append takes a scalar`},
		{"interval", `{"status":"ok","invoke":5,"complete":4,"ops":[]}`, `complete: 4 is before invoke 5`},
		{"ts", `{"status":"ok","commit_ts":"x","ops":[]}`, `commit_ts: want an integer timestamp`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(c.in), history.DecodeOptions{Name: "f.jsonl"})
			if err == nil || !strings.Contains(err.Error(), c.want) || !history.IsInputError(err) {
				t.Fatalf("err = %v, want containing %q", err, c.want)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	if sniff([]byte(sample)) != 100 {
		t.Error("header not sniffed")
	}
	if sniff([]byte(`[{"index":0}]`)) != 0 {
		t.Error("array sniffed as jsonl")
	}
}

// FuzzFastSlow is a differential test: the fast line parser and the
// reference (encoding/json) decoder must accept the same inputs and produce
// the same history.
func FuzzFastSlow(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte(`{"status":"ok","session":3,"ops":[{"f":"r","k":1,"v":[1,2,"x\u00e9"]},{"f":"inc","k":"a\n","v":-4,"x":{"y":[1.5e3,true,null]}}]}`))
	f.Add([]byte(`{"status":"ok","ops":[{"f":"w","k":1,"v":1.0}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h1, err1 := decode(bytes.NewReader(b), history.DecodeOptions{Name: "f"}, false)
		h2, err2 := decode(bytes.NewReader(b), history.DecodeOptions{Name: "f"}, true)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("fast err %v, slow err %v", err1, err2)
		}
		if err1 != nil {
			if err1.Error() != err2.Error() {
				t.Fatalf("errors differ: %v / %v", err1, err2)
			}
			return
		}
		var b1, b2 bytes.Buffer
		Encode(&b1, h1)
		Encode(&b2, h2)
		if b1.String() != b2.String() || h1.Evidence != h2.Evidence {
			t.Fatalf("fast/slow differ:\n%s\n%+v\n---\n%s\n%+v", b1.String(), h1.Evidence, b2.String(), h2.Evidence)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte(`{"status":"ok","ops":[{"f":"r","k":1,"v":[1,2,"x"]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Decode(bytes.NewReader(b), history.DecodeOptions{Name: "fuzz"})
		if err != nil {
			if !history.IsInputError(err) {
				t.Fatalf("non-input error: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := Encode(&buf, h); err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(&buf, history.DecodeOptions{}); err != nil {
			t.Fatalf("encoded history does not decode: %v\n%s", err, buf.String())
		}
	})
}

func TestLineDecoder(t *testing.T) {
	ld := NewLineDecoder("live")
	var got []*history.Txn
	for _, l := range strings.Split(sample, "\n") {
		tx, err := ld.Decode([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		if tx != nil {
			got = append(got, tx)
		}
	}
	if len(got) != 3 || len(ld.History().Txns) != 0 {
		t.Fatalf("got %d txns, history keeps %d", len(got), len(ld.History().Txns))
	}
	if got[2].Status != history.Unknown || got[2].Seq != 1 || ld.History().KeyName(got[0].Ops[0].Key) != "x" {
		t.Errorf("txn 2 = %+v", got[2])
	}
	if _, err := ld.Decode([]byte(`{"status":"ok"}`)); err == nil || !strings.Contains(err.Error(), "live:") {
		t.Errorf("err = %v", err)
	}
}
