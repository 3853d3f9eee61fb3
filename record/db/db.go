// Package db holds txray's database adapters for the recorder: embedded
// SQLite (the default, pure Go), PostgreSQL (pgx v5) and MariaDB/MySQL
// (go-sql-driver/mysql).
//
// Only the recorder (package record and its workloads) talks to databases;
// the checking core never imports this package.
//
// An adapter gives each client its own Conn (one server session), runs
// transactions with explicit BEGIN/COMMIT at the isolation level chosen at
// Open, classifies errors into the three outcomes a history can state
// (committed, aborted, unknown; see Outcome), and collects whatever
// per-transaction evidence the server offers (TxnEvidence). docs/recorder.md
// lists what each adapter records.
package db

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/txray/txray/history"
)

// Isolation levels, by their canonical txray names.
const (
	ReadUncommitted = "read-uncommitted"
	ReadCommitted   = "read-committed"
	RepeatableRead  = "repeatable-read"
	Serializable    = "serializable"
)

// ParseLevel canonicalises an isolation level name: read-uncommitted (ru),
// read-committed (rc), repeatable-read (rr), serializable (ser). Spaces and
// underscores are accepted in place of hyphens.
func ParseLevel(s string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.NewReplacer(" ", "-", "_", "-").Replace(t)
	switch t {
	case "ru", "read-uncommitted":
		return ReadUncommitted, nil
	case "rc", "read-committed":
		return ReadCommitted, nil
	case "rr", "repeatable-read":
		return RepeatableRead, nil
	case "ser", "serializable", "":
		return Serializable, nil
	}
	return "", fmt.Errorf("unknown isolation level %q (want read-uncommitted, read-committed, repeatable-read or serializable)", s)
}

// sqlLevel renders a canonical level in SQL syntax ("REPEATABLE READ").
func sqlLevel(level string) string {
	return strings.ToUpper(strings.ReplaceAll(level, "-", " "))
}

// Outcome is what an error means for the transaction it hit.
type Outcome uint8

const (
	// Aborted: the transaction certainly did not commit (the server
	// reported an error, or COMMIT was never sent).
	Aborted Outcome = iota
	// Unknown: COMMIT may have reached the server but its answer was lost
	// (connection lost, timeout); the transaction may have committed.
	Unknown
)

// Class is a finer reason for an abort, for statistics and retries.
type Class uint8

const (
	// ClassOther is any other server-reported error.
	ClassOther Class = iota
	// ClassSerialization is a serialization failure (SQLSTATE 40001,
	// SQLite busy snapshot).
	ClassSerialization
	// ClassDeadlock is a deadlock the server detected (40P01, MySQL 1213).
	ClassDeadlock
	// ClassConnection is a lost connection or client-side timeout; the
	// Conn must be discarded.
	ClassConnection
	// ClassLockTimeout is a lock wait that gave up without a deadlock being
	// known: MySQL/MariaDB lock wait timeout (1205), SQLite busy/locked
	// (the busy timeout ran out), PostgreSQL lock_timeout (55P03).
	ClassLockTimeout
)

func (c Class) String() string {
	switch c {
	case ClassSerialization:
		return "serialization"
	case ClassDeadlock:
		return "deadlock"
	case ClassConnection:
		return "connection"
	case ClassLockTimeout:
		return "lock-timeout"
	}
	return "other"
}

// TxnEvidence is per-transaction evidence gathered by a Conn while it
// recorded a transaction.
type TxnEvidence struct {
	// XID is the PostgreSQL transaction id (pg_current_xact_id), 0 if none.
	XID uint64
	// Snapshot is the PostgreSQL snapshot (pg_current_snapshot) taken by
	// the transaction's first statement: "xmin:xmax:xip,...".
	Snapshot string
	// GTID is the MariaDB @@last_gtid read right after COMMIT.
	GTID string
	// CommitTS is a commit position known at commit time (MariaDB GTID
	// sequence number); PostgreSQL positions come from a CommitStream.
	CommitTS history.Timestamp
	// Marks is the MariaDB/MySQL snapshot marker vector the transaction's
	// first consistent read saw ("session:seq,..."), and MarkSession and
	// MarkSeq the marker it wrote itself (see Options.Snapshots); empty
	// and zero without marker capture.
	Marks                string
	MarkSession, MarkSeq int64
	// LegacyXID and LegacySnapshot are what PostgreSQL's earlier capture,
	// SELECT pg_current_xact_id(), pg_current_snapshot() right after
	// BEGIN in every transaction, returns; only for differential tests
	// (the adapter's CaptureLegacyEvidence).
	LegacyXID      uint64
	LegacySnapshot string
}

// Rows is a result set (pgx.Rows or *sql.Rows behind one face).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Conn is one client session. It is not safe for concurrent use.
type Conn interface {
	// Begin starts a transaction at the adapter's level.
	Begin(ctx context.Context) error
	// Exec runs a statement inside the transaction.
	Exec(ctx context.Context, q string, args ...any) (rowsAffected int64, err error)
	// Query runs a query inside the transaction.
	Query(ctx context.Context, q string, args ...any) (Rows, error)
	// Commit commits. A nil error means the server acknowledged the commit.
	Commit(ctx context.Context) error
	// Rollback aborts the open transaction (best effort).
	Rollback(ctx context.Context) error
	// Evidence returns the evidence collected for the last transaction.
	Evidence() TxnEvidence
	// Classify tells what err (from a statement, or from COMMIT when
	// atCommit) means for the transaction.
	Classify(err error, atCommit bool) (Outcome, Class)
	// Close ends the session.
	Close() error
}

// Dialect renders the SQL that differs between databases.
type Dialect interface {
	// Param is the i-th (1-based) placeholder: "$1" or "?".
	Param(i int) string
	// Upsert renders a one-statement insert-or-replace of (k, v) into
	// table; with appendList, an existing v becomes v || ',' || new v (the
	// Elle list-append SQL encoding).
	Upsert(table string, appendList bool) string
	// TextType and IntType are column types.
	TextType() string
}

// CommitRecord is one commit seen in the database's commit log.
type CommitRecord struct {
	XID  uint64 // 32-bit xid as the log shows it
	LSN  uint64 // commit position
	Time string // commit timestamp, if the log shows it
}

// CommitStream reads commits in exact commit order (PostgreSQL: the WAL's
// commit records, read from its segment files, or a logical decoding
// slot). Poll returns the commits written since the last Poll.
// A stream may also have Capture() string, which says how it obtains the
// commit order (the history header's commit_ts).
type CommitStream interface {
	Poll(ctx context.Context) ([]CommitRecord, error)
	// Close drops the slot.
	Close(ctx context.Context) error
}

// Options configure Open.
type Options struct {
	// Level is the canonical isolation level.
	Level string
	// Record asks the adapter to collect evidence (xid, snapshot, GTID).
	// With Record false (the overhead baseline) it issues no extra SQL.
	Record bool
	// Snapshots asks the MariaDB/MySQL adapter, at REPEATABLE READ, to
	// capture each transaction's read view with snapshot markers
	// (mysnap.go), for version sets of predicate reads. Other adapters
	// and levels ignore it. Needs Record.
	Snapshots bool
	// Warn is called once per limitation the server imposes (e.g.
	// wal_level below logical).
	Warn func(msg string)
	// ConnectTimeout bounds establishing one server session (TCP, TLS,
	// authentication and the session's setup statements); 0 means
	// DefaultConnectTimeout. A PostgreSQL URL's connect_timeout wins.
	ConnectTimeout time.Duration
	// StatementTimeout bounds each statement on the client side (the
	// round trip, not only the server's work, so a server that accepts and
	// never answers cannot hang a run); 0 means DefaultStatementTimeout.
	// A COMMIT that times out has an unknown outcome. Waiting for another
	// txray run's lock (Exclusive) is not bounded by it.
	StatementTimeout time.Duration
}

// Default timeouts for Options.
const (
	DefaultConnectTimeout   = 10 * time.Second
	DefaultStatementTimeout = 30 * time.Second
)

// DB is an opened database.
type DB interface {
	Dialect
	// Name is "sqlite", "postgres" or "mysql".
	Name() string
	// Version is the server's version string (SELECT version()).
	Version(ctx context.Context) (string, error)
	// Level is the effective canonical level transactions run at.
	Level() string
	// Setup runs DDL/loading statements outside any client transaction.
	Setup(ctx context.Context, stmts ...string) error
	// Exclusive takes a lock, held until Close (or until the process or
	// its session dies), that serializes txray runs on this database: the
	// workloads' tables have fixed names, so two runs at once would mix
	// their data and each would report anomalies that are not the
	// database's. When another run holds the lock, Exclusive calls wait
	// once and blocks until the lock is free or ctx ends. PostgreSQL uses
	// a session advisory lock (per database), MariaDB/MySQL a named lock
	// (GET_LOCK) named after the database; embedded SQLite on a fresh
	// temporary file needs none (a named SQLite file is not locked).
	Exclusive(ctx context.Context, wait func()) error
	// Conn opens a new client session.
	Conn(ctx context.Context) (Conn, error)
	// CommitStream starts a commit-order stream, or returns nil and a
	// reason when the server cannot provide one.
	CommitStream(ctx context.Context) (CommitStream, string, error)
	// Close releases the database.
	Close() error
}

// Open opens the database named by url: "" or "sqlite" or
// "sqlite:///path/file.db" (embedded SQLite; a fresh temporary file when no
// path is given), "postgres://user@host:port/db", "mysql://user:pass@host:port/db"
// (also "mariadb://").
func Open(ctx context.Context, rawURL string, o Options) (DB, error) {
	if o.Level == "" {
		o.Level = Serializable
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.StatementTimeout <= 0 {
		o.StatementTimeout = DefaultStatementTimeout
	}
	if rawURL == "" || rawURL == "sqlite" || rawURL == "sqlite:" || rawURL == "sqlite://" {
		return openSQLite(ctx, "", o)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("--db %q: %v", Redact(rawURL), ScrubError(err, rawURL))
	}
	switch u.Scheme {
	case "sqlite", "sqlite3", "file":
		p := u.Path
		if u.Opaque != "" {
			p = u.Opaque
		}
		if u.Host != "" {
			p = u.Host + p
		}
		return openSQLite(ctx, p, o)
	case "postgres", "postgresql":
		return openPostgres(ctx, rawURL, o)
	case "mysql", "mariadb":
		return openMySQL(ctx, rawURL, u, o)
	}
	return nil, fmt.Errorf("--db %q: unsupported scheme %q (want sqlite, postgres or mysql)", Redact(rawURL), u.Scheme)
}
