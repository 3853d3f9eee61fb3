package jsonl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

const twoTxns = `{"txray":1,"db":"sqlite","level":"serializable","workload":"list-append"}
{"id":"a","session":"c0","status":"committed","ops":[{"f":"append","k":1,"v":1}]}
{"id":"b","session":"c0","status":"committed","ops":[{"f":"r","k":1,"v":[1]}]}
`

// decodeBoth decodes in with the sequential and the parallel decoder (tiny
// chunks) and requires the same outcome from both.
func decodeBoth(t *testing.T, in string) (*history.History, error) {
	t.Helper()
	h1, err1 := decode(strings.NewReader(in), history.DecodeOptions{Name: "h.jsonl"}, false)
	oldMin, oldChunk := parallelMin, chunkSize
	parallelMin, chunkSize = 0, 16
	h2, err2 := Decode(strings.NewReader(in), history.DecodeOptions{Name: "h.jsonl", SizeHint: int64(len(in))})
	parallelMin, chunkSize = oldMin, oldChunk
	if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
		t.Fatalf("sequential and parallel differ: %v / %v", err1, err2)
	}
	if err1 == nil {
		sameHistory(t, h1, h2)
		if strings.Join(h1.Notes, "|") != strings.Join(h2.Notes, "|") {
			t.Fatalf("notes differ: %q / %q", h1.Notes, h2.Notes)
		}
	}
	return h1, err1
}

// TestTornLastLineReadsPrefixWithNotice: a history whose last line was cut
// off (crash, full disk) reads up to its last complete line, counts the torn
// line in Ignored and names it in a note — for every place a cut can fall.
func TestTornLastLineReadsPrefixWithNotice(t *testing.T) {
	last := strings.LastIndex(twoTxns[:len(twoTxns)-1], "\n") + 1
	for cut := last + 1; cut < len(twoTxns)-1; cut++ {
		in := twoTxns[:cut]
		h, err := decodeBoth(t, in)
		if err != nil {
			t.Fatalf("cut at byte %d (%q): %v", cut, in[last:], err)
		}
		if len(h.Txns) != 1 || h.Ignored[TornReason] != 1 {
			t.Fatalf("cut at byte %d: %d txns, ignored %v; want 1 txn and the torn line counted", cut, len(h.Txns), h.Ignored)
		}
		if len(h.Notes) != 1 || !strings.Contains(h.Notes[0], "h.jsonl: line 3 is torn") {
			t.Fatalf("cut at byte %d: notes %q, want one naming line 3", cut, h.Notes)
		}
	}
}

// TestTornLineMidFileIsError: only the last line may be torn; a cut-off
// line followed by more input is an input error naming it.
func TestTornLineMidFileIsError(t *testing.T) {
	lines := strings.SplitAfter(twoTxns, "\n")
	in := lines[0] + lines[1][:30] + "\n" + lines[2]
	_, err := decodeBoth(t, in)
	if err == nil || !history.IsInputError(err) || !strings.Contains(err.Error(), "h.jsonl:2") {
		t.Fatalf("err = %v, want an input error at line 2", err)
	}
}

// TestCompleteBadLastLineIsError: a last line without a line end that is
// complete JSON with bad content (or a syntax error before its end) is not
// a crash prefix: it stays an error.
func TestCompleteBadLastLineIsError(t *testing.T) {
	for _, tail := range []string{
		`{"status":"maybe","ops":[]}`,
		`{"status":"ok","ops":[}`,
		`{"status":"ok","ops":[]}}`,
	} {
		_, err := decodeBoth(t, twoTxns+tail)
		if err == nil || !strings.Contains(err.Error(), "h.jsonl:4") {
			t.Errorf("last line %s: err = %v, want an input error at line 4", tail, err)
		}
	}
	// A lone cut-off line has no complete line before it: nothing to read.
	if _, err := decodeBoth(t, `{"ops":[`); err == nil {
		t.Error("a file of one cut-off line decoded")
	}
}

// TestBOMAccepted: a UTF-8 byte order mark before the first line (the
// sniffer accepts it) is skipped by the batch and the line decoder.
func TestBOMAccepted(t *testing.T) {
	in := "\xEF\xBB\xBF" + twoTxns
	h, err := decodeBoth(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != 2 || h.Header.DB != "sqlite" {
		t.Fatalf("%d txns, header %+v", len(h.Txns), h.Header)
	}
	if sniff([]byte(in)) == 0 {
		t.Error("sniffer rejects the BOM")
	}
	ld := NewLineDecoder("h.jsonl")
	n := 0
	for _, l := range strings.SplitAfter(in, "\n") {
		tx, err := ld.Decode([]byte(l))
		if err != nil {
			t.Fatalf("line decoder: %v", err)
		}
		if tx != nil {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("line decoder gave %d txns, want 2", n)
	}
	// Only at the start: a BOM inside the input is bad input.
	if _, err := decodeBoth(t, twoTxns+"\xEF\xBB\xBF{\"ops\":[]}\n"); err == nil {
		t.Error("a BOM mid-file was accepted")
	}
}

func TestTornSeedsDecodeInFuzzers(t *testing.T) {
	// Keep the fuzz seed corpus honest: the torn-line seeds decode.
	for _, s := range tornSeeds() {
		if _, err := Decode(bytes.NewReader(s), history.DecodeOptions{Name: "f"}); err != nil {
			t.Errorf("seed %q: %v", s, err)
		}
	}
}

func tornSeeds() [][]byte {
	return [][]byte{
		[]byte(twoTxns[:len(twoTxns)-20]),
		[]byte("\xEF\xBB\xBF" + twoTxns),
		[]byte(twoTxns + `{"status":"ok","ops":[{"f":"r","k":1,"v":tr`),
	}
}
