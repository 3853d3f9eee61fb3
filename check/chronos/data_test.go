package chronos

import (
	"context"
	"os"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/timekiller"
)

const sharedData = "../../testdata/external/chronos/"

func decodeShared(t *testing.T, name string) *history.History {
	t.Helper()
	f, err := os.Open(sharedData + name)
	if err != nil {
		t.Fatalf("testdata/external (part of the repository) not readable: %v", err)
	}
	defer f.Close()
	h, err := timekiller.Decode(f, history.DecodeOptions{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestTimeKillerExamples checks the verdicts TimeKiller reports on its own
// example histories (../../testdata/external/README.md).
func TestTimeKillerExamples(t *testing.T) {
	for _, tc := range []struct {
		file, model, init string
		valid             bool
		counts            map[string]int
	}{
		{"format-kv.json", "snapshot-isolation", "0", true, nil},
		{"format-kv.json", "snapshot-isolation", "null", false, nil},
		{"format-kv.json", "serializable", "0", false, map[string]int{"ext": 101}},
		{"format-list.json", "snapshot-isolation", "null", true, nil},
		{"format-list.json", "serializable", "null", false, map[string]int{"ext": 1264}},
	} {
		t.Run(tc.file+"/"+tc.model+"/"+tc.init, func(t *testing.T) {
			h := decodeShared(t, tc.file)
			r, err := Checker{}.Check(context.Background(), h, check.Options{Model: tc.model, Params: map[string]string{"initial-value": tc.init}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s stats=%v", r, r.Stats)
			if (r.Verdict == check.Valid) != tc.valid {
				for i, a := range r.Anomalies {
					if i < 3 {
						t.Log(a.Explanation)
					}
				}
				t.Fatalf("verdict %v, want valid=%v", r.Verdict, tc.valid)
			}
			for typ, n := range tc.counts {
				if got := r.Stats["violations_"+typ]; got != n {
					t.Errorf("%s violations = %v, want %d", typ, got, n)
				}
			}
		})
	}
}
