package findings

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/internal/testenv"
	"github.com/txray/txray/record"
	"github.com/txray/txray/record/workload"
)

// TestPostgresSerializableMechanismBar is issue 12's bar, run on demand
// (TXRAY_PG_BAR_RUNS=N; it needs PostgreSQL at TXRAY_PG_URL, default
// postgres://postgres@127.0.0.1:5432/test, and takes about ten seconds a
// run): N PostgreSQL SERIALIZABLE runs of list-append, blindw-rw+ and tpcc
// in turn at read ratio 0.7, each checked by leopard under
// postgres:serializable and by every model checker that applies under
// serializable. It fails when leopard reports a mechanism violation on a
// run that a model checker finds serializable (a violation with no real
// dependency cycle behind it), and logs one line per run, the histories
// leopard flags that no model checker can decide, and a summary. Runs are serialized on the database by the recorder's
// advisory lock, so other users of the database only slow it down.
//
// A model checker's INVALID without leopard is not a failure: leopard sees
// only what the client intervals make certain. PostgreSQL itself sometimes
// commits a G2-item at this shape (docs/findings.md): such a run is
// reported by both and counted as a real cycle.
func TestPostgresSerializableMechanismBar(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TXRAY_PG_BAR_RUNS"))
	if n <= 0 {
		t.Skip("set TXRAY_PG_BAR_RUNS=N to run N PostgreSQL serializable runs (issue 12 bar)")
	}
	url := os.Getenv("TXRAY_PG_URL")
	if url == "" {
		url = "postgres://postgres@127.0.0.1:5432/test"
	}
	txns := 1000
	if v, _ := strconv.Atoi(os.Getenv("TXRAY_PG_BAR_TXNS")); v > 0 {
		txns = v
	}
	seed0 := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("TXRAY_PG_BAR_SEED"), 10, 64); err == nil && v > 0 {
		seed0 = v
	}
	workloads := []string{"list-append", "blindw-rw+", "tpcc"}
	var runs, leoInvalid, confirmed, falsePos, unconfirmed, modelOnly, noModel int
	for i := 0; i < n; i++ {
		wl := workloads[i%len(workloads)]
		seed := seed0 + uint64(i)
		cfg := record.Config{DB: url, Level: "serializable", Workload: wl, Clients: 8, Txns: txns, Seed: seed, Out: t.TempDir(),
			WL: workload.Config{Keys: 5, Ops: 4, ReadRatio: 0.7, Dist: "uniform", MaxWritesPerKey: 32}, Warn: func(string) {}}
		if wl == "tpcc" {
			cfg.WL.Keys = 10
		}
		res, err := record.Run(context.Background(), cfg)
		if err != nil {
			if i == 0 && strings.Contains(err.Error(), "connect") {
				testenv.Missing(t, "PostgreSQL not reachable: %v", err)
			}
			t.Fatalf("run %d (%s, seed %d): %v", i, wl, seed, err)
		}
		runs++
		h := res.History
		leo, ok := check.Lookup("leopard")
		if !ok {
			t.Fatal("leopard not registered")
		}
		lr, err := leo.Check(context.Background(), h, check.Options{Model: "postgres:serializable"})
		if err != nil {
			t.Fatal(err)
		}
		var models []string
		modelInvalid, modelValid := false, false
		cands, _ := check.Pick(h, "serializable")
		for _, c := range cands {
			if c.Name() == "leopard" {
				continue
			}
			r, err := c.Check(context.Background(), h, check.Options{Model: "serializable"})
			if err != nil {
				t.Fatal(err)
			}
			models = append(models, fmt.Sprintf("%s=%s%v", c.Name(), r.Verdict, r.AnomalyTypes))
			modelInvalid = modelInvalid || r.Verdict == check.Invalid
			modelValid = modelValid || r.Verdict == check.Valid
		}
		st := h.Stats()
		t.Logf("run %2d %-11s seed %d: %d txns (%d committed); leopard %s %v; %s", i, wl, seed, st.Txns, st.Committed,
			lr.Verdict, lr.AnomalyTypes, strings.Join(models, " "))
		if len(models) == 0 {
			noModel++
		}
		switch {
		case lr.Verdict == check.Invalid && modelInvalid:
			leoInvalid++
			confirmed++
		case lr.Verdict == check.Invalid && modelValid:
			leoInvalid++
			falsePos++
			t.Errorf("run %d (%s, seed %d): leopard reports a mechanism violation %v on a history a model checker finds serializable (history kept at %s): %s",
				i, wl, seed, lr.AnomalyTypes, keep(t, res.Path, i), firstExpl(lr))
		case lr.Verdict == check.Invalid:
			leoInvalid++
			unconfirmed++
			t.Logf("  run %d: leopard reports %v and no model checker could decide; history kept at %s", i, lr.AnomalyTypes, keep(t, res.Path, i))
		case modelInvalid:
			modelOnly++
		}
	}
	t.Logf("summary: %d runs; leopard invalid in %d (%d with a dependency cycle a model checker confirms, %d on histories a model checker finds serializable, %d undecided by the model checkers); model checkers alone invalid in %d; no model checker applicable in %d",
		runs, leoInvalid, confirmed, falsePos, unconfirmed, modelOnly, noModel)
}

func firstExpl(r *check.Result) string {
	if len(r.Anomalies) == 0 {
		return r.Reason
	}
	return r.Anomalies[0].Explanation
}

// keep copies a history out of the test's temporary directory.
func keep(t *testing.T, path string, i int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return path + " (" + err.Error() + ")"
	}
	dst := fmt.Sprintf("%s/txray-pgbar-%d-%d.jsonl", os.TempDir(), os.Getpid(), i)
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		return path
	}
	return dst
}
