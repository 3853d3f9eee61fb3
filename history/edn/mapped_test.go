package edn

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/txray/txray/history"
	"github.com/txray/txray/internal/proptest"
)

// TestDecodeFileMapped: a file big enough for DecodeFile to map it (and for
// the parallel decoder) decodes to exactly what reading it sequentially
// gives, and so does a file with bad input two thirds in (the same error:
// the decoder's goroutines are done with the mapping before it is unmapped).
func TestDecodeFileMapped(t *testing.T) {
	// in place only when history.MapEnv asks for it (off by default)
	t.Setenv(history.MapEnv, "1")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	var buf bytes.Buffer
	if err := Encode(&buf, genHistory(60000, 500, true, 9)); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	if int64(len(good)) < parallelMin+1<<20 {
		t.Fatalf("input %d bytes is below the parallel threshold %d", len(good), parallelMin)
	}
	at := bytes.IndexByte(good[len(good)*2/3:], '\n') + len(good)*2/3 + 1
	bad := append(append(append([]byte{}, good[:at]...), "{:type :ok, :process 0, :value [[:append 1]]}\n"...), good[at:]...)
	dir := t.TempDir()
	for name, in := range map[string][]byte{"good": good, "bad": bad} {
		path := filepath.Join(dir, name+".edn")
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		want, wantErr := Decode(bytes.NewReader(in), history.DecodeOptions{Name: path})
		got, gotErr := history.DecodeFile(path, "", history.DecodeOptions{})
		proptest.SameDecode(t, name, in, want, got, wantErr, gotErr)
		if name == "bad" && gotErr == nil {
			t.Fatal("bad input decoded without an error")
		}
	}
}
