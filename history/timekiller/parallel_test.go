package timekiller

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/txray/txray/check/chronos/chronostest"
	"github.com/txray/txray/history"
	"github.com/txray/txray/internal/proptest"
)

type failAfter struct {
	r io.Reader
	n int
}

var errInjected = errors.New("injected read error")

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errInjected
	}
	if len(p) > f.n {
		p = p[:f.n]
	}
	n, err := f.r.Read(p)
	f.n -= n
	if err == io.EOF {
		err = errInjected
	}
	return n, err
}

// sameDecode decodes in sequentially and in parallel chunks of chunk bytes
// and fails unless both give the same history (every id, order and flag)
// or the same error message. failAt > 0 injects a read error after that
// many bytes.
func sameDecode(t *testing.T, in []byte, chunk, failAt int) {
	t.Helper()
	reader := func() io.Reader {
		if failAt > 0 {
			return &failAfter{r: bytes.NewReader(in), n: failAt}
		}
		return bytes.NewReader(in)
	}
	opts := history.DecodeOptions{Name: "f.json"}
	want, wantErr := Decode(reader(), opts)
	oldMin, oldChunk, oldProcs := parallelMin, chunkSize, parallelProcs
	parallelMin, chunkSize, parallelProcs = 1, chunk, 1
	defer func() { parallelMin, chunkSize, parallelProcs = oldMin, oldChunk, oldProcs }()
	opts.SizeHint = int64(len(in))
	got, gotErr := Decode(reader(), opts)
	proptest.SameDecode(t, fmt.Sprintf("parallel, chunks of %d bytes", chunk), in, want, got, wantErr, gotErr)
	if failAt == 0 {
		// the input in memory, cut in place (history.MappedInput)
		got, gotErr = Decode(history.NewMappedInput(in), opts)
		proptest.SameDecode(t, fmt.Sprintf("parallel, in place, chunks of %d bytes", chunk), in, want, got, wantErr, gotErr)
	}
}

func encoded(t testing.TB, list bool, txns int, seed uint64) []byte {
	h := chronostest.Generate(chronostest.Config{Txns: txns, Sessions: 7, Keys: 30, Ops: 5, ReadFrac: 0.5, List: list, Seed: seed})
	var b bytes.Buffer
	if err := Encode(&b, h); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestParallelMatchesSequential: parallel chunked decoding gives exactly the
// sequential decoder's history or error, whatever the chunk size, for
// generated histories, TimeKiller's pretty-printed examples, single-line
// input, damaged input and read errors.
func TestParallelMatchesSequential(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	kv, list := encoded(t, false, 400, 1), encoded(t, true, 400, 2)
	inputs := map[string][]byte{"kv": kv, "list": list}
	for _, f := range []string{"format-kv.json", "format-list.json"} {
		b, err := os.ReadFile("../../testdata/external/chronos/" + f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = b[:min(len(b), 200<<10)] // truncated: an error at the end
		if len(b) <= 2<<20 {
			inputs[f+"-whole"] = b
		}
	}
	// one line, no newline at all
	inputs["one-line"] = bytes.ReplaceAll(kv, []byte("\n"), nil)
	// string keys and values, unknown fields, HLC pairs, numeric strings
	inputs["mixed"] = []byte("[\n" + strings.Repeat(`{"tid":"a","sid":"s1","x":[1,{"y":2}],"sts":{"p":"3","l":1},"cts":{"p":3,"l":2},"ops":[{"t":"w","k":"k","v":"v","z":1},{"t":"r","k":7,"v":null}]},`+"\n", 50) +
		`{"tid":9,"sid":2,"sts":5,"cts":6,"status":"aborted","ops":[]}` + "\n]\n")
	inputs["leading-commas"] = []byte("[{\"tid\":1,\"ops\":[]}\n,{\"tid\":2,\"ops\":[]}\n,{\"tid\":3,\"ops\":[]}\n]")
	inputs["empty"] = nil
	inputs["blank"] = []byte("\n\n \n")
	inputs["empty-array"] = []byte("[\n]\n")
	inputs["trailing"] = append(append([]byte{}, kv...), "\n\n x\n"...)
	inputs["no-close"] = kv[:bytes.LastIndexByte(kv, ']')]
	inputs["double-comma"] = bytes.Replace(kv, []byte("},\n"), []byte("},\n,"), 1)
	inputs["missing-comma"] = bytes.Replace(kv, []byte("},\n"), []byte("}\n"), 3)
	inputs["two-arrays"] = []byte("[\n{\"tid\":1,\"ops\":[]}\n]\n[\n{\"tid\":2,\"ops\":[]}\n]\n")
	bad := append([]byte{}, kv...)
	bad[len(bad)*2/3] = '#'
	inputs["garbage"] = bad
	for name, in := range inputs {
		for _, chunk := range []int{1, 7, 64, 300, 4096, 1 << 20} {
			t.Run(fmt.Sprintf("%s/%d", name, chunk), func(t *testing.T) { sameDecode(t, in, chunk, 0) })
		}
	}
	for _, at := range []int{1, 500, len(kv) / 2, len(kv) - 1} {
		sameDecode(t, kv, 256, at)
	}
}

// TestParallelBig decodes a history bigger than the default parallel size
// threshold through the public path (DecodeFile sets the size hint), on any
// number of CPUs, and compares it with the sequential decode.
func TestParallelBig(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	defer func(p int) { parallelProcs = p }(parallelProcs)
	parallelProcs = 1
	h := chronostest.Generate(chronostest.Config{Txns: 40_000, Sessions: 50, Keys: 1000, Ops: 15, ReadFrac: 0.5, Zipf: 1.1, Seed: 5})
	var b bytes.Buffer
	if err := Encode(&b, h); err != nil {
		t.Fatal(err)
	}
	if int64(b.Len()) < parallelMin {
		t.Fatalf("input %d bytes is below the parallel threshold %d", b.Len(), parallelMin)
	}
	want, err := Decode(bytes.NewReader(b.Bytes()), history.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bytes.NewReader(b.Bytes()), history.DecodeOptions{SizeHint: int64(b.Len())})
	if err != nil {
		t.Fatal(err)
	}
	if d := proptest.DiffHistories(want, got); d != "" {
		t.Fatal(d)
	}
}

func FuzzParallel(f *testing.F) {
	f.Add([]byte(`[{"tid":"t1","sid":1,"sts":{"p":"10","l":2},"cts":{"p":10,"l":3},"ops":[{"t":"w","k":1,"v":5},{"t":"r","k":2}]}]`), uint16(8))
	f.Add([]byte("[\n{\"tid\":1,\"sid\":\"a\",\"sts\":1,\"cts\":2,\"status\":\"aborted\",\"ops\":[{\"t\":\"a\",\"k\":\"x\",\"v\":\"y\"}]},\n{\"tid\":2,\"ops\":[{\"t\":\"r\",\"k\":\"x\",\"v\":[\"y\",2]}]}\n]"), uint16(20))
	f.Add([]byte("[\n{\"tid\":1,\"ops\":[]}\n,\n{\"tid\":2,\"ops\":[]}\n]\n x"), uint16(3))
	f.Add(encoded(f, false, 20, 3), uint16(100))
	f.Add(encoded(f, true, 20, 4), uint16(64))
	f.Fuzz(func(t *testing.T, b []byte, chunk uint16) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
		sameDecode(t, b, int(chunk%2048)+1, 0)
	})
}

// TestParallelPath: one-transaction-per-line input is merged from chunks to
// the end, and so is pretty-printed input (cut before the lines that start
// a transaction), but not when its transactions' lines are not told apart
// from their ops' (then cuts fall inside transactions and the sequential
// decoder takes over at the first chunk); a single long line is handed to
// the sequential decoder at the first chunk; bad input resumes
// sequentially at the chunk holding the fault.
func TestParallelPath(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	defer func(c int) { chunkSize = c }(chunkSize)
	chunkSize = 256
	kv := encoded(t, false, 400, 1)
	pretty, err := os.ReadFile("../../testdata/external/chronos/format-kv.json")
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte{}, kv...)
	at := bytes.Index(bad[len(bad)/2:], []byte(`"ops"`)) + len(bad)/2
	bad[at+1] = 'x' // "xps": the transaction has no ops
	badLine := 1 + bytes.Count(bad[:at], []byte("\n"))
	for _, tc := range []struct {
		name      string
		in        []byte
		lo, hi    int // resumed line in [lo, hi]
		wantError bool
	}{
		{"one-per-line", kv, 0, 0, false},
		{"pretty", pretty, 0, 0, false},
		// the first transaction on the '[' line: no indentation learnt
		{"pretty-first-on-open-line", append([]byte("[{"), bytes.TrimLeft(pretty, "[ \n{")...), 1, 1, false},
		{"one-line", bytes.ReplaceAll(kv, []byte("\n"), nil), 1, 1, false},
		{"fault", bad, badLine - 20, badLine, true},
	} {
		d := &decoder{h: history.New(), file: "f", allTS: true}
		line, err := d.parallelAt(bytes.NewReader(tc.in), int64(len(tc.in)))
		if (err != nil) != tc.wantError || line < tc.lo || line > tc.hi {
			t.Errorf("%s: resumed at line %d (want %d..%d), err %v", tc.name, line, tc.lo, tc.hi, err)
		}
	}
}

// decodeOp decodes a one-transaction history holding op.
func decodeOp(op string) (*history.History, error) {
	return Decode(strings.NewReader(`[{"tid":1,"sid":2,"sts":3,"cts":4,"ops":[`+op+`,{"t":"r","k":1,"v":2}]}]`), history.DecodeOptions{Name: "f"})
}

// decodeGeneral decodes in with fastOp off.
func decodeGeneral(in []byte) (*history.History, error) {
	fastOpOff = true
	defer func() { fastOpOff = false }()
	return Decode(bytes.NewReader(in), history.DecodeOptions{Name: "f"})
}

func sameFastGeneral(t *testing.T, in []byte) {
	t.Helper()
	want, wantErr := decodeGeneral(in)
	got, gotErr := Decode(bytes.NewReader(in), history.DecodeOptions{Name: "f"})
	proptest.SameDecode(t, "fast ops", in, want, got, wantErr, gotErr)
	// and sequentially with read-ahead and faulted-in arenas (big inputs
	// on fewer than parallelProcs CPUs)
	oldMin, oldProcs := parallelMin, parallelProcs
	parallelMin, parallelProcs = 1, 1<<20
	defer func() { parallelMin, parallelProcs = oldMin, oldProcs }()
	got, gotErr = Decode(bytes.NewReader(in), history.DecodeOptions{Name: "f", SizeHint: int64(len(in))})
	proptest.SameDecode(t, "fast ops, read-ahead", in, want, got, wantErr, gotErr)
}

// FuzzFastOp: an op the fast path decodes gives the same history (ids and
// line numbers included) as the general path.
func FuzzFastOp(f *testing.F) {
	for _, op := range []string{`{"t":"r","k":1,"v":null}`, `{"t":"w","k":-5,"v":7}`, `{"t":"a","k":3,"v":9}`,
		`{"t":"r","k":3,"v":[9,2,-1]}`, `{"t":"r","k":3,"v":[]}`, `{"t":"w","k":3,"v":null}`, `{"t":"r","k":1,"v":1.5}`,
		`{"t":"r","k":12345678901234567890,"v":1}`, `{"t":"r","k":1,"v":[1,]}`, `{"t":"x","k":1,"v":1}`, `{"t":"r","k":1,"v":2e3}`,
		`{"k":3,"t":"w","v":4}`, `{"v":4,"k":3,"t":"w"}`, "{\n  \"k\": 3,\n  \"t\": \"r\",\n  \"v\": [ 1, 2 ]\n}",
		`{"k":3,"t":"w","v":4,"k":5}`, `{"k":3,"t":"w"}`, `{"k":3,"t":"r"}`, `{"k":3,"t":"r","v":[1 2]}`,
		// runs of compact ops (exactOp), broken in various places
		`{"k":3,"t":"w","v":4},{"k":3,"t":"r","v":null},{"t":"w","k":-1,"v":0},{"t":"r","k":7,"v":[1]}`,
		`{"k":3,"t":"w","v":4},{"k":3,"t":"w","v":null},{"k":3,"t":"a","v":5} ,{"k":3,"t":"r","v":5}`,
		`{"k":3,"t":"w","v":4},{"k":3,"t":"x","v":1},{"k":03,"t":"r","v":-0},{"k":3,"t":"r","v":nul}`,
		"{\"k\":3,\"t\":\"w\",\"v\":4},\n{\"k\":4,\"t\":\"w\",\"v\":5}",
		// word-at-a-time exactOp: 7 and 8 digits, leading zeros, signs, null
		`{"k":1234567,"t":"w","v":7654321},{"k":12345678,"t":"r","v":123456789},{"k":1,"t":"w","v":1234567}`,
		`{"t":"w","k":0000001,"v":-1},{"t":"r","k":7,"v":null},{"t":"a","k":1,"v":00},{"t":"w","k":-3,"v":4}`,
		`{"k":1,"t":"r","v":null},{"k":1,"t":"w","v":null},{"k":1,"t":"r","v":nulx},{"k":1,"t":"r","v":1]`,
		`{"k":1,"t":"r","v":2 },{"k":1,"t":"rr","v":2},{"k":1,"t":"r","v":2,"x":1},{"k":1,"t":"r","v":2}`,
	} {
		f.Add(op)
	}
	f.Fuzz(func(t *testing.T, op string) {
		sameFastGeneral(t, []byte(`[{"tid":1,"sid":2,"sts":3,"cts":4,"ops":[`+op+`,{"t":"r","k":1,"v":2}]}, {"tid":2,"ops":[{"t":"r","k":1}]}`+"\n"+`,{"tid":3,"ops":[{"t":"r","k":1}, {"t":"r","v":1}]}]`))
	})
}

// TestFastOpMatchesGeneral: whole histories decode the same through the
// fast op path and the general one: generated ones as Encode writes them,
// with TimeKiller's sorted field order, and TimeKiller's pretty-printed
// examples.
func TestFastOpMatchesGeneral(t *testing.T) {
	for _, list := range []bool{false, true} {
		in := encoded(t, list, 300, 9)
		sameFastGeneral(t, in)
		var txns []map[string]any
		if err := json.Unmarshal(in, &txns); err != nil {
			t.Fatal(err)
		}
		sorted, _ := json.Marshal(txns)
		sameFastGeneral(t, sorted)
		pretty, _ := json.MarshalIndent(txns, "", "    ")
		sameFastGeneral(t, pretty)
	}
	for _, f := range []string{"format-kv.json", "format-list.json"} {
		b, err := os.ReadFile("../../testdata/external/chronos/" + f)
		if err != nil {
			t.Fatal(err)
		}
		sameFastGeneral(t, b)
	}
}

// FuzzFastTxn: a transaction the fast paths of the transaction fields
// (compact timestamps, plain tid/sid/status strings) decode gives the same
// history and errors as the general path.
func FuzzFastTxn(f *testing.F) {
	for _, txn := range []string{
		`{"cts":{"l":0,"p":7},"ops":[{"k":1,"t":"w","v":2}],"sid":"20","status":"aborted","sts":{"l":0,"p":5},"tid":"c20-1"}`,
		`{"tid":"a\u0041","sid":"s\"1","sts":{"p":1,"l":2},"cts":{"p":3,"l":-4},"status":"committed","ops":[]}`,
		`{"tid":12,"sid":3,"sts":{"l":null,"p":1},"cts":{"p":1},"status":"unknown","ops":[]}`,
		`{"tid":"x","sid":"y","sts":{"l":1,"p":2,"x":3},"cts":{"p":"4","l":5},"status":"ok","ops":[]}`,
		`{"tid":"x","sid":null,"sts":{"p":2,"p":3},"cts":{"l":2,"l":3},"status":"bogus","ops":[]}`,
		`{"tid":"x","sts":{"p":1.5,"l":0},"cts":{"p":12345678901234567890,"l":0},"ops":[]}`,
		`{"tid": "x", "sid" :"y","sts":{ "p":1,"l":0},"cts":{"p":2,"l":0} ,"status": "aborted","ops":[]}`,
		"{\"tid\":\"a\tb\",\"sid\":\"\",\"ops\":[]}",
	} {
		f.Add(txn)
	}
	f.Fuzz(func(t *testing.T, txn string) {
		sameFastGeneral(t, []byte("[\n"+txn+",\n"+`{"tid":"z","sid":"y","sts":{"l":0,"p":1},"cts":{"l":0,"p":2},"ops":[{"k":1,"t":"r","v":null}]}`+"\n]\n"))
	})
}
