package db

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Snapshot markers: which committed transactions an InnoDB consistent read
// sees (MariaDB/MySQL REPEATABLE READ, Options.Snapshots).
//
// At REPEATABLE READ an InnoDB transaction's plain SELECTs read the read
// view created by its first consistent read (MariaDB KB "REPEATABLE READ";
// MySQL 8.4 Reference Manual 17.7.2.3 "Consistent Nonlocking Reads": all consistent
// reads within the same transaction read the snapshot established by the
// first such read). A read of a row walks its versions back from the
// newest and returns the first one whose writer the read view sees, or
// none. So the version set of a snapshot read is exact once the set of
// writers the read view sees is known.
//
// The binlog position of a snapshot (START TRANSACTION WITH CONSISTENT
// SNAPSHOT, then the status variables Binlog_snapshot_file and
// Binlog_snapshot_position, MariaDB KB "Enhancements for START TRANSACTION
// WITH CONSISTENT SNAPSHOT") would give that set in binlog order, but it is
// not exact when several sessions read it at once: on MariaDB 10.11 the
// two status variables are server-wide and a session's SHOW STATUS can
// report the position another session's snapshot just stored (an
// experiment with four concurrent readers disagreed with the rows read in
// 84 of 2158 snapshots; serialized readers never did; docs/recorder.md).
// Markers need no binary log and are exact by construction: the
// recorder's own session table
//
//	txray_snapmarks (s BIGINT PRIMARY KEY, n BIGINT)
//
// has one row per client session (its connection id); every transaction
// starts with
//
//	START TRANSACTION;
//	SELECT s, n FROM txray_snapmarks;       -- the first consistent read
//	UPDATE txray_snapmarks SET n = seq WHERE s = session
//
// in one round trip. The SELECT creates the transaction's read view and
// returns, for every session, the marker of its last transaction that view
// sees (a session's transactions are sequential, each writes the next
// marker, and a transaction's changes become visible atomically). A
// writer is visible to the read view iff its marker is at most the one the
// view saw of its session. Each session updates only its own row, and the
// SELECT is a consistent (non-locking) read, so markers add no lock
// conflicts between transactions. Every transaction writes, so every
// committed one gets a GTID (its commit position), which the recorder also
// uses for locking reads (certificate.go).
const snapMarks = "txray_snapmarks"

// snapMarker is one session's marker state.
type snapMarker struct {
	session, seq int64
}

// setupSnapMarks creates the marker table once per myDB. It is shared by
// every process using the database (txray runs, tests of this package):
// rows are keyed by the server's connection id (CONNECTION_ID(), unique
// among live connections), each session registers its own row and deletes
// it when it closes, and no one empties the table (rows left by a killed
// process stay, unread by anyone: a reused connection id resets its row).
func (m *myDB) setupSnapMarks(ctx context.Context) error {
	m.marksOnce.Do(func() {
		q := "CREATE TABLE IF NOT EXISTS " + snapMarks + " (s BIGINT NOT NULL PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB"
		sctx, cancel := m.o.stmt(ctx)
		_, err := m.db.ExecContext(sctx, q)
		cancel()
		if err != nil {
			m.marksErr = fmt.Errorf("mysql: snapshot markers: %q: %v", q, err)
		}
	})
	return m.marksErr
}

// withSnapMarks makes sc start every transaction with the marker round
// trip (above), registering the session's marker row first.
func (m *myDB) withSnapMarks(ctx context.Context, c *sql.Conn, sc *sqlConn) error {
	if err := m.setupSnapMarks(ctx); err != nil {
		return err
	}
	mk := &snapMarker{}
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&mk.session); err != nil {
		return err
	}
	if _, err := c.ExecContext(ctx, "INSERT INTO "+snapMarks+" (s, n) VALUES (?, 0) ON DUPLICATE KEY UPDATE n = 0", mk.session); err != nil {
		return err
	}
	sc.beforeClose = func(c *sql.Conn) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = c.ExecContext(ctx, "DELETE FROM "+snapMarks+" WHERE s = ?", mk.session)
	}
	sess := strconv.FormatInt(mk.session, 10)
	sc.beginQuery = func() string {
		mk.seq++
		return "START TRANSACTION; SELECT s, n FROM " + snapMarks + "; UPDATE " + snapMarks +
			" SET n = " + strconv.FormatInt(mk.seq, 10) + " WHERE s = " + sess
	}
	sc.beginScan = func(rows *sql.Rows, ev *TxnEvidence) error {
		var b strings.Builder
		n := 0
		for {
			for rows.Next() {
				var s, v int64
				if err := rows.Scan(&s, &v); err != nil {
					return err
				}
				if n > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.FormatInt(s, 10))
				b.WriteByte(':')
				b.WriteString(strconv.FormatInt(v, 10))
				n++
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if !rows.NextResultSet() {
				break
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if n == 0 {
			// the session's own row is always there: the SELECT did not run
			return fmt.Errorf("mysql: snapshot markers: the marker read returned no row")
		}
		ev.Marks, ev.MarkSession, ev.MarkSeq = b.String(), mk.session, mk.seq
		return nil
	}
	sc.beginWrites = true
	return nil
}

// ParseMarks parses a marker vector "session:seq,..." (TxnEvidence.Marks).
func ParseMarks(s string) (map[int64]int64, error) {
	out := map[int64]int64{}
	if s == "" {
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(f, ":")
		if !ok {
			return nil, fmt.Errorf("snapshot markers %q: %q is not session:seq", s, f)
		}
		k, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("snapshot markers %q: session: %v", s, err)
		}
		v, err := strconv.ParseInt(b, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("snapshot markers %q: seq: %v", s, err)
		}
		out[k] = v
	}
	return out, nil
}

// CaptureSnapshots turns on snapshot markers (Options.Snapshots) for the
// sessions opened after it; the recorder calls it for workloads with
// predicate reads. Only REPEATABLE READ recording sessions use them.
func (m *myDB) CaptureSnapshots() { m.o.Snapshots = true }
