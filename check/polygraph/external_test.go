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
	_ "github.com/txray/txray/history/edn"
	_ "github.com/txray/txray/history/jsonl"
	_ "github.com/txray/txray/history/polysi"
	_ "github.com/txray/txray/history/timekiller"
	"github.com/txray/txray/model"
)

// external holds the public histories in the repository (testdata/external,
// copied from the shared testdata with its README); shared is the original.
const external, shared = "../../testdata/external", "../../../shared/testdata"

// TestPublicHistories: histories recorded by other projects, with the
// verdicts their README states (Cobra, PolySI, VeriStrong): decided by the
// search alone (inference off) and with the default pipeline, with and
// without the ordering evidence (timestamps, commit order) they carry.
func TestPublicHistories(t *testing.T) {
	cases := []struct {
		path  string
		model string
		want  check.Verdict
		iv    string // initial-value parameter
	}{
		// TimeKiller: SI holds with initial value 0. Regression: the inference step did
		// not get -p initial-value=0 and reported thin-air reads of the initial 0.
		{"chronos/format-kv.json", model.SnapshotIsolation, check.Valid, "0"},
		{"chronos/format-list.json", model.SnapshotIsolation, check.Valid, ""},
		{"elle/si-without-g-single.edn", model.Serializable, check.Invalid, ""},
		{"elle/si-without-g-single.edn", model.SnapshotIsolation, check.Valid, ""},
		// PostgreSQL 15 SSI's G2-item (list-append, commit LSNs as evidence).
		{"postgres-ssi-g2/history.jsonl", model.Serializable, check.Invalid, ""},
		{"postgres-ssi-g2/history.jsonl", model.SnapshotIsolation, check.Valid, ""},
		{"cobra/cock-G2", model.Serializable, check.Invalid, ""},
		{"cobra/cock-G2", model.SnapshotIsolation, check.Valid, ""},
		{"cobra/chengRW-100", model.Serializable, check.Valid, ""},
		{"cobra/chengRW-100", model.SnapshotIsolation, check.Valid, ""},
		{"dbcop/dgraph/history.bincode", model.Serializable, check.Invalid, "0"},
		{"dbcop/dgraph/history.bincode", model.SnapshotIsolation, check.Invalid, "0"},
		{"polysi/galera.txt", model.SnapshotIsolation, check.Invalid, "0"},
		// IsoVista's history/bugs: a PostgreSQL serializability bug (a write
		// skew, T11 and T17 both read the initial state of the key the other
		// writes) and a YugabyteDB causal-consistency bug (fractured reads).
		{"isovista/pg_ser_bug.txt", model.Serializable, check.Invalid, "0"},
		{"isovista/pg_ser_bug.txt", model.SnapshotIsolation, check.Valid, "0"},
		{"isovista/yugabyte_tcc.txt", model.SnapshotIsolation, check.Invalid, "0"},
		// PolySI's TestVerifier: SIVerifier.audit() is false on the first
		// seven and true on the write skew. PolySI's SI orders each session
		// (Cerone et al.), txray's strong-session-snapshot-isolation.
		{"polysi/verifier-tests/readCommitted.txt", model.StrongSessionSnapshotIsolation, check.Invalid, ""},
		{"polysi/verifier-tests/repeatableRead.txt", model.StrongSessionSnapshotIsolation, check.Invalid, ""},
		{"polysi/verifier-tests/readMyWrites.txt", model.StrongSessionSnapshotIsolation, check.Invalid, ""},
		{"polysi/verifier-tests/repeatableRead2.txt", model.StrongSessionSnapshotIsolation, check.Invalid, ""},
		{"polysi/verifier-tests/causal.txt", model.StrongSessionSnapshotIsolation, check.Invalid, ""},
		{"polysi/verifier-tests/prefix.txt", model.StrongSessionSnapshotIsolation, check.Invalid, ""},
		{"polysi/verifier-tests/conflict.txt", model.StrongSessionSnapshotIsolation, check.Invalid, ""},
		{"polysi/verifier-tests/serializability.txt", model.StrongSessionSnapshotIsolation, check.Valid, ""},
		{"polysi/verifier-tests/serializability.txt", model.Serializable, check.Invalid, ""},
		// Without the session guarantee (Adya's and Elle's SI) the first and
		// third are snapshot isolation: T1 may precede T0 in the version
		// order of x (docs/models.md, SESSION).
		{"polysi/verifier-tests/readCommitted.txt", model.SnapshotIsolation, check.Valid, ""},
		{"polysi/verifier-tests/readMyWrites.txt", model.SnapshotIsolation, check.Valid, ""},
		{"polysi/verifier-tests/repeatableRead2.txt", model.SnapshotIsolation, check.Invalid, ""},
		{"polysi/verifier-tests/prefix.txt", model.SnapshotIsolation, check.Invalid, ""},
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
			for _, ev := range []string{"true", "false"} {
				ps := map[string]string{"inference": inf, "evidence": ev}
				if c.iv != "" {
					ps["initial-value"] = c.iv
				}
				r, err := Checker{}.Check(context.Background(), h, check.Options{Model: c.model, Params: ps})
				if err != nil {
					t.Fatal(err)
				}
				if r.Verdict != c.want {
					t.Errorf("%s under %s (%v): got %s %v, want %s\n%s", c.path, c.model, ps, r.Verdict, r.AnomalyTypes, c.want, dump(r))
				}
			}
		}
	}
}
