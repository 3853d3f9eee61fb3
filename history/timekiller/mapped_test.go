package timekiller

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/txray/txray/check/chronos/chronostest"
	"github.com/txray/txray/history"
	"github.com/txray/txray/internal/proptest"
)

// TestDecodeFileMapped: a file big enough for DecodeFile to map it (and for
// the parallel decoder) decodes to exactly what reading it sequentially
// gives, and so does a file with bad input two thirds in (the same error,
// through the sequential decoder's resumption on the mapped input).
func TestDecodeFileMapped(t *testing.T) {
	// in place only when history.MapEnv asks for it (off by default)
	t.Setenv(history.MapEnv, "1")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	h := chronostest.Generate(chronostest.Config{Txns: 40_000, Sessions: 50, Keys: 1000, Ops: 15, ReadFrac: 0.5, Zipf: 1.1, Seed: 6})
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	if int64(len(good)) < parallelMin {
		t.Fatalf("input %d bytes is below the parallel threshold %d", len(good), parallelMin)
	}
	at := bytes.Index(good[len(good)*2/3:], []byte("\n{")) + len(good)*2/3 + 1
	if at <= len(good)*2/3 {
		t.Fatal("no transaction starts a line")
	}
	bad := append(append(append([]byte{}, good[:at]...), '#'), good[at:]...)
	dir := t.TempDir()
	for name, in := range map[string][]byte{"good": good, "bad": bad} {
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		want, wantErr := Decode(bytes.NewReader(in), history.DecodeOptions{Name: path})
		got, gotErr := history.DecodeFile(path, FormatName, history.DecodeOptions{})
		proptest.SameDecode(t, name, in, want, got, wantErr, gotErr)
		if name == "bad" && gotErr == nil {
			t.Fatal("bad input decoded without an error")
		}
	}
}
