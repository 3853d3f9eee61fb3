package record

import (
	"context"
	"testing"
	"time"

	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// BenchmarkPostgresRecordingOverhead measures the cost of recording on
// PostgreSQL: the same low-contention rw-register run (4 clients, 1000
// keys, 4 ops, read committed, 3 s per run, so the commit stream's steady
// decoding cost is in the measurement) with full recording
// (xid + snapshot per transaction, logical-decoding commit stream, JSONL
// history and evidence files) and with NoRecord. It reports txn/s for
// each and overhead-% = 100 * (1 - recorded/baseline). Target: <= 5%.
func BenchmarkPostgresRecordingOverhead(b *testing.B) {
	ctx := context.Background()
	d, err := db.Open(ctx, pgURL(), db.Options{Level: db.Serializable})
	if err != nil {
		b.Skipf("PostgreSQL not reachable at %s (%v); skipping", pgURL(), err)
	}
	d.Close()
	cfg := Config{DB: pgURL(), Level: db.ReadCommitted, Workload: "rw-register", Clients: 4, Duration: 3 * time.Second, Seed: 1,
		WL: workload.Config{Keys: 1000, Ops: 4, ReadRatio: 0.5}}
	var recTime, baseTime float64
	var recTxns, baseTxns int64
	for i := 0; i < b.N; i++ {
		// Alternate the order so drift (other load) hits both equally.
		for _, record := range []bool{i%2 == 0, i%2 != 0} {
			c := cfg
			c.NoRecord = !record
			if record {
				c.Out = b.TempDir()
			}
			res, err := Run(ctx, c)
			if err != nil {
				b.Fatal(err)
			}
			if record {
				recTime += res.Stats.Elapsed.Seconds()
				recTxns += res.Stats.Txns
			} else {
				baseTime += res.Stats.Elapsed.Seconds()
				baseTxns += res.Stats.Txns
			}
		}
	}
	rec, base := float64(recTxns)/recTime, float64(baseTxns)/baseTime
	b.ReportMetric(rec, "recorded-txn/s")
	b.ReportMetric(base, "baseline-txn/s")
	b.ReportMetric(100*(1-rec/base), "overhead-%")
}
