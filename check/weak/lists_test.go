package weak

import (
	"strconv"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sim"
)

// listHistory builds a list-append history from lines "session: ops" where
// ops are "a k v" (append v to key k) and "r k v1 v2 ..." (read of key k's
// list; "r k" alone reads the empty list).
func listHistory(t *testing.T, lines ...string) *history.History {
	t.Helper()
	h := history.New()
	seq := map[int32]int32{}
	for _, l := range lines {
		sess, body, _ := strings.Cut(l, ":")
		s := h.Sessions.Str(strings.TrimSpace(sess))
		tx := history.Txn{Session: s, Seq: seq[s], Status: history.Committed}
		seq[s]++
		for _, o := range strings.Split(body, ",") {
			f := strings.Fields(o)
			k, _ := strconv.Atoi(f[1])
			op := history.Op{Key: h.Keys.Int(int64(k)), Value: history.NoValue}
			if f[0] == "a" {
				v, _ := strconv.Atoi(f[2])
				op.Kind, op.Value = history.Append, h.Values.Int(int64(v))
			} else {
				op.Kind = history.Read
				tx.SetList(&op, nil)
				for _, x := range f[2:] {
					v, _ := strconv.Atoi(x)
					tx.ExtendList(&op, h.Values.Int(int64(v)))
				}
			}
			tx.Ops = append(tx.Ops, op)
		}
		h.Add(tx)
	}
	h.Evidence.Sessions = true
	return h
}

// TestListPatterns: the list-append forms of the patterns (Cerone et al.: a
// list read returns every visible append, in commit order).
func TestListPatterns(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  want
	}{
		{"non-monotonic-read", []string{"0: a 1 1, a 2 1", "1: r 2 1, r 1"}, want{I, I, I, model.NonMonotonicRead}},
		{"non-monotonic-read (observed through a non-last element)", []string{"0: a 1 1, a 2 1", "1: a 1 2", "2: r 1 1 2, r 2"}, want{I, I, I, model.NonMonotonicRead}},
		{"fractured-read", []string{"0: a 1 1, a 2 1", "1: r 2, r 1 1"}, want{V, I, I, model.FracturedRead}},
		{"fractured-read (session)", []string{"0: a 1 1", "0: r 1"}, want{V, I, I, model.FracturedRead}},
		{"non-repeatable-read", []string{"0: a 1 1", "1: r 1, r 1 1"}, want{V, I, I, model.NonRepeatableRead}},
		{"commit-order-conflict", []string{"0: a 1 1", "1: r 1 1, a 2 1", "2: r 2 1, r 1"}, want{V, V, I, model.CommitOrderConflict}},
		{"cyclic-co (version order against causal order)", []string{"0: a 1 1", "1: r 1 1, a 1 2", "2: r 1 2 1"}, want{I, I, I, model.CyclicCO}},
		{"valid: causal chain", []string{"0: a 1 1", "1: r 1 1, a 2 1", "2: r 2 1, r 1 1"}, want{V, V, V, ""}},
		{"valid: long fork", []string{"0: a 1 1", "1: a 2 1", "2: r 1 1, r 2", "3: r 2 1, r 1"}, want{V, V, V, ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := listHistory(t, c.lines...)
			for i, m := range levelModels {
				v := []check.Verdict{c.want.rc, c.want.ra, c.want.cc}[i]
				r := run(t, h, m)
				if r.Verdict != v {
					t.Errorf("%s: %v %v, want %v: %s", m, r.Verdict, r.AnomalyTypes, v, first(r))
					continue
				}
				if v == check.Invalid && !contains(r.AnomalyTypes, c.want.typ) {
					t.Errorf("%s: types %v, want %s", m, r.AnomalyTypes, c.want.typ)
				}
			}
		})
	}
}

// TestListSimDifferential: list-append histories of the simulator levels
// that imply a weak level are accepted there; read-uncommitted ones are
// rejected on some seed.
func TestListSimDifferential(t *testing.T) {
	cases := []struct {
		level   string
		valid   []string
		invalid []string
	}{
		{sim.SnapshotIsolation, levelModels, nil},
		{sim.StrictSerializable, levelModels, nil},
		{sim.ReadCommitted, []string{model.ReadCommittedBE}, []string{model.ReadAtomic}},
		{sim.ReadUncommitted, nil, []string{model.ReadCommittedBE}},
	}
	for _, c := range cases {
		seen := map[string]bool{}
		for seed := range uint64(4) {
			cfg := simCfg(c.level, seed+1)
			cfg.Workload = sim.ListAppend
			h, _, err := sim.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range levelModels {
				r := run(t, h, m)
				if r.Verdict == check.Invalid {
					seen[m] = true
				}
				if contains(c.valid, m) && r.Verdict != check.Valid {
					t.Errorf("%s seed %d: %s %v %v: %s", c.level, seed+1, m, r.Verdict, r.AnomalyTypes, first(r))
				}
			}
		}
		for _, m := range c.invalid {
			if !seen[m] {
				t.Errorf("%s: never rejected at %s", c.level, m)
			}
		}
	}
}
