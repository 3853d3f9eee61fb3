package db

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
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
// among live connections), each session registers its own row, and the
// rows of a myDB's sessions are deleted together when the myDB closes
// (dropSnapMarks), not as each session closes: a read view created after
// a session closed must still see its last marker, or every transaction
// of that session would be predicted invisible to it although the view
// sees their writes. No one empties the table (rows left by a killed
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
// trip (above), registering the session's marker row first. The row stays
// until the myDB closes (setupSnapMarks). A connection id that one of
// this myDB's earlier sessions had (possible only if the server restarted
// or its ids wrapped) is an error: resetting the row would make the
// earlier session's transactions look invisible to later read views.
func (m *myDB) withSnapMarks(ctx context.Context, c *sql.Conn, sc *sqlConn) error {
	if err := m.setupSnapMarks(ctx); err != nil {
		return err
	}
	mk := &snapMarker{}
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&mk.session); err != nil {
		return err
	}
	m.marksMu.Lock()
	if m.markRows == nil {
		m.markRows = map[int64]bool{}
	}
	reused := m.markRows[mk.session]
	m.markRows[mk.session] = true
	m.marksMu.Unlock()
	if reused {
		return fmt.Errorf("mysql: snapshot markers: connection id %d was already used by an earlier session of this run (server restarted?); its markers would be ambiguous", mk.session)
	}
	if _, err := c.ExecContext(ctx, "INSERT INTO "+snapMarks+" (s, n) VALUES (?, 0) ON DUPLICATE KEY UPDATE n = 0", mk.session); err != nil {
		return err
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

// dropSnapMarks deletes the marker rows of every session this myDB
// registered (best effort: a row left behind is never read as anyone's).
// Close calls it once the sessions are closed; no read view of this myDB
// is taken after it. One statement per row, by primary key: a DELETE of
// several rows by an IN list is planned as a full scan of the (small)
// table, which locks every row it passes, so it waited for another
// process's open transaction on that transaction's own marker row and,
// meanwhile, blocked every other session's marker UPDATE behind the rows
// it had locked (TestMariaDBSnapshotMarkersExact stalled on it for the
// 30 s statement timeout). A point DELETE locks its own row only.
func (m *myDB) dropSnapMarks() {
	m.marksMu.Lock()
	ids := slices.Sorted(maps.Keys(m.markRows))
	m.markRows = nil
	m.marksMu.Unlock()
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = m.db.ExecContext(ctx, "DELETE FROM "+snapMarks+" WHERE s = ?", id)
		cancel()
	}
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
