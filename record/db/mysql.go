package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"
)

// myDB is MariaDB or MySQL through go-sql-driver/mysql. Each session runs
// SET SESSION TRANSACTION ISOLATION LEVEL once, then START TRANSACTION per
// transaction. On MariaDB with the binary log enabled, @@last_gtid after
// COMMIT gives the commit's GTID; its sequence number orders commits
// (binlog_order_commits, on by default, makes binlog order the commit order).
type myDB struct {
	db *sql.DB
	// clients opens recording MariaDB client sessions over gtidConn
	// (mytrack.go), each on a fresh connection (no idle pool), so every
	// session's dial is its own; nil when not recording.
	clients *sql.DB
	o       Options
	mariadb bool
	gtid    bool
	// lock is the session holding the run lock (see Exclusive).
	lock     *sql.Conn
	lockName string
	// dsn is the address as given, for scrubbing messages.
	dsn string
	// snapshot markers (mysnap.go): markRows holds the connection id of
	// every session that registered a marker row, deleted at Close.
	marksOnce sync.Once
	marksErr  error
	marksMu   sync.Mutex
	markRows  map[int64]bool
}

// Exclusive takes the named lock "txray_run:<database>" with GET_LOCK on a
// dedicated session (named locks are server-wide, so the name includes the
// database; the server releases them when the session ends).
func (m *myDB) Exclusive(ctx context.Context, wait func()) error {
	if m.lock != nil {
		return nil
	}
	var dbName sql.NullString
	sctx, cancel := m.o.stmt(ctx)
	err := m.db.QueryRowContext(sctx, "SELECT DATABASE()").Scan(&dbName)
	cancel()
	if err != nil {
		return fmt.Errorf("mysql: SELECT DATABASE(): %v", err)
	}
	name := "txray_run:" + dbName.String
	cctx, cancel := m.o.connect(ctx)
	c, err := m.db.Conn(cctx)
	cancel()
	if err != nil {
		return fmt.Errorf("mysql: connect: %v", ScrubError(err, m.dsn))
	}
	for waited := false; ; {
		var got sql.NullInt64
		timeout := 0
		if waited {
			timeout = 1
		}
		sctx, cancel := m.o.stmt(ctx)
		err := c.QueryRowContext(sctx, "SELECT GET_LOCK(?, ?)", name, timeout).Scan(&got)
		cancel()
		if err != nil {
			c.Close()
			return fmt.Errorf("mysql: GET_LOCK: %v", err)
		}
		if got.Int64 == 1 {
			break
		}
		if !waited {
			wait()
			waited = true
		}
		if err := ctx.Err(); err != nil {
			c.Close()
			return fmt.Errorf("mysql: waiting for another txray run on this database: %v", err)
		}
	}
	m.lock, m.lockName = c, name
	return nil
}

func openMySQL(ctx context.Context, rawURL string, u *url.URL, o Options) (DB, error) {
	cfg := mysql.NewConfig()
	cfg.Net = "tcp"
	// Dial timeout; the handshake and authentication are bounded by the
	// connect context (the driver closes the socket when it ends).
	cfg.Timeout = o.ConnectTimeout
	// The statement timeout is the driver's I/O deadline on every packet
	// read and write: a server that stops answering mid-statement ends the
	// statement (and the session). A context deadline per statement is
	// not used: cancelling each statement's context as it returns raced
	// with go-sql-driver's cancel watcher and broke sessions mid-transaction
	// (leopard then saw reads of writes recorded as aborted).
	cfg.ReadTimeout, cfg.WriteTimeout = o.StatementTimeout, o.StatementTimeout
	cfg.Addr = u.Host
	if u.Port() == "" {
		cfg.Addr = u.Hostname() + ":3306"
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	cfg.InterpolateParams = true // one round trip per statement
	// Recording on MariaDB sends "COMMIT; SELECT @@last_gtid" as one
	// round trip (see Conn); nothing else sends several statements.
	cfg.MultiStatements = o.Record
	if cfg.DBName != "" {
		// Create the database if missing, as PostgreSQL URLs assume it.
		c2 := cfg.Clone()
		c2.DBName = ""
		if conn, err := mysql.NewConnector(c2); err == nil {
			d := sql.OpenDB(conn)
			cctx, cancel := o.connect(ctx)
			_, _ = d.ExecContext(cctx, "CREATE DATABASE IF NOT EXISTS `"+strings.ReplaceAll(cfg.DBName, "`", "")+"`")
			cancel()
			d.Close()
		}
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql %s: %w", Redact(rawURL), ScrubError(err, rawURL))
	}
	m := &myDB{db: sql.OpenDB(conn), o: o, dsn: rawURL}
	if o.Record {
		cc := cfg.Clone()
		cc.DialFunc = dialGTID
		if conn, err := mysql.NewConnector(cc); err == nil {
			m.clients = sql.OpenDB(conn)
			m.clients.SetMaxIdleConns(0)
		}
	}
	cctx, cancel := o.connect(ctx)
	err = m.db.PingContext(cctx)
	cancel()
	if err != nil {
		m.db.Close()
		return nil, fmt.Errorf("mysql %s: %w (connect timeout %v)", Redact(rawURL), ScrubError(err, rawURL), o.ConnectTimeout)
	}
	v, _ := m.Version(ctx)
	m.mariadb = strings.Contains(strings.ToLower(v), "mariadb")
	if o.Record {
		var logBin sql.NullInt64
		_ = m.db.QueryRowContext(ctx, "SELECT @@log_bin").Scan(&logBin)
		switch {
		case !m.mariadb:
			o.Warn("mysql (not MariaDB): no per-commit GTID is read; no commit order recorded")
		case logBin.Int64 != 1:
			o.Warn("mariadb binary log is off (log_bin=0): @@last_gtid is empty, no commit order recorded (start mariadbd with --log-bin to get it)")
		default:
			m.gtid = true
		}
	}
	return m, nil
}

// Name is "mariadb" for MariaDB servers (so DBMS profiles such as
// mariadb:repeatable-read resolve), else "mysql".
func (m *myDB) Name() string {
	if m.mariadb {
		return "mariadb"
	}
	return "mysql"
}

func (m *myDB) Level() string        { return m.o.Level }
func (m *myDB) Param(int) string     { return "?" }
func (m *myDB) TextType() string     { return "LONGTEXT" }
func (m *myDB) HasCommitOrder() bool { return m.gtid }

func (m *myDB) Upsert(table string, appendList bool) string {
	if appendList {
		return "INSERT INTO " + table + " (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', VALUES(v))"
	}
	return "INSERT INTO " + table + " (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)"
}

func (m *myDB) Version(ctx context.Context) (string, error) {
	var v string
	ctx, cancel := m.o.stmt(ctx)
	defer cancel()
	err := m.db.QueryRowContext(ctx, "SELECT version()").Scan(&v)
	if err == nil && !strings.Contains(strings.ToLower(v), "mariadb") {
		v = "MySQL " + v
	}
	return v, err
}

func (m *myDB) Setup(ctx context.Context, stmts ...string) error {
	for _, q := range stmts {
		sctx, cancel := m.o.stmt(ctx)
		_, err := m.db.ExecContext(sctx, q)
		cancel()
		if err != nil {
			return fmt.Errorf("setup %q: %v", q, err)
		}
	}
	return nil
}

func (m *myDB) Conn(ctx context.Context) (Conn, error) {
	cctx, cancel := m.o.connect(ctx)
	defer cancel()
	pool, slot := m.db, &gtidSlot{}
	if m.gtid && m.clients != nil {
		pool, cctx = m.clients, context.WithValue(cctx, gtidSlotKey{}, slot)
	}
	c, err := pool.Conn(cctx)
	if err != nil {
		return nil, ScrubError(err, m.dsn)
	}
	if _, err := c.ExecContext(cctx, "SET SESSION TRANSACTION ISOLATION LEVEL "+sqlLevel(m.o.Level)); err != nil {
		c.Close()
		return nil, err
	}
	sc := &sqlConn{c: c, begin: "START TRANSACTION", classify: classifyMySQL}
	if m.o.Record && m.o.Snapshots && m.o.Level == RepeatableRead {
		if err := m.withSnapMarks(cctx, c, sc); err != nil {
			c.Close()
			return nil, err
		}
	}
	if !m.gtid {
		return sc, nil
	}
	scanGTID := func(rows *sql.Rows, ev *TxnEvidence) error {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return sql.ErrNoRows
		}
		var g sql.NullString
		if err := rows.Scan(&g); err != nil {
			return err
		}
		setGTID(ev, g.String)
		return nil
	}
	slot.mu.Lock()
	g := slot.c
	slot.mu.Unlock()
	if g != nil {
		if _, err := c.ExecContext(cctx, "SET SESSION session_track_system_variables = 'last_gtid'"); err != nil {
			g = nil
		}
	}
	if g == nil {
		// No session tracking: the GTID is read in the COMMIT's own
		// round trip (an extra round trip per transaction was most of
		// the recording overhead on MariaDB, docs/benchmarks.md).
		sc.commitQuery = "COMMIT; SELECT @@last_gtid"
		sc.commitScan = scanGTID
		return sc, nil
	}
	// The GTID comes with COMMIT's OK packet (mytrack.go). A transaction
	// that wrote but whose OK packet carried none (not expected; e.g. a
	// server that does not track last_gtid although it accepted the
	// setting) asks for it in a second round trip, so no committed writer
	// goes without its GTID.
	sc.afterCommit = func(ctx context.Context, c *sql.Conn, ev *TxnEvidence, wrote bool) {
		if gt := g.takeGTID(); gt != "" || !wrote {
			setGTID(ev, gt)
			return
		}
		sc.gtidAsked++
		if rows, err := c.QueryContext(ctx, "SELECT @@last_gtid"); err == nil {
			_ = scanGTID(rows, ev)
			rows.Close()
		}
	}
	return sc, nil
}

// setGTID records a MariaDB GTID and, in domain 0, its sequence number as
// the commit position.
func setGTID(ev *TxnEvidence, g string) {
	ev.GTID = g
	if n, ok := gtidSeq(g); ok {
		ev.CommitTS.P, ev.CommitTS.Set = n, true
	}
}

// gtidSeq extracts the sequence number of a MariaDB GTID "domain-server-seq"
// in domain 0 (other domains are not totally ordered with it).
func gtidSeq(g string) (int64, bool) {
	parts := strings.Split(g, "-")
	if len(parts) != 3 || parts[0] != "0" {
		return 0, false
	}
	n, err := strconv.ParseInt(parts[2], 10, 64)
	return n, err == nil
}

func (m *myDB) CommitStream(context.Context) (CommitStream, string, error) {
	return nil, "mysql: commit order comes from @@last_gtid per commit, not a stream", nil
}

func (m *myDB) Close() error {
	if m.lock != nil {
		// Release before the connection goes back to the pool (and is
		// closed with it below).
		_, _ = m.lock.ExecContext(context.Background(), "DO RELEASE_LOCK(?)", m.lockName)
		m.lock.Close()
		m.lock = nil
	}
	if m.clients != nil {
		m.clients.Close()
	}
	m.dropSnapMarks()
	return m.db.Close()
}

// MySQL/MariaDB error numbers used by Classify.
const (
	myLockWaitTimeout = 1205
	myDeadlock        = 1213
	myRecordChanged   = 1020 // MariaDB innodb_snapshot_isolation write conflict
)

func classifyMySQL(err error, atCommit bool) (Outcome, Class) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case myDeadlock:
			return Aborted, ClassDeadlock
		case myLockWaitTimeout:
			return Aborted, ClassLockTimeout
		case myRecordChanged:
			return Aborted, ClassSerialization
		}
		return Aborted, ClassOther
	}
	if atCommit {
		return Unknown, ClassConnection
	}
	return Aborted, ClassConnection
}
