package polygraph

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	_ "github.com/txray/txray/history/cobra"
	_ "github.com/txray/txray/history/dbcop"
	_ "github.com/txray/txray/history/polysi"
	"github.com/txray/txray/model"
)

// external holds the public histories in the repository (testdata/external,
// copied from the shared testdata with its README); shared is the original.
const external, shared = "../../testdata/external", "../../../shared/testdata"

// TestPublicHistories: histories recorded by other projects, with the
// verdicts their README states (Cobra, PolySI, VeriStrong): decided by the
// search alone (inference off) and with the default pipeline.
func TestPublicHistories(t *testing.T) {
	cases := []struct {
		path  string
		model string
		want  check.Verdict
	}{
		{"cobra/cock-G2", model.Serializable, check.Invalid},
		{"cobra/cock-G2", model.SnapshotIsolation, check.Valid},
		{"cobra/chengRW-100", model.Serializable, check.Valid},
		{"cobra/chengRW-100", model.SnapshotIsolation, check.Valid},
		{"dbcop/dgraph/history.bincode", model.Serializable, check.Invalid},
		{"dbcop/dgraph/history.bincode", model.SnapshotIsolation, check.Invalid},
		{"polysi/galera.txt", model.SnapshotIsolation, check.Invalid},
	}
	for _, c := range cases {
		path := filepath.Join(external, c.path)
		if _, err := os.Stat(path); err != nil {
			path = filepath.Join(shared, c.path)
		}
		if _, err := os.Stat(path); err != nil {
			t.Logf("%s: not present in testdata/external or the shared testdata (%v): skipped", c.path, err)
			continue
		}
		h, err := history.DecodeFile(path, "auto", history.DecodeOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		for _, inf := range []string{"false", "true"} {
			r, err := Checker{}.Check(context.Background(), h, check.Options{Model: c.model, Params: map[string]string{"inference": inf}})
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != c.want {
				t.Errorf("%s under %s (inference=%s): got %s %v, want %s\n%s", c.path, c.model, inf, r.Verdict, r.AnomalyTypes, c.want, dump(r))
			}
		}
	}
}
