package record

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// BenchmarkPostgresCertificateOverhead measures the marginal cost of the
// certificate capture (issue 14 bar: at most 5% on a PostgreSQL run): the
// predicate workload on PostgreSQL read committed (4 clients, 100 keys, 4
// ops, read ratio 0.5, 3 s per run), fully recorded both ways (commit
// stream, evidence, history file), with the capture on (each write
// returns the version it replaced; each range read returns its snapshot;
// version order and version sets derived at the end) and off
// (workload.Config.NoCertificate: plain upserts and range reads). Each of
// b.N iterations runs 10 pairs, alternating which goes first; a run's
// cost is (client time + certificate derivation time) / transactions, and
// each pair gives overhead = on/off - 1. It reports the median, minimum
// and maximum over the pairs (in %), and both throughputs. Run with
// -benchtime=1x under flock /tmp/bench.lock.
func BenchmarkPostgresCertificateOverhead(b *testing.B) {
	ctx := context.Background()
	d, err := db.Open(ctx, pgURL(), db.Options{Level: db.ReadCommitted})
	if err != nil {
		b.Skipf("PostgreSQL not reachable at %s (%v); skipping", pgURL(), err)
	}
	d.Close()
	base := Config{DB: pgURL(), Level: db.ReadCommitted, Workload: "predicate", Clients: 4, Duration: 3 * time.Second, Seed: 1,
		WL: workload.Config{Keys: 100, Ops: 4, ReadRatio: 0.5}}
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
		if cert && res.Certificate.VersionSets == 0 {
			b.Fatalf("capture on but no version set derived: %+v", res.Certificate)
		}
		if !cert && (res.History.Evidence.VersionSets || res.Certificate.VersionSets != 0) {
			b.Fatalf("capture off but version sets derived: %+v", res.Certificate)
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
	b.Logf("per-pair overhead %%: %s", fmt.Sprint(over))
}
