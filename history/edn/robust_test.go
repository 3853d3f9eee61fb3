package edn

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

// hostileChains are 3 MB inputs that recurse once per prefix or bracket:
// each must end in a clean input error (depth limit), not a Go stack
// overflow that kills the process.
func hostileChains() map[string][]byte {
	const n = 1 << 20
	rec := "{:type :ok, :process 0, :f :txn, :value [[:r 1 nil]]}"
	return map[string][]byte{
		"tag chain":       append(bytes.Repeat([]byte("#a "), n), rec...),
		"discard chain":   append(bytes.Repeat([]byte("#_ "), n), rec...),
		"meta chain":      append(bytes.Repeat([]byte("^m "), n), rec...),
		"nested vectors":  append(bytes.Repeat([]byte("["), 3*n), bytes.Repeat([]byte("]"), 3*n)...),
		"nested in value": []byte("{:type :ok, :process 0, :f :txn, :value " + strings.Repeat("[", 3*n) + "}"),
	}
}

// TestDeepNestingIsInputError: every recursive construct of EDN is depth
// limited; through the format sniffer (as `txray check` reads a file) each
// hostile chain is an input error naming the limit.
func TestDeepNestingIsInputError(t *testing.T) {
	dir := t.TempDir()
	for name, b := range hostileChains() {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(bytes.NewReader(b), history.DecodeOptions{Name: "h.edn"})
			if err == nil || !history.IsInputError(err) || !strings.Contains(err.Error(), "deeper than") {
				t.Fatalf("Decode: err = %v, want an input error about nesting depth", err)
			}
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".edn")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := history.DecodeFile(p, "", history.DecodeOptions{}); err == nil || !history.IsInputError(err) {
				t.Fatalf("DecodeFile: err = %v, want an input error", err)
			}
		})
	}
}

// TestHugeProcessIsNotDroppedAsNemesis: a :process integer too large for 64
// bits is an input error naming the line and field, never a record silently
// counted as a nemesis op.
func TestHugeProcessIsNotDroppedAsNemesis(t *testing.T) {
	in := "{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n" +
		"{:type :ok, :process 123456789012345678901234567890, :f :txn, :value [[:append 1 1]]}\n"
	h, err := Decode(strings.NewReader(in), history.DecodeOptions{Name: "h.edn"})
	if err == nil {
		t.Fatalf("decoded: %d txns, ignored %v", len(h.Txns), h.Ignored)
	}
	if !history.IsInputError(err) || !strings.Contains(err.Error(), "h.edn:2: process: integer") {
		t.Fatalf("err = %v, want an input error at line 2, field process", err)
	}
	// A keyword process is a nemesis op: counted, not an error.
	h, err = Decode(strings.NewReader("{:type :info, :process :nemesis, :f :kill}\n"), history.DecodeOptions{})
	if err != nil || h.Ignored["nemesis op"] != 1 {
		t.Fatalf("nemesis: %v, ignored %v", err, h.Ignored)
	}
}

// TestBOMAcceptedEDN: a UTF-8 byte order mark before an EDN history is
// skipped (the sniffer accepts it too), and columns on line 1 count from
// after it.
func TestBOMAcceptedEDN(t *testing.T) {
	in := "\xEF\xBB\xBF{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n{:type :ok, :process 0, :f :txn, :value [[:append 1 1]]}\n"
	h, err := Decode(strings.NewReader(in), history.DecodeOptions{})
	if err != nil || len(h.Txns) != 1 {
		t.Fatalf("err %v, txns %d", err, len(h.Txns))
	}
	if Sniff([]byte(in)) == 0 {
		t.Error("sniffer rejects the BOM")
	}
	_, err = Decode(strings.NewReader("\xEF\xBB\xBF)"), history.DecodeOptions{Name: "b.edn"})
	if err == nil || !strings.Contains(err.Error(), "column 1") {
		t.Errorf("err = %v, want column 1 (after the BOM)", err)
	}
}

// TestErrorMessagesEscapeControlBytes: input echoed in an error message
// (a keyword, a symbol, a string, the file name) cannot carry terminal
// escape sequences or other control bytes to the terminal.
func TestErrorMessagesEscapeControlBytes(t *testing.T) {
	for _, in := range []string{
		"{:type :x\x1b[2J\x1b[31m, :process 0}",
		"{:type :ok, :process 0, :time \"\x1b]0;pwned\x07\"}",
		"##\x1b[2J",
		"{:type :ok, :process 0, :f :txn, :value [[:cas\x9b2J 1 2]]}",
		"\\\x1b[31m",
	} {
		_, err := Decode(strings.NewReader(in), history.DecodeOptions{Name: "evil\x1b[0m.edn"})
		if err == nil {
			t.Errorf("%q decoded", in)
			continue
		}
		msg := err.Error()
		for _, c := range msg {
			if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0xfffd {
				t.Errorf("%q: message holds control character %U: %q", in, c, msg)
				break
			}
		}
	}
}
