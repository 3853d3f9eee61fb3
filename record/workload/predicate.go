package workload

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/db"
)

func init() {
	reg("predicate", func(d db.Dialect) Workload { return newPredicate(d) })
}

// predicate is a phantom-prone workload on a table of (k bigint primary
// key, v bigint) that starts empty. Its micro-ops:
//
//   - range reads (SELECT k, v ... WHERE k >= lo AND k <= hi), recorded as
//     a PredRead whose Where text uses the column names k and v and whose
//     Result lists the rows returned as (k, v);
//
//   - blind upserts of unique values, which insert a row the first time a
//     key is written (an insert into the ranges other transactions read:
//     the phantoms of Adya 1999 §4.4.3, G2 with predicate reads) and
//     update it afterwards;
//
//   - predicate updates (UPDATE ... SET v = base + (k - lo) WHERE k >= lo
//     AND k <= hi, a quarter of the writes), recorded as what they are in
//     Adya's model (§3.1, "predicate-based modifications"): a PredRead of
//     the WHERE clause, whose Result is the rows it matched at the versions
//     it replaced, followed by a Write of each matched row. Each row gets
//     its own unique value (base is a fresh block of values).
//
//   - with Config.Deletes, predicate deletes (DELETE ... WHERE k >= lo AND
//     k <= hi, an eighth of the writes, over half a range width), recorded likewise as a
//     PredRead of the rows deleted, at the versions deleted, followed by a
//     history.Delete of each: a deleted version (tombstone) whose id is a
//     fresh unique value. A later upsert of the key re-inserts the row (an
//     insert into the ranges other transactions read, again).
//
// Keys are fixed (0..Keys-1, no rotation) so ranges keep meaning; the range
// width is max(1, Keys/4).
//
// Certificate capture (off with Config.NoCertificate): on PostgreSQL and
// MariaDB/MySQL each write also returns the version it replaced
// (versionChain; a predicate update's matched rows are the replaced
// versions, a delete's the deleted ones, and a re-insert follows the
// tombstone the delete stored in PredTombs), from which the recorder builds
// the version order of every key without a commit log; on PostgreSQL at
// read committed each range read also returns the snapshot it read under
// (pg_current_snapshot() in the statement itself: the statement's
// snapshot), from which the recorder derives its version set; at
// repeatable read and serializable every statement reads under the
// transaction's snapshot, which the recorder reads with BEGIN
// (Config.TxnSnapshot), so range reads are the plain SELECT.
//
// The statements per database: PostgreSQL runs a predicate update as one
// UPDATE ... FROM (SELECT k, v ... FOR UPDATE) y ... RETURNING t.k, y.v,
// t.v (the replaced and the new version of each row it matched).
// MariaDB/MySQL run a locking read (SELECT ... FOR UPDATE, which locks the
// rows and at repeatable read and serializable the gaps) and then one
// UPDATE of exactly the rows it returned (k IN (...)), so no row is
// changed that the recorded read did not match, even at read committed,
// where gaps are not locked. SQLite runs the same without FOR UPDATE: it
// serializes writers, and a writer whose read snapshot is stale fails with
// SQLITE_BUSY_SNAPSHOT.
type predicate struct {
	read, snapRead, write string
	shadowRead            string
	pg, forUpdate         bool
	table                 string
	chain                 *versionChain // nil: plain upsert, no replaced version
}

// PredTombs is the predicate workload's tombstone table (k, v): the id of
// each key's last deleted version (see versionChain).
const PredTombs = PredTable + "_tombs"

func newPredicate(d db.Dialect) *predicate {
	t := PredTable
	w := &predicate{
		table: t,
		read:  "SELECT k, v FROM " + t + " WHERE k >= " + d.Param(1) + " AND k <= " + d.Param(2) + " ORDER BY k",
		write: d.Upsert(t, false),
		chain: newVersionChain(d, t),
	}
	if w.chain != nil {
		w.chain.withTombs(PredTombs)
	}
	if d.Param(1) == "$1" {
		w.pg = true
		// The snapshot comes back once, as an extra row (k NULL) of the
		// same statement, so it is the statement's snapshot and is there
		// even when no row matches. No ORDER BY: sorting the rows with the
		// snapshot row would add a Sort node to every range read (the
		// planner scans a small table sequentially); the client sorts the
		// rows by key instead (rangeRead).
		w.snapRead = "SELECT k, v, NULL::text FROM " + t + " WHERE k >= $1 AND k <= $2 UNION ALL SELECT NULL, NULL, pg_current_snapshot()::text"
		w.shadowRead = "SELECT k, v, NULL::text FROM " + t + " WHERE k >= $1 AND k <= $2 UNION ALL SELECT NULL, NULL, pg_current_snapshot()::text || ' ' || pg_export_snapshot()"
	}
	if n, ok := d.(interface{ Name() string }); ok && (n.Name() == "mariadb" || n.Name() == "mysql") {
		w.forUpdate = true
	}
	return w
}

func (w *predicate) Name() string { return "predicate" }

// PredicateReads: the workload records range reads as predicate reads.
func (w *predicate) PredicateReads() bool { return true }

func (w *predicate) Setup(d db.DB, cfg Config) []string {
	var fill strings.Builder
	fill.WriteString("INSERT INTO " + PredTombs + " (k) VALUES ")
	for k := range max(cfg.Keys, 1) {
		if k > 0 {
			fill.WriteByte(',')
		}
		fill.WriteString("(" + strconv.Itoa(k) + ")")
	}
	return []string{"DROP TABLE IF EXISTS " + PredTable,
		"CREATE TABLE " + PredTable + " (k BIGINT NOT NULL PRIMARY KEY, v BIGINT)",
		"DROP TABLE IF EXISTS " + PredTombs,
		"CREATE TABLE " + PredTombs + " (k BIGINT NOT NULL PRIMARY KEY, v BIGINT)",
		fill.String()}
}

func (w *predicate) Plan(g *Gen) Plan {
	n := g.S.cfg.Ops
	keys := int64(g.S.cfg.Keys)
	width := max(1, keys/4)
	p := Plan{Ops: make([]Spec, 0, n)}
	for range n {
		slot := int64(g.Slot())
		lo := min(slot, keys-width)
		switch {
		case g.Read():
			p.Ops = append(p.Ops, Spec{Kind: history.PredRead, Lo: lo, Hi: lo + width - 1})
		case g.R.IntN(4) == 0:
			p.Ops = append(p.Ops, Spec{Kind: history.PredRead, Lo: lo, Hi: lo + width - 1, Update: true})
		case g.S.cfg.Deletes && g.R.IntN(6) == 0: // an eighth of the writes
			dw := max(1, width/2)
			dlo := min(slot, keys-dw)
			p.Ops = append(p.Ops, Spec{Kind: history.Delete, Lo: dlo, Hi: dlo + dw - 1})
		default:
			p.Ops = append(p.Ops, Spec{Kind: history.Write, Key: slot})
		}
	}
	return p
}

func rangeWhere(lo, hi int64) string {
	return "k >= " + strconv.FormatInt(lo, 10) + " AND k <= " + strconv.FormatInt(hi, 10)
}

// chained reports whether writes return the version they replaced (and
// deletes store tombstones): with the certificate capture on, unless an
// exact commit order gives the version order (Config.CommitOrder) and the
// run has no deletes. With deletes the tombstone read stays: besides
// naming the version a re-insert follows, its locking read makes
// PostgreSQL fail (at repeatable read and serializable) a re-insert whose
// snapshot predates the delete, which without it succeeds (the conflict
// check sees the deleted row gone) and leaves the inserter's snapshot
// seeing the old row and its own new one: the same key twice in one range
// read (TestPostgresPredicateDeletes).
func (w *predicate) chained(g *Gen) bool {
	return w.chain != nil && !g.S.cfg.NoCertificate && (!g.S.cfg.CommitOrder || g.S.cfg.Deletes)
}

func (w *predicate) Exec(ctx context.Context, c db.Conn, g *Gen, p *Plan, rec *Recorder) error {
	cert := !g.S.cfg.NoCertificate
	for _, s := range p.Ops {
		switch {
		case s.Kind == history.Write:
			v := g.S.Value()
			i := rec.Start(Op{Kind: history.Write, Key: s.Key, Value: v, HasValue: true})
			if w.chained(g) {
				if err := w.chain.write(ctx, c, &rec.Ops[i], s.Key, v, g.S.cfg.Deletes); err != nil {
					return err
				}
			} else if _, err := c.Exec(ctx, w.write, s.Key, v); err != nil {
				return err
			}
			rec.Finish(i)
		case s.Update:
			if err := w.update(ctx, c, g, s, rec); err != nil {
				return err
			}
		case s.Kind == history.Delete:
			if err := w.delete(ctx, c, g, s, rec); err != nil {
				return err
			}
		default:
			if err := w.rangeRead(ctx, c, g, s, rec, cert); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *predicate) rangeRead(ctx context.Context, c db.Conn, g *Gen, s Spec, rec *Recorder, cert bool) error {
	i := rec.Start(Op{Kind: history.PredRead, Pred: &Pred{Table: w.table, Where: rangeWhere(s.Lo, s.Hi)}})
	var out []PredRow
	shadow := w.pg && cert && g.Shadow != nil && g.S.cfg.ShadowVersionSets
	// At repeatable read and serializable the recorder has the
	// transaction's snapshot, which is this statement's (Config.TxnSnapshot).
	if w.pg && cert && (shadow || !g.S.cfg.TxnSnapshot) {
		q := w.snapRead
		if shadow {
			q = w.shadowRead
		}
		rows, err := c.Query(ctx, q, s.Lo, s.Hi)
		if err != nil {
			return err
		}
		var exported string
		var k, v sql.NullInt64
		var snap sql.NullString
		for rows.Next() {
			if err := rows.Scan(&k, &v, &snap); err != nil {
				rows.Close()
				return err
			}
			if snap.Valid {
				rec.Ops[i].Pred.Snapshot = snap.String
				if shadow {
					sn, id, _ := strings.Cut(snap.String, " ")
					rec.Ops[i].Pred.Snapshot, exported = sn, id
				}
				snap.Valid = false
			}
			if k.Valid {
				out = append(out, PredRow{Key: k.Int64, Value: v.Int64, HasValue: v.Valid})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		// the rows come in scan order (see newPredicate); record them by
		// key, as the plain read's ORDER BY k returns them
		byKey := func(a, b PredRow) int { return cmp.Compare(a.Key, b.Key) }
		if !slices.IsSortedFunc(out, byKey) {
			slices.SortFunc(out, byKey)
		}
		if shadow && exported != "" {
			if err := w.shadowVersions(ctx, g, exported, rec.Ops[i].Pred); err != nil {
				return err
			}
		}
	} else {
		rows, err := c.Query(ctx, w.read, s.Lo, s.Hi)
		if err != nil {
			return err
		}
		if err := scanPredRows(rows, func(r PredRow) { out = append(out, r) }); err != nil {
			return err
		}
	}
	rec.Ops[i].Pred.Rows = out
	rec.Finish(i)
	return nil
}

// update runs a predicate update over [s.Lo, s.Hi] and records it as a
// predicate read of the rows it matched (at the versions it replaced) and
// a write of each.
func (w *predicate) update(ctx context.Context, c db.Conn, g *Gen, s Spec, rec *Recorder) error {
	width := s.Hi - s.Lo + 1
	base := g.S.Values(width)
	i := rec.Start(Op{Kind: history.PredRead, Pred: &Pred{Table: w.table, Where: rangeWhere(s.Lo, s.Hi)}})
	// upd is a matched row at the version the update replaced, and the
	// value it wrote.
	type upd struct {
		PredRow
		new int64
	}
	var got []upd
	if w.pg {
		q := "UPDATE " + w.table + " t SET v = $3 + (t.k - $1) FROM (SELECT k, v FROM " + w.table +
			" WHERE k >= $1 AND k <= $2 ORDER BY k FOR UPDATE) y WHERE t.k = y.k RETURNING t.k, y.v, t.v"
		rows, err := c.Query(ctx, q, s.Lo, s.Hi, base)
		if err != nil {
			return err
		}
		var nw int64
		if err := scanPredRows(rows, func(r PredRow) { got = append(got, upd{r, nw}) }, &nw); err != nil {
			return err
		}
	} else {
		q := w.read
		if w.forUpdate {
			q += " FOR UPDATE"
			rec.Ops[i].Pred.Locking = true
		}
		rows, err := c.Query(ctx, q, s.Lo, s.Hi)
		if err != nil {
			return err
		}
		if err := scanPredRows(rows, func(r PredRow) { got = append(got, upd{r, base + (r.Key - s.Lo)}) }); err != nil {
			return err
		}
		if len(got) > 0 {
			in := keyList(got, func(u upd) int64 { return u.Key })
			n, err := c.Exec(ctx, "UPDATE "+w.table+" SET v = ? + (k - ?) WHERE k IN ("+in+")", base, s.Lo)
			if err != nil {
				return err
			}
			if n != int64(len(got)) {
				return fmt.Errorf("%w: predicate update of %s changed %d rows, but its read matched %d", ErrBadData, rangeWhere(s.Lo, s.Hi), n, len(got))
			}
		}
	}
	slices.SortFunc(got, func(a, b upd) int { return int(a.Key - b.Key) })
	p := rec.Ops[i].Pred
	for _, u := range got {
		p.Rows = append(p.Rows, u.PredRow)
	}
	rec.Finish(i)
	for _, u := range got {
		j := rec.Start(Op{Kind: history.Write, Key: u.Key, Value: u.new, HasValue: true})
		if w.chained(g) {
			o := &rec.Ops[j]
			o.Prev, o.PrevKnown, o.PrevNone = u.Value, u.HasValue, false
		}
		rec.Finish(j)
	}
	return nil
}

// delete runs a predicate delete over [s.Lo, s.Hi] and records it as a
// predicate read of the rows it deleted (at the versions it deleted) and a
// history.Delete of each, whose tombstone is a fresh value. With the
// certificate capture the tombstones also go to PredTombs, in the same
// transaction, for the re-insert that follows them (versionChain).
func (w *predicate) delete(ctx context.Context, c db.Conn, g *Gen, s Spec, rec *Recorder) error {
	width := s.Hi - s.Lo + 1
	base := g.S.Values(width)
	tombs := w.chained(g)
	i := rec.Start(Op{Kind: history.PredRead, Pred: &Pred{Table: w.table, Where: rangeWhere(s.Lo, s.Hi)}})
	var got []PredRow // the deleted rows, at the versions deleted
	add := func(r PredRow) { got = append(got, r) }
	if w.pg {
		// RETURNING gives each deleted row's last version (at read
		// committed after re-checking a concurrently updated row).
		q := "DELETE FROM " + w.table + " WHERE k >= $1 AND k <= $2 RETURNING k, v"
		args := []any{s.Lo, s.Hi}
		if tombs {
			q = "WITH d AS (" + q + ") UPDATE " + PredTombs + " t SET v = $3 + (t.k - $1) FROM d WHERE t.k = d.k RETURNING d.k, d.v"
			args = append(args, base)
		}
		rows, err := c.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		if err := scanPredRows(rows, add); err != nil {
			return err
		}
	} else {
		q := w.read
		if w.forUpdate {
			q += " FOR UPDATE"
			rec.Ops[i].Pred.Locking = true
		}
		rows, err := c.Query(ctx, q, s.Lo, s.Hi)
		if err != nil {
			return err
		}
		if err := scanPredRows(rows, add); err != nil {
			return err
		}
		if len(got) > 0 {
			in := keyList(got, func(d PredRow) int64 { return d.Key })
			n, err := c.Exec(ctx, "DELETE FROM "+w.table+" WHERE k IN ("+in+")")
			if err != nil {
				return err
			}
			if n != int64(len(got)) {
				return fmt.Errorf("%w: predicate delete of %s removed %d rows, but its read matched %d", ErrBadData, rangeWhere(s.Lo, s.Hi), n, len(got))
			}
			if tombs {
				if _, err := c.Exec(ctx, "UPDATE "+PredTombs+" SET v = ? + (k - ?) WHERE k IN ("+in+")", base, s.Lo); err != nil {
					return err
				}
			}
		}
	}
	slices.SortFunc(got, func(a, b PredRow) int { return int(a.Key - b.Key) })
	p := rec.Ops[i].Pred
	p.Rows = append(p.Rows, got...)
	rec.Finish(i)
	for _, d := range got {
		j := rec.Start(Op{Kind: history.Delete, Key: d.Key, Value: base + (d.Key - s.Lo), HasValue: true})
		if tombs {
			o := &rec.Ops[j]
			o.Prev, o.PrevKnown, o.PrevNone = d.Value, d.HasValue, false
		}
		rec.Finish(j)
	}
	return nil
}

// scanPredRows reads rows of (k, v), or of (k, v, extra...) when extra
// names further scan destinations, calling add with each row as a PredRow
// (v NULL: the row has no value, HasValue false) after extra is filled in
// for it. It closes rows and returns the first scan error or rows.Err().
// It serves the range read, the predicate update and delete (whose rows
// are the versions they replaced or deleted) and the shadow read.
func scanPredRows(rows db.Rows, add func(PredRow), extra ...any) error {
	var k int64
	var v *int64
	_, err := scanRows(rows, func() {
		r := PredRow{Key: k}
		if v != nil {
			r.Value, r.HasValue = *v, true
		}
		add(r)
		v = nil
	}, append([]any{&k, &v}, extra...)...)
	return err
}

// keyList renders the keys of xs as a comma-separated list of integers
// (for k IN (...)).
func keyList[T any](xs []T, key func(T) int64) string {
	var b strings.Builder
	for j, x := range xs {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(key(x), 10))
	}
	return b.String()
}

// snapshotID is the shape of a pg_export_snapshot() identifier
// ("00000003-0000001B-1"); it is spliced into SET TRANSACTION SNAPSHOT,
// which takes no parameter.
var snapshotID = regexp.MustCompile(`^[0-9A-F]+(-[0-9A-F]+)+$`)

// shadowVersions is the seed paper's shadow transaction: on the client's
// second connection, import the snapshot the read exported and read every
// row of the table in it, while the reading transaction is still open (an
// exported snapshot lives only as long as its transaction).
func (w *predicate) shadowVersions(ctx context.Context, g *Gen, id string, p *Pred) error {
	if !snapshotID.MatchString(id) {
		return fmt.Errorf("%w: pg_export_snapshot() returned %q", ErrBadData, id)
	}
	sc, err := g.Shadow(ctx)
	if err != nil {
		return fmt.Errorf("shadow connection: %v", err)
	}
	fail := func(err error) error {
		_, _ = sc.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		return fmt.Errorf("shadow transaction: %v", err)
	}
	if _, err := sc.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return fail(err)
	}
	if _, err := sc.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+id+"'"); err != nil {
		return fail(err)
	}
	rows, err := sc.Query(ctx, "SELECT k, v FROM "+w.table+" ORDER BY k")
	if err != nil {
		return fail(err)
	}
	var out []PredRow
	if err := scanPredRows(rows, func(r PredRow) { out = append(out, r) }); err != nil {
		return fail(err)
	}
	if _, err := sc.Exec(ctx, "COMMIT"); err != nil {
		return fail(err)
	}
	p.Shadow, p.HasShadow = out, true
	return nil
}
