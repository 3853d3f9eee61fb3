package record

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// BenchmarkRecordingOverhead measures the cost of recording (issue 17
// item 5: at most 5 %) on SQLite, PostgreSQL and MariaDB. Each iteration is
// one pair of runs of the same low-contention rw-register workload (4
// clients, 1000 keys, 4 ops, 50 % reads, 1 s per run): one with full
// recording (history and evidence files, every evidence query, the commit
// stream) and one with NoRecord, in alternating order so drift (other load)
// hits both. Run it with -benchtime 10x or more (10 pairs). Reported:
//
//   - overhead-median-%, overhead-min-%, overhead-max-%: the per-pair
//     throughput overhead 100 × (1 − recorded/baseline txn/s) during the
//     workload, median and range over the pairs;
//   - end-s/run: per recorded run, the time after the workload ended until
//     the history was complete (evidence still to be read then, e.g. the
//     commit order decoded from a PostgreSQL slot at the end);
//   - wall-overhead-median-%: the same per pair on the time from the
//     clients' start until Run returns (workload and that end phase);
//   - cpu-overhead-median-%, cpu-overhead-min-%, cpu-overhead-max-%: per
//     pair, the CPU time per transaction of the whole run (this process,
//     plus every server process: PostgreSQL's processes and the children
//     its postmaster reaped, or mariadbd), recorded against NoRecord. On a
//     shared, loaded machine throughput swings with other people's jobs,
//     but CPU time per transaction does not; it counts work the server
//     does for recording (decoding WAL, evidence queries) and work done
//     after the workload. Other clients of the same server add noise.
func BenchmarkRecordingOverhead(b *testing.B) {
	for _, tc := range []struct {
		name, url, level, server string
	}{
		{"sqlite", "sqlite", db.Serializable, ""},
		{"postgres", pgURL(), db.ReadCommitted, "postgres"},
		{"mariadb", mysqlURL(), db.ReadCommitted, "mariadbd"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			d, err := db.Open(ctx, tc.url, db.Options{Level: tc.level})
			if err != nil {
				b.Skipf("%s not reachable at %s (%v); skipping", tc.name, tc.url, err)
			}
			d.Close()
			cfg := Config{DB: tc.url, Level: tc.level, Workload: "rw-register", Clients: 4, Duration: time.Second, Seed: 1,
				WL: workload.Config{Keys: 1000, Ops: 4, ReadRatio: 0.5}}
			var over, wallOver, cpuOver []float64
			var recTPS, baseTPS, endS float64
			for i := 0; i < b.N; i++ {
				var tps, wall, cpu [2]float64 // [0] baseline, [1] recorded
				for _, record := range []bool{i%2 == 0, i%2 != 0} {
					c := cfg
					c.NoRecord = !record
					if record {
						c.Out = b.TempDir()
					}
					// Measured from the clients' start: waiting for the
					// database's run lock (other txray runs) and setup
					// are not the recorder's.
					var t0 time.Time
					var c0 float64
					c.onStart = func() { t0, c0 = time.Now(), cpuSeconds(tc.server) }
					res, err := Run(ctx, c)
					w := time.Since(t0).Seconds()
					cs := cpuSeconds(tc.server) - c0
					if err != nil {
						b.Fatal(err)
					}
					k := 0
					if record {
						k = 1
						endS += w - res.Stats.Elapsed.Seconds()
					}
					tps[k] = float64(res.Stats.Txns) / res.Stats.Elapsed.Seconds()
					wall[k] = w
					cpu[k] = cs / float64(res.Stats.Txns)
				}
				cpuOver = append(cpuOver, 100*(cpu[1]/cpu[0]-1))
				recTPS += tps[1]
				baseTPS += tps[0]
				over = append(over, 100*(1-tps[1]/tps[0]))
				wallOver = append(wallOver, 100*(wall[1]/wall[0]-1))
			}
			slices.Sort(over)
			slices.Sort(wallOver)
			slices.Sort(cpuOver)
			n := float64(b.N)
			b.ReportMetric(recTPS/n, "recorded-txn/s")
			b.ReportMetric(baseTPS/n, "baseline-txn/s")
			b.ReportMetric(median(over), "overhead-median-%")
			b.ReportMetric(over[0], "overhead-min-%")
			b.ReportMetric(over[len(over)-1], "overhead-max-%")
			b.ReportMetric(endS/n, "end-s/run")
			b.ReportMetric(median(wallOver), "wall-overhead-median-%")
			b.ReportMetric(median(cpuOver), "cpu-overhead-median-%")
			b.ReportMetric(cpuOver[0], "cpu-overhead-min-%")
			b.ReportMetric(cpuOver[len(cpuOver)-1], "cpu-overhead-max-%")
			b.Logf("%s: per-pair throughput overhead %% (sorted): %s", tc.name, fmtList(over))
			b.Logf("%s: per-pair CPU-per-txn overhead %% (sorted): %s", tc.name, fmtList(cpuOver))
		})
	}
}

// cpuSeconds is this process's user+system CPU time plus that of every
// process named server (comm), including the children they reaped
// (PostgreSQL's postmaster reaps its backends), from /proc; server "" is
// this process only (SQLite runs in it).
func cpuSeconds(server string) float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	sec := float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	if server == "" {
		return sec
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		st := string(b)
		i, j := strings.IndexByte(st, '('), strings.LastIndexByte(st, ')')
		if i < 0 || j < i || st[i+1:j] != server {
			continue
		}
		f := strings.Fields(st[j+1:]) // f[0] is field 3 (state)
		if len(f) < 15 {
			continue
		}
		for _, x := range f[11:15] { // utime, stime, cutime, cstime
			n, _ := strconv.ParseFloat(x, 64)
			sec += n / 100 // USER_HZ
		}
	}
	return sec
}

func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func fmtList(s []float64) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%.1f", v)
	}
	return out
}
