package sim

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/txray/txray/history/jsonl"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// FuzzGenerate: any configuration either is rejected with an error or
// yields exactly Txns transactions without panicking, and faults are counted
// only for configured faults.
func FuzzGenerate(f *testing.F) {
	f.Add(uint64(1), uint8(0), false, uint8(50), uint8(4), uint8(3), uint8(1), uint8(4), 0.5, 0.1, 0.05, uint16(0), 0.5, int8(0))
	f.Add(uint64(7), uint8(4), true, uint8(200), uint8(9), uint8(1), uint8(3), uint8(2), 0.9, 0.0, 0.3, uint16(0x1ff), 1.0, int8(2))
	f.Add(uint64(3), uint8(7), true, uint8(0), uint8(0), uint8(0), uint8(0), uint8(0), -1.0, 2.0, 0.0, uint16(3), 7.0, int8(-1))
	f.Fuzz(func(t *testing.T, seed uint64, lv uint8, reg bool, txns, clients, keys, minOps, maxOps uint8,
		readRatio, infoRate, abortRate float64, faults uint16, prob float64, wpk int8) {
		cfg := Config{Seed: seed, Txns: int(txns), Clients: int(clients) % 32, Keys: int(keys) % 16,
			MinOps: int(minOps) % 10, MaxOps: int(maxOps) % 10, ReadRatio: readRatio, InfoRate: infoRate,
			AbortRate: abortRate, LockingReads: readRatio / 2, MaxWritesPerKey: int(wpk)}
		names := LevelNames()
		cfg.Level = names[int(lv)%len(names)]
		if reg {
			cfg.Workload = RWRegister
		}
		for i, fi := range faultList {
			if faults&(1<<i) != 0 {
				cfg.Faults = append(cfg.Faults, Fault{fi.Name, prob})
			}
		}
		h, tr, err := Generate(cfg)
		if err != nil {
			return
		}
		want := cfg.Txns
		if want == 0 {
			want = 1000
		}
		if len(h.Txns) != want {
			t.Fatalf("%d txns, want %d", len(h.Txns), want)
		}
		for n := range tr.FaultCounts {
			found := false
			for _, f := range cfg.Faults {
				found = found || f.Name == n
			}
			if !found {
				t.Fatalf("fault %s counted but not configured", n)
			}
		}
	})
}

// FuzzParseFault: ParseFault never panics, and what it accepts is a known
// fault with a probability in [0,1].
func FuzzParseFault(f *testing.F) {
	for _, s := range []string{"stale-read", "lost-update:0.3", "x:1", "dirty-write:", ":", "write-skew:NaN", "ts-disorder:1e-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ft, err := ParseFault(s)
		if err != nil {
			return
		}
		if faultIdx(ft.Name) < 0 || !(ft.Prob >= 0 && ft.Prob <= 1) {
			t.Fatalf("%q accepted as %+v", s, ft)
		}
	})
}

// TestGolden pins the exact output of two small runs, so that a change to
// the simulator that changes what a seed produces is deliberate (run with
// -update to accept it).
func TestGolden(t *testing.T) {
	for name, cfg := range map[string]Config{
		"si-list-append.jsonl": {Level: SnapshotIsolation, Workload: ListAppend, Txns: 25, Clients: 4, Keys: 3,
			ReadRatio: 0.5, AbortRate: 0.1, InfoRate: 0.1, Seed: 5},
		"ser-rw-register-faults.jsonl": {Level: StrictSerializable, Workload: RWRegister, Txns: 25, Clients: 3,
			Keys: 2, ReadRatio: 0.5, Seed: 6, Faults: []Fault{{FaultStaleRead, 0.3}, {FaultTSDisorder, 0.2}}},
	} {
		var b bytes.Buffer
		w := jsonl.NewWriter(&b)
		if _, err := Stream(cfg, w); err != nil {
			t.Fatal(err)
		}
		w.Close()
		p := filepath.Join("testdata", name)
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run go test ./sim -run TestGolden -update)", err)
		}
		if !bytes.Equal(want, b.Bytes()) {
			t.Errorf("%s: output changed (run with -update if intended)", name)
		}
	}
}
