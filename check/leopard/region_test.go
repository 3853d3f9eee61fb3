package leopard

import (
	"testing"

	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

func TestParseRegion(t *testing.T) {
	for _, c := range []struct {
		where  string
		lo, hi int64
		ok     bool
	}{
		{"k >= 2 AND k <= 5", 2, 5, true},
		{"k>=2 and k<=5", 2, 5, true},
		{"(k > 1) AND (k < 6)", 2, 5, true},
		{"k = 7", 7, 7, true},
		{"k BETWEEN 3 AND 4", 3, 4, true},
		{"2 <= k AND 5 >= k", 2, 5, true},
		{"k >= 0 AND k <= 9 AND k >= 4", 4, 9, true},
		{"k >= 2", 0, 0, false},                // unbounded
		{"k >= 5 AND k <= 2", 0, 0, false},     // empty
		{"v >= 2 AND v <= 5", 0, 0, false},     // not the key column
		{"k >= 2 OR k <= 5", 0, 0, false},      // disjunction
		{"k = 'a'", 0, 0, false},               // not an integer
		{"k >= 2 AND k <= 5 AND", 0, 0, false}, // truncated
		{"k >= 0 AND k <= 1000000", 0, 0, false},
		{"", 0, 0, false},
	} {
		rg, ok := parseRegion(c.where)
		if ok != c.ok || ok && (rg.lo != c.lo || rg.hi != c.hi) {
			t.Errorf("%q: got %v %v, want [%d,%d] %v", c.where, rg, ok, c.lo, c.hi, c.ok)
		}
	}
}

// TestPredicateRegions: a predicate read over the key column identifies
// its records (Leopard appendix); a row certainly committed before the
// snapshot inside the region that the read did not return is a CR
// violation (a phantom); when the row's commit overlaps the snapshot both
// answers are legal; a predicate whose region cannot be decided checks
// only the rows it returned.
func TestPredicateRegions(t *testing.T) {
	mk := func(commit int64, where string, rows ...[2]int64) *history.History {
		h := history.New()
		h.Evidence.OpTime = true
		k3 := h.Keys.Int(3)
		h.Keys.Int(9) // a key outside the region, never written
		h.Add(history.Txn{Session: 0, Status: history.Committed, HasTime: true, Invoke: 0, Complete: commit,
			Ops: []history.Op{{Kind: history.Write, Key: k3, Value: h.Values.Int(7), HasTime: true}}, Ext: &history.TxnExt{OpTimes: []history.OpTime{{Invoke: 5, Complete: 10}}}})
		var res []history.Row
		for _, r := range rows {
			res = append(res, history.Row{Key: h.Keys.Int(r[0]), Value: h.Values.Int(r[1])})
		}
		rt := history.Txn{Session: 1, Status: history.Committed, HasTime: true, Invoke: 30, Complete: 40,
			Ops: []history.Op{{Kind: history.PredRead, Value: history.NoValue}}}
		rt.SetPred(&rt.Ops[0], history.Predicate{Table: "txray_pred", Where: where, Result: res})
		rt.SetOpTime(0, 31, 32)
		h.Add(rt)
		return h
	}
	for _, c := range []struct {
		name      string
		commit    int64
		where     string
		rows      [][2]int64
		prof      string
		want      string
		undecided bool
	}{
		{"missed-row", 20, "k >= 0 AND k <= 5", nil, "postgres:read-committed", model.CR, false},
		{"missed-row-equality", 20, "k = 3", nil, "postgres:repeatable-read", model.CR, false},
		{"missed-row-locking", 20, "k BETWEEN 1 AND 4", nil, "mysql:serializable", model.ME, false},
		{"returned-row", 20, "k >= 0 AND k <= 5", [][2]int64{{3, 7}}, "postgres:read-committed", "", false},
		{"outside-region", 20, "k >= 4 AND k <= 8", nil, "postgres:read-committed", "", false},
		{"overlap-absent-legal", 35, "k >= 0 AND k <= 5", nil, "postgres:read-committed", "", false},
		{"overlap-present-legal", 35, "k >= 0 AND k <= 5", [][2]int64{{3, 7}}, "postgres:read-committed", "", false},
		{"undecided-column", 20, "v >= 0 AND v <= 100", nil, "postgres:read-committed", "", true},
		{"undecided-unbounded", 20, "k >= 0", nil, "postgres:read-committed", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, mk(c.commit, c.where, c.rows...), c.prof)
			if u := r.Stats["pred_regions_undecided"].(int64); (u == 1) != c.undecided {
				t.Fatalf("undecided regions %d, want %v", u, c.undecided)
			}
			if !wantVerdict(t, r, c.want) {
				return
			}
			t.Log(r.Anomalies[0].Explanation)
		})
	}
}

// TestTimestampOrderingCertifier: under a timestamp-ordering certifier
// (foundationdb:serializable) commit order is the serialization order, so
// T1 -rw-> T2 with T2 certainly committed before T1 began committing is a
// violation, though there is no cycle (cockroachdb:serializable, whose
// timestamps need not follow real time, accepts it). Legal twins: T2's
// commit overlaps T1's; T1 is read-only (serialized at its snapshot).
func TestTimestampOrderingCertifier(t *testing.T) {
	for _, c := range []struct {
		name string
		t1   spec
		t2   spec
		prof string
		want string
	}{
		{"rw-against-commit-order", tx(1, 0, 20, "r x nil 3 4", "w y 1 8 9"), tx(2, 0, 7, "w x 1 1 2"), "foundationdb:serializable", model.SC},
		{"no-rule-without-to", tx(1, 0, 20, "r x nil 3 4", "w y 1 8 9"), tx(2, 0, 7, "w x 1 1 2"), "cockroachdb:serializable", ""},
		{"commit-overlap-legal", tx(1, 0, 20, "r x nil 3 4", "w y 1 8 9"), tx(2, 0, 12, "w x 1 1 2"), "foundationdb:serializable", ""},
		{"read-only-legal", tx(1, 0, 20, "r x nil 3 4", "r y nil 8 9"), tx(2, 0, 7, "w x 1 1 2"), "foundationdb:serializable", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, build(t, c.t2, c.t1), c.prof)
			if !wantVerdict(t, r, c.want) {
				return
			}
			t.Log(r.Anomalies[0].Explanation)
		})
	}
}
