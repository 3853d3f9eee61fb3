package polygraph

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sim"
)

// benchHistory generates a King Cobra / Cobra style history with the
// simulator at serializable level, with timestamps (and, unless keepVO,
// the version order) hidden.
func benchHistory(tb testing.TB, mix string, txns, clients int, keepVO bool) *history.History {
	level := sim.Serializable
	if mix == sim.MixBlindWRW {
		level = sim.StrictSerializable // serializable lets read-only txns read stale snapshots: not strong-session
	}
	cfg := sim.Config{Workload: sim.RWRegister, Mix: mix, Level: level, Txns: txns, Clients: clients,
		Keys: 20, MinOps: 4, MaxOps: 8, Seed: 1}
	h, _, err := sim.Generate(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	vo := h.VersionOrder
	hide(h)
	if keepVO {
		h.VersionOrder = vo
		h.Evidence.VersionOrder = true
	}
	return h
}

// evidenceHistory generates a King Cobra style history at the given level
// and keeps, of the ordering evidence, only what keep names: "none", "vo"
// (the version order), "commit" (the exact commit order: commit_ts, no
// start_ts) or "ts" (start and commit timestamps).
func evidenceHistory(tb testing.TB, level, mix string, txns, clients int, keep string) *history.History {
	cfg := sim.Config{Workload: sim.RWRegister, Mix: mix, Level: level, Txns: txns, Clients: clients,
		Keys: 20, MinOps: 4, MaxOps: 8, Seed: 1}
	h, _, err := sim.Generate(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	full := append([]history.Txn(nil), h.Txns...)
	vo := h.VersionOrder
	hide(h)
	switch keep {
	case "vo":
		h.VersionOrder, h.Evidence.VersionOrder = vo, true
	case "commit":
		for i := range h.Txns {
			h.Txns[i].CommitTS = full[i].CommitTS
		}
		h.Evidence.CommitOrder = true
	case "ts":
		for i := range h.Txns {
			h.Txns[i].StartTS, h.Txns[i].CommitTS = full[i].StartTS, full[i].CommitTS
		}
		h.Evidence.Timestamps = true
	}
	return h
}

func benchCheck(b *testing.B, h *history.History, m string) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := Checker{}.Check(context.Background(), h, check.Options{Model: m, Params: map[string]string{"inference": "false"}})
		if err != nil {
			b.Fatal(err)
		}
		if r.Verdict != check.Valid {
			b.Fatalf("verdict %s: %s", r.Verdict, r.Reason)
		}
		if i == 0 {
			b.ReportMetric(float64(r.Stats["constraints_before_pruning"].(int)), "constraints")
			b.ReportMetric(float64(r.Stats["constraints_after_pruning"].(int)), "unpruned")
		}
	}
}

// BenchmarkKingCobra: 10,000-transaction histories from 20 clients in the
// three King Cobra mixes, serializability without session order, with and
// without the version order (bars: <= 10 s without, <= 1 s with).
func BenchmarkKingCobra(b *testing.B) {
	for _, mix := range []string{sim.MixRMW, sim.MixRW50, sim.MixW80} {
		for _, vo := range []bool{false, true} {
			name := mix + "/no-vo"
			if vo {
				name = mix + "/vo"
			}
			b.Run(name, func(b *testing.B) {
				h := benchHistory(b, mix, 10000, 20, vo)
				benchCheck(b, h, model.Serializable)
			})
		}
	}
}

// BenchmarkKingCobraEvidence: the same 10,000-transaction King Cobra
// histories with other ordering evidence instead of the version order:
// serializability with the exact commit order (the simulator's serializable
// level declares that it serializes in commit order, so commit order is
// the version order), and snapshot isolation (simulator SI level) with
// nothing, the commit order, or start and commit timestamps, and snapshot
// isolation of the serializable-level histories (more concurrent writers
// per key) without evidence and with timestamps. Compare
// constraints/unpruned and ns/op across the sub-benchmarks.
func BenchmarkKingCobraEvidence(b *testing.B) {
	for _, mix := range []string{sim.MixRMW, sim.MixRW50, sim.MixW80} {
		for _, c := range []struct{ level, m, keep string }{
			{sim.Serializable, model.Serializable, "none"}, {sim.Serializable, model.Serializable, "commit"},
			{sim.SnapshotIsolation, model.SnapshotIsolation, "none"}, {sim.SnapshotIsolation, model.SnapshotIsolation, "commit"},
			{sim.SnapshotIsolation, model.SnapshotIsolation, "ts"},
			{sim.Serializable, model.SnapshotIsolation, "none"}, {sim.Serializable, model.SnapshotIsolation, "ts"},
		} {
			b.Run(mix+"/"+c.m+"/"+c.level+"-level/"+c.keep, func(b *testing.B) {
				h := evidenceHistory(b, c.level, mix, 10000, 20, c.keep)
				benchCheck(b, h, c.m)
			})
		}
	}
}

// BenchmarkBlindWRW: 100,000-transaction BlindW-RW for strong-session
// serializability (bar: <= 30 s).
func BenchmarkBlindWRW(b *testing.B) {
	h := benchHistory(b, sim.MixBlindWRW, 100000, 20, false)
	benchCheck(b, h, model.StrongSessionSerializable)
}

// TestTimingProbe prints where the time goes (go test -run TimingProbe -v -probe).
func TestTimingProbe(t *testing.T) {
	if !*probe {
		t.Skip("timing probe: run with -probe")
	}
	for _, c := range []struct {
		mix string
		n   int
		m   string
		vo  bool
	}{{sim.MixRMW, 10000, model.Serializable, false}, {sim.MixRW50, 10000, model.Serializable, false}, {sim.MixW80, 10000, model.Serializable, false},
		{sim.MixRMW, 10000, model.Serializable, true}, {sim.MixRW50, 10000, model.Serializable, true}, {sim.MixW80, 10000, model.Serializable, true},
		{sim.MixBlindWRW, 100000, model.StrongSessionSerializable, false}} {
		if only := os.Getenv("PG_PROBE"); only != "" && !strings.Contains(only, c.mix+fmt.Sprint(c.vo)) {
			continue
		}
		if n, err := strconv.Atoi(os.Getenv("PG_N")); err == nil {
			c.n = n
		}
		h := benchHistory(t, c.mix, c.n, 20, c.vo)
		cpu0 := cpuTime()
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		r, err := Checker{}.Check(ctx, h, check.Options{Model: c.m, Params: map[string]string{"inference": "false"}})
		if err != nil {
			t.Fatal(err)
		}
		la, _ := os.ReadFile("/proc/loadavg")
		t.Logf("%s n=%d %s vo=%v: %s in %v wall, %v CPU (load %s); stats %v", c.mix, c.n, c.m, c.vo, r.Verdict, time.Since(t0),
			cpuTime()-cpu0, strings.Fields(string(la))[0], r.Stats)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestEvidenceProbe prints, per King Cobra mix, the effect of ordering
// evidence on constraints and time (go test -run EvidenceProbe -v -probe;
// PG_N sets the size, default 10,000).
func TestEvidenceProbe(t *testing.T) {
	if !*probe {
		t.Skip("timing probe: run with -probe")
	}
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("PG_N")); err == nil {
		n = v
	}
	for _, mix := range []string{sim.MixRMW, sim.MixRW50, sim.MixW80} {
		if only := os.Getenv("PG_PROBE"); only != "" && !strings.Contains(only, mix) {
			continue
		}
		for _, c := range []struct{ level, m, keep string }{
			{sim.Serializable, model.Serializable, "none"}, {sim.Serializable, model.Serializable, "commit"}, {sim.Serializable, model.Serializable, "vo"},
			{sim.SnapshotIsolation, model.SnapshotIsolation, "none"}, {sim.SnapshotIsolation, model.SnapshotIsolation, "commit"},
			{sim.SnapshotIsolation, model.SnapshotIsolation, "ts"},
			{sim.Serializable, model.SnapshotIsolation, "none"}, {sim.Serializable, model.SnapshotIsolation, "ts"},
		} {
			h := evidenceHistory(t, c.level, mix, n, 20, c.keep)
			cpu0 := cpuTime()
			t0 := time.Now()
			r, err := Checker{}.Check(context.Background(), h, check.Options{Model: c.m, Params: map[string]string{"inference": "false"}})
			if err != nil {
				t.Fatal(err)
			}
			s := r.Stats
			t.Logf("| %s | %s | %s %s | %v | %v | %v (%v) | %v | %v ms | %v ms | %v ms | %.2f s | %.2f s | %s",
				mix, c.m, c.level, c.keep, s["constraints_before_pruning"], s["constraints_unread_dropped"], s["constraints_after_pruning"], s["pruning_rounds"],
				s["evidence_ww_edges"], s["build_ms"], s["prune_ms"], s["solve_ms"], (cpuTime() - cpu0).Seconds(), time.Since(t0).Seconds(), r.Verdict)
		}
	}
}

// BenchmarkListAppend: a 10,000-transaction simulator list-append history
// (serializable level, 20 clients, 20 keys, timestamps and version order
// hidden) decided by the polygraph on its register view and by the
// list-append inference checker, for serializable and snapshot isolation.
func BenchmarkListAppend(b *testing.B) {
	cfg := sim.Config{Workload: sim.ListAppend, Level: sim.Serializable, Txns: 10000, Clients: 20, Keys: 20,
		MinOps: 4, MaxOps: 8, ReadRatio: 0.5, Seed: 1}
	h, _, err := sim.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	hide(h)
	la, _ := check.Lookup("list-append")
	for _, m := range []string{model.Serializable, model.SnapshotIsolation} {
		b.Run("polygraph/"+m, func(b *testing.B) { benchCheck(b, h, m) })
		b.Run("list-append/"+m, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r, err := la.Check(context.Background(), h, check.Options{Model: m})
				if err != nil || r.Verdict != check.Valid {
					b.Fatalf("%v %v", r.Verdict, err)
				}
			}
		})
	}
}
