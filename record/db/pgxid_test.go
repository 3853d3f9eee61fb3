package db

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestXIDForm protects the statement forms that carry the xid on a
// transaction's first write: DML gets pg_current_xact_id() as its last
// returned column, and nothing else is touched (a read, a statement whose
// RETURNING is inside a CTE, a Query of DML without RETURNING, whose
// caller reads no rows).
func TestXIDForm(t *testing.T) {
	for _, tc := range []struct {
		name, q string
		query   bool
		want    string
	}{
		{"upsert", "INSERT INTO t AS t (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v", false,
			"INSERT INTO t AS t (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v RETURNING pg_current_xact_id()"},
		{"update trailing semicolon", "update t set v = $1 where k = $2;\n", false, "update t set v = $1 where k = $2 RETURNING pg_current_xact_id()"},
		{"delete", "  DELETE FROM t WHERE k IN (1,2)", false, "  DELETE FROM t WHERE k IN (1,2) RETURNING pg_current_xact_id()"},
		{"returning appended (query)", "UPDATE t SET v = 1 FROM (SELECT k FROM t FOR UPDATE) y WHERE t.k = y.k RETURNING t.k, y.v", true,
			"UPDATE t SET v = 1 FROM (SELECT k FROM t FOR UPDATE) y WHERE t.k = y.k RETURNING t.k, y.v, pg_current_xact_id()"},
		{"returning appended (exec)", "DELETE FROM t RETURNING k", false, "DELETE FROM t RETURNING k, pg_current_xact_id()"},
		{"cte upsert", "WITH r AS (SELECT set_config('txray.prev', '', true) AS x) INSERT INTO t SELECT $1, $2 FROM r RETURNING current_setting('txray.prev', true)", true,
			"WITH r AS (SELECT set_config('txray.prev', '', true) AS x) INSERT INTO t SELECT $1, $2 FROM r RETURNING current_setting('txray.prev', true), pg_current_xact_id()"},
		{"select", "SELECT v FROM t WHERE k = $1", true, ""},
		{"select exec", "SELECT pg_sleep(1)", false, ""},
		{"locking read", "SELECT v FROM t WHERE k = $1 FOR SHARE", true, ""},
		{"query of dml without returning", "UPDATE t SET v = 1", true, ""},
		{"cte returning inside parens", "WITH u AS (UPDATE t SET v = 1 RETURNING k) SELECT k FROM u", true, ""},
		{"cte returning inside parens (exec)", "WITH u AS (UPDATE t SET v = 1 RETURNING k) SELECT k FROM u", false, ""},
		{"returning in a literal", "INSERT INTO t (k, s) VALUES (1, 'RETURNING')", true, ""},
		{"returning as part of a word", "UPDATE t SET returnings = 1", false, "UPDATE t SET returnings = 1 RETURNING pg_current_xact_id()"},
		{"begin", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", false, ""},
		{"empty", "", false, ""},
		{"unterminated quote", "UPDATE t SET s = 'x RETURNING", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := xidForm(tc.q, tc.query); got != tc.want {
				t.Fatalf("xidForm(%q, %v) = %q, want %q", tc.q, tc.query, got, tc.want)
			}
		})
	}
}

// TestTakeXID: the xid column is read in either format pgx may ask for:
// xid8 in binary (eight bytes, big-endian; the default extended-protocol
// modes) or as text (the simple protocol); a value of another shape gives
// no xid rather than a wrong one, and the first xid of a transaction is
// kept.
func TestTakeXID(t *testing.T) {
	bin := []pgconn.FieldDescription{{Name: "k"}, {Name: "pg_current_xact_id", Format: pgx.BinaryFormatCode}}
	txt := []pgconn.FieldDescription{{Name: "k"}, {Name: "pg_current_xact_id", Format: pgx.TextFormatCode}}
	x := uint64(5)<<32 | 4000000123 // epoch 5
	be := []byte{0, 0, 0, 5, 0xee, 0x6b, 0x28, 0x7b}
	if binary.BigEndian.Uint64(be) != x {
		t.Fatal("test vector")
	}
	for _, tc := range []struct {
		name string
		fds  []pgconn.FieldDescription
		vals [][]byte
		want uint64
	}{
		{"binary", bin, [][]byte{[]byte("1"), be}, x},
		{"text", txt, [][]byte{[]byte("1"), []byte("25769803899")}, 25769803899},
		{"binary of another length", bin, [][]byte{[]byte("1"), be[:4]}, 0},
		{"text not a number", txt, [][]byte{[]byte("1"), []byte("12a")}, 0},
		{"columns and descriptions disagree", bin[1:], [][]byte{[]byte("1"), be}, 0},
		{"no columns", nil, nil, 0},
	} {
		c := &pgConn{}
		c.takeXID(tc.fds, tc.vals)
		if c.ev.XID != tc.want {
			t.Errorf("%s: xid %d, want %d", tc.name, c.ev.XID, tc.want)
		}
	}
	c := &pgConn{}
	c.takeXID(bin, [][]byte{nil, be})
	c.takeXID(txt, [][]byte{nil, []byte("7")})
	if c.ev.XID != x {
		t.Errorf("a later row replaced the transaction's xid: %d", c.ev.XID)
	}
}

// FuzzTakeXID: whatever a row's last column holds, takeXID does not panic
// and keeps either no xid or the column's exact value: the eight bytes
// big-endian in binary, the decimal number (strconv.ParseUint's) in text.
func FuzzTakeXID(f *testing.F) {
	f.Add(true, []byte{0, 0, 0, 5, 0xee, 0x6b, 0x28, 0x7b})
	f.Add(false, []byte("25769803899"))
	f.Add(false, []byte("18446744073709551615"))
	f.Add(false, []byte("18446744073709551616"))
	f.Add(false, []byte(""))
	f.Fuzz(func(t *testing.T, bin bool, v []byte) {
		format := int16(pgx.TextFormatCode)
		if bin {
			format = pgx.BinaryFormatCode
		}
		c := &pgConn{}
		c.takeXID([]pgconn.FieldDescription{{Format: format}}, [][]byte{v})
		var want uint64
		switch {
		case bin && len(v) == 8:
			want = binary.BigEndian.Uint64(v)
		case !bin:
			var err error
			if want, err = strconv.ParseUint(string(v), 10, 64); err != nil || len(v) > 0 && (v[0] == '+' || v[0] == '-') || bytes.ContainsRune(v, '_') {
				want = 0 // ParseUint's forms that are not plain digits
			}
		}
		if c.ev.XID != want {
			t.Fatalf("takeXID(binary %v, %q) = %d, want %d", bin, v, c.ev.XID, want)
		}
	})
}
