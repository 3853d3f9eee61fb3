package sim

import (
	"strconv"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

// TestPredicateReads: with Config.PredicateReads the simulator records
// predicate reads (issue 3 item 3, "version sets for predicate reads"):
// each names 2–4 distinct keys in its Where clause and returns, as its
// version set, one row per key with a visible version — a value some
// transaction wrote to that key, never a value of another key; unknown
// outcomes carry none; the evidence flag is set; the stream carries the
// same ops as Generate; other workloads refuse the option; and without it
// nothing changes.
func TestPredicateReads(t *testing.T) {
	for _, level := range LevelNames() {
		cfg := baseCfg(level, RWRegister, 4)
		cfg.PredicateReads, cfg.InfoRate = 0.5, 0.05
		h, _, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !h.Evidence.PredicateRead {
			t.Fatalf("%s: evidence predicate_read not set", level)
		}
		writers := map[[2]int32]bool{} // (key, value) written by some txn
		for i := range h.Txns {
			for _, o := range h.Txns[i].Ops {
				if o.Kind == history.Write {
					writers[[2]int32{o.Key, o.Value}] = true
				}
			}
		}
		preds, rows := 0, 0
		for i := range h.Txns {
			tx := &h.Txns[i]
			for j := range tx.Ops {
				o := &tx.Ops[j]
				if o.Kind != history.PredRead {
					continue
				}
				pr := tx.PredOf(o)
				inv, com, hasTime := tx.OpTime(j)
				preds++
				if tx.Status == history.Unknown {
					t.Fatalf("%s: %s has unknown outcome but records a predicate read", level, h.TxnName(tx.Index))
				}
				if pr == nil || !hasTime || com < inv || !strings.HasPrefix(pr.Where, "k IN (") {
					t.Fatalf("%s: %s: malformed predicate read %+v", level, h.TxnName(tx.Index), o)
				}
				keys := strings.Split(strings.TrimSuffix(strings.TrimPrefix(pr.Where, "k IN ("), ")"), ", ")
				if len(keys) < 2 || len(keys) > 4 || len(pr.Result) > len(keys) {
					t.Fatalf("%s: %s: %d keys, %d rows in %q", level, h.TxnName(tx.Index), len(keys), len(pr.Result), pr.Where)
				}
				seen := map[string]bool{}
				for _, k := range keys {
					if seen[k] {
						t.Fatalf("%s: %q names key %s twice", level, pr.Where, k)
					}
					seen[k] = true
				}
				for _, r := range pr.Result {
					rows++
					if !seen[strconv.FormatInt(h.Keys.Get(r.Key).I, 10)] {
						t.Fatalf("%s: row key %s not in %q", level, h.KeyName(r.Key), pr.Where)
					}
					if !writers[[2]int32{r.Key, r.Value}] {
						t.Fatalf("%s: row (%s, %s) is no write of that key", level, h.KeyName(r.Key), h.ValueName(r.Value))
					}
				}
			}
		}
		if preds == 0 || rows == 0 {
			t.Fatalf("%s: %d predicate reads, %d rows", level, preds, rows)
		}
		// The stream (what txray gen writes) carries the same ops.
		d := streamHistory(t, cfg)
		for i := range h.Txns {
			if a, b := h.TxnString(int32(i)), d.TxnString(int32(i)); a != b {
				t.Fatalf("%s: txn %d: %s vs %s", level, i, a, b)
			}
		}
	}
	cfg := baseCfg(SnapshotIsolation, ListAppend, 1)
	cfg.PredicateReads = 0.5
	if _, _, err := Generate(cfg); err == nil {
		t.Error("list-append with predicate reads: want a configuration error")
	}
	cfg = baseCfg(SnapshotIsolation, RWRegister, 1)
	h, _, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Txns {
		for _, o := range h.Txns[i].Ops {
			if o.Kind == history.PredRead {
				t.Fatal("predicate read without PredicateReads")
			}
		}
	}
	if h.Evidence.PredicateRead {
		t.Error("evidence predicate_read set without PredicateReads")
	}
}

// TestStreamReusesInterners: in stream mode the engine empties its
// interners (Interner.Reset) once they pass 65,536 ids; the stream must
// still carry exactly the history Generate builds. 40,000 list-append
// transactions of 4 ops intern about 80,000 values, so the reset runs.
func TestStreamReusesInterners(t *testing.T) {
	cfg := baseCfg(SnapshotIsolation, ListAppend, 11)
	cfg.Txns, cfg.Keys, cfg.MinOps, cfg.MaxOps, cfg.Clients = 40000, 50, 4, 4, 10
	h, _, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if h.Values.Len() <= 1<<16 {
		t.Fatalf("only %d values: the reset is not exercised", h.Values.Len())
	}
	d := streamHistory(t, cfg)
	if len(d.Txns) != len(h.Txns) {
		t.Fatalf("stream has %d txns, generate %d", len(d.Txns), len(h.Txns))
	}
	for i := range h.Txns {
		if a, b := h.TxnString(int32(i)), d.TxnString(int32(i)); a != b {
			t.Fatalf("txn %d: %s vs %s", i, a, b)
		}
	}
	for k, ord := range h.VersionOrder {
		dk, _ := d.Keys.LookupInt(h.Keys.Get(k).I)
		if h.ListString(ord) != d.ListString(d.VersionOrder[dk]) {
			t.Fatalf("key %s: version order differs", h.KeyName(k))
		}
	}
}
