package record

import (
	"context"
	"flag"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// BenchmarkPostgresCertificateOverhead measures the marginal cost of the
// certificate capture (issue 14 bar: at most 5% on a PostgreSQL run), fully
// recorded both ways (commit stream, evidence, history file), with the
// capture on and off (workload.Config.NoCertificate), on PostgreSQL read
// committed, 4 ops, read ratio 0.5, -certbench.txns transactions per run
// (default 400; the same plans both ways: one client, one seed):
//
//   - predicate (1 client, 40 keys, ranges of 10): each range read returns
//     its snapshot; version order (from the commit order: with the logical
//     slot, writes no longer return the version they replaced) and version
//     sets derived at the end. One client: with several, the predicate
//     updates' row locks make deadlock waits dominate and per-run
//     throughput varied from -63% to +292% between the two configurations
//     of a pair, which hides a 5% effect;
//   - blindw-rw+ (1 client, 1000 keys): version order derived at the end
//     (from the commit order; without a slot each write returns the
//     version it replaced).
//
// Each of b.N iterations runs -certbench.pairs pairs (default 16),
// alternating which goes first (so drift from the shared machine's load
// hits both alike). Two costs per run: CPU per transaction, the primary
// figure because the shared machine's load makes wall time vary by a factor
// of several between runs: this process's CPU time (Getrusage; recorder,
// commit stream reader and certificate derivation included) from the
// moment the client has connected to the end of Run, after a garbage
// collection, plus the CPU time of the
// clients' server backends over their sessions (/proc/PID/schedstat, in ns:
// /proc/PID/stat counts 10 ms ticks, a few per cent of a 1-s run's backend
// CPU), when the server is local; the run's setup (connections with their
// TLS handshakes, tables, the logical slot) is the same both ways and left
// out. (Runs of a fixed duration, 1 s, about 100 transactions each at load
// 15, with the connection in the measure, ranged from -50 % to +840 % per
// pair.) And wall time (client time + certificate derivation time) per
// transaction. Each pair gives overhead = on/off - 1; the benchmark reports
// the median, quartiles, minimum and maximum over the pairs (in %), the
// aggregate (total CPU per transaction on / off), CPU per transaction,
// both throughputs and the derivation time per transaction. Run each
// sub-benchmark with -test.benchtime=1x (b.N = 1: one set of pairs; with
// Nx the testing package runs b.N = 1 and then b.N = N, 1 + N sets) under
// flock /tmp/bench.lock: 16 pairs of 400-transaction runs take about a
// minute on a quiet machine.
var (
	certPairs = flag.Int("certbench.pairs", 16, "BenchmarkPostgres/MariaDBCertificateOverhead: pairs of runs (capture on, off) per iteration")
	certTxns  = flag.Int("certbench.txns", 400, "BenchmarkPostgres/MariaDBCertificateOverhead: transactions per run (0: -certbench.run)")
	certRun   = flag.Duration("certbench.run", 2*time.Second, "BenchmarkPostgres/MariaDBCertificateOverhead: duration of each run when -certbench.txns is 0")
)

// certRunShape sets a run's length from the flags: a fixed number of
// transactions by default, so that both runs of a pair execute the same
// plans (one client, one seed) and per-run costs weigh alike on both.
func certRunShape(c *Config) {
	if *certTxns > 0 {
		c.Txns, c.Duration = *certTxns, 0
	} else {
		c.Duration = *certRun
	}
}

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
			certOverhead(b, Config{DB: pgURL(), Level: db.ReadCommitted, Workload: c.wl, Clients: c.clients, Duration: *certRun, Seed: 1,
				WL: workload.Config{Keys: c.keys, Ops: 4, ReadRatio: 0.5}})
		})
	}
}

// BenchmarkMariaDBCertificateOverhead is BenchmarkPostgresCertificateOverhead
// on MariaDB at REPEATABLE READ, the level whose predicate reads get
// version sets from snapshot markers: predicate (1 client, 40 keys, ranges
// of 10) with the capture on (each write returns the version it replaced;
// each transaction starts with the marker round trip; version order and
// version sets derived at the end) against NoCertificate (plain START
// TRANSACTION and upserts) ("capture"), and the capture with and without
// the snapshot markers ("markers": their own cost, version sets
// included). Server CPU is the clients' connection threads of mariadbd.
// Run with -benchtime=1x under flock /tmp/bench.lock.
func BenchmarkMariaDBCertificateOverhead(b *testing.B) {
	ctx := context.Background()
	d, err := db.Open(ctx, mysqlURL(), db.Options{Level: db.RepeatableRead})
	if err != nil {
		b.Skipf("MariaDB not reachable at %s (%v); skipping", mysqlURL(), err)
	}
	d.Close()
	base := Config{DB: mysqlURL(), Level: db.RepeatableRead, Workload: "predicate", Clients: 1, Duration: *certRun, Seed: 1,
		WL: workload.Config{Keys: 40, Ops: 4, ReadRatio: 0.5}}
	b.Run("capture", func(b *testing.B) { certOverhead(b, base) })
	// markers alone: the capture on both ways, with and without snapshot
	// markers (and so without version sets)
	b.Run("markers", func(b *testing.B) {
		certOverheadOf(b, base, func(c *Config, on bool) { c.noSnapshots = !on })
	})
}

// backendCPU reads a local PostgreSQL backend's CPU time (seconds) from
// /proc/PID/schedstat (its first field: time on a CPU, in ns; a backend is
// one thread), else from /proc/PID/stat (user + system, 10 ms ticks); ok
// false when it cannot (a remote server).
func backendCPU(pid int) (float64, bool) {
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			if ns, err := strconv.ParseUint(f[0], 10, 64); err == nil {
				return float64(ns) / 1e9, true
			}
		}
	}
	return statCPU("/proc/" + strconv.Itoa(pid) + "/stat")
}

func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// serverMeter sums the CPU time of the clients' server backends over a run
// (Config.clientConn).
type serverMeter struct {
	mu    sync.Mutex
	pid   map[db.Conn]int
	start map[db.Conn]float64
	cpu   float64
	ok    bool
}

func (m *serverMeter) hook(c db.Conn, open bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if open {
		rows, err := c.Query(context.Background(), "SELECT pg_backend_pid()")
		if err != nil {
			m.ok = false
			return
		}
		var pid int
		for rows.Next() {
			_ = rows.Scan(&pid)
		}
		rows.Close()
		t, ok := backendCPU(pid)
		if !ok {
			m.ok = false
			return
		}
		m.pid[c], m.start[c] = pid, t
		return
	}
	pid, ok := m.pid[c]
	if !ok {
		return
	}
	if t, ok := backendCPU(pid); ok {
		m.cpu += t - m.start[c]
	} else {
		m.ok = false
	}
}

func medianOf(x []float64) float64 {
	slices.Sort(x)
	if len(x)%2 == 0 {
		return (x[len(x)/2-1] + x[len(x)/2]) / 2
	}
	return x[len(x)/2]
}

// quantileOf returns the q-quantile of x (0 <= q <= 1), interpolated
// between order statistics; it sorts x.
func quantileOf(x []float64, q float64) float64 {
	slices.Sort(x)
	if len(x) == 0 {
		return 0
	}
	p := q * float64(len(x)-1)
	i := int(p)
	if i+1 >= len(x) {
		return x[len(x)-1]
	}
	return x[i] + (p-float64(i))*(x[i+1]-x[i])
}

func certOverhead(b *testing.B, base Config) {
	certOverheadOf(b, base, nil)
}

// certOverheadOf is certOverhead with set choosing what "on" and "off"
// mean (nil: the certificate capture on and off, NoCertificate).
func certOverheadOf(b *testing.B, base Config, set func(c *Config, on bool)) {
	ctx := context.Background()
	pairs := max(*certPairs, 1)
	var over, cpuOver []float64
	var onTxns, offTxns int64
	var onTime, offTime, certTime time.Duration
	var onCPU, offCPU, onClient, offClient float64
	serverOK := true
	run := func(cert bool) (wall, cpu float64) {
		c := base
		certRunShape(&c)
		if set != nil {
			set(&c, cert)
		} else {
			c.WL.NoCertificate = !cert
		}
		c.Out = b.TempDir()
		m := &serverMeter{pid: map[db.Conn]int{}, start: map[db.Conn]float64{}, ok: true}
		c.clientConn = m.hook
		var om *ownMeter
		if strings.HasPrefix(base.DB, "mysql") {
			// MariaDB sessions are threads of mariadbd
			om = newOwnMeter("mariadbd", 0)
			c.clientConn = om.client
		}
		// this process's CPU from the moment the client has connected (the
		// setup and the connection's TLS handshake before are the same
		// both ways), after a collection (the garbage of earlier runs is
		// not this run's)
		var c0 float64
		hook := c.clientConn
		c.clientConn = func(cn db.Conn, open bool) {
			hook(cn, open)
			if open {
				c0 = processCPU()
			}
		}
		runtime.GC()
		res, err := Run(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		clientCPU := processCPU() - c0
		if set == nil && cert != res.History.Evidence.VersionOrder {
			b.Fatalf("capture %v but version order %v", cert, res.History.Evidence.VersionOrder)
		}
		if om != nil {
			m.cpu, m.ok = om.total(), om.ok
		}
		serverOK = serverOK && m.ok
		t := res.Stats.Elapsed + res.Certificate.Time
		n := float64(res.Stats.Txns)
		cpu = (clientCPU + m.cpu) / n
		if cert {
			onTxns, onTime, certTime, onCPU = onTxns+res.Stats.Txns, onTime+t, certTime+res.Certificate.Time, onCPU+clientCPU+m.cpu
			onClient += clientCPU
		} else {
			offTxns, offTime, offCPU = offTxns+res.Stats.Txns, offTime+t, offCPU+clientCPU+m.cpu
			offClient += clientCPU
		}
		return t.Seconds() / n, cpu
	}
	for i := 0; i < b.N; i++ {
		for p := 0; p < pairs; p++ {
			var on, off, onC, offC float64
			if p%2 == 0 {
				on, onC = run(true)
				off, offC = run(false)
			} else {
				off, offC = run(false)
				on, onC = run(true)
			}
			over = append(over, 100*(on/off-1))
			cpuOver = append(cpuOver, 100*(onC/offC-1))
		}
	}
	if !serverOK {
		b.Log("server backend CPU not readable (remote server?): the CPU figures are the client's only")
	}
	b.ReportMetric(medianOf(cpuOver), "cpu-overhead-median-%")
	b.ReportMetric(quantileOf(cpuOver, 0.25), "cpu-overhead-q1-%")
	b.ReportMetric(quantileOf(cpuOver, 0.75), "cpu-overhead-q3-%")
	b.ReportMetric(cpuOver[0], "cpu-overhead-min-%")
	b.ReportMetric(cpuOver[len(cpuOver)-1], "cpu-overhead-max-%")
	b.ReportMetric(100*(onCPU/float64(onTxns)/(offCPU/float64(offTxns))-1), "cpu-overhead-aggregate-%")
	b.ReportMetric(1e6*onCPU/float64(onTxns), "on-cpu-us/txn")
	b.ReportMetric(1e6*offCPU/float64(offTxns), "off-cpu-us/txn")
	b.ReportMetric(1e6*onClient/float64(onTxns), "on-client-cpu-us/txn")
	b.ReportMetric(1e6*offClient/float64(offTxns), "off-client-cpu-us/txn")
	b.ReportMetric(medianOf(over), "wall-overhead-median-%")
	b.ReportMetric(over[0], "wall-overhead-min-%")
	b.ReportMetric(over[len(over)-1], "wall-overhead-max-%")
	b.ReportMetric(float64(onTxns)/onTime.Seconds(), "on-txn/s")
	b.ReportMetric(float64(offTxns)/offTime.Seconds(), "off-txn/s")
	b.ReportMetric(float64(certTime.Microseconds())/float64(onTxns), "derive-us/txn")
	b.Logf("per-pair overhead %%, sorted: CPU (client + server backends) %.1f; wall %.1f", cpuOver, over)
}

// BenchmarkPostgresCaptureStatements measures the server backend's CPU time
// (/proc/PID/schedstat, ns) per statement of each form the certificate
// capture changes, against the form it replaces, on a 40-row (k, v) table
// at read committed, each statement in its own transaction (the table not
// analyzed, as the workload's, created at setup, is not). The forms are
// interleaved statement by statement on one session (round robin), so
// drift from the shared machine's load falls on all alike, and the order
// rotates each round; each statement's
// cost is the backend's CPU from just before BEGIN to just after COMMIT
// (BEGIN and COMMIT included, the same for all). Reports the median over
// -benchtime iterations of each form in ns; run with -benchtime 3000x.
func BenchmarkPostgresCaptureStatements(b *testing.B) {
	ctx := context.Background()
	d, err := db.Open(ctx, pgURL(), db.Options{Level: db.ReadCommitted})
	if err != nil {
		b.Skipf("PostgreSQL not reachable at %s (%v); skipping", pgURL(), err)
	}
	defer d.Close()
	c, err := d.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const t = "txray_bench_capture"
	for _, q := range []string{"DROP TABLE IF EXISTS " + t, "CREATE TABLE " + t + " (k BIGINT NOT NULL PRIMARY KEY, v BIGINT)",
		"INSERT INTO " + t + " SELECT g, g FROM generate_series(0, 39) g"} {
		if _, err := c.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	defer c.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+t)
	rows, err := c.Query(ctx, "SELECT pg_backend_pid()")
	if err != nil {
		b.Fatal(err)
	}
	var pid int
	for rows.Next() {
		_ = rows.Scan(&pid)
	}
	rows.Close()
	if _, ok := backendCPU(pid); !ok {
		b.Skip("server backend CPU not readable (remote server?)")
	}
	forms := []struct{ name, q string }{
		{"read", "SELECT k, v FROM " + t + " WHERE k >= $1 AND k <= $2 ORDER BY k"},
		{"read-snapshot-sorted", "SELECT k, v, NULL::text FROM " + t + " WHERE k >= $1 AND k <= $2 UNION ALL SELECT NULL, NULL, pg_current_snapshot()::text ORDER BY 1 NULLS LAST"},
		{"read-snapshot", "SELECT k, v, NULL::text FROM " + t + " WHERE k >= $1 AND k <= $2 UNION ALL SELECT NULL, NULL, pg_current_snapshot()::text"},
		{"upsert", "INSERT INTO " + t + " AS t (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v"},
		{"upsert-replaced", "WITH r AS (SELECT set_config('txray.prev', '', true) AS x) INSERT INTO " + t + " AS t (k, v) SELECT $1::bigint, $2::bigint FROM r " +
			"ON CONFLICT (k) DO UPDATE SET v = CASE WHEN set_config('txray.prev', 'v' || coalesce(t.v::text, 'null'), true) <> '' THEN excluded.v END " +
			"RETURNING current_setting('txray.prev', true)"},
	}
	cost := make([][]float64, len(forms))
	for i := 0; i < b.N; i++ {
		for x := range forms {
			// rotate the order: a statement after a COMMIT that waited
			// for its WAL flush starts on a cold cache
			f := (x + i) % len(forms)
			fm := forms[f]
			args := []any{int64(i % 30), int64(i%30 + 9)}
			if strings.HasPrefix(fm.name, "upsert") {
				args = []any{int64(i % 40), int64(1000 + i)}
			}
			t0, _ := backendCPU(pid)
			if err := c.Begin(ctx); err != nil {
				b.Fatal(err)
			}
			rows, err := c.Query(ctx, fm.q, args...)
			if err != nil {
				b.Fatal(err)
			}
			for rows.Next() {
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				b.Fatal(err)
			}
			if err := c.Commit(ctx); err != nil {
				b.Fatal(err)
			}
			t1, _ := backendCPU(pid)
			cost[f] = append(cost[f], (t1-t0)*1e9)
		}
	}
	for f, fm := range forms {
		b.ReportMetric(medianOf(cost[f]), fm.name+"-ns")
	}
}
