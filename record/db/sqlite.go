package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"

	sqlite "modernc.org/sqlite"
)

// SQLite result codes used by Classify (sqlite3.h).
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)

// sqliteDB is embedded SQLite (modernc.org/sqlite, pure Go) on a file in
// WAL mode with a busy timeout. SQLite only offers serializable isolation
// (https://www.sqlite.org/isolation.html), so every requested level runs as
// serializable and Level reports that.
type sqliteDB struct {
	db      *sql.DB
	path    string
	tempDir string
	o       Options
	// commitSeq numbers writers' commits (HasCommitOrder).
	commitSeq atomic.Int64
}

func openSQLite(ctx context.Context, path string, o Options) (DB, error) {
	s := &sqliteDB{o: o}
	if path == "" {
		dir, err := os.MkdirTemp("", "txray-sqlite-")
		if err != nil {
			return nil, err
		}
		s.tempDir = dir
		path = filepath.Join(dir, "txray.db")
	}
	s.path = path
	if o.Level != Serializable {
		o.Warn(fmt.Sprintf("sqlite offers only serializable isolation; running %s as serializable", o.Level))
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(wal)")
	q.Add("_pragma", "synchronous(normal)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		s.cleanup()
		return nil, err
	}
	s.db = db
	if err := db.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite %s: %v", path, err)
	}
	return s, nil
}

// HasCommitOrder: when recording, every transaction that wrote takes the
// next value of an in-process counter (sqliteDB.commitSeq) just before
// COMMIT, as its commit position (TxnEvidence.CommitTS). SQLite has one
// writer at a time (the database write lock, taken by a transaction's first
// write statement and held to its commit or rollback), so a writer takes
// its value while no other writer can commit, and the counter's order is
// exactly the commit order of the writers; commit order is the order they
// serialize in (https://www.sqlite.org/isolation.html: writers are
// serialized). The counter is in process memory, not a table: the run's
// database is its own (Exclusive), and an UPDATE of a counter row in every
// writing transaction measurably slowed SQLite runs (docs/benchmarks.md).
func (s *sqliteDB) HasCommitOrder() bool { return s.o.Record }

func (s *sqliteDB) cleanup() {
	if s.tempDir != "" {
		_ = os.RemoveAll(s.tempDir)
	}
}

func (s *sqliteDB) Name() string     { return "sqlite" }
func (s *sqliteDB) Level() string    { return Serializable }
func (s *sqliteDB) Param(int) string { return "?" }
func (s *sqliteDB) TextType() string { return "TEXT" }

func (s *sqliteDB) Upsert(table string, appendList bool) string {
	if appendList {
		return "INSERT INTO " + table + " (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = " + table + ".v || ',' || excluded.v"
	}
	return "INSERT INTO " + table + " (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v"
}

func (s *sqliteDB) Version(ctx context.Context) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v)
	return "SQLite " + v, err
}

func (s *sqliteDB) Setup(ctx context.Context, stmts ...string) error {
	for _, q := range stmts {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("setup %q: %v", q, err)
		}
	}
	return nil
}

func (s *sqliteDB) Conn(ctx context.Context) (Conn, error) {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	// DEFERRED: a transaction takes the write lock at its first write, so
	// read-then-write transactions can fail with SQLITE_BUSY_SNAPSHOT; that
	// is SQLite's serializable certifier, recorded as an abort.
	sc := &sqlConn{c: c, begin: "BEGIN DEFERRED", classify: classifySQLite}
	if s.o.Record {
		sc.beforeCommit = func(ctx context.Context, c *sql.Conn, ev *TxnEvidence) error {
			ev.CommitTS.P, ev.CommitTS.Set = s.commitSeq.Add(1), true
			return nil
		}
	}
	return sc, nil
}

// Exclusive does nothing: the default database is a fresh temporary file
// no other run uses. Two runs given the same named file are not kept apart.
func (s *sqliteDB) Exclusive(context.Context, func()) error { return nil }

func (s *sqliteDB) CommitStream(context.Context) (CommitStream, string, error) {
	return nil, "sqlite has no commit log to read", nil
}

func (s *sqliteDB) Close() error {
	var err error
	if s.db != nil {
		err = s.db.Close()
	}
	s.cleanup()
	return err
}

func classifySQLite(err error, atCommit bool) (Outcome, Class) {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqliteBusy:
			if se.Code() != sqliteBusy {
				return Aborted, ClassSerialization // SQLITE_BUSY_SNAPSHOT etc.
			}
			return Aborted, ClassLockTimeout
		case sqliteLocked:
			return Aborted, ClassLockTimeout
		}
		return Aborted, ClassOther
	}
	// An embedded database has no connection to lose: any other error is
	// reported before the commit took effect.
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		if atCommit {
			return Unknown, ClassConnection
		}
		return Aborted, ClassConnection
	}
	return Aborted, ClassOther
}
