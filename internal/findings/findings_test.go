package findings

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"

	// Every checker and decoder, as the CLI links them.
	_ "github.com/txray/txray/internal/cli"
)

// g2Cycle names the three committed transactions of PostgreSQL's G2-item
// (docs/findings.md).
var g2Cycle = []string{"c3-534", "c4-501", "c5-498"}

// checkG2 runs every checker applicable to h under each model that judges
// serializability and requires: the named checkers report a cycle whose
// transactions are exactly g2Cycle; no applicable checker says valid.
func checkG2(t *testing.T, h *history.History) {
	t.Helper()
	must := map[string]string{"list-append": "serializable", "leopard": "postgres:serializable"}
	seen := map[string]bool{}
	for _, m := range []string{"serializable", "postgres:serializable"} {
		ok, _ := check.Pick(h, m)
		for _, c := range ok {
			r, err := c.Check(context.Background(), h, check.Options{Model: m})
			if err != nil {
				t.Fatalf("%s under %s: %v", c.Name(), m, err)
			}
			if r.Verdict == check.Valid {
				t.Errorf("%s under %s: valid, but the history contains PostgreSQL's G2-item cycle %v", c.Name(), m, g2Cycle)
			}
			if must[c.Name()] != m {
				continue
			}
			seen[c.Name()] = true
			if r.Verdict != check.Invalid {
				t.Errorf("%s under %s: want invalid, got %s (%s)", c.Name(), m, r.Verdict, r.Reason)
				continue
			}
			found := false
			for _, a := range r.Anomalies {
				var ids []string
				for _, i := range a.Txns {
					ids = append(ids, h.Txns[i].ID)
				}
				slices.Sort(ids)
				if slices.Equal(ids, g2Cycle) && len(a.Cycle) == 3 {
					found = true
				}
			}
			if !found {
				t.Errorf("%s under %s: no anomaly names the cycle %v: %v", c.Name(), m, g2Cycle, r.AnomalyTypes)
			}
		}
	}
	for n := range must {
		if !seen[n] {
			t.Errorf("%s did not apply to the history under %s", n, must[n])
		}
	}
}

// TestPostgresSSIG2ItemFound: the G2-item PostgreSQL 15.20's SERIALIZABLE
// committed (testdata/findings/postgres-ssi-g2.jsonl) stays found by
// list-append (serializable) and leopard (postgres:serializable), and no
// checker able to judge it calls it valid.
func TestPostgresSSIG2ItemFound(t *testing.T) {
	h, err := history.DecodeFile(filepath.Join("..", "..", "testdata", "findings", "postgres-ssi-g2.jsonl"), "auto", history.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkG2(t, h)
}

// TestPostgresSSIG2ItemFoundFullHistory: the same on the full recorded
// history (5000 transactions, aborted ones included) when the project's
// shared test data is present next to the checkout.
func TestPostgresSSIG2ItemFoundFullHistory(t *testing.T) {
	p := filepath.Join("..", "..", "..", "shared", "testdata", "postgres-ssi-g2", "history.jsonl")
	if v := os.Getenv("TXRAY_SHARED_TESTDATA"); v != "" {
		p = filepath.Join(v, "postgres-ssi-g2", "history.jsonl")
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("full history not present (%v); set TXRAY_SHARED_TESTDATA to the shared testdata directory", err)
	}
	h, err := history.DecodeFile(p, "auto", history.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkG2(t, h)
}

// TestPostgresSSIOpenStructureNotAnomaly: PostgreSQL committed a dangerous
// structure that closes no dependency cycle
// (testdata/findings/postgres-ssi-open-structure.jsonl): the history is
// serializable, so no checker may call it invalid under serializable or
// postgres:serializable; leopard counts and warns about the structure.
func TestPostgresSSIOpenStructureNotAnomaly(t *testing.T) {
	h, err := history.DecodeFile(filepath.Join("..", "..", "testdata", "findings", "postgres-ssi-open-structure.jsonl"), "auto", history.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sawLeopard := false
	for _, m := range []string{"serializable", "postgres:serializable"} {
		ok, _ := check.Pick(h, m)
		for _, c := range ok {
			r, err := c.Check(context.Background(), h, check.Options{Model: m})
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict == check.Invalid {
				t.Errorf("%s under %s: invalid %v on a serializable history: %v", c.Name(), m, r.AnomalyTypes, r.Anomalies)
			}
			if c.Name() == "leopard" && m == "postgres:serializable" {
				sawLeopard = true
				if r.Verdict != check.Valid || r.Stats["ssi_open_structures"] == nil || len(r.Warnings) == 0 {
					t.Errorf("leopard: want valid with the open structure warned, got %s %v %v", r.Verdict, r.Stats["ssi_open_structures"], r.Warnings)
				}
			}
		}
	}
	if !sawLeopard {
		t.Error("leopard did not apply under postgres:serializable")
	}
}

// TestPostgresSSIRaceRecognised: PostgresSSIRace explains list-append's
// G2-item on the recorded finding (polygraph confirms it) and explains
// nothing else: not a valid verdict, not a serializable history
// (the open structure, where a forged G2-item is not confirmed), not an
// anomaly type other than G2-item.
func TestPostgresSSIRaceRecognised(t *testing.T) {
	ctx := context.Background()
	load := func(name string) *history.History {
		h, err := history.DecodeFile(filepath.Join("..", "..", "testdata", "findings", name), "auto", history.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	la, _ := check.Lookup("list-append")
	g2 := load("postgres-ssi-g2.jsonl")
	r, err := la.Check(ctx, g2, check.Options{Model: "serializable"})
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := PostgresSSIRace(ctx, g2, r); !ok {
		t.Fatalf("the recorded finding is not recognised: %s", why)
	}
	other := *r
	other.AnomalyTypes = []string{"G2-item", "G1c"}
	if ok, _ := PostgresSSIRace(ctx, g2, &other); ok {
		t.Error("a G1c was explained as PostgreSQL's SSI race")
	}
	open := load("postgres-ssi-open-structure.jsonl")
	ro, err := la.Check(ctx, open, check.Options{Model: "serializable"})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := PostgresSSIRace(ctx, open, ro); ok {
		t.Error("a valid verdict was explained")
	}
	forged := *r
	if ok, why := PostgresSSIRace(ctx, open, &forged); ok {
		t.Errorf("a G2-item on a serializable history was confirmed: %s", why)
	}
}

// TestPostgresSSIG2ItemRWRegister: the same PostgreSQL SSI race in an
// rw-register run at read ratio 0.5 (TestPostgresSerializableIsSerializable,
// seed 42; testdata/findings/postgres-ssi-g2-rw-register.jsonl, the whole
// recorded history with its commit-LSN version order): polygraph and emme
// report the G2-item c1-69 -rw-> c3-69 -rw-> c2-69 -ww/wr-> c1-69, no
// checker calls it valid, and PostgresSSIRace explains polygraph's verdict.
func TestPostgresSSIG2ItemRWRegister(t *testing.T) {
	ctx := context.Background()
	h, err := history.DecodeFile(filepath.Join("..", "..", "testdata", "findings", "postgres-ssi-g2-rw-register.jsonl"), "auto", history.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cycle := []string{"c1-69", "c2-69", "c3-69"}
	ok, _ := check.Pick(h, "serializable")
	seen := map[string]bool{}
	for _, c := range ok {
		r, err := c.Check(ctx, h, check.Options{Model: "serializable"})
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		if r.Verdict == check.Valid {
			t.Errorf("%s: valid, but the history contains PostgreSQL's G2-item %v", c.Name(), cycle)
		}
		if c.Name() != "polygraph" && c.Name() != "emme" {
			continue
		}
		seen[c.Name()] = true
		found := false
		for _, a := range r.Anomalies {
			var ids []string
			for _, i := range a.Txns {
				ids = append(ids, h.Txns[i].ID)
			}
			slices.Sort(ids)
			found = found || a.Type == "G2-item" && slices.Equal(ids, cycle)
		}
		if r.Verdict != check.Invalid || !found {
			t.Errorf("%s: want invalid with G2-item on %v, got %s %v", c.Name(), cycle, r.Verdict, r.AnomalyTypes)
		}
		if c.Name() == "polygraph" {
			if ok, why := PostgresSSIRace(ctx, h, r); !ok {
				t.Errorf("PostgresSSIRace does not explain it: %s", why)
			}
		}
	}
	if !seen["polygraph"] || !seen["emme"] {
		t.Errorf("polygraph and emme must apply: %v", seen)
	}
}
