package jsonl

import (
	"bytes"
	"fmt"
	"slices"
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

// deleteSample has a delete (a tombstone 12 of key 1), a re-insert, an
// item read of the absent row, a read naming the deleted version and a
// version set naming it.
const deleteSample = `{"status":"committed","ops":[{"f":"w","k":1,"v":11}]}
{"status":"committed","ops":[{"f":"d","k":1,"v":12},{"f":"r","k":1,"v":null}]}
{"status":"committed","ops":[{"f":"r","k":1,"v":12},{"f":"rp","table":"t","where":"k >= 0","result":[],"vs":[[1,12]]},{"f":"delete","k":2,"v":"x"}]}
{"status":"committed","ops":[{"f":"w","k":1,"v":13}]}
{"type":"version_order","k":1,"order":[11,12,13]}
`

// TestDecodeDelete: d ops decode to history.Delete with their tombstone,
// render as delete, and survive a round trip through Encode.
func TestDecodeDelete(t *testing.T) {
	for _, fast := range []bool{false, true} {
		h, err := decode(strings.NewReader(deleteSample), history.DecodeOptions{Name: "d.jsonl"}, fast)
		if err != nil {
			t.Fatal(err)
		}
		o := h.Txns[1].Ops[0]
		if o.Kind != history.Delete || h.KeyName(o.Key) != "1" || h.ValueName(o.Value) != "12" {
			t.Fatalf("fast=%v: op = %+v", fast, o)
		}
		if got := h.TxnString(2); got != `T2 [r 1 12, rp t where k >= 0, delete 2 x]` {
			t.Errorf("fast=%v: TxnString = %q", fast, got)
		}
		if !h.HasDeletes() || !history.Delete.IsWrite() {
			t.Errorf("HasDeletes/IsWrite false")
		}
		var b1, b2 bytes.Buffer
		if err := Encode(&b1, h); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b1.String(), `{"f":"d","k":1,"v":12}`) {
			t.Errorf("encoded delete missing:\n%s", b1.String())
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
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"malformed", "{\"ops\":[", "f.jsonl:1: malformed JSON"},
		{"missing ops", `{"status":"committed"}`, `f.jsonl:1: ops: missing`},
		{"bad status", `{"status":"maybe","ops":[]}`, `f.jsonl:1: status: unknown status "maybe"`},
		{"bad op", "\n" + `{"status":"ok","ops":[{"f":"cas","k":1,"v":2}]}`, `f.jsonl:2: ops[0].f: unsupported micro-op "cas"`},
		{"write without value", `{"status":"ok","ops":[{"f":"w","k":1}]}`, `f.jsonl:1: ops[0].v: w needs a value`},
		{"delete without tombstone", `{"status":"ok","ops":[{"f":"d","k":1,"v":null}]}`, `f.jsonl:1: ops[0].v: d needs a value`},
		{"delete of a list", `{"status":"ok","ops":[{"f":"delete","k":1,"v":[2]}]}`, `ops[0].v: delete takes a scalar`},
		{"float key", `{"status":"ok","ops":[{"f":"w","k":1.5,"v":2}]}`, `f.jsonl:1: ops[0].k: want an integer or a string, got 1.5`},
		{"append list", `{"status":"ok","ops":[{"f":"append","k":1,"v":[2]}]}`, `ops[0].v: append takes a scalar`},
		{"interval", `{"status":"ok","invoke":5,"complete":4,"ops":[]}`, `complete: 4 is before invoke 5`},
		{"ts", `{"status":"ok","commit_ts":"x","ops":[]}`, `commit_ts: want an integer timestamp`},
		// No database commits before it starts; replaying such timestamps
		// (chronos, aion) judged an impossible schedule valid.
		// An op's interval lies within its transaction's (Leopard judged
		// an op after its transaction's completion as a consistent-read
		// violation).
		{"op complete before invoke", `{"status":"ok","ops":[{"f":"w","k":1,"v":1,"invoke":15,"complete":12}]}`, `f.jsonl:1: ops[0].complete: 12 is before invoke 15`},
		{"op outside txn", `{"status":"ok","invoke":10,"complete":20,"ops":[{"f":"w","k":1,"v":1,"invoke":50,"complete":60}]}`, `ops[0].invoke: the operation's interval [50, 60] is not within its transaction's [10, 20]`},
		{"op starts before txn", `{"status":"ok","invoke":10,"complete":20,"ops":[{"f":"r","k":1,"v":null,"invoke":5,"complete":15}]}`, `ops[0].invoke: the operation's interval [5, 15]`},
		{"op invoke alone", `{"status":"ok","ops":[{"f":"w","k":1,"v":1,"invoke":15}]}`, `ops[0].invoke: invoke and complete must be given together`},
		{"commit before start", `{"status":"ok","start_ts":5,"commit_ts":3,"ops":[{"f":"w","k":1,"v":1}]}`, `f.jsonl:1: commit_ts: 3 is before start_ts 5`},
		{"commit before start hlc", `{"status":"ok","start_ts":{"p":5,"l":2},"commit_ts":{"p":5,"l":1},"ops":[]}`, `commit_ts: (5,1) is before start_ts (5,2)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(c.in), history.DecodeOptions{Name: "f.jsonl"})
			if err == nil || !strings.Contains(err.Error(), c.want) || !history.IsInputError(err) {
				t.Fatalf("err = %v, want containing %q", err, c.want)
			}
			// txray watch's line decoder rejects the same lines.
			if _, err := NewLineDecoder("f.jsonl").Decode([]byte(strings.TrimSpace(c.in))); err == nil {
				t.Errorf("line decoder accepted %s", c.in)
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
	for _, s := range tornSeeds() {
		f.Add(s)
	}
	f.Add([]byte(sample))
	f.Add([]byte(certSample))
	f.Add([]byte(vsetSample))
	f.Add([]byte(schemaSample))
	f.Add([]byte(`{"status":"ok","session":3,"ops":[{"f":"r","k":1,"v":[1,2,"x\u00e9"]},{"f":"inc","k":"a\n","v":-4,"x":{"y":[1.5e3,true,null]}}]}`))
	f.Add([]byte(`{"status":"ok","ops":[{"f":"w","k":1,"v":1.0}]}`))
	f.Add([]byte(deleteSample))
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
	for _, s := range tornSeeds() {
		f.Add(s)
	}
	f.Add([]byte(sample))
	f.Add([]byte(certSample))
	f.Add([]byte(vsetSample))
	f.Add([]byte(schemaSample))
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

// parallelInput builds a history text with n transaction lines mixing the
// shapes the fast parser takes and the ones it leaves to the sequential
// decoder (header, evidence records, blank lines, unusual fields).
func parallelInput(n int, seed uint64) string {
	var b strings.Builder
	b.WriteString(`{"txray":1,"db":"sim","level":"serializable","workload":"list-append"}` + "\n")
	x := seed | 1
	rnd := func(m int) int {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x % uint64(m))
	}
	lists := map[int][]int{}
	next := 1
	for i := 0; i < n; i++ {
		s := rnd(7)
		switch rnd(40) {
		case 0:
			b.WriteString("\n")
		case 1:
			fmt.Fprintf(&b, `{"type":"version_order","k":%d,"order":[1,2]}`+"\n", rnd(9))
		case 2:
			fmt.Fprintf(&b, `{"status":"ok","session":"s%d","weird":{"a":[1,2]},"ops":[{"f":"w","k":"str%d","v":"v%d"}]}`+"\n", s, rnd(5), rnd(50))
		}
		fmt.Fprintf(&b, `{"id":"t%d","session":"c%d","status":"committed","invoke":%d,"complete":%d,"ops":[`, i, s, 10*i, 10*i+5)
		for j, m := 0, 1+rnd(4); j < m; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			k := rnd(13)
			if rnd(2) == 0 {
				lists[k] = append(lists[k], next)
				fmt.Fprintf(&b, `{"f":"append","k":%d,"v":%d}`, k, next)
				next++
			} else {
				l := lists[k]
				if rnd(5) == 0 && len(l) > 0 {
					l = l[:rnd(len(l))] // a shorter read: the per-key cache must not be trusted blindly
				}
				b.WriteString(`{"f":"r","k":` + fmt.Sprint(k) + `,"v":[`)
				for e, v := range l {
					if e > 0 {
						b.WriteString(",")
					}
					fmt.Fprint(&b, v)
				}
				b.WriteString("]}")
			}
		}
		b.WriteString("]}\n")
	}
	return b.String()
}

// TestParallelDecodeMatchesSequential is a differential test: the parallel
// decoder must produce exactly the history (ids, order, evidence) and the
// errors of the sequential one, whatever the chunking.
func TestParallelDecodeMatchesSequential(t *testing.T) {
	oldMin, oldChunk := parallelMin, chunkSize
	defer func() { parallelMin, chunkSize = oldMin, oldChunk }()
	parallelMin = 0
	for _, cs := range []int{1, 64, 700, 1 << 20} {
		chunkSize = cs
		for seed := uint64(1); seed <= 3; seed++ {
			in := parallelInput(2000, seed)
			h1, err1 := decode(strings.NewReader(in), history.DecodeOptions{Name: "p"}, false)
			h2, err2 := Decode(strings.NewReader(in), history.DecodeOptions{Name: "p", SizeHint: int64(len(in))})
			if err1 != nil || err2 != nil {
				t.Fatalf("chunk %d seed %d: errors %v / %v", cs, seed, err1, err2)
			}
			sameHistory(t, h1, h2)
			// an error in the middle is reported identically
			bad := in[:len(in)/2] + "{\"ops\":[\n" + in[len(in)/2:]
			_, err1 = decode(strings.NewReader(bad), history.DecodeOptions{Name: "p"}, false)
			_, err2 = Decode(strings.NewReader(bad), history.DecodeOptions{Name: "p", SizeHint: int64(len(bad))})
			if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
				t.Fatalf("chunk %d seed %d: errors differ: %v / %v", cs, seed, err1, err2)
			}
		}
	}
}

func sameHistory(t *testing.T, h1, h2 *history.History) {
	t.Helper()
	var b1, b2 bytes.Buffer
	Encode(&b1, h1)
	Encode(&b2, h2)
	if b1.String() != b2.String() || h1.Evidence != h2.Evidence {
		t.Fatalf("sequential and parallel decodes differ (%d vs %d bytes; evidence %+v / %+v)", b1.Len(), b2.Len(), h1.Evidence, h2.Evidence)
	}
	for i := range h1.Txns {
		a, b := h1.Txns[i], h2.Txns[i]
		if a.Session != b.Session || a.Seq != b.Seq || len(a.Ops) != len(b.Ops) {
			t.Fatalf("txn %d differs: %+v / %+v", i, a, b)
		}
		for j := range a.Ops {
			if a.Ops[j].Key != b.Ops[j].Key || a.Ops[j].Value != b.Ops[j].Value || !slices.Equal(a.ListOf(&a.Ops[j]), b.ListOf(&b.Ops[j])) {
				t.Fatalf("txn %d op %d ids differ: %+v / %+v", i, j, a.Ops[j], b.Ops[j])
			}
		}
	}
}

// FuzzParallel runs the parallel decoder with tiny chunks against the
// sequential one on arbitrary input.
func FuzzParallel(f *testing.F) {
	for _, s := range tornSeeds() {
		f.Add(s)
	}
	f.Add([]byte(sample))
	f.Add([]byte(certSample))
	f.Add([]byte(schemaSample))
	f.Add([]byte(parallelInput(30, 7)))
	f.Fuzz(func(t *testing.T, b []byte) {
		oldMin, oldChunk := parallelMin, chunkSize
		defer func() { parallelMin, chunkSize = oldMin, oldChunk }()
		parallelMin, chunkSize = 0, 16
		h1, err1 := decode(bytes.NewReader(b), history.DecodeOptions{Name: "f"}, false)
		h2, err2 := Decode(bytes.NewReader(b), history.DecodeOptions{Name: "f", SizeHint: int64(len(b))})
		if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("errors differ: %v / %v", err1, err2)
		}
		if err1 == nil {
			sameHistory(t, h1, h2)
		}
	})
}

// TestVersionOrderOnePerKey: a second version_order record of a key that
// differs from the first is an input error naming both lines (it used to
// replace the first silently, so the evidence checked depended on record
// order); the same record repeated is accepted. Both the canonical field
// order (fast path) and another one (slow path) are covered.
func TestVersionOrderOnePerKey(t *testing.T) {
	const txns = `{"txray":1}
{"id":"a","status":"committed","ops":[{"f":"w","k":"x","v":1}]}
{"id":"b","status":"committed","ops":[{"f":"w","k":"x","v":2}]}
`
	cases := []struct{ name, records, want string }{
		{"contradicting", `{"type":"version_order","k":"x","order":[2,1]}
{"type":"version_order","k":"x","order":[1,2]}
`, `f.jsonl:5: order: a second, different version order of key x (the first is on line 4)`},
		{"contradicting-other-field-order", `{"order":[2,1],"type":"version_order","k":"x"}
{"k":"x","type":"version_order","order":[1]}
`, `f.jsonl:5: order: a second, different version order of key x (the first is on line 4)`},
		{"repeated", `{"type":"version_order","k":"x","order":[1,2]}
{"type":"version_order","k":"x","order":[1,2]}
`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := Decode(strings.NewReader(txns+c.records), history.DecodeOptions{Name: "f.jsonl"})
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				x, _ := h.Keys.LookupStr("x")
				if got := len(h.VersionOrder[x]); got != 2 {
					t.Errorf("version order of x has %d versions, want 2", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !history.IsInputError(err) {
				t.Fatalf("err = %v, want containing %q", err, c.want)
			}
		})
	}
}

// TestParallelValueIDsInInputOrder: the parallel merge interns values in
// the order the sequential decoder does, op by op, list elements in place
// (it once interned all scalar values of a transaction before its list
// elements, so "" got value id 0 here instead of 10; fuzz corpus
// FuzzParallel/10826a44ab2a3b6d).
func TestParallelValueIDsInInputOrder(t *testing.T) {
	oldMin, oldChunk := parallelMin, chunkSize
	defer func() { parallelMin, chunkSize = oldMin, oldChunk }()
	parallelMin, chunkSize = 0, 16
	in := `{"status":"commit","ops":[{"f":"r","k":0,"v":[10,"s",11]},{"f":"a","k":"","v":""},{"f":"r","k":1,"v":[12]}]}` + "\n"
	h1, err1 := decode(strings.NewReader(in), history.DecodeOptions{Name: "p"}, false)
	h2, err2 := Decode(strings.NewReader(in), history.DecodeOptions{Name: "p", SizeHint: int64(len(in))})
	if err1 != nil || err2 != nil {
		t.Fatalf("errors %v / %v", err1, err2)
	}
	want := []history.Scalar{{I: 10}, {S: "s", IsStr: true}, {I: 11}, {S: "", IsStr: true}, {I: 12}}
	for _, h := range []*history.History{h1, h2} {
		if h.Values.Len() != len(want) {
			t.Fatalf("%d values, want %d", h.Values.Len(), len(want))
		}
		for i, w := range want {
			if g := h.Values.Get(int32(i)); g != w {
				t.Errorf("value id %d = %+v, want %+v", i, g, w)
			}
		}
	}
	sameHistory(t, h1, h2)
}
