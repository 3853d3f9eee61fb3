package record

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// BenchmarkPostgresCertificateOverhead measures the marginal cost of the
// certificate capture (issue 14 bar: at most 5% on a PostgreSQL run), fully
// recorded both ways (commit stream, evidence, history file), with the
// capture on and off (workload.Config.NoCertificate), on PostgreSQL read
// committed, 4 ops, read ratio 0.5, 2 s per run:
//
//   - predicate (1 client, 40 keys, ranges of 10): each write returns the
//     version it replaced, each range read its snapshot; version order and
//     version sets derived at the end. One client: with several, the
//     predicate updates' row locks make deadlock waits dominate and
//     per-run throughput varied from -63% to +292% between the two
//     configurations of a pair, which hides a 5% effect;
//   - blindw-rw+ (1 client, 1000 keys): each write returns
//     the version it replaced; version order derived at the end.
//
// Each of b.N iterations runs 10 pairs, alternating which goes first (so
// drift from the shared machine's load hits both alike); a run's cost is
// (client time + certificate derivation time) / transactions, and each
// pair gives overhead = on/off - 1. It reports the median, minimum and
// maximum over the pairs (in %), both throughputs and the derivation time
// per transaction. Run each sub-benchmark with -benchtime=1x under flock
// /tmp/bench.lock (about 50 s each).
func BenchmarkPostgresCertificateOverhead(b *testing.B) {
	ctx := context.Background()
	d, err := db.Open(ctx, pgURL(), db.Options{Level: db.ReadCommitted})
	if err != nil {
		b.Skipf("PostgreSQL not reachable at %s (%v); skipping", pgURL(), err)
	}
	d.Close()
	for _, c := range []struct {
		wl            string
		clients, keys int
	}{{"predicate", 1, 40}, {"blindw-rw+", 1, 1000}} {
		b.Run(c.wl, func(b *testing.B) {
			certOverhead(b, Config{DB: pgURL(), Level: db.ReadCommitted, Workload: c.wl, Clients: c.clients, Duration: 2 * time.Second, Seed: 1,
				WL: workload.Config{Keys: c.keys, Ops: 4, ReadRatio: 0.5}})
		})
	}
}

func certOverhead(b *testing.B, base Config) {
	ctx := context.Background()
	const pairs = 10
	var over []float64
	var onTxns, offTxns int64
	var onTime, offTime, certTime time.Duration
	run := func(cert bool) float64 {
		c := base
		c.WL.NoCertificate = !cert
		c.Out = b.TempDir()
		res, err := Run(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		if cert != res.History.Evidence.VersionOrder {
			b.Fatalf("capture %v but version order %v", cert, res.History.Evidence.VersionOrder)
		}
		t := res.Stats.Elapsed + res.Certificate.Time
		if cert {
			onTxns, onTime, certTime = onTxns+res.Stats.Txns, onTime+t, certTime+res.Certificate.Time
		} else {
			offTxns, offTime = offTxns+res.Stats.Txns, offTime+t
		}
		return t.Seconds() / float64(res.Stats.Txns)
	}
	for i := 0; i < b.N; i++ {
		for p := 0; p < pairs; p++ {
			var on, off float64
			if p%2 == 0 {
				on, off = run(true), run(false)
			} else {
				off, on = run(false), run(true)
			}
			over = append(over, 100*(on/off-1))
		}
	}
	slices.Sort(over)
	med := over[len(over)/2]
	if len(over)%2 == 0 {
		med = (over[len(over)/2-1] + over[len(over)/2]) / 2
	}
	b.ReportMetric(med, "overhead-median-%")
	b.ReportMetric(over[0], "overhead-min-%")
	b.ReportMetric(over[len(over)-1], "overhead-max-%")
	b.ReportMetric(float64(onTxns)/onTime.Seconds(), "on-txn/s")
	b.ReportMetric(float64(offTxns)/offTime.Seconds(), "off-txn/s")
	b.ReportMetric(float64(certTime.Microseconds())/float64(onTxns), "derive-us/txn")
	b.Logf("per-pair overhead %%, sorted: %.1f", over)
}
