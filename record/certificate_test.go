package record

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	_ "github.com/txray/txray/check/emme"
	_ "github.com/txray/txray/check/enne"
	"github.com/txray/txray/history"
	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// TestVersionOrderFromCommits: committed final writes sorted by commit
// position; a committed writer without one leaves the history unchanged.
func TestVersionOrderFromCommits(t *testing.T) {
	h := history.New()
	w := func(k, v int64) history.Op {
		return history.Op{Kind: history.Write, Key: h.Keys.Int(k), Value: h.Values.Int(v)}
	}
	h.Add(history.Txn{Status: history.Committed, CommitTS: history.Timestamp{P: 20, Set: true}, Ops: []history.Op{w(1, 2)}})
	h.Add(history.Txn{Status: history.Committed, CommitTS: history.Timestamp{P: 10, Set: true}, Ops: []history.Op{w(1, 1), w(2, 5), w(1, 3)}})
	h.Add(history.Txn{Status: history.Aborted, Ops: []history.Op{w(1, 9)}})
	if !versionOrderFromCommits(h) {
		t.Fatal("no order")
	}
	got := fmt.Sprint(h.ListString(h.VersionOrder[h.Keys.Int(1)]), h.ListString(h.VersionOrder[h.Keys.Int(2)]))
	if got != "[3 2][5]" {
		t.Fatalf("order %s", got)
	}
	h.Add(history.Txn{Status: history.Committed, Ops: []history.Op{w(3, 1)}})
	h.VersionOrder = nil
	if versionOrderFromCommits(h) || h.VersionOrder != nil {
		t.Fatal("order built without every commit position")
	}
}

// pgPredicateRun records the predicate workload on PostgreSQL at level.
func pgPredicateRun(t *testing.T, url, level string) *history.History {
	t.Helper()
	contended(t, url)
	res := runRecorded(t, Config{DB: url, Level: level, Workload: "predicate", Clients: 8, Txns: 1500,
		WL: workload.Config{Keys: 12, Ops: 4, ReadRatio: 0.5}})
	h := res.History
	if !h.Evidence.VersionOrder || len(h.VersionOrder) == 0 {
		t.Fatalf("no version order recorded (evidence %+v)", h.Evidence)
	}
	return h
}

// predicateCycle returns the explanation of the first cycle with a
// predicate anti-dependency edge.
func predicateCycle(anomalies []cycleView) (string, bool) {
	for _, a := range anomalies {
		for _, rel := range a.rels {
			if rel == "predicate-rw" {
				return a.expl, true
			}
		}
	}
	return "", false
}

type cycleView struct {
	typ, expl string
	rels      []string
}

// TestPostgresPredicateCertificate is the correctness bar:
// PostgreSQL repeatable read (snapshot isolation) with predicate reads is
// invalid under serializable because of a cycle with a predicate
// anti-dependency — invisible to item-only checking, which sees no cycle in
// the same history with its predicate reads removed — and valid under
// snapshot isolation; read committed shows predicate anomalies with the
// cycle explained; serializable is valid. The version order comes from the
// writes' replaced versions (no commit log needed).
func TestPostgresPredicateCertificate(t *testing.T) {
	u := pgURL()
	t.Run("repeatable-read", func(t *testing.T) {
		// Snapshot isolation also allows item write skew (G2-item); a run
		// that shows one reports it first and masks the predicate-only
		// cycles this bar is about, so record again (at most 3 runs).
		var h *history.History
		var r *check.Result
		for run := 1; ; run++ {
			h = pgPredicateRun(t, u, db.RepeatableRead)
			r = checkWith(t, h, "emme", "serializable", nil)
			if run == 3 || !slices.Equal(r.AnomalyTypes, []string{"G2-item"}) {
				break
			}
			t.Logf("run %d: item write skew only (%v), allowed by snapshot isolation; recording again", run, r.AnomalyTypes)
		}
		wantAnomaly(t, r, "G2", "G-single", "G-nonadjacent")
		var cv []cycleView
		for _, a := range r.Anomalies {
			c := cycleView{typ: a.Type, expl: a.Explanation}
			for _, s := range a.Cycle {
				c.rels = append(c.rels, s.Rel)
			}
			cv = append(cv, c)
		}
		expl, ok := predicateCycle(cv)
		if !ok {
			t.Fatalf("no cycle with a predicate anti-dependency among %v", r.AnomalyTypes)
		}
		if !strings.Contains(expl, "predicate read") || !strings.Contains(expl, "(predicate-rw)") {
			t.Fatalf("predicate cycle not explained:\n%s", expl)
		}
		t.Logf("predicate cycle:\n%s", expl)
		item := checkWith(t, withoutPredReads(h), "emme", "serializable", nil)
		if slices.Contains(item.AnomalyTypes, "G2") || slices.Contains(item.AnomalyTypes, "G-single") {
			t.Fatalf("item-only projection has predicate cycle types %v", item.AnomalyTypes)
		}
		wantValid(t, checkWith(t, h, "emme", "snapshot-isolation", nil))
		wantValid(t, checkWith(t, h, "emme", "postgres:repeatable-read", nil))
	})
	t.Run("read-committed", func(t *testing.T) {
		h := pgPredicateRun(t, u, db.ReadCommitted)
		r := checkWith(t, h, "emme", "repeatable-read", nil)
		wantAnomaly(t, r, "G-single-item", "G2-item", "G-nonadjacent-item")
		wantValid(t, checkWith(t, h, "emme", "read-committed", nil))
	})
	t.Run("serializable", func(t *testing.T) {
		h := pgPredicateRun(t, u, db.Serializable)
		wantValid(t, checkWith(t, h, "emme", "serializable", nil))
	})
}

// TestMariaDBPredicateSerializable: MariaDB serializable (2PL) with
// predicate reads is valid under serializable, judged by emme on the
// version order from the GTID commit order and by enne replaying that
// order (skipped when the server has no binary log).
func TestMariaDBPredicateSerializable(t *testing.T) {
	u := mysqlURL()
	contended(t, u)
	res := runRecorded(t, Config{DB: u, Level: db.Serializable, Workload: "predicate", Clients: 8, Txns: 1500,
		WL: workload.Config{Keys: 12, Ops: 4, ReadRatio: 0.5}})
	h := res.History
	if !h.Evidence.VersionOrder {
		t.Skip("no version order: MariaDB without a binary log gives no commit order (and its replaced-version capture is disabled)")
	}
	wantValid(t, checkWith(t, h, "emme", "serializable", nil))
	if h.Evidence.SerialOrder != history.SerialCommit {
		t.Fatalf("serializable with a commit order must declare serial_order=commit, got %q", h.Evidence.SerialOrder)
	}
	// 2PL: commit order is the expected serialization order (enne).
	wantValid(t, checkWith(t, h, "enne", "serializable", nil))
}
