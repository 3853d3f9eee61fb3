package ellejson

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

// TestDeepJSONNestingIsInputError: the same for elle-cli JSON (arrays and
// objects nested a million deep).
func TestDeepJSONNestingIsInputError(t *testing.T) {
	const n = 1 << 20
	dir := t.TempDir()
	for name, b := range map[string][]byte{
		"arrays":  []byte(`[{"type":"ok","process":0,"f":"txn","value":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}]`),
		"objects": []byte(`[{"type":"ok","process":0,"f":"txn","value":` + strings.Repeat(`{"a":`, n) + `1` + strings.Repeat("}", n) + `}]`),
	} {
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := history.DecodeFile(p, "elle-json", history.DecodeOptions{})
		if err == nil || !history.IsInputError(err) || !strings.Contains(err.Error(), "deeper than") {
			t.Errorf("%s: err = %v, want an input error about nesting depth", name, err)
		}
	}
}
