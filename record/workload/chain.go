package workload

import (
	"context"
	"fmt"
	"strconv"

	"github.com/txray/txray/record/db"
)

// versionChain writes (k, v) into a (k bigint primary key, v bigint) table
// and learns the version the write replaced, under the row's write lock, so
// that the chain of replaced versions is each key's exact version order
// (the seed paper's version certificate, recovered without a commit log):
//
//   - PostgreSQL, one statement (see newVersionChain): a CTE sets the
//     transaction-local setting txray.prev to the empty string, then
//     INSERT ... SELECT $1, $2 FROM the CTE ON CONFLICT (k) DO UPDATE SET
//     v = CASE WHEN set_config('txray.prev', 'v' || t.v, true) is not empty
//     THEN excluded.v END RETURNING current_setting('txray.prev'). The CTE
//     clears the setting before the insert; when the row
//     exists, ON CONFLICT DO UPDATE locks it (at read committed after
//     waiting for a concurrent writer, then on its latest committed version;
//     at repeatable read and serializable a concurrent update is a
//     serialization failure) and its SET stores the version it replaces in
//     the setting, which RETURNING reads after the update: "" means the row
//     was inserted, "v<value>" the replaced version. (The earlier form,
//     UPDATE ... FROM (SELECT ... FOR UPDATE) RETURNING and an INSERT when
//     no row existed, took two round trips for a new row.)
//   - MariaDB/MySQL: INSERT ... ON DUPLICATE KEY UPDATE v = IF((@txray_prev
//     := v) IS NULL, VALUES(v), VALUES(v)); the assignment reads the locked
//     current row. Rows affected 1 means inserted (no prior version), 2
//     updated, and SELECT @txray_prev gives the replaced value.
//
// Other dialects (SQLite) get nil: the plain upsert, no chain.
//
// The MariaDB form was disabled for a while (mysqlChain): runs using it
// showed committed reads of versions written by transactions the client
// saw abort. The cause was the recorder's per-statement timeout, which
// cancelled each statement's context as it returned and broke MariaDB
// sessions mid-transaction (fixed in 84cff63: the timeout is now the
// driver's read/write deadline); with it fixed the capture is on again,
// and TestLeopardMariaDBNoFalsePositives and the MariaDB certificate tests
// pass with it.
//
// Deletes (tombstones): a row the predicate workload deleted is gone, so
// the upsert that re-inserts it replaces no row and cannot say which
// deleted version it follows. With tombs set, the delete also stores the
// deleted version's id (the tombstone) in the side table tombs (k, v), one
// row per key created at setup (v NULL: never deleted), under the same
// transaction; an upsert that inserted then reads tombs' row of the key
// with a locking read (FOR SHARE / LOCK IN SHARE MODE): a re-insert can
// only succeed once the deleter committed (the unique key waits for it),
// and no later delete of the key can run before the inserter commits, so
// that row is the version the insert follows.
type versionChain struct {
	pg     bool
	upsert string
	// tombRead reads the tombstone of a key (one parameter); "" without
	// a tombstone table.
	tombRead string
}

// mysqlChain enables the MariaDB/MySQL replaced-version capture (see
// above); kept as a switch to compare runs with and without it.
var mysqlChain = true

func newVersionChain(d db.Dialect, table string) *versionChain {
	switch d.Param(1) {
	case "$1":
		return &versionChain{pg: true,
			upsert: "WITH r AS (SELECT set_config('txray.prev', '', true) AS x) INSERT INTO " + table + " AS t (k, v) SELECT $1::bigint, $2::bigint FROM r " +
				"ON CONFLICT (k) DO UPDATE SET v = CASE WHEN set_config('txray.prev', 'v' || coalesce(t.v::text, 'null'), true) <> '' THEN excluded.v END " +
				"RETURNING current_setting('txray.prev', true)"}
	case "?":
		if n, ok := d.(interface{ Name() string }); ok && (n.Name() == "mariadb" || n.Name() == "mysql") && mysqlChain {
			return &versionChain{upsert: "INSERT INTO " + table + " (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = IF((@txray_prev := v) IS NULL, VALUES(v), VALUES(v))"}
		}
	}
	return nil
}

// withTombs makes inserts follow the tombstones stored in table tombs (see
// versionChain).
func (vc *versionChain) withTombs(tombs string) {
	if vc.pg {
		vc.tombRead = "SELECT v FROM " + tombs + " WHERE k = $1 FOR SHARE"
	} else {
		vc.tombRead = "SELECT v FROM " + tombs + " WHERE k = ? LOCK IN SHARE MODE"
	}
}

// inserted records the version an insert of k replaced: the unborn row, or
// with tombstones (deletes: the run deletes rows) the key's last deleted
// version. Without deletes no row was ever deleted, so an insert follows
// the unborn row and the tombstone read (a locking read, which also gives
// the transaction an xid) is left out.
func (vc *versionChain) inserted(ctx context.Context, c db.Conn, o *Op, k int64, deletes bool) error {
	if vc.tombRead == "" || !deletes {
		o.PrevKnown, o.PrevNone = true, true
		return nil
	}
	prev, n, err := queryOne[int64](ctx, c, vc.tombRead, k)
	if err != nil {
		return err
	}
	switch {
	case n != 1:
		// a key outside the table set up (not a version chain txray knows)
	case prev == nil:
		o.PrevKnown, o.PrevNone = true, true
	default:
		o.Prev, o.PrevKnown = *prev, true
	}
	return nil
}

// queryOne runs a query of one nullable column and returns the last row's
// value (nil: NULL or no row) and the number of rows.
func queryOne[T any](ctx context.Context, c db.Conn, q string, args ...any) (*T, int, error) {
	rows, err := c.Query(ctx, q, args...)
	if err != nil {
		return nil, 0, err
	}
	var v *T
	n, err := scanRows(rows, nil, &v)
	if err != nil {
		return nil, n, err
	}
	return v, n, nil
}

// write upserts (k, v) and records in o the version it replaced; deletes:
// the run deletes rows (see inserted).
func (vc *versionChain) write(ctx context.Context, c db.Conn, o *Op, k, v int64, deletes bool) error {
	if !vc.pg {
		n, err := c.Exec(ctx, vc.upsert, k, v)
		if err != nil {
			return err
		}
		switch n {
		case 1:
			return vc.inserted(ctx, c, o, k, deletes)
		case 2:
			prev, _, err := queryOne[int64](ctx, c, "SELECT @txray_prev")
			if err != nil {
				return err
			}
			if prev != nil {
				o.Prev, o.PrevKnown = *prev, true
			}
		}
		return nil
	}
	prev, n, err := queryOne[string](ctx, c, vc.upsert, k, v)
	if err != nil {
		return err
	}
	if n != 1 || prev == nil {
		return fmt.Errorf("%w: key %d: the upsert returned %d rows", ErrBadData, k, n)
	}
	switch p := *prev; {
	case p == "":
		return vc.inserted(ctx, c, o, k, deletes)
	case p == "vnull":
		// a row with v NULL (not written by txray): not a version
	default:
		x, err := strconv.ParseInt(p[1:], 10, 64)
		if err != nil || p[0] != 'v' {
			return fmt.Errorf("%w: key %d: replaced version %q", ErrBadData, k, p)
		}
		o.Prev, o.PrevKnown = x, true
	}
	return nil
}
