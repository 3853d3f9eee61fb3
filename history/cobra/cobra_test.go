package cobra

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

// shared holds copies of the public Cobra logs (testdata/external/README.md).
const shared = "../../testdata/external/cobra"

// logb builds a Cobra log: records of a tag and int64 fields.
type logb struct{ bytes.Buffer }

func (b *logb) rec(tag byte, f ...int64) *logb {
	b.WriteByte(tag)
	for _, v := range f {
		binary.Write(&b.Buffer, binary.BigEndian, v)
	}
	return b
}

func TestSharedLogs(t *testing.T) {
	// Counts established independently of this decoder by walking the
	// records with a separate script (S/C records = transactions, files =
	// sessions, W/R records = ops, reads naming write id 0xbebeebee or
	// 0xdeadbeef = initial-state reads).
	cases := []struct {
		dir                              string
		txns, sessions, ops, reads, init int
	}{
		{"cock-G2", 446, 10, 1338, 892, 892},
		{"chengRW-100", 100, 24, 800, 408, 398},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			dir := filepath.Join(shared, c.dir)
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("%s missing: it is part of the repository (%v)", dir, err)
			}
			if s := SniffDir(dir); s == 0 {
				t.Errorf("SniffDir = 0")
			}
			h, err := history.DecodeFile(dir, "auto", history.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if h.Header.Format != "cobra" {
				t.Errorf("format %q", h.Header.Format)
			}
			st := h.Stats()
			reads, init := 0, 0
			for _, tx := range h.Txns {
				for _, o := range tx.Ops {
					if o.Kind == history.Read {
						reads++
						if o.Value == history.NoValue {
							init++
						}
					}
				}
			}
			if st.Txns != c.txns || st.Committed != c.txns || st.Sessions != c.sessions || st.Ops != c.ops || reads != c.reads || init != c.init {
				t.Errorf("got %+v reads=%d init=%d, want txns=%d sessions=%d ops=%d reads=%d init=%d", st, reads, init, c.txns, c.sessions, c.ops, c.reads, c.init)
			}
			if h.Evidence.ClientTime {
				t.Errorf("these logs carry no timestamps")
			}
		})
	}
}

func TestTimestampsDetected(t *testing.T) {
	var b logb
	b.rec('S', 7, 100).rec('W', 1, 5, 99).rec('C', 7, 110)
	b.rec('S', 8, 120).rec('R', 7, 1, 5, 99).rec('R', InitID, InitID, 6, 0).rec('C', 8, 130)
	b.rec('S', 9, 140).rec('R', InitID, gcTrueID, 6, 0).rec('W', 2, 6, 1)
	h, err := Decode(bytes.NewReader(b.Bytes()), history.DecodeOptions{Name: "T3.log"})
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for i := range h.Txns {
		got += h.TxnString(int32(i)) + "\n"
	}
	want := "T0 (T3:7) [w 5 1]\nT1 (T3:8) [r 5 1, r 6 nil]\nT2 (T3:9) [w 6 2] unknown\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if h.Txns[1].HasTime || h.Evidence.ClientTime || h.Header.Extra["cobra_timestamps"] == "" {
		t.Errorf("timestamps must be detected but not used as intervals: %+v %+v", h.Txns[1], h.Header)
	}
	if h.Ignored["cobra garbage-collection read"] != 1 {
		t.Errorf("gc read not counted: %v", h.Ignored)
	}
	if Sniff(b.Bytes()) == 0 {
		t.Errorf("Sniff = 0")
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name string
		log  func(*logb)
		want []string
	}{
		{"unknown-tag", func(b *logb) { b.rec('S', 1).rec('X') }, []string{"T1.log", "tag", "byte offset 9"}},
		{"truncated", func(b *logb) { b.rec('S', 1); b.WriteString("W\x00\x00") }, []string{"W.write_id", "byte offset 9", "truncated"}},
		{"commit-of-other", func(b *logb) { b.rec('S', 1).rec('C', 2) }, []string{"C.txn_id", "byte offset 9", "commit of transaction 2 inside transaction 1"}},
		{"write-outside", func(b *logb) { b.rec('W', 1, 2, 3) }, []string{"W", "byte offset 0", "outside"}},
		{"bad-initial-read", func(b *logb) { b.rec('S', 1).rec('R', InitID, 77, 1, 0) }, []string{"R.write_id", "byte offset 9"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b logb
			c.log(&b)
			_, err := Decode(bytes.NewReader(b.Bytes()), history.DecodeOptions{Name: "T1.log"})
			if err == nil || !history.IsInputError(err) {
				t.Fatalf("err = %v, want an InputError", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

func TestDirIgnoresOtherFiles(t *testing.T) {
	dir := t.TempDir()
	var a, b logb
	a.rec('S', 1).rec('W', 10, 1, 0).rec('C', 1)
	b.rec('S', 2).rec('R', 1, 10, 1, 0).rec('C', 2)
	os.WriteFile(filepath.Join(dir, "T10.log"), b.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "T2.log"), a.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "T2.debug"), []byte("[DEBUG] Txn[1] start\n"), 0o644)
	h, err := history.DecodeFile(dir, "", history.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != 2 || h.TxnString(0) != "T0 (T2:1) [w 1 10]" || h.TxnString(1) != "T1 (T10:2) [r 1 10]" {
		t.Errorf("got %s / %s", h.TxnString(0), h.TxnString(1))
	}
	if len(h.Notes) != 1 || !strings.Contains(h.Notes[0], "T2.debug") {
		t.Errorf("notes: %v", h.Notes)
	}
}

// FuzzDecode: never panics; errors are InputErrors; decoded histories are
// well formed.
func FuzzDecode(f *testing.F) {
	var b logb
	b.rec('S', 1).rec('W', 10, 1, 0).rec('R', InitID, InitID, 2, 0).rec('C', 1)
	f.Add(b.Bytes())
	var c logb
	c.rec('S', 1, 5).rec('R', 3, 10, 1, 0).rec('C', 1, 6).rec('S', 2, 7)
	f.Add(c.Bytes())
	f.Add([]byte("S\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		Sniff(data)
		h, err := Decode(bytes.NewReader(data), history.DecodeOptions{Name: "T0.log"})
		if err != nil {
			if !history.IsInputError(err) {
				t.Fatalf("not an InputError: %v", err)
			}
			return
		}
		for i, tx := range h.Txns {
			if tx.Index != int32(i) || tx.Session < 0 {
				t.Fatalf("bad txn %+v", tx)
			}
			for _, o := range tx.Ops {
				if o.Key < 0 || int(o.Key) >= h.Keys.Len() || int(o.Value) >= h.Values.Len() {
					t.Fatalf("bad op %+v", o)
				}
			}
		}
	})
}
