package sim

import (
	"reflect"

	"github.com/txray/txray/history"
	"strings"
	"testing"
)

// TestReplicatedDeterministic: the same configuration gives the same
// history, truth and version orders.
func TestReplicatedDeterministic(t *testing.T) {
	for _, lv := range []string{ReplicatedReadAtomic, ReplicatedCausal} {
		cfg := Config{Level: lv, Workload: RWRegister, Txns: 300, Clients: 4, Keys: 6, Seed: 9, ReadRatio: 0.5,
			Faults: []Fault{{Name: FaultFracturedRead, Prob: 0.3}, {Name: FaultNonMonotonicRead, Prob: 0.3}}}
		h1, t1, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		h2, t2, _ := Generate(cfg)
		if !reflect.DeepEqual(h1.Txns, h2.Txns) || !reflect.DeepEqual(t1, t2) || !reflect.DeepEqual(h1.VersionOrder, h2.VersionOrder) {
			t.Errorf("%s: two runs differ", lv)
		}
		if len(h1.Txns) != 300 || h1.Header.Level != replicatedModel(lv) || !h1.Evidence.VersionOrder || !h1.Evidence.Sessions {
			t.Errorf("%s: %d txns, header %+v, evidence %+v", lv, len(h1.Txns), h1.Header, h1.Evidence)
		}
		for f, n := range t1.FaultCounts {
			if h1.Header.Extra["fault."+f] == "" || len(t1.Affected(f)) == 0 && n > 0 {
				t.Errorf("%s: fault %s count %d not recorded", lv, f, n)
			}
		}
	}
}

// TestReplicatedRejects: list-append and the engine's faults are refused
// with a reason.
func TestReplicatedRejects(t *testing.T) {
	if _, _, err := Generate(Config{Level: ReplicatedCausal, Workload: ListAppend}); err == nil || !strings.Contains(err.Error(), RWRegister) {
		t.Errorf("list-append: %v", err)
	}
	if _, _, err := Generate(Config{Level: ReplicatedCausal, Workload: RWRegister, Faults: []Fault{{Name: FaultLostUpdate, Prob: 1}}}); err == nil {
		t.Error("lost-update accepted at a replicated level")
	}
	if _, err := ParseFault(FaultCausalityViolation + ":0.2"); err != nil {
		t.Errorf("ParseFault: %v", err)
	}
}

// TestReplicatedVersionOrderCoversWrites: every committed final write of a
// key is in its version order exactly once.
func TestReplicatedVersionOrderCoversWrites(t *testing.T) {
	h, _, err := Generate(Config{Level: ReplicatedCausal, Workload: RWRegister, Txns: 200, Clients: 3, Keys: 4, Seed: 2, ReadRatio: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	final := map[[2]int32]bool{}
	for i := range h.Txns {
		last := map[int32]int32{}
		for _, o := range h.Txns[i].Ops {
			if o.Kind == history.Write {
				last[o.Key] = o.Value
			}
		}
		for k, v := range last {
			final[[2]int32{k, v}] = true
		}
	}
	seen := map[[2]int32]bool{}
	for k, vs := range h.VersionOrder {
		for _, v := range vs {
			if !final[[2]int32{k, v}] || seen[[2]int32{k, v}] {
				t.Errorf("key %d: version %d not a final write, or listed twice", k, v)
			}
			seen[[2]int32{k, v}] = true
		}
	}
	if len(final) == 0 || len(seen) != len(final) {
		t.Errorf("%d final writes, %d versions", len(final), len(seen))
	}
}
