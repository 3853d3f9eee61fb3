package db

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

func pgTestURL() string {
	if u := os.Getenv("TXRAY_PG_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test"
}

// TestWALStreamMatchesLogicalDecoding runs committed writers (two sessions
// interleaved, one through a savepoint), a rolled-back writer, a writer
// whose COMMIT answer is never read (unknown outcome to its client), a
// transaction whose only write changes no row, a transaction of another
// database and a WAL segment switch, and checks that the WAL stream
// (polled during and after them) reports exactly the commit records a
// test_decoding slot on the same WAL reports: same xids, same commit LSNs,
// same commit times, same order, and that an xid is in it exactly when
// the server says it committed (pg_xact_status).
func TestWALStreamMatchesLogicalDecoding(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// parse while streaming, every few pages
	defer func(n int) { walParseAt = n }(walParseAt)
	walParseAt = 3000
	d, err := openPostgres(ctx, pgTestURL(), Options{Level: ReadCommitted, Record: true, Warn: func(string) {},
		ConnectTimeout: 5 * time.Second, StatementTimeout: 30 * time.Second})
	if err != nil {
		t.Skipf("postgres not reachable at %s (%v); skipping", pgTestURL(), err)
	}
	defer d.Close()
	p := d.(*pgDB)
	admin, err := pgx.ConnectConfig(ctx, p.cfg.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	var wal string
	if err := admin.QueryRow(ctx, "SHOW wal_level").Scan(&wal); err != nil || wal != "logical" {
		t.Skipf("wal_level %q (%v): the test compares with a logical decoding slot, which needs logical", wal, err)
	}
	slot := fmt.Sprintf("txray_cmp_%d_%d", os.Getpid(), rand.Uint32())
	if _, err := admin.Exec(ctx, "SELECT pg_create_logical_replication_slot($1, 'test_decoding', true)", slot); err != nil {
		t.Skipf("cannot create a logical slot to compare with: %v", err)
	}
	s, why, err := p.CommitStream(ctx)
	if err != nil || s == nil {
		t.Fatalf("CommitStream: %v %s", err, why)
	}
	w, ok := s.(*pgWALStream)
	if !ok {
		t.Skipf("the WAL stream is not available here (%s)", s.(*pgStream).why)
	}
	defer w.Close(context.Background())
	// Compared from where both report commits: the WAL stream from the
	// page holding the flush position when it opened, the logical slot
	// from its consistent point.
	start := w.next
	opened := w.next
	var cf string
	if err := admin.QueryRow(ctx, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&cf); err != nil {
		t.Fatal(err)
	}
	if l, err := ParseLSN(cf); err != nil {
		t.Fatal(err)
	} else if l > start {
		start = l
	}

	table := fmt.Sprintf("txray_walt_%d_%d", os.Getpid(), rand.Uint32())
	if err := p.Setup(ctx, "CREATE TABLE "+table+" (k BIGINT PRIMARY KEY, v TEXT)",
		"INSERT INTO "+table+" SELECT g, 'x' FROM generate_series(1, 20) g"); err != nil {
		t.Fatal(err)
	}
	defer p.Setup(context.Background(), "DROP TABLE "+table)

	var got []CommitRecord
	poll := func() {
		r, err := w.Poll(ctx)
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		got = append(got, r...)
	}
	conn := func() *pgConn {
		c, err := p.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.(*pgConn)
	}
	a, b := conn(), conn()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	upd := "UPDATE " + table + " SET v = $1 WHERE k = $2"
	var xids []uint64 // every xid a session saw
	var noRow bool
	for i := 0; i < 200; i++ {
		must(a.Begin(ctx))
		must(b.Begin(ctx))
		_, err := a.Exec(ctx, upd, fmt.Sprint(i), int64(1+i%10))
		must(err)
		_, err = b.Exec(ctx, upd, fmt.Sprint(i), int64(11+i%10))
		must(err)
		switch i % 5 {
		case 0: // b commits first
			must(b.Commit(ctx))
			must(a.Commit(ctx))
		case 1: // a rolls back
			must(a.Rollback(ctx))
			must(b.Commit(ctx))
		case 2: // a writes again inside a savepoint
			_, err = a.Exec(ctx, "SAVEPOINT s")
			must(err)
			_, err = a.Exec(ctx, upd, "sp", int64(1+(i+1)%10))
			must(err)
			_, err = a.Exec(ctx, "RELEASE SAVEPOINT s")
			must(err)
			must(a.Commit(ctx))
			must(b.Commit(ctx))
		default:
			must(a.Commit(ctx))
			must(b.Commit(ctx))
		}
		xids = append(xids, a.Evidence().XID, b.Evidence().XID)
		if i == 100 {
			poll()
			// a writer whose only write changes no row has no xid
			must(a.Begin(ctx))
			n, err := a.Exec(ctx, upd, "none", int64(-1))
			must(err)
			must(a.Commit(ctx))
			if n != 0 || a.Evidence().XID != 0 {
				t.Fatalf("no-row write: %d rows, xid %d", n, a.Evidence().XID)
			}
			noRow = true
			// a segment switch: the rest of the segment is skipped
			if _, err := admin.Exec(ctx, "SELECT pg_switch_wal()"); err != nil {
				t.Logf("pg_switch_wal: %v (not covered)", err)
			}
		}
	}
	if !noRow {
		t.Fatal("no-row case not run")
	}
	// A COMMIT whose answer its client never reads.
	u, err := pgx.ConnectConfig(ctx, p.cfg.Copy())
	must(err)
	var ux uint64
	tx, err := u.Begin(ctx)
	must(err)
	must(tx.QueryRow(ctx, upd+" RETURNING pg_current_xact_id()::text::bigint", "unknown", int64(5)).Scan(&ux))
	u.PgConn().Frontend().Send(&pgproto3.Query{String: "COMMIT"})
	must(u.PgConn().Frontend().Flush())
	u.PgConn().Conn().Close()
	xids = append(xids, ux)
	// Another database's transaction: not this run's.
	other := *p.cfg.Copy()
	other.Database = "postgres"
	var ox uint64
	if oc, err := pgx.ConnectConfig(ctx, &other); err == nil {
		otx, err := oc.Begin(ctx)
		must(err)
		must(otx.QueryRow(ctx, "SELECT pg_current_xact_id()::text::bigint").Scan(&ox))
		must(otx.Commit(ctx))
		oc.Close(ctx)
	}
	// Wait until the server has finished with the unknown COMMIT.
	var st *string
	for i := 0; i < 100; i++ {
		must(admin.QueryRow(ctx, "SELECT pg_xact_status($1::text::xid8)", fmt.Sprint(ux)).Scan(&st))
		if st != nil && *st != "in progress" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	poll()
	t.Logf("other database xid %d, unknown-outcome xid %d", ox, ux)
	poll() // nothing new: the same records are not read twice

	// The slot let go of the WAL already read (runs do not retain it).
	var rl string
	must(admin.QueryRow(ctx, "SELECT restart_lsn::text FROM pg_replication_slots WHERE slot_name = $1", w.slot).Scan(&rl))
	if l, err := ParseLSN(rl); err != nil || l <= opened || l > w.next {
		t.Fatalf("slot's restart_lsn %s (%v); the stream started at %X and has read up to %X", rl, err, opened, w.next)
	}
	rows, err := admin.Query(ctx, `SELECT lsn::text, xid::text, data FROM pg_logical_slot_peek_changes($1, NULL, NULL,
		'include-xids', '1', 'include-timestamp', '1', 'skip-empty-xacts', '0') WHERE data LIKE 'COMMIT%'`, slot)
	must(err)
	var want []CommitRecord
	for rows.Next() {
		var l, x, data string
		must(rows.Scan(&l, &x, &data))
		r := CommitRecord{}
		r.LSN, err = ParseLSN(l)
		must(err)
		fmt.Sscan(x, &r.XID)
		if i := strings.Index(data, "(at "); i >= 0 {
			r.Time = strings.TrimSuffix(data[i+4:], ")")
		}
		if r.LSN > start {
			want = append(want, r)
		}
	}
	must(rows.Err())
	var inRange []CommitRecord
	for _, r := range got {
		if r.LSN > start {
			inRange = append(inRange, r)
		}
	}
	// The logical slot's peek reads up to the flush position when it
	// runs, after the last Poll: others' commits after it are ignored.
	last := inRange[len(inRange)-1].LSN
	for len(want) > 0 && want[len(want)-1].LSN > last {
		want = want[:len(want)-1]
	}
	if len(inRange) != len(want) {
		wm := map[uint64]bool{}
		for _, r := range want {
			wm[r.XID] = true
		}
		for _, r := range inRange {
			if !wm[r.XID] {
				var st *string
				_ = admin.QueryRow(ctx, "SELECT pg_xact_status($1::text::xid8)", fmt.Sprint(r.XID)).Scan(&st)
				t.Logf("only in the WAL stream: %+v (status %v)", r, *st)
			}
		}
		t.Fatalf("WAL stream: %d commits after %X, test_decoding: %d", len(inRange), start, len(want))
	}
	for i := range want {
		g, e := inRange[i], want[i]
		if g.XID != e.XID || g.LSN != e.LSN || !sameInstant(t, g.Time, e.Time) {
			t.Fatalf("commit %d: WAL stream %+v, test_decoding %+v", i, g, e)
		}
	}
	seen := map[uint64]bool{}
	for _, r := range got {
		seen[r.XID] = true
	}
	committed, aborted := 0, 0
	for _, x := range xids {
		if x == 0 {
			continue
		}
		var st string
		must(admin.QueryRow(ctx, "SELECT pg_xact_status($1::text::xid8)", fmt.Sprint(x)).Scan(&st))
		if (st == "committed") != seen[uint64(uint32(x))] {
			t.Fatalf("xid %d: server says %s, in the WAL stream: %v", x, st, seen[uint64(uint32(x))])
		}
		if st == "committed" {
			committed++
		} else {
			aborted++
		}
	}
	if ox != 0 && seen[uint64(uint32(ox))] {
		t.Fatalf("another database's transaction %d is in the stream", ox)
	}
	if committed < 300 || aborted < 40 {
		t.Fatalf("%d committed, %d aborted writers: the cases did not run", committed, aborted)
	}
	t.Logf("%d commits compared; %d committed and %d aborted writers checked", len(want), committed, aborted)
}

func sameInstant(t *testing.T, a, b string) bool {
	const f = "2006-01-02 15:04:05.999999-07"
	ta, err1 := time.Parse(f, a)
	tb, err2 := time.Parse(f, b)
	if err1 != nil || err2 != nil {
		t.Logf("times %q %q: %v %v", a, b, err1, err2)
		return false
	}
	return ta.Equal(tb)
}

// FuzzWALParse: whatever bytes the server sends, parse returns records or
// an error, never panics, and never reads a record twice.
func FuzzWALParse(f *testing.F) {
	page := make([]byte, 64)
	binary.LittleEndian.PutUint16(page[2:], xlpLongHeader)
	f.Add(page, uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		s := &pgWALStream{blck: 64, seg: 256, db: 5, ver: 150000}
		// Pages claim their own address, so the parser gets past them.
		for off := 0; off+24 <= len(data); off += 64 {
			binary.LittleEndian.PutUint64(data[off+8:], uint64(off))
		}
		c := min(int(cut), len(data))
		s.take(0, data[:c])
		r1, err := s.parse(nil)
		if err != nil {
			return
		}
		s.take(uint64(c), data[c:])
		r2, err := s.parse(nil)
		if err != nil {
			return
		}
		for i := 1; i < len(r1)+len(r2); i++ {
			all := append(append([]CommitRecord{}, r1...), r2...)
			if all[i].LSN <= all[i-1].LSN {
				t.Fatalf("commit LSNs out of order: %v", all)
			}
		}
	})
}
