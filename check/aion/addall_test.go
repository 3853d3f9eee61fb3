package aion

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/sim"
)

// TestAddAllAgreesWithAdd: adding batches with AddAll (which prefetches
// later transactions' state while checking one) gives the same result,
// explanations and statistics included, as adding the same transactions
// one by one with Add, on correct and faulty simulator histories with a
// transaction AddAll must refuse mid-batch.
func TestAddAllAgreesWithAdd(t *testing.T) {
	invalid := 0
	for _, fault := range []string{"", sim.FaultLostUpdate, sim.FaultStaleRead, sim.FaultTSDisorder} {
		cfg := sim.Config{Level: sim.SnapshotIsolation, Workload: sim.RWRegister, Txns: 600, Clients: 5,
			Keys: 30, MinOps: 1, MaxOps: 8, ReadRatio: 0.5, Seed: 3}
		if fault != "" {
			cfg.Faults = []sim.Fault{{Name: fault, Prob: 0.2}}
		}
		h, _, err := sim.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		h2 := *h
		h2.Txns = shuffleWindow(h, 10, 5)
		var buf bytes.Buffer
		if err := jsonl.Encode(&buf, &h2); err != nil {
			t.Fatal(err)
		}
		// a committed transaction without timestamps: refused by Add
		buf.WriteString(`{"id":"bad","status":"committed","ops":[{"f":"r","k":1,"v":null}]}` + "\n")
		buf.WriteString(`{"id":"after","status":"committed","start_ts":1,"commit_ts":2,"ops":[{"f":"w","k":1,"v":99999}]}` + "\n")
		anomalies := 0
		run := func(batch int) (string, int) {
			clk := time.Unix(0, 0)
			c := New(Config{FinalAfter: 50 * time.Millisecond, MaxPerType: 1000, Now: func() time.Time { return clk }})
			rd := NewReader(bytes.NewReader(buf.Bytes()), c, "addall")
			var txns []*Txn
			refused := 0
			flush := func() {
				if batch == 1 {
					for _, x := range txns {
						if c.Add(x) != nil {
							refused++
						}
					}
				} else {
					c.AddAll(txns, func(*Txn, error) { refused++ })
				}
				txns = txns[:0]
				clk = clk.Add(time.Millisecond)
				c.Tick()
			}
			for {
				x, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				txns = append(txns, x)
				if len(txns) == 7 {
					flush()
				}
			}
			flush()
			r := c.Close()
			anomalies = len(r.Anomalies)
			r.Stats["seconds"], r.Stats["txns_per_second"] = nil, nil
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			return string(b), refused
		}
		one, r1 := run(1)
		all, r2 := run(7)
		if one != all || r1 != r2 {
			t.Errorf("fault %q: Add one by one (%d refused):\n%s\nAddAll (%d refused):\n%s", fault, r1, one, r2, all)
		}
		if r1 != 1 {
			t.Errorf("fault %q: %d refused, want 1", fault, r1)
		}
		if anomalies > 0 {
			invalid++
		}
	}
	// the comparison must cover explanations of anomalies too
	if invalid < 2 {
		t.Fatalf("%d of the faulty histories had anomalies, want at least 2", invalid)
	}
}
