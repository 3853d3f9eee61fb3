package record

import (
	"context"
	"encoding/binary"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
)

// BenchmarkPostgresXIDForms compares, on one PostgreSQL session, the ways
// the recorder can learn a writer's xid from the write itself (issue 17
// item 5): the workload's upsert run plainly (Exec, no xid: what a
// baseline session sends), with "RETURNING pg_current_xact_id()::text"
// (the text column the recorder parsed until 2026-11-25) and with
// "RETURNING pg_current_xact_id()" (xid8, which pgx asks for in binary:
// eight bytes, no cast and no text formatting on the server). Each
// transaction is BEGIN, one upsert of a random key out of 1000, COMMIT;
// the forms rotate transaction by transaction (0 1 2 2 1 0 ...), so each
// sees the machine's drift alike. Per transaction and form it times the
// client (the benchmark goroutine's OS thread, locked to it:
// RUSAGE_THREAD) and the session's backend (/proc schedstat, read before
// and after each transaction while the backend waits for the next
// command, so exact). Each iteration (b.N) is 300 transactions per form;
// reported: medians over iterations of µs per transaction per form, and
// of the per-iteration overhead of each xid form over the plain one
// (client + backend). It also checks that both xid forms return the same
// xid (the text form parsed, the binary one decoded).
func BenchmarkPostgresXIDForms(b *testing.B) {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, pgURL())
	if err != nil {
		b.Skipf("postgres not reachable (%v); skipping", err)
	}
	defer c.Close(ctx)
	var pid int64
	if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		b.Fatal(err)
	}
	path := "/proc/" + strconv.FormatInt(pid, 10) + "/stat"
	if _, ok := statCPU(path); !ok {
		b.Skipf("the backend's CPU time is not readable at %s (remote server?); skipping", path)
	}
	const table = "txray_xidform"
	for _, s := range []string{"DROP TABLE IF EXISTS " + table, "CREATE TABLE " + table + " (k BIGINT NOT NULL PRIMARY KEY, v BIGINT)"} {
		if _, err := c.Exec(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	defer c.Exec(context.Background(), "DROP TABLE IF EXISTS "+table)
	up := "INSERT INTO " + table + " AS t (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v"
	forms := []string{up, up + " RETURNING pg_current_xact_id()::text", up + " RETURNING pg_current_xact_id()"}
	names := []string{"plain", "text", "binary"}
	rnd, val := uint64(1), int64(0)
	// one runs one transaction in form f and returns the xid it read.
	one := func(f int) uint64 {
		rnd = rnd*6364136223846793005 + 1442695040888963407
		k := int64(rnd>>33) % 1000
		val++
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			b.Fatal(err)
		}
		var xid uint64
		if f == 0 {
			if _, err := c.Exec(ctx, forms[0], k, val); err != nil {
				b.Fatal(err)
			}
		} else {
			rows, err := c.Query(ctx, forms[f], k, val)
			if err != nil {
				b.Fatal(err)
			}
			for rows.Next() {
				v := rows.RawValues()[0]
				if rows.FieldDescriptions()[0].Format == pgx.BinaryFormatCode {
					xid = binary.BigEndian.Uint64(v)
				} else {
					xid, _ = strconv.ParseUint(string(v), 10, 64)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				b.Fatal(err)
			}
			if xid == 0 {
				b.Fatalf("form %s returned no xid", names[f])
			}
		}
		if _, err := c.Exec(ctx, "COMMIT"); err != nil {
			b.Fatal(err)
		}
		return xid
	}
	// both xid forms name the transaction's xid: in one transaction they
	// return the same value
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		b.Fatal(err)
	}
	var x1 string
	var x2 uint64
	if err := c.QueryRow(ctx, forms[1], int64(1), int64(-1)).Scan(&x1); err != nil {
		b.Fatal(err)
	}
	if err := c.QueryRow(ctx, forms[2], int64(2), int64(-2)).Scan(&x2); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Exec(ctx, "COMMIT"); err != nil {
		b.Fatal(err)
	}
	if strconv.FormatUint(x2, 10) != x1 {
		b.Fatalf("xid as text %s, as xid8 %d", x1, x2)
	}
	for f := range forms { // warm the statement cache and plans
		for range 20 {
			one(f)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const block = 300
	var cli, srv, tot [3][]float64
	var over [3][]float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var cu, su [3]float64
		for t := 0; t < 3*block; t++ {
			f := t % 3
			if (t/3)%2 == 1 {
				f = 2 - f
			}
			s0, _ := statCPU(path)
			t0 := threadCPU()
			one(f)
			cu[f] += threadCPU() - t0
			s1, _ := statCPU(path)
			su[f] += s1 - s0
		}
		for f := range forms {
			cli[f] = append(cli[f], 1e6*cu[f]/block)
			srv[f] = append(srv[f], 1e6*su[f]/block)
			tot[f] = append(tot[f], 1e6*(cu[f]+su[f])/block)
			over[f] = append(over[f], 100*((cu[f]+su[f])/(cu[0]+su[0])-1))
		}
	}
	b.StopTimer()
	for f, name := range names {
		b.ReportMetric(medianOf(slices.Clone(cli[f])), "client-us/txn-"+name)
		b.ReportMetric(medianOf(slices.Clone(srv[f])), "backend-us/txn-"+name)
		b.Logf("%s: client µs/txn %s; backend µs/txn %s; both %s", name, fmtSpread(cli[f]), fmtSpread(srv[f]), fmtSpread(tot[f]))
		if f > 0 {
			b.ReportMetric(medianOf(slices.Clone(over[f])), name+"-overhead-median-%")
			b.Logf("%s over plain, client + backend per iteration %%: %s", name, fmtSpread(over[f]))
		}
	}
}
