package weak

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	_ "github.com/txray/txray/history/edn"
	_ "github.com/txray/txray/history/polysi"
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
		{"isovista/yugabyte_tcc.txt", "0", []check.Verdict{V, I, I},
			"IsoVista lists it as a YugabyteDB causal-consistency bug: transaction 8 of session 1 reads key 15 = 2 although transaction 7, before it in the session, overwrote it with 3"},
		{"isovista/pg_ser_bug.txt", "0", []check.Verdict{V, V, V},
			"IsoVista's PostgreSQL serializability bug is a write skew, which causal consistency allows"},
		// PolySI's TestVerifier (all rejected by PolySI's SI); each verdict
		// here follows from the Biswas-Enea axioms by hand.
		{"polysi/verifier-tests/readCommitted.txt", "", []check.Verdict{I, I, I},
			"T2 read y from T1 and then x from T0, which T1 overwrote after it in session order"},
		{"polysi/verifier-tests/repeatableRead.txt", "", []check.Verdict{V, I, I},
			"a non-repeatable read: x = 1, then x = 2"},
		{"polysi/verifier-tests/readMyWrites.txt", "", []check.Verdict{V, I, I},
			"T2 reads y from T0 although T1, before it in its session, overwrote y"},
		{"polysi/verifier-tests/repeatableRead2.txt", "", []check.Verdict{V, I, I},
			"a fractured read of T0 and T1, which both write x and y"},
		{"polysi/verifier-tests/causal.txt", "", []check.Verdict{V, V, I},
			"T3 reads x from T0 although T2, in its causal past through T1, overwrote it"},
		{"polysi/verifier-tests/prefix.txt", "", []check.Verdict{V, V, V},
			"a long fork, which causal consistency allows"},
		{"polysi/verifier-tests/conflict.txt", "", []check.Verdict{V, V, V},
			"a lost update, which causal consistency allows"},
		{"polysi/verifier-tests/serializability.txt", "", []check.Verdict{V, V, V},
			"a write skew"},
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
