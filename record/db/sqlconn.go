package db

import (
	"context"
	"database/sql"
	"time"
)

// sqlConn is a Conn over one dedicated database/sql connection; SQLite and
// MySQL share it and differ in begin SQL, classification and evidence.
type sqlConn struct {
	c     *sql.Conn
	begin string
	// beginQuery, if set, replaces begin: one round trip of several
	// statements, the transaction's start first; it returns the
	// statements to send and reads their results into the evidence
	// (MariaDB snapshot markers, mysnap.go). beginWrites: it writes, so
	// the transaction counts as a writer at COMMIT.
	beginQuery  func() string
	beginScan   func(rows *sql.Rows, ev *TxnEvidence) error
	beginWrites bool
	classify    func(err error, atCommit bool) (Outcome, Class)
	// commitQuery, if set, replaces COMMIT: one round
	// trip of several statements, COMMIT first; commitScan reads the
	// evidence from the result set after COMMIT's.
	commitQuery string
	commitScan  func(rows *sql.Rows, ev *TxnEvidence) error
	// beforeCommit, if set, runs just before COMMIT in transactions that
	// executed a statement through Exec (wrote); an error aborts the
	// transaction like any statement error.
	beforeCommit func(ctx context.Context, c *sql.Conn, ev *TxnEvidence) error
	// afterCommit, if set, collects evidence after a plain COMMIT was
	// acknowledged (wrote: the transaction executed a statement through
	// Exec); it cannot fail the transaction.
	afterCommit func(ctx context.Context, c *sql.Conn, ev *TxnEvidence, wrote bool)
	wrote       bool
	// gtidAsked counts COMMITs whose GTID took a second round trip
	// (MariaDB, mysql.go); tests check it stays 0.
	gtidAsked int
	ev        TxnEvidence
	// timeout bounds each statement (0: none; SQLite is in-process).
	timeout time.Duration
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

func (s *sqlConn) Begin(ctx context.Context) error {
	s.ev = TxnEvidence{}
	s.wrote = false
	ctx, cancel := bounded(ctx, s.timeout)
	defer cancel()
	if s.beginQuery != nil {
		rows, err := s.c.QueryContext(ctx, s.beginQuery())
		if err != nil {
			return err
		}
		err = s.beginScan(rows, &s.ev)
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			s.wrote = s.beginWrites
		}
		return err
	}
	_, err := s.c.ExecContext(ctx, s.begin)
	return err
}

func (s *sqlConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	ctx, cancel := bounded(ctx, s.timeout)
	defer cancel()
	s.wrote = true
	r, err := s.c.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	n, _ := r.RowsAffected()
	return n, nil
}

func (s *sqlConn) Query(ctx context.Context, q string, args ...any) (Rows, error) {
	ctx, cancel := bounded(ctx, s.timeout)
	r, err := s.c.QueryContext(ctx, q, args...)
	if err != nil {
		cancel()
		return nil, err
	}
	return cancelRows{sqlRows{r}, cancel}, nil
}

func (s *sqlConn) Commit(ctx context.Context) error {
	ctx, cancel := bounded(ctx, s.timeout)
	defer cancel()
	if s.beforeCommit != nil && s.wrote {
		if err := s.beforeCommit(ctx, s.c, &s.ev); err != nil {
			return err
		}
	}
	if s.commitQuery != "" {
		rows, err := s.c.QueryContext(ctx, s.commitQuery)
		if err != nil {
			return err // the COMMIT's own error (the first statement)
		}
		// The commit is acknowledged; failing to read evidence only
		// loses evidence, never the outcome. (go-sql-driver already
		// skips COMMIT's empty result; look at every set to be sure.)
		for s.commitScan(rows, &s.ev) != nil && rows.NextResultSet() {
		}
		rows.Close()
		return nil
	}
	if _, err := s.c.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	if s.afterCommit != nil {
		s.afterCommit(ctx, s.c, &s.ev, s.wrote)
	}
	return nil
}

func (s *sqlConn) Rollback(ctx context.Context) error {
	ctx, cancel := bounded(ctx, s.timeout)
	defer cancel()
	_, err := s.c.ExecContext(ctx, "ROLLBACK")
	return err
}

func (s *sqlConn) Evidence() TxnEvidence { return s.ev }

func (s *sqlConn) Classify(err error, atCommit bool) (Outcome, Class) {
	return s.classify(err, atCommit)
}

func (s *sqlConn) Close() error {
	return s.c.Close()
}
