package edn

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txray/txray/history"
	"github.com/txray/txray/internal/proptest"
)

// decodeBoth decodes in with the fast path and with the general reader
// only, and fails unless both give the same history (every id, order and
// flag) or the same error message.
func decodeBoth(t testing.TB, in []byte) {
	t.Helper()
	opts := history.DecodeOptions{Name: "h.edn"}
	fastOff = true
	want, wantErr := Decode(bytes.NewReader(in), opts)
	fastOff = false
	got, gotErr := Decode(bytes.NewReader(in), opts)
	proptest.SameDecode(t, "fast, sequential", in, want, got, wantErr, gotErr)
	// parallel scanning, with chunks of a few lines and of single bytes
	oldMin, oldChunk, oldProcs := parallelMin, chunkSize, parallelProcs
	defer func() { parallelMin, chunkSize, parallelProcs = oldMin, oldChunk, oldProcs }()
	parallelMin, parallelProcs = 1, 1
	opts.SizeHint = int64(len(in))
	for _, cs := range []int{1, 200} {
		chunkSize = cs
		got, gotErr := Decode(bytes.NewReader(in), opts)
		proptest.SameDecode(t, fmt.Sprintf("fast, parallel, chunks of %d bytes", cs), in, want, got, wantErr, gotErr)
		// the input in memory, cut in place (history.MappedInput)
		got, gotErr = Decode(history.NewMappedInput(in), opts)
		proptest.SameDecode(t, fmt.Sprintf("fast, parallel, in place, chunks of %d bytes", cs), in, want, got, wantErr, gotErr)
	}
}

// fastCases are inputs where the fast path and the general reader meet:
// lines the fast path takes, lines it must hand back (and the line after
// them), and malformed lines whose errors must name the same line.
var fastCases = []string{
	// Jepsen's field order, and Elle's, with :time and :index
	"{:type :invoke, :f :txn, :value [[:append 9 1] [:r 8 nil]], :time 29387723, :process 0, :index 0}\n" +
		"{:type :ok, :f :txn, :value [[:append 9 1] [:r 8 [1 2]]], :time 29387999, :process 0, :index 1}\n",
	"{:index 0 :type :invoke :process 1 :f :txn :value [[:r 1 nil] [:w 2 3]]}\n{:index 1 :type :ok :process 1 :f :txn :value [[:r 1 5] [:w 2 3]]}",
	// string and keyword keys and values, -1, 0, [f k] micro-ops
	"{:type :invoke, :process 0, :value [[:r :x nil] [:w \"y\" -1] [:read 0]]}\n{:type :ok, :process 0, :value [[:r :x :a] [:write \"y\" -1] [:r 0]]}\n",
	// :info completion without :value takes the invocation's ops; :fail
	"{:type :invoke, :process 0, :value [[:append 1 1]], :time 5}\n{:type :info, :process 0, :time 9}\n" +
		"{:type :invoke, :process 1, :value [[:append 1 2]], :time 6}\n{:type :fail, :process 1, :value nil, :time 10}\n",
	// nemesis ops, other :f, never-completed invocations
	"{:type :info, :process :nemesis, :f :start, :value nil}\n{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n" +
		"{:type :invoke, :process 1, :f :start, :value nil}\n{:type :ok, :process 1, :f :start, :value nil}\n",
	"{:type :invoke, :process 0, :f :read, :value []}\n{:type :ok, :process 0, :f :read, :value []}\n{:type :ok, :process 0, :f :txn, :value []}\n",
	// lines the fast path hands back: comments, discards, records, maps over
	// several lines, two maps on a line, extra fields, escapes, big numbers
	"; a comment\n{:type :invoke, :process 0, :value [[:append 1 1]]} ; trailing\n{:type :ok, :process 0, :value [[:append 1 1]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n#_ {:type :ok}\n{:type :ok, :process 0, :value [[:append 1 1]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n#_\n{:type :ok, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:append 1 1]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]} #_\n{:type :ok, :process 0, :value [[:append 1 1]]}\n",
	"#jepsen.history.Op{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 1 2]]}\n{:index 1, :type :ok, :process 0, :f :txn, :value [[:append 1 2]]}\n",
	"{:type :invoke, :process 0,\n :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:append 1 1]]}\n{:type :invoke, :process 0, :value [[:append 1 2]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]} {:type :ok, :process 0, :value [[:append 1 1]]}\n{:type :invoke, :process 0, :value [[:append 1 3]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]], :error [:x \"y\"]}\n{:type :ok, :process 0, :value [[:append 1 1]]}\n",
	"{:type :invoke, :process 0, :value [[:append \"a\\\"b\" 1]]}\n{:type :ok, :process 0, :value [[:append \"a\\\"b\" 1]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 12345678901234567890]]}\n{:type :ok, :process 0, :value [[:append 1 1234567890123456789]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 007]]}\n{:type :ok, :process 0, :value [[:append 1 -0]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 +7]]}\n{:type :ok, :process 0, :value [[:append 1 7N]]}\n",
	"{:type :invoke, :process 0, :type :ok, :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:append 1 1]]}\n",
	"{:type :invoke, :process 0, :value ([:append 1 1])}\n{:type :ok, :process 0, :value [(:append 1 1)]}\n",
	"{:type :ok, :process 0, :value [[:r 1 #{1 2}]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\r\n{:type :ok, :process 0, :value [[:append 1 1]]}\r\n\r\n",
	"\xEF\xBB\xBF{:type :invoke, :process 0, :value [[:append 1 1]]}\n\xEF\xBB\xBF{:type :ok, :process 0, :value [[:append 1 1]]}\n",
	"\n\n  {:type :invoke, :process 0, :value [[:append 1 1]]}\n,,\n{:type :ok, :process 0, :value [[:append 1 1]]}",
	// top-level vector and list forms
	"[{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:append 1 1]]}]\n",
	"(\n{:type :ok, :value [[:append 1 1]]}\n)\n{:type :ok}\n",
	// errors: each must name the same line and field on both paths
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:append 1]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:w 1 nil]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:cas 1 [1 2]]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:append 1 [1]]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 0}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :invoke, :process 0, :value [[:append 1 1]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]], :time 9}\n{:type :ok, :process 0, :value [[:append 1 1]], :time 3}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 1, :value [[:append 1 1]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :okay, :process 0, :value [[:append 1 1]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:append 1 1]]\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:append 1 1]]}}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:process 0, :value [[:append 1 1]]}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]], :time :x}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1] [:r 1 nil]]}\n{:type :ok, :process 0, :value [[:append 1 1] [:r 1 5]]}\n",
	"{:type :invoke, :process 0, :value 5}\n",
	"{:type :invoke, :process 0, :value [[:append 1 1]]}\n]\n",
}

// TestFastPathMatchesGeneralReader: the fast line scanner gives exactly the
// history (every id, order and flag) or the error the general EDN reader
// gives, on hand-written edge cases, on the shared Elle histories and on
// generated list-append and register histories.
func TestFastPathMatchesGeneralReader(t *testing.T) {
	for i, c := range fastCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) { decodeBoth(t, []byte(c)) })
	}
	for _, p := range []string{"paper-example.edn", "si-without-g-single.edn", "rw-register.edn"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/external/elle", p))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(p, func(t *testing.T) { decodeBoth(t, b) })
	}
	for _, list := range []bool{true, false} {
		for seed := int64(1); seed <= 3; seed++ {
			h := genHistory(3000, 50, list, seed)
			var buf bytes.Buffer
			if err := Encode(&buf, h); err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("gen-list=%v-%d", list, seed), func(t *testing.T) {
				decodeBoth(t, buf.Bytes())
				// and with one line in the middle handed to the general
				// reader (a comment after it)
				b := buf.Bytes()
				mid := bytes.IndexByte(b[len(b)/2:], '\n') + len(b)/2
				decodeBoth(t, append(append(append([]byte{}, b[:mid]...), " ; c"...), b[mid:]...))
				// and torn at every kind of place
				for _, cut := range []int{len(b) - 1, len(b) - 7, mid + 5} {
					decodeBoth(t, b[:cut])
				}
			})
		}
	}
}

// TestFastPathReadError: a read error is reported, not taken for the end of
// the history.
func TestFastPathReadError(t *testing.T) {
	in := strings.Repeat("{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:append 1 1]]}\n", 2000)
	for _, hint := range []int64{0, 1 << 30} { // sequential, parallel
		_, err := Decode(io.MultiReader(strings.NewReader(in), errReader{}), history.DecodeOptions{Name: "h.edn", SizeHint: hint})
		if err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("size hint %d: err = %v, want the read error", hint, err)
		}
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, fmt.Errorf("disk on fire") }

// FuzzFastPathMatchesGeneralReader: on any input, the fast path and the
// general reader agree (history or error message).
func FuzzFastPathMatchesGeneralReader(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeBoth(t, b)
	})
}
