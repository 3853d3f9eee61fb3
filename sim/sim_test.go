package sim

import (
	"bytes"
	"flag"
	"fmt"
	"slices"
	"testing"

	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
)

var seeds = flag.Int("sim.seeds", 3, "seeds per level in TestCorrectLevels (raise for a stress run)")

func gen(t *testing.T, cfg Config) (*history.History, *Truth, *analysis) {
	t.Helper()
	h, tr, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h, tr, analyze(h, tr)
}

func baseCfg(level, workload string, seed uint64) Config {
	c := DefaultConfig()
	c.Level, c.Workload, c.Seed = level, workload, seed
	c.Txns, c.Clients, c.Keys = 600, 6, 5
	c.AbortRate = 0.05
	c.LockingReads = 0.1
	return c
}

// TestCorrectLevels checks, for every level without faults, the guarantees
// the level promises against the ground truth (Adya 1999 §4: PL-1 forbids
// G0; PL-2 G1a/G1b/G1c; PL-3 every cycle; PL-SI adds the snapshot read rule
// and forbids lost updates; strict adds real-time order).
func TestCorrectLevels(t *testing.T) {
	for _, level := range LevelNames() {
		for _, wl := range []string{ListAppend, RWRegister} {
			for seed := uint64(1); seed <= uint64(*seeds); seed++ {
				t.Run(fmt.Sprintf("%s/%s/%d", level, wl, seed), func(t *testing.T) {
					h, tr, a := gen(t, baseCfg(level, wl, seed))
					if len(tr.Faults) != 0 {
						t.Fatalf("faults recorded without faults configured: %v", tr.Faults)
					}
					st := h.Stats()
					if st.Committed < st.Txns/4 {
						t.Fatalf("too few commits: %+v aborts %v", st, tr.Aborts)
					}
					if cycle(a.wwEdges) {
						t.Errorf("G0: ww cycle")
					}
					if n := a.commitOrderMismatch(); n > 0 {
						t.Errorf("version order contradicts commit order %d times", n)
					}
					phantom, g1a, g1b, _ := a.readIssues()
					if phantom > 0 {
						t.Errorf("%d reads of values never written", phantom)
					}
					if level != ReadUncommitted {
						if g1a+g1b > 0 {
							t.Errorf("G1a %d, G1b %d", g1a, g1b)
						}
						if n := a.prefixViolations(); n > 0 {
							t.Errorf("%d list reads are not a prefix of the version order", n)
						}
					}
					for i := range h.Txns {
						x := &h.Txns[i]
						if x.Status == history.Committed && !x.StartTS.Less(x.CommitTS) && x.StartTS != x.CommitTS {
							t.Errorf("%s: start_ts %v after commit_ts %v", h.TxnString(int32(i)), x.StartTS, x.CommitTS)
						}
					}
					switch level {
					case StrictSerializable, Serializable, Strict2PL, SerializableSI:
						if cycle(a.edges) {
							t.Errorf("serialization graph has a cycle")
						}
					}
					switch level {
					case StrictSerializable, Serializable, Strict2PL:
						if bad := a.replay(); len(bad) > 0 {
							t.Errorf("serial replay of Truth.Order fails for %d txns, e.g. %s", len(bad), h.TxnString(bad[0]))
						}
					}
					switch level {
					case StrictSerializable, Strict2PL:
						if n := a.realtimeViolations(); n > 0 {
							t.Errorf("%d real-time violations", n)
						}
					}
					switch level {
					case SnapshotIsolation, SnapshotIsolationFCW, SerializableSI:
						if bad := a.snapshotViolations(); len(bad) > 0 {
							t.Errorf("snapshot read rule broken by %d txns, e.g. %s", len(bad), h.TxnString(bad[0]))
						}
						if n := a.lostUpdates(); n > 0 {
							t.Errorf("%d lost updates (concurrent committed writers)", n)
						}
					}
				})
			}
		}
	}
}

// TestWeakLevelsShowTheirAnomalies checks that the weak levels really are
// weak: the anomalies they allow occur in long enough runs.
func TestWeakLevelsShowTheirAnomalies(t *testing.T) {
	cases := []struct {
		level string
		what  string
		got   func(a *analysis) bool
	}{
		{SnapshotIsolation, "write skew (serialization cycle)", func(a *analysis) bool { return cycle(a.edges) }},
		{RepeatableReadMySQL, "lost update", func(a *analysis) bool { return a.lostUpdates() > 0 }},
		{ReadCommitted, "lost update", func(a *analysis) bool { return a.lostUpdates() > 0 }},
		{ReadCommitted, "non-snapshot reads", func(a *analysis) bool { return len(a.snapshotViolations()) > 0 }},
		{ReadUncommitted, "dirty read (G1a)", func(a *analysis) bool { _, g1a, _, _ := a.readIssues(); return g1a > 0 }},
		{Serializable, "real-time violation", func(a *analysis) bool { return a.realtimeViolations() > 0 }},
	}
	for _, c := range cases {
		t.Run(c.level+"/"+c.what, func(t *testing.T) {
			cfg := baseCfg(c.level, RWRegister, 11)
			cfg.Txns, cfg.Keys, cfg.ReadRatio, cfg.AbortRate, cfg.MinOps = 2000, 3, 0.6, 0.2, 2
			_, _, a := gen(t, cfg)
			if !c.got(a) {
				t.Errorf("%s never happened at %s", c.what, c.level)
			}
		})
	}
}

// TestFaultsManifest checks that each fault fires, is counted, and changes
// the history in the way it should.
func TestFaultsManifest(t *testing.T) {
	type tc struct {
		fault, level, wl string
		tweak            func(*Config)
		show             func(a *analysis) bool
	}
	serialReplayFails := func(a *analysis) bool { return len(a.replay()) > 0 }
	cases := []tc{
		{FaultDirtyWrite, ReadCommitted, ListAppend, nil, func(a *analysis) bool { return a.commitOrderMismatch() > 0 }},
		{FaultDirtyWrite, StrictSerializable, RWRegister, nil, func(a *analysis) bool { return a.commitOrderMismatch() > 0 }},
		{FaultDirtyWrite, Strict2PL, ListAppend, nil, func(a *analysis) bool { return cycle(a.wwEdges) }},
		{FaultAbortedRead, StrictSerializable, ListAppend, nil, func(a *analysis) bool { _, g1a, _, _ := a.readIssues(); return g1a > 0 }},
		{FaultAbortedRead, SnapshotIsolation, RWRegister, nil, func(a *analysis) bool { _, g1a, _, _ := a.readIssues(); return g1a > 0 }},
		{FaultIntermediateRead, Strict2PL, RWRegister, nil, func(a *analysis) bool { _, _, g1b, _ := a.readIssues(); return g1b > 0 }},
		{FaultIntermediateRead, SnapshotIsolationFCW, ListAppend, nil, func(a *analysis) bool { _, _, g1b, _ := a.readIssues(); return g1b > 0 }},
		{FaultStaleRead, StrictSerializable, ListAppend, nil, serialReplayFails},
		{FaultStaleRead, SnapshotIsolation, RWRegister, nil, func(a *analysis) bool { return len(a.snapshotViolations()) > 0 }},
		{FaultLostUpdate, SnapshotIsolation, ListAppend, nil, func(a *analysis) bool { return a.lostUpdates() > 0 }},
		{FaultLostUpdate, SnapshotIsolationFCW, RWRegister, nil, func(a *analysis) bool { return a.lostUpdates() > 0 }},
		{FaultLostUpdate, StrictSerializable, RWRegister, nil, func(a *analysis) bool { return cycle(a.edges) }},
		{FaultLostUpdate, Strict2PL, RWRegister, nil, func(a *analysis) bool { return cycle(a.edges) }},
		{FaultWriteSkew, SerializableSI, RWRegister, nil, func(a *analysis) bool { return cycle(a.edges) }},
		{FaultWriteSkew, Strict2PL, RWRegister, nil, func(a *analysis) bool { return cycle(a.edges) }},
		{FaultWriteSkew, Serializable, ListAppend, nil, func(a *analysis) bool { return cycle(a.edges) }},
		{FaultTSDisorder, StrictSerializable, ListAppend, nil, func(a *analysis) bool {
			prev, disordered := int64(-1), false
			for _, i := range a.tr.Order {
				x := &a.h.Txns[i]
				if !x.StartTS.Less(x.CommitTS) {
					return false // the fault keeps start before commit
				}
				if p := x.CommitTS.P; p < prev {
					disordered = true
				} else {
					prev = p
				}
			}
			return disordered
		}},
		{FaultLostCommit, StrictSerializable, ListAppend, nil, func(a *analysis) bool {
			for i := range a.lost {
				for _, o := range a.h.Txns[i].Ops {
					if o.Kind == history.Append {
						if _, in := a.pos[kv(o.Key, o.Value)]; !in {
							return true
						}
					}
				}
			}
			return false
		}},
		{FaultNoOwnWrite, SnapshotIsolation, ListAppend, nil, func(a *analysis) bool {
			for i, rs := range a.readsBy {
				for _, r := range rs {
					if w, ok := a.lastWrite[kv(r.key, i)]; ok && !slices.Contains(r.list, w) {
						// a read after the txn's first append to the key that misses it
						t := &a.h.Txns[i]
						for j := 0; j < r.op; j++ {
							if t.Ops[j].Kind == history.Append && t.Ops[j].Key == r.key && !slices.Contains(r.list, t.Ops[j].Value) {
								return true
							}
						}
					}
				}
			}
			return false
		}},
	}
	for _, c := range cases {
		t.Run(c.fault+"/"+c.level+"/"+c.wl, func(t *testing.T) {
			cfg := baseCfg(c.level, c.wl, 5)
			cfg.Txns, cfg.Keys, cfg.MinOps, cfg.MaxOps, cfg.AbortRate = 1500, 3, 2, 6, 0.2
			cfg.Faults = []Fault{{c.fault, 0.5}}
			if c.tweak != nil {
				c.tweak(&cfg)
			}
			h, tr, a := gen(t, cfg)
			if tr.FaultCounts[c.fault] == 0 {
				t.Fatalf("fault never fired")
			}
			if h.Header.Extra["fault."+c.fault] != fmt.Sprint(tr.FaultCounts[c.fault]) {
				t.Errorf("header Extra %v, truth %d", h.Header.Extra, tr.FaultCounts[c.fault])
			}
			if len(tr.Faults) == 0 {
				t.Errorf("no transaction recorded as affected")
			}
			if !c.show(a) {
				t.Errorf("fault fired %d times but did not manifest", tr.FaultCounts[c.fault])
			}
		})
	}
}

// TestFaultAttribution: at the serial levels every transaction whose reads
// disagree with the serial replay of the true order was affected by a read
// fault, so Truth.Faults is a complete account.
func TestFaultAttribution(t *testing.T) {
	for _, f := range []string{FaultStaleRead, FaultNoOwnWrite, FaultIntermediateRead, FaultAbortedRead, FaultLostUpdate, FaultWriteSkew} {
		for _, level := range []string{StrictSerializable, Serializable} {
			t.Run(f+"/"+level, func(t *testing.T) {
				cfg := baseCfg(level, ListAppend, 9)
				cfg.Keys, cfg.MinOps, cfg.MaxOps, cfg.AbortRate = 3, 2, 6, 0.2
				cfg.Faults = []Fault{{f, 0.3}}
				h, tr, a := gen(t, cfg)
				bad := a.replay()
				for _, i := range bad {
					if len(tr.Faults[i]) == 0 {
						t.Errorf("%s disagrees with the serial order but no fault is recorded", h.TxnString(i))
					}
				}
				if tr.FaultCounts[f] > 0 && f != FaultLostUpdate && f != FaultWriteSkew && len(bad) == 0 {
					t.Errorf("fault fired %d times, replay never fails", tr.FaultCounts[f])
				}
			})
		}
	}
}

func streamBytes(t testing.TB, cfg Config) []byte {
	var b bytes.Buffer
	w := jsonl.NewWriter(&b)
	if _, err := Stream(cfg, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// streamHistory decodes what Stream writes for cfg.
func streamHistory(t testing.TB, cfg Config) *history.History {
	d, err := jsonl.Decode(bytes.NewReader(streamBytes(t, cfg)), history.DecodeOptions{Name: "stream"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDeterminism: the same seed gives byte-identical output; another seed
// does not.
func TestDeterminism(t *testing.T) {
	for _, level := range LevelNames() {
		cfg := baseCfg(level, ListAppend, 42)
		cfg.Txns = 300
		cfg.InfoRate = 0.05
		cfg.Faults = []Fault{{FaultStaleRead, 0.1}, {FaultDirtyWrite, 0.1}}
		a, b := streamBytes(t, cfg), streamBytes(t, cfg)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: same seed, different output", level)
		}
		cfg.Seed++
		if bytes.Equal(a, streamBytes(t, cfg)) {
			t.Fatalf("%s: different seeds, same output", level)
		}
	}
}

// TestStreamMatchesGenerate: Stream and Generate describe the same run.
func TestStreamMatchesGenerate(t *testing.T) {
	cfg := baseCfg(SnapshotIsolation, ListAppend, 3)
	cfg.InfoRate = 0.05
	cfg.Faults = []Fault{{FaultLostUpdate, 0.3}}
	h, tr, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw := streamBytes(t, cfg)
	d, err := jsonl.Decode(bytes.NewReader(raw), history.DecodeOptions{Name: "stream"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Txns) != len(h.Txns) {
		t.Fatalf("stream has %d txns, generate %d", len(d.Txns), len(h.Txns))
	}
	for i := range h.Txns {
		if a, b := h.TxnString(int32(i)), d.TxnString(int32(i)); a != b {
			t.Fatalf("txn %d: %s vs %s", i, a, b)
		}
	}
	if len(d.VersionOrder) != len(h.VersionOrder) {
		t.Fatalf("version orders: %d vs %d keys", len(d.VersionOrder), len(h.VersionOrder))
	}
	for k, ord := range h.VersionOrder {
		dk, _ := d.Keys.LookupInt(h.Keys.Get(k).I)
		if h.ListString(ord) != d.ListString(d.VersionOrder[dk]) {
			t.Fatalf("key %s: version order %s vs %s", h.KeyName(k), h.ListString(ord), d.ListString(d.VersionOrder[dk]))
		}
	}
	if d.Header.Extra["fault."+FaultLostUpdate] != fmt.Sprint(tr.FaultCounts[FaultLostUpdate]) {
		t.Fatalf("streamed header fault count %q, truth %d", d.Header.Extra["fault."+FaultLostUpdate], tr.FaultCounts[FaultLostUpdate])
	}
	ev := d.Evidence
	if !ev.Sessions || !ev.ClientTime || !ev.OpTime || !ev.Timestamps || !ev.VersionOrder {
		t.Fatalf("evidence %+v", ev)
	}
}

// TestEach: the callback sees every transaction, in order, with the same
// truth as Generate.
func TestEach(t *testing.T) {
	cfg := baseCfg(Strict2PL, RWRegister, 8)
	cfg.Faults = []Fault{{FaultWriteSkew, 0.5}}
	h, tr, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	tr2, err := Each(cfg, func(eh *history.History, x *history.Txn) error {
		if x.Index != int32(n) || x.ID != h.Txns[n].ID || len(x.Ops) != len(h.Txns[n].Ops) {
			return fmt.Errorf("txn %d: %s vs %s", n, x.ID, h.Txns[n].ID)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(h.Txns) || fmt.Sprint(tr2.FaultCounts) != fmt.Sprint(tr.FaultCounts) || !slices.Equal(tr.Order, tr2.Order) {
		t.Fatalf("Each: %d txns, faults %v vs %v", n, tr2.FaultCounts, tr.FaultCounts)
	}
	if len(tr.Affected(FaultWriteSkew)) == 0 {
		t.Fatalf("write-skew fired %d times, no txn affected", tr.FaultCounts[FaultWriteSkew])
	}
	stop := fmt.Errorf("stop")
	if _, err := Each(cfg, func(*history.History, *history.Txn) error { return stop }); err != stop {
		t.Fatalf("callback error not returned: %v", err)
	}
}

func TestUnknownOutcomes(t *testing.T) {
	cfg := baseCfg(StrictSerializable, ListAppend, 4)
	cfg.InfoRate = 0.1
	h, tr, _ := gen(t, cfg)
	n := 0
	for i := range h.Txns {
		if h.Txns[i].Status == history.Unknown {
			n++
			if _, ok := tr.TrueStatus[int32(i)]; !ok {
				t.Fatalf("unknown txn %d without true status", i)
			}
			if h.Txns[i].CommitTS.Set {
				t.Fatalf("unknown txn %d has a commit timestamp", i)
			}
		}
	}
	if n == 0 || n != len(tr.TrueStatus) {
		t.Fatalf("%d unknown, truth has %d", n, len(tr.TrueStatus))
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{{Level: "nope"}, {Workload: "bank"}, {Dist: "pareto"}, {ReadRatio: 2},
		{Faults: []Fault{{"bogus", 0.1}}}, {Faults: []Fault{{FaultStaleRead, 1.5}}}, {Txns: -1}} {
		if _, _, err := Generate(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	for _, s := range []string{"stale-read", "stale-read:0.3", "lost-commit:1"} {
		if _, err := ParseFault(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"stale", "stale-read:x", "stale-read:-1", "stale-read:1.1"} {
		if _, err := ParseFault(s); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
}

func TestDistributions(t *testing.T) {
	for _, d := range []string{Uniform, Zipfian, Hotspot} {
		cfg := baseCfg(StrictSerializable, RWRegister, 1)
		cfg.Dist, cfg.Keys, cfg.MaxWritesPerKey = d, 10, -1
		h, _, _ := gen(t, cfg)
		count := map[int32]int{}
		for i := range h.Txns {
			for _, o := range h.Txns[i].Ops {
				count[o.Key]++
			}
		}
		k0, _ := h.Keys.LookupInt(0)
		k9, _ := h.Keys.LookupInt(9)
		switch d {
		case Uniform:
			if count[k0] > 3*count[k9] || count[k9] > 3*count[k0] {
				t.Errorf("uniform skewed: %v", count)
			}
		default:
			if count[k0] < 2*count[k9] {
				t.Errorf("%s not skewed: %v", d, count)
			}
		}
	}
}

// BenchmarkGen streams a list-append history as JSONL to memory and reports
// transactions per second.
func BenchmarkGen(b *testing.B) {
	for _, level := range []string{StrictSerializable, SnapshotIsolation, Strict2PL} {
		b.Run(level, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Level, cfg.Txns = level, 100000
			var n int
			for b.Loop() {
				var buf countWriter
				w := jsonl.NewWriter(&buf)
				if _, err := Stream(cfg, w); err != nil {
					b.Fatal(err)
				}
				w.Close()
				n += cfg.Txns
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "txns/s")
		})
	}
}

type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }
