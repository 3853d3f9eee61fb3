package timekiller

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/txray/txray/check/chronos/chronostest"
	"github.com/txray/txray/history"
)

func TestDecodeSmall(t *testing.T) {
	in := `[
 {"tid":"t1","sid":1,"sts":{"p":"10","l":2},"cts":{"p":10,"l":3},"ops":[{"t":"w","k":1,"v":5},{"t":"r","k":2}]},
 {"tid":2,"sid":1,"sts":11,"cts":{"p":12,"l":null},"ops":[{"t":"r","k":1,"v":5},{"t":"r","k":"s","v":null,"extra":1}]}
]`
	h, err := Decode(strings.NewReader(in), history.DecodeOptions{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != 2 || !h.Evidence.Timestamps || h.Txns[1].Seq != 1 {
		t.Fatalf("%+v", h.Txns)
	}
	t0 := h.Txns[0]
	if t0.StartTS != (history.Timestamp{P: 10, L: 2, Set: true}) || t0.ID != "t1" || t0.Ops[1].Value != history.NoValue {
		t.Fatalf("%+v", t0)
	}
	if got := h.TxnString(1); got != "T1 (2) [r 1 5, r s nil]" {
		t.Fatalf("%s", got)
	}
	if h.Ignored["unknown op field"] != 1 {
		t.Fatalf("ignored %v", h.Ignored)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, "want '['"},
		{`[{"tid":1,"ops":[{"t":"x","k":1,"v":1}]}]`, `[0].ops[0].t: unsupported op type "x"`},
		{`[{"tid":1,"sts":5,"cts":4,"ops":[]}]`, "commit timestamp 4 is before start timestamp 5"},
		{`[{"tid":1,"ops":[{"t":"w","k":1}]}]`, "needs a value"},
		{`[{"tid":1}]`, "ops: missing"},
		{`[{"tid":1,"sts":{"l":1},"ops":[]}]`, `missing "p"`},
		{"[\n{\"tid\":1,\n\"ops\":[{\"t\":\"w\",\"k\":1,\"v\":1.5}]}]", "x:3: [0].ops[0].v"},
		{`[{"tid":1,"ops":[]}] x`, "after the closing"},
		{`[{"tid":1,"ops":[]}`, "end of input"},
	} {
		_, err := Decode(strings.NewReader(tc.in), history.DecodeOptions{Name: "x"})
		if err == nil || !history.IsInputError(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want InputError containing %q", tc.in, err, tc.want)
		}
	}
}

func TestSniff(t *testing.T) {
	tk := []byte(`[ {"cts": {"l": 0, "p": "1"}, "ops": [], "sid": 1, "sts": {"l":0,"p":"1"}, "tid": 1} ]`)
	elle := []byte(`[{"index":3,"process":1,"type":"ok","value":[["append",255,8]]}]`)
	if Sniff(tk) < 90 || Sniff(elle) != 0 || Sniff([]byte(`{"txray":1}`)) != 0 {
		t.Fatalf("tk %d elle %d", Sniff(tk), Sniff(elle))
	}
	for _, f := range []string{"format-kv.json", "format-list.json"} {
		b, err := os.ReadFile("../../testdata/external/chronos/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 64<<10 {
			b = b[:64<<10]
		}
		if Sniff(b) < 90 {
			t.Errorf("%s: sniff %d", f, Sniff(b))
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, list := range []bool{false, true} {
		h := chronostest.Generate(chronostest.Config{Txns: 300, Sessions: 5, Keys: 20, Ops: 6, ReadFrac: 0.5, List: list, Seed: 3})
		h.Txns[0].ID = "quote\"\x01é"
		var b bytes.Buffer
		if err := Encode(&b, h); err != nil {
			t.Fatal(err)
		}
		h2, err := Decode(bytes.NewReader(b.Bytes()), history.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(h2.Txns) != len(h.Txns) {
			t.Fatalf("%d txns, want %d", len(h2.Txns), len(h.Txns))
		}
		for i := range h.Txns {
			a, b := h.TxnString(int32(i)), h2.TxnString(int32(i))
			if i > 0 && a != b {
				t.Fatalf("txn %d: %s != %s", i, a, b)
			}
			if h.Txns[i].StartTS != h2.Txns[i].StartTS || h.Txns[i].CommitTS != h2.Txns[i].CommitTS || h.Txns[i].Status != h2.Txns[i].Status {
				t.Fatalf("txn %d timestamps/status differ", i)
			}
		}
		if h2.Txns[0].ID != h.Txns[0].ID {
			t.Fatalf("id %q", h2.Txns[0].ID)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`[{"tid":"t1","sid":1,"sts":{"p":"10","l":2},"cts":{"p":10,"l":3},"ops":[{"t":"w","k":1,"v":5},{"t":"r","k":2}]}]`))
	f.Add([]byte(`[{"tid":1,"sid":"a","sts":1,"cts":2,"status":"aborted","ops":[{"t":"a","k":"x","v":"y"},{"t":"r","k":"x","v":["y",2]}]}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Decode(bytes.NewReader(b), history.DecodeOptions{Name: "fuzz"})
		if err != nil {
			if !history.IsInputError(err) {
				t.Fatalf("not an InputError: %v", err)
			}
			return
		}
		var out bytes.Buffer
		if err := Encode(&out, h); err != nil {
			return
		}
		if _, err := Decode(bytes.NewReader(out.Bytes()), history.DecodeOptions{}); err != nil {
			t.Fatalf("re-decoding encoded output: %v\n%s", err, out.Bytes())
		}
	})
}

var benchData []byte

// BenchmarkDecode1M decodes 1,000,000 transactions × 15 ops in TimeKiller
// JSON (the same history BenchmarkCheckSI1M in check/chronos checks).
func BenchmarkDecode1M(b *testing.B) {
	if benchData == nil {
		h := chronostest.Generate(chronostest.Config{Txns: 1_000_000, Sessions: 50, Keys: 1000, Ops: 15, ReadFrac: 0.5, Zipf: 1.1, Seed: 1})
		var buf bytes.Buffer
		if err := Encode(&buf, h); err != nil {
			b.Fatal(err)
		}
		benchData = buf.Bytes()
	}
	b.SetBytes(int64(len(benchData)))
	b.ResetTimer()
	for range b.N {
		if _, err := Decode(bytes.NewReader(benchData), history.DecodeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
