package record

import (
	"context"
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
// drift from the shared machine's load hits both alike). Two costs per
// run: CPU (this process's CPU time, recorder included, plus the CPU time
// of the clients' server backends read from /proc when the server is
// local) per transaction, the primary figure because the shared machine's
// load makes wall time vary by a factor of several between runs; and wall
// time (client time + certificate derivation time) per transaction. Each
// pair gives overhead = on/off - 1; the benchmark reports the median,
// minimum and maximum over the pairs (in %), the CPU per transaction, both
// throughputs and the derivation time per transaction. Run each
// sub-benchmark with -benchtime=1x under flock /tmp/bench.lock (about a
// minute each).
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
	base := Config{DB: mysqlURL(), Level: db.RepeatableRead, Workload: "predicate", Clients: 1, Duration: 2 * time.Second, Seed: 1,
		WL: workload.Config{Keys: 40, Ops: 4, ReadRatio: 0.5}}
	b.Run("capture", func(b *testing.B) { certOverhead(b, base) })
	// markers alone: the capture on both ways, with and without snapshot
	// markers (and so without version sets)
	b.Run("markers", func(b *testing.B) {
		certOverheadOf(b, base, func(c *Config, on bool) { c.noSnapshots = !on })
	})
}

// backendCPU reads a local PostgreSQL backend's CPU time (user + system,
// seconds) from /proc/PID/stat; ok false when it cannot (a remote server).
func backendCPU(pid int) (float64, bool) {
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

func certOverhead(b *testing.B, base Config) {
	certOverheadOf(b, base, nil)
}

// certOverheadOf is certOverhead with set choosing what "on" and "off"
// mean (nil: the certificate capture on and off, NoCertificate).
func certOverheadOf(b *testing.B, base Config, set func(c *Config, on bool)) {
	ctx := context.Background()
	const pairs = 10
	var over, cpuOver []float64
	var onTxns, offTxns int64
	var onTime, offTime, certTime time.Duration
	var onCPU, offCPU, onClient, offClient float64
	serverOK := true
	run := func(cert bool) (wall, cpu float64) {
		c := base
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
			om = newOwnMeter("mariadbd")
			c.clientConn = om.client
		}
		c0 := processCPU()
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
	b.ReportMetric(cpuOver[0], "cpu-overhead-min-%")
	b.ReportMetric(cpuOver[len(cpuOver)-1], "cpu-overhead-max-%")
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
