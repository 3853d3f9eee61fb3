package polygraph

import (
	"context"
	"fmt"
	"testing"

	"github.com/txray/txray/check"
	_ "github.com/txray/txray/check/elle"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sim"
)

// listCfgs are simulator configurations for the list-append cross-check:
// correct levels and injected faults, so both verdicts occur.
var listCfgs = []struct {
	level string
	fault string
}{
	{sim.StrictSerializable, ""}, {sim.Serializable, ""}, {sim.Strict2PL, ""}, {sim.SnapshotIsolation, ""},
	{sim.SnapshotIsolationFCW, ""}, {sim.SerializableSI, ""}, {sim.RepeatableReadMySQL, ""}, {sim.ReadCommitted, ""},
	{sim.ReadUncommitted, ""},
	{sim.SnapshotIsolation, sim.FaultLostUpdate}, {sim.SerializableSI, sim.FaultWriteSkew},
	{sim.StrictSerializable, sim.FaultStaleRead}, {sim.Serializable, sim.FaultAbortedRead},
	{sim.SnapshotIsolation, sim.FaultIntermediateRead}, {sim.SnapshotIsolation, sim.FaultNoOwnWrite},
	{sim.Strict2PL, sim.FaultDirtyWrite}, {sim.StrictSerializable, sim.FaultLostCommit},
	{sim.Strict2PL, sim.FaultWriteSkew},
}

// TestDifferentialElleListAppend: on simulator list-append histories
// (correct and faulty levels, several seeds), the polygraph's verdict for
// serializable and snapshot isolation equals the list-append inference
// checker's (check/elle) wherever that one is definite. The polygraph
// decides its own register view of the lists (lists.go) and never calls
// elle; timestamps and version orders are ignored (evidence=false), so both
// see the same evidence: the lists.
func TestDifferentialElleListAppend(t *testing.T) {
	la, ok := check.Lookup("list-append")
	if !ok {
		t.Fatal("list-append checker not registered")
	}
	seeds, txns := uint64(8), 120
	if testing.Short() {
		seeds = 3
	}
	if *probe { // a longer hunt: go test -run DifferentialElleListAppend -probe
		seeds, txns = 40, 400
	}
	agree, invalid := map[string]int{}, map[string]int{}
	for _, c := range listCfgs {
		for seed := uint64(1); seed <= seeds; seed++ {
			cfg := sim.Config{Workload: sim.ListAppend, Level: c.level, Txns: txns, Clients: 5, Keys: 3 + int(seed%4),
				MinOps: 1, MaxOps: 4, Seed: seed, AbortRate: 0.05, ReadRatio: 0.5, InfoRate: 0.03}
			if c.fault != "" {
				cfg.Faults = []sim.Fault{{Name: c.fault, Prob: 0.3}}
			}
			h, _, err := sim.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []string{model.Serializable, model.SnapshotIsolation} {
				want, err := la.Check(context.Background(), h, check.Options{Model: m})
				if err != nil {
					t.Fatal(err)
				}
				if want.Verdict == check.Unknown {
					continue
				}
				got := run(t, h, m, map[string]string{"evidence": "false", "use-version-order": "false"})
				name := fmt.Sprintf("%s/%s seed %d, %s", c.level, c.fault, seed, m)
				if got.Verdict != want.Verdict {
					t.Errorf("%s: polygraph says %s %v, list-append says %s %v\npolygraph: %s\nlist-append: %s",
						name, got.Verdict, got.AnomalyTypes, want.Verdict, want.AnomalyTypes, dump(got), dump(want))
					continue
				}
				agree[m]++
				if want.Verdict == check.Invalid {
					invalid[m]++
				}
			}
		}
	}
	t.Logf("agreed: %v (of which invalid: %v)", agree, invalid)
	for _, m := range []string{model.Serializable, model.SnapshotIsolation} {
		if invalid[m] == 0 || invalid[m] == agree[m] {
			t.Errorf("%s: the comparison needs both valid and invalid histories (agreed %d, invalid %d)", m, agree[m], invalid[m])
		}
	}
}

// listHist builds a list-append history: ops "a k v" (append) and
// "r k v1,v2,..." (read; "r k -" is the empty list).
func listHist(t *testing.T, txns ...[]string) *history.History {
	t.Helper()
	h := history.New()
	for i, ops := range txns {
		tx := history.Txn{Status: history.Committed, Session: -1, ID: fmt.Sprint(i)}
		for _, s := range ops {
			var f, k, v string
			fmt.Sscan(s, &f, &k, &v)
			o := history.Op{Key: h.Keys.Str(k)}
			switch f {
			case "a":
				o.Kind, o.Value = history.Append, h.Values.Str(v)
			case "r":
				o.Kind = history.Read
				tx.SetList(&o, nil)
				if v != "-" {
					for _, e := range splitComma(v) {
						tx.ExtendList(&o, h.Values.Str(e))
					}
				}
			}
			tx.Ops = append(tx.Ops, o)
		}
		h.Add(tx)
	}
	return h
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// TestListAppendAnomalies: one small list-append history per anomaly the
// register view must keep (Elle, VLDB 2020, §4; Adya 1999).
func TestListAppendAnomalies(t *testing.T) {
	cases := []struct {
		name string
		txns [][]string
		want map[string]check.Verdict
		typ  string
	}{
		{"serial", [][]string{{"a x 1"}, {"r x 1", "a x 2"}, {"r x 1,2"}},
			map[string]check.Verdict{model.Serializable: check.Valid, model.SnapshotIsolation: check.Valid}, ""},
		// write skew: both read the other's key empty, then append to their own
		{"G2-item write skew", [][]string{{"r x -", "a y 1"}, {"r y -", "a x 2"}, {"r x 2", "r y 1"}},
			map[string]check.Verdict{model.Serializable: check.Invalid, model.SnapshotIsolation: check.Valid}, ""},
		// lost update: both read [1] and appended; the later read shows only one
		{"lost update", [][]string{{"a x 1"}, {"r x 1", "a x 2"}, {"r x 1", "a x 3"}, {"r x 1,2"}},
			map[string]check.Verdict{model.Serializable: check.Invalid, model.SnapshotIsolation: check.Invalid}, model.LostUpdate},
		{"incompatible order", [][]string{{"a x 1"}, {"a x 2"}, {"r x 1,2"}, {"r x 2,1"}},
			map[string]check.Verdict{model.Serializable: check.Invalid}, model.IncompatibleOrder},
		{"duplicate elements", [][]string{{"a x 1"}, {"r x 1,1"}},
			map[string]check.Verdict{model.Serializable: check.Invalid}, model.DuplicateElements},
		{"garbage", [][]string{{"a x 1"}, {"r x 1,9"}},
			map[string]check.Verdict{model.Serializable: check.Invalid}, model.GarbageVersions},
		{"G1b intermediate", [][]string{{"a x 1", "a x 2"}, {"r x 1"}},
			map[string]check.Verdict{model.Serializable: check.Invalid}, model.IntermediateRead},
		{"internal", [][]string{{"a x 1"}, {"r x 1", "a x 2", "r x 1"}},
			map[string]check.Verdict{model.Serializable: check.Invalid}, model.Internal},
		// An unread append still comes after every element a read shows: T3 read x = [1],
		// so T2's unread 2 comes after it (rw T3 -> T2), and T2 read y empty before T3's
		// append (rw T2 -> T3): write skew, which placing 2 before 1 would hide.
		{"unobserved append follows the longest read", [][]string{{"a x 1"}, {"a x 2", "r y -"}, {"r x 1", "a y 3"}, {"r y 3"}},
			map[string]check.Verdict{model.Serializable: check.Invalid, model.SnapshotIsolation: check.Valid}, ""},
		{"unobserved append after an observed one it was read by", [][]string{{"a x 1"}, {"a x 2", "a y 5"}, {"r y 5", "a x 4"}, {"r x 1,4"}},
			map[string]check.Verdict{model.Serializable: check.Invalid, model.SnapshotIsolation: check.Invalid}, model.G1c},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := listHist(t, c.txns...)
			for m, want := range c.want {
				r := run(t, h, m, nil)
				if r.Verdict != want {
					t.Fatalf("%s: got %s %v, want %s\n%s", m, r.Verdict, r.AnomalyTypes, want, dump(r))
				}
				if c.typ != "" && !has(r.AnomalyTypes, c.typ) {
					t.Fatalf("%s: got %v, want %s", m, r.AnomalyTypes, c.typ)
				}
			}
		})
	}
}

func has(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestBadIDsAreInputErrors: ids outside the interners (a history built in
// memory) are an input error naming the op and field, never a panic.
func TestBadIDsAreInputErrors(t *testing.T) {
	listOp := func(l []int32) history.Op {
		o := history.Op{Kind: history.Read, Key: 0}
		o.SetListSpan(0, len(l))
		return o
	}
	spanPast := listOp([]int32{0, 1})
	spanPast.SetListSpan(1, 5)
	for _, c := range []struct {
		bad   history.Op
		lists []int32
	}{
		{history.Op{Kind: history.Append, Key: 7, Value: 0}, nil},
		{listOp([]int32{0, 99}), []int32{0, 99}},
		{history.Op{Kind: history.Write, Key: 0, Value: 42}, nil},
		{spanPast, []int32{0, 0}}, // list elements past Txn.Lists
	} {
		bad := c.bad
		h := listHist(t, []string{"a x 1"})
		h.Txns[0].Ops = append(h.Txns[0].Ops, bad)
		h.Txns[0].Lists = c.lists
		_, err := Checker{}.Check(context.Background(), h, check.Options{Model: model.Serializable})
		if !history.IsInputError(err) || !contains(err.Error(), "txns[0].ops[1]") {
			t.Errorf("%+v: got %v, want an input error naming txns[0].ops[1]", bad, err)
		}
	}
}

// TestListGivenVersionOrder: a list key's version order given as evidence
// orders appends no read shows (here T0's 1 before T1's 2, while T0 read
// T1's y: a cycle, G1c); use-version-order=false ignores it.
func TestListGivenVersionOrder(t *testing.T) {
	h := listHist(t, []string{"a x 1", "r y 5"}, []string{"a x 2", "a y 5"})
	h.VersionOrder = map[int32][]int32{h.Keys.Str("x"): {h.Values.Str("1"), h.Values.Str("2")}}
	h.Evidence.VersionOrder = true
	for _, m := range []string{model.Serializable, model.SnapshotIsolation} {
		if r := run(t, h, m, nil); r.Verdict != check.Invalid || !has(r.AnomalyTypes, model.G1c) {
			t.Errorf("%s with the version order: got %s %v, want invalid G1c\n%s", m, r.Verdict, r.AnomalyTypes, dump(r))
		}
		if r := run(t, h, m, map[string]string{"use-version-order": "false"}); r.Verdict != check.Valid {
			t.Errorf("%s without it: got %s %v, want valid", m, r.Verdict, r.AnomalyTypes)
		}
	}
}
