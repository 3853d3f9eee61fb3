package db

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgDB is PostgreSQL through pgx v5. Levels map to BEGIN ISOLATION LEVEL;
// PostgreSQL runs READ UNCOMMITTED as READ COMMITTED, so Level reports
// read-committed for it.
type pgDB struct {
	url   string
	cfg   *pgx.ConnConfig
	o     Options
	level string
	setup *pgx.Conn
	// lock is the session holding the run lock (see Exclusive); it runs
	// no other statement, so it is not mistaken for a workload session.
	lock *pgx.Conn
	// txnSnap: recording sessions read each transaction's snapshot
	// (CaptureTxnSnapshot).
	txnSnap bool
	// legacy: also the earlier evidence query (CaptureLegacyEvidence).
	legacy bool
	// logicalOnly: CommitStream uses the logical slot
	// (UseLogicalCommitStream).
	logicalOnly bool
}

// pgRunLock is the advisory lock key txray runs take (ASCII "txray").
const pgRunLock = 0x7478726179

// pgLockPoll is how often a run waiting for another run's lock tries again.
const pgLockPoll = 200 * time.Millisecond

// Exclusive takes the session advisory lock pgRunLock on a dedicated
// session (advisory locks are per database, and are released when the
// session ends, so a crashed run cannot leave it held).
func (p *pgDB) Exclusive(ctx context.Context, wait func()) error {
	if p.lock != nil {
		return nil
	}
	c, err := pgx.ConnectConfig(ctx, p.cfg.Copy())
	if err != nil {
		return fmt.Errorf("postgres %s: %v", Redact(p.url), err)
	}
	var ok bool
	sctx, cancel := p.o.stmt(ctx)
	err = c.QueryRow(sctx, "SELECT pg_try_advisory_lock($1)", int64(pgRunLock)).Scan(&ok)
	cancel()
	if err != nil {
		c.Close(context.Background())
		return fmt.Errorf("postgres: pg_try_advisory_lock: %v", err)
	}
	if !ok {
		wait()
		// Polled, not a blocking pg_advisory_lock: a statement waiting
		// for the lock holds its snapshot, and with it the server's xmin
		// horizon, for the whole wait, so the running run's updated rows
		// could not be pruned (HOT updates fell from 93 % to 32 % and
		// buffer hits per transaction rose from 16 to 27-30 in runs that
		// another run waited beside, docs/benchmarks.md "Item 5, seventh
		// pass"). Between tries this session is idle and holds none.
		for !ok {
			select {
			case <-ctx.Done():
				c.Close(context.Background())
				return fmt.Errorf("postgres: waiting for another txray run on this database: %v", ctx.Err())
			case <-time.After(pgLockPoll):
			}
			sctx, cancel := p.o.stmt(ctx)
			err = c.QueryRow(sctx, "SELECT pg_try_advisory_lock($1)", int64(pgRunLock)).Scan(&ok)
			cancel()
			if err != nil {
				c.Close(context.Background())
				return fmt.Errorf("postgres: waiting for another txray run on this database: %v", err)
			}
		}
	}
	p.lock = c
	return nil
}

// pgDeadlockTimeout is the deadlock_timeout client sessions ask for unless
// the URL sets one. PostgreSQL's default (1 s) stalls every session queued
// behind a deadlocked pair for that long; in a contended run (8 clients on
// 5 keys) the run then spends nearly all its time waiting. The setting
// changes only how soon a deadlock is detected, not which transactions
// can deadlock.
const pgDeadlockTimeout = "10ms"

func openPostgres(ctx context.Context, url string, o Options) (DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres %s: %w", Redact(url), ScrubError(err, url))
	}
	if cfg.ConnectTimeout == 0 {
		// Bounds the whole connect (dial, TLS, startup, authentication)
		// of every session; a URL's connect_timeout is kept.
		cfg.ConnectTimeout = o.ConnectTimeout
	}
	c, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return nil, fmt.Errorf("postgres %s: %w (connect timeout %v)", Redact(url), ScrubError(err, url), cfg.ConnectTimeout)
	}
	p := &pgDB{url: url, cfg: cfg, o: o, level: o.Level, setup: c}
	if _, set := cfg.RuntimeParams["deadlock_timeout"]; !set {
		// deadlock_timeout is superuser-settable only; without the
		// privilege the server's setting stays.
		sctx, cancel := o.stmt(ctx)
		defer cancel()
		if _, err := c.Exec(sctx, "SET deadlock_timeout = '"+pgDeadlockTimeout+"'"); err == nil {
			cfg.RuntimeParams["deadlock_timeout"] = pgDeadlockTimeout
		} else {
			var cur string
			_ = c.QueryRow(sctx, "SHOW deadlock_timeout").Scan(&cur)
			o.Warn(fmt.Sprintf("postgres: cannot lower deadlock_timeout (%s) for the run's sessions (%v): contended runs wait that long per deadlock", cur, err))
		}
	}
	if o.Level == ReadUncommitted {
		o.Warn("postgres runs read-uncommitted as read-committed")
		p.level = ReadCommitted
	}
	return p, nil
}

// Settings are the session settings the run's sessions use, for the
// history header.
func (p *pgDB) Settings() map[string]string {
	if v, ok := p.cfg.RuntimeParams["deadlock_timeout"]; ok {
		return map[string]string{"deadlock_timeout": v}
	}
	return nil
}

func (p *pgDB) Name() string       { return "postgres" }
func (p *pgDB) Level() string      { return p.level }
func (p *pgDB) Param(i int) string { return "$" + strconv.Itoa(i) }
func (p *pgDB) TextType() string   { return "TEXT" }

func (p *pgDB) Upsert(table string, appendList bool) string {
	if appendList {
		return "INSERT INTO " + table + " AS t (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = t.v || ',' || excluded.v"
	}
	return "INSERT INTO " + table + " AS t (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v"
}

func (p *pgDB) Version(ctx context.Context) (string, error) {
	var v string
	ctx, cancel := p.o.stmt(ctx)
	defer cancel()
	err := p.setup.QueryRow(ctx, "SELECT version()").Scan(&v)
	return v, err
}

func (p *pgDB) Setup(ctx context.Context, stmts ...string) error {
	for _, q := range stmts {
		sctx, cancel := p.o.stmt(ctx)
		_, err := p.setup.Exec(sctx, q)
		cancel()
		if err != nil {
			return fmt.Errorf("setup %q: %v", q, err)
		}
	}
	return nil
}

// Names of the statements every session prepares (see Conn).
const (
	pgBeginStmt    = "txray_begin"
	pgSnapshotStmt = "txray_snapshot"
	pgLegacyStmt   = "txray_legacy"
)

// CaptureTxnSnapshot makes recording sessions opened after it read each
// transaction's snapshot (TxnEvidence.Snapshot). The recorder asks for it
// only where a checker uses it: version sets of predicate reads that run
// under the transaction's snapshot (repeatable read and serializable).
func (p *pgDB) CaptureTxnSnapshot() { p.txnSnap = true }

// CaptureLegacyEvidence makes recording sessions opened after it also run
// the per-transaction evidence query used before the xid rode on the
// first write (SELECT pg_current_xact_id()::text,
// pg_current_snapshot()::text, batched with BEGIN) and report its answer
// as TxnEvidence.LegacyXID and LegacySnapshot: for tests that compare the
// two captures on the same run. It assigns every transaction an xid at
// BEGIN, so the first write returns that same xid.
func (p *pgDB) CaptureLegacyEvidence() { p.legacy = true }

func (p *pgDB) Conn(ctx context.Context) (Conn, error) {
	c, err := pgx.ConnectConfig(ctx, p.cfg.Copy())
	if err != nil {
		return nil, err
	}
	// BEGIN (and, when the transaction's snapshot is wanted, the snapshot
	// query) are prepared once per session: a transaction binds and
	// executes them in one round trip (one batch, one Sync) with no
	// parsing or planning. The snapshot query runs right after BEGIN, so
	// under repeatable read and serializable its snapshot is the
	// transaction's snapshot. The xid rides on the transaction's first
	// write (pgConn.Exec, pgConn.Query): no statement of its own.
	pc := &pgConn{c: c, record: p.o.Record, timeout: p.o.StatementTimeout}
	sctx, cancel := bounded(ctx, p.o.StatementTimeout)
	defer cancel()
	pc.begin, err = c.PgConn().Prepare(sctx, pgBeginStmt, "BEGIN ISOLATION LEVEL "+sqlLevel(p.level), nil)
	if err == nil && p.o.Record && p.txnSnap {
		pc.snapq, err = c.PgConn().Prepare(sctx, pgSnapshotStmt, "SELECT pg_current_snapshot()::text", nil)
	}
	if err == nil && p.o.Record && p.legacy {
		pc.legacyq, err = c.PgConn().Prepare(sctx, pgLegacyStmt, "SELECT pg_current_xact_id()::text, pg_current_snapshot()::text", nil)
	}
	if err != nil {
		c.Close(context.Background())
		return nil, err
	}
	return pc, nil
}

func (p *pgDB) Close() error {
	err := p.setup.Close(context.Background())
	if p.lock != nil {
		// Ending the session releases the advisory lock.
		if e := p.lock.Close(context.Background()); err == nil {
			err = e
		}
		p.lock = nil
	}
	return err
}

type pgConn struct {
	c *pgx.Conn
	// begin and snapq are the session's prepared BEGIN and snapshot query
	// (snapq nil unless the transaction's snapshot is wanted).
	begin, snapq *pgconn.StatementDescription
	// legacyq: the earlier evidence query (CaptureLegacyEvidence).
	legacyq *pgconn.StatementDescription
	record  bool
	ev      TxnEvidence
	// timeout bounds each statement (Options.StatementTimeout).
	timeout time.Duration
	// xidForms caches the xid-returning form of write statements
	// (xidForm; "" for a statement it cannot annotate), bounded.
	xidForms map[xidKey]string
	// scan is xidRows' scratch destination list.
	scan []any
}

var errRolledBack = errors.New("COMMIT answered ROLLBACK: the transaction had failed")

func (c *pgConn) Begin(ctx context.Context) error {
	c.ev = TxnEvidence{}
	ctx, cancel := bounded(ctx, c.timeout)
	defer cancel()
	if c.snapq == nil && c.legacyq == nil {
		_, err := c.c.PgConn().ExecStatement(ctx, c.begin, nil, nil, nil).Close()
		return err
	}
	b := &pgconn.Batch{}
	b.ExecStatement(c.begin, nil, nil, nil)
	if c.snapq != nil {
		b.ExecStatement(c.snapq, nil, nil, nil)
	}
	if c.legacyq != nil {
		b.ExecStatement(c.legacyq, nil, nil, nil)
	}
	rs, err := c.c.PgConn().ExecBatch(ctx, b).ReadAll()
	if err != nil {
		return err
	}
	if len(rs) > 0 {
		rs = rs[1:] // BEGIN's
	}
	if c.snapq != nil && len(rs) > 0 {
		if len(rs[0].Rows) == 1 && len(rs[0].Rows[0]) == 1 {
			c.ev.Snapshot = string(rs[0].Rows[0][0])
		}
		rs = rs[1:]
	}
	if c.legacyq != nil && len(rs) > 0 && len(rs[0].Rows) == 1 && len(rs[0].Rows[0]) == 2 {
		r := rs[0].Rows[0]
		c.ev.LegacyXID, _ = strconv.ParseUint(string(r[0]), 10, 64)
		c.ev.LegacySnapshot = string(r[1])
	}
	return nil
}

// The xid (pg_current_xact_id) is read from the transaction's first write
// that changes a row, as one more column of what that statement returns:
// a write statement without RETURNING gets "RETURNING
// pg_current_xact_id()" (Exec), one with RETURNING gets the column
// appended to its list (Exec and Query; Query's caller scans the columns
// it asked for, the extra one is taken off). The column is xid8 as is,
// which pgx reads in binary: no cast to text on the server and no digits
// to parse on the client (it was "::text" until 2026-11-25,
// BenchmarkPostgresXIDForms compares the two). PostgreSQL assigns the xid at
// the first row changed, before RETURNING is evaluated, so every row
// returns it. No statement and no round trip is added; a transaction that
// changes no row (read-only) gets no xid (it has none in the server
// either: no commit record, nothing for the commit stream), and later
// statements run unchanged once the xid is known. The xid is known before
// COMMIT is sent, so a COMMIT whose answer is lost can still be matched
// with its commit record.

type xidKey struct {
	q     string
	query bool
}

// xidForm returns q changed to also return pg_current_xact_id() (xid8:
// the 64-bit xid with its epoch) as its last column, or "" when q is not an INSERT, UPDATE or DELETE (also
// behind WITH) this can annotate. query: the caller reads q's rows, so
// only a statement that already has a RETURNING list qualifies.
func xidForm(q string, query bool) string {
	t := strings.TrimRight(q, " \t\r\n;")
	word := strings.ToUpper(firstWord(t))
	switch word {
	case "INSERT", "UPDATE", "DELETE", "WITH":
	default:
		return ""
	}
	if topLevelReturning(t) {
		return t + ", pg_current_xact_id()"
	}
	if query || word == "WITH" {
		return ""
	}
	return t + " RETURNING pg_current_xact_id()"
}

func firstWord(s string) string {
	s = strings.TrimLeft(s, " \t\r\n(")
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	return s[:i]
}

// topLevelReturning reports whether s has the keyword RETURNING outside
// parentheses, string literals and quoted identifiers (a data-modifying
// CTE's RETURNING is inside parentheses; the main statement's is not, and
// nothing can follow its list).
func topLevelReturning(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(':
			depth++
		case ')':
			depth--
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return false
			}
			i += j + 1
		case 'r', 'R':
			if depth == 0 && len(s)-i >= 9 && strings.EqualFold(s[i:i+9], "RETURNING") &&
				(i == 0 || !identChar(s[i-1])) && (i+9 == len(s) || !identChar(s[i+9])) {
				return true
			}
		}
	}
	return false
}

func identChar(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// withXID returns the xid-returning form of q while the transaction's xid
// is not known yet ("" when none is wanted or possible).
func (c *pgConn) withXID(q string, query bool) string {
	if !c.record || c.ev.XID != 0 {
		return ""
	}
	k := xidKey{q, query}
	if f, ok := c.xidForms[k]; ok {
		return f
	}
	f := xidForm(q, query)
	if c.xidForms == nil {
		c.xidForms = map[xidKey]string{}
	}
	if len(c.xidForms) < 256 {
		// Statements with literals in their text (k IN (...)) differ
		// from run to run; the cache keeps the first few.
		c.xidForms[k] = f
	}
	return f
}

// takeXID keeps the xid from a row's last column: xid8 in binary (eight
// bytes, big-endian: pgx asks for binary where it knows the type, as it
// does xid8's, in its default extended-protocol modes) or as text (the
// simple protocol's).
func (c *pgConn) takeXID(fds []pgconn.FieldDescription, vals [][]byte) {
	if c.ev.XID != 0 || len(vals) == 0 || len(fds) != len(vals) {
		return
	}
	v := vals[len(vals)-1]
	if fds[len(fds)-1].Format == pgx.BinaryFormatCode {
		if len(v) == 8 {
			c.ev.XID = binary.BigEndian.Uint64(v)
		}
		return
	}
	var x uint64
	for _, d := range v {
		if d < '0' || d > '9' || x > math.MaxUint64/10 || x == math.MaxUint64/10 && uint64(d-'0') > math.MaxUint64%10 {
			return // not a number, or beyond xid8's range
		}
		x = x*10 + uint64(d-'0')
	}
	c.ev.XID = x
}

func (c *pgConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	ctx, cancel := bounded(ctx, c.timeout)
	defer cancel()
	if f := c.withXID(q, false); f != "" {
		rows, err := c.c.Query(ctx, f, args...)
		if err != nil {
			return 0, err
		}
		for rows.Next() {
			c.takeXID(rows.FieldDescriptions(), rows.RawValues())
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
		return rows.CommandTag().RowsAffected(), nil
	}
	t, err := c.c.Exec(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return t.RowsAffected(), nil
}

func (c *pgConn) Query(ctx context.Context, q string, args ...any) (Rows, error) {
	ctx, cancel := bounded(ctx, c.timeout)
	f := c.withXID(q, true)
	if f != "" {
		q = f
	}
	r, err := c.c.Query(ctx, q, args...)
	if err != nil {
		cancel()
		return nil, err
	}
	if f != "" {
		return xidRows{r, c, cancel}, nil
	}
	return cancelRows{r, cancel}, nil
}

// xidRows are the rows of a statement given an xid column (xidForm): Next
// takes the xid from the last column, Scan fills the caller's destinations
// from the others.
type xidRows struct {
	pgx.Rows
	c      *pgConn
	cancel context.CancelFunc
}

func (r xidRows) Next() bool {
	if !r.Rows.Next() {
		return false
	}
	r.c.takeXID(r.Rows.FieldDescriptions(), r.Rows.RawValues())
	return true
}

func (r xidRows) Scan(dest ...any) error {
	d := append(append(r.c.scan[:0], dest...), nil)
	err := r.Rows.Scan(d...)
	clear(d)
	r.c.scan = d[:0]
	return err
}

func (r xidRows) Close() {
	r.Rows.Close()
	r.cancel()
}

func (c *pgConn) Commit(ctx context.Context) error {
	ctx, cancel := bounded(ctx, c.timeout)
	defer cancel()
	t, err := c.c.Exec(ctx, "COMMIT")
	if err != nil {
		return err
	}
	if t.String() == "ROLLBACK" {
		return errRolledBack
	}
	return nil
}

func (c *pgConn) Rollback(ctx context.Context) error {
	ctx, cancel := bounded(ctx, c.timeout)
	defer cancel()
	_, err := c.c.Exec(ctx, "ROLLBACK")
	return err
}

func (c *pgConn) Evidence() TxnEvidence { return c.ev }

func (c *pgConn) Close() error { return c.c.Close(context.Background()) }

func (c *pgConn) Classify(err error, atCommit bool) (Outcome, Class) {
	if errors.Is(err, errRolledBack) {
		return Aborted, ClassOther
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40001":
			return Aborted, ClassSerialization
		case pe.Code == "40P01":
			return Aborted, ClassDeadlock
		case pe.Code == "55P03": // lock_not_available (lock_timeout, NOWAIT)
			return Aborted, ClassLockTimeout
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P"):
			// Connection exception / operator intervention: the session
			// is gone; at COMMIT the outcome is not known.
			if atCommit {
				return Unknown, ClassConnection
			}
			return Aborted, ClassConnection
		}
		return Aborted, ClassOther
	}
	if atCommit && !pgconn.SafeToRetry(err) {
		return Unknown, ClassConnection
	}
	return Aborted, ClassConnection
}

// CommitStream reads commit records from the WAL's segment files on a
// dedicated session with a temporary physical slot (pgWALStream,
// pgwal.go); where the server refuses that (no REPLICATION privilege, no
// right to read server files, a server version whose WAL layout is not
// known), it creates a temporary logical replication slot with the
// test_decoding plugin on a dedicated session instead (pgStream), and says
// why in Capture. Either way Poll reads the COMMIT records written since
// the last Poll, in commit (WAL) order. The slots are temporary, so they
// disappear with their session even if txray crashes; Close drops them
// explicitly.
func (p *pgDB) CommitStream(ctx context.Context) (CommitStream, string, error) {
	var why string
	if !p.logicalOnly {
		w, err := p.openWALStream(ctx)
		if err == nil {
			return w, "", nil
		}
		if ctx.Err() != nil {
			return nil, "", err
		}
		why = fmt.Sprintf("the WAL's commit records cannot be read (%v)", ScrubError(err, p.url))
	}
	return p.logicalStream(ctx, why)
}

// UseLogicalCommitStream makes CommitStream use the logical decoding slot
// (test_decoding) without trying the WAL stream: for tests and benchmarks
// that compare the two captures.
func (p *pgDB) UseLogicalCommitStream() { p.logicalOnly = true }

// logicalStream is CommitStream's test_decoding slot; why is the reason
// the WAL stream was not used ("" when it was not tried).
func (p *pgDB) logicalStream(ctx context.Context, why string) (CommitStream, string, error) {
	c, err := pgx.ConnectConfig(ctx, p.cfg.Copy())
	if err != nil {
		return nil, "", err
	}
	var wal string
	sctx, cancel := p.o.stmt(ctx)
	defer cancel()
	if err := c.QueryRow(sctx, "SHOW wal_level").Scan(&wal); err != nil {
		c.Close(ctx)
		return nil, "", err
	}
	if wal != "logical" {
		c.Close(ctx)
		return nil, fmt.Sprintf("postgres wal_level is %q, not \"logical\", and %s: no exact commit order (enable with ALTER SYSTEM SET wal_level = logical and a server restart)", wal, why), nil
	}
	name := fmt.Sprintf("txray_%d_%d", os.Getpid(), rand.Uint32())
	if _, err := c.Exec(sctx, "SELECT pg_create_logical_replication_slot($1, 'test_decoding', true)", name); err != nil {
		c.Close(ctx)
		if why != "" {
			why = ", and " + why
		}
		return nil, fmt.Sprintf("postgres: cannot create a logical replication slot (%v)%s: no exact commit order", err, why), nil
	}
	return &pgStream{c: c, slot: name, why: why}, "", nil
}

type pgStream struct {
	c    *pgx.Conn
	slot string
	why  string // why the WAL stream is not used
}

// Capture says how commit_ts is obtained (the history header's commit_ts).
func (s *pgStream) Capture() string {
	c := "commit LSN from a logical decoding slot (test_decoding): exact WAL commit order"
	if s.why != "" {
		c += "; " + s.why
	}
	return c
}

// BackendPID is the server process decoding the slot (benchmarks read its
// CPU time).
func (s *pgStream) BackendPID() int { return int(s.c.PgConn().PID()) }

func (s *pgStream) Poll(ctx context.Context) ([]CommitRecord, error) {
	rows, err := s.c.Query(ctx, `SELECT lsn::text, xid::text, data FROM pg_logical_slot_get_changes($1, NULL, NULL,
		'include-xids', '1', 'include-timestamp', '1', 'skip-empty-xacts', '0') WHERE data LIKE 'COMMIT%'`, s.slot)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CommitRecord
	for rows.Next() {
		// Parsed from the raw text columns: a read returns a row per
		// committed writer, and scanning each into three strings was most
		// of the client's cost of reading the stream.
		v := rows.RawValues()
		if len(v) != 3 {
			return nil, fmt.Errorf("commit stream: %d columns, want 3", len(v))
		}
		r := CommitRecord{}
		var err error
		r.LSN, err = parseLSNBytes(v[0])
		if err != nil {
			return nil, err
		}
		for _, d := range v[1] {
			if d < '0' || d > '9' {
				return nil, fmt.Errorf("commit stream: bad xid %q", v[1])
			}
			r.XID = r.XID*10 + uint64(d-'0')
		}
		data := v[2]
		if i := bytes.Index(data, []byte("(at ")); i >= 0 && len(data) > 0 && data[len(data)-1] == ')' {
			r.Time = string(data[i+4 : len(data)-1])
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// parseLSNBytes is ParseLSN on the raw text of an LSN column.
func parseLSNBytes(b []byte) (uint64, error) {
	var hi, lo uint64
	half, digits := &hi, 0
	for _, c := range b {
		var d byte
		switch {
		case c == '/' && half == &hi && digits > 0:
			half, digits = &lo, 0
			continue
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		default:
			return 0, fmt.Errorf("bad LSN %q", b)
		}
		if *half = *half<<4 | uint64(d); *half > 0xFFFFFFFF {
			return 0, fmt.Errorf("bad LSN %q", b)
		}
		digits++
	}
	if half != &lo || digits == 0 {
		return 0, fmt.Errorf("bad LSN %q", b)
	}
	return hi<<32 | lo, nil
}

func (s *pgStream) Close(ctx context.Context) error {
	_, err := s.c.Exec(ctx, "SELECT pg_drop_replication_slot($1)", s.slot)
	if e := s.c.Close(ctx); err == nil {
		err = e
	}
	return err
}

// ParseLSN parses a PostgreSQL LSN "X/Y" (hex halves) into a number that
// orders like the WAL position.
func ParseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("bad LSN %q", s)
	}
	h, err := strconv.ParseUint(hi, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("bad LSN %q", s)
	}
	l, err := strconv.ParseUint(lo, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("bad LSN %q", s)
	}
	return h<<32 | l, nil
}
