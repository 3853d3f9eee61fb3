package weak

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	_ "github.com/txray/txray/history/edn"
	_ "github.com/txray/txray/history/timekiller"
)

// TestExternalHistories: histories recorded by other projects
// (testdata/external, see its README), with the verdict at every level and
// why it must be so.
func TestExternalHistories(t *testing.T) {
	cases := []struct {
		file, initial string
		want          []check.Verdict // rc-be, ra, cc
		why           string
	}{
		{"chronos/format-kv.json", "0", []check.Verdict{V, V, V},
			"TimeKiller reports session snapshot isolation with initial value 0, which implies causal consistency"},
		{"polysi/galera.txt", "", []check.Verdict{V, V, V},
			"PolySI's violation is a lost update, which causal consistency allows"},
		{"elle/rw-register.edn", "", []check.Verdict{I, I, I},
			"a read of x = 3, which no transaction writes (thin air)"},
		{"elle/si-without-g-single.edn", "", []check.Verdict{V, V, V},
			"Elle: valid under snapshot isolation (a G2-item only)"},
		{"elle/paper-example.edn", "", []check.Verdict{V, I, I},
			"the last transaction follows one in its session that appended 8 to key 255 but reads 255 without it"},
	}
	for _, c := range cases {
		h, err := history.DecodeFile(filepath.Join("..", "..", "testdata", "external", c.file), "auto", history.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range levelModels {
			opts := check.Options{Model: m}
			if c.initial != "" {
				opts.Params = map[string]string{"initial-value": c.initial}
			}
			r, err := Checker{}.Check(context.Background(), h, opts)
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != c.want[i] {
				t.Errorf("%s at %s: %v %v, want %v (%s): %s", c.file, m, r.Verdict, r.AnomalyTypes, c.want[i], c.why, first(r))
			}
		}
	}
}
