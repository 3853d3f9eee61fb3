package workload

import (
	"context"
	"strconv"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/db"
)

func init() {
	reg("predicate", func(d db.Dialect) Workload { return newPredicate(d) })
}

// predicate is a phantom-prone workload on a table of (k bigint primary
// key, v bigint) that starts empty: range reads
// (SELECT k, v ... WHERE k >= lo AND k <= hi, recorded as a PredRead whose
// Where text uses the column names k and v and whose Result lists the rows
// returned as (k, v)), and blind upserts of unique values, which insert a
// row the first time a key is written and update it afterwards. Keys are
// fixed (0..Keys-1, no rotation) so ranges keep meaning; the range width is
// max(1, Keys/4). An insert into a range another transaction read is the
// predicate anti-dependency that phantoms (Adya 1999 §4.4.3 G2, predicate
// reads) are made of.
//
// On PostgreSQL and MariaDB/MySQL each write also returns the version it
// replaced (versionChain), from which the recorder builds the version order
// of every key without a commit log.
//
// Not yet recorded: predicate UPDATE/DELETE statements (they need the rows
// a statement matched, with their prior versions, which not every database
// returns).
type predicate struct {
	read, write string
	chain       *versionChain // nil: plain upsert, no replaced version
}

func newPredicate(d db.Dialect) *predicate {
	return &predicate{
		read:  "SELECT k, v FROM " + PredTable + " WHERE k >= " + d.Param(1) + " AND k <= " + d.Param(2) + " ORDER BY k",
		write: d.Upsert(PredTable, false),
		chain: newVersionChain(d, PredTable),
	}
}

func (w *predicate) Name() string { return "predicate" }

// PredicateReads: the workload records range reads as predicate reads.
func (w *predicate) PredicateReads() bool { return true }

func (w *predicate) Setup(d db.DB, _ Config) []string {
	return []string{"DROP TABLE IF EXISTS " + PredTable,
		"CREATE TABLE " + PredTable + " (k BIGINT NOT NULL PRIMARY KEY, v BIGINT)"}
}

func (w *predicate) Plan(g *Gen) Plan {
	n := g.S.cfg.Ops
	keys := int64(g.S.cfg.Keys)
	width := max(1, keys/4)
	p := Plan{Ops: make([]Spec, 0, n)}
	for range n {
		slot := int64(g.Slot())
		if g.Read() {
			lo := min(slot, keys-width)
			p.Ops = append(p.Ops, Spec{Kind: history.PredRead, Lo: lo, Hi: lo + width - 1})
		} else {
			p.Ops = append(p.Ops, Spec{Kind: history.Write, Key: slot})
		}
	}
	return p
}

func (w *predicate) Exec(ctx context.Context, c db.Conn, g *Gen, p *Plan, rec *Recorder) error {
	for _, s := range p.Ops {
		if s.Kind == history.Write {
			v := g.S.Value()
			i := rec.Start(Op{Kind: history.Write, Key: s.Key, Value: v, HasValue: true})
			if w.chain != nil {
				if err := w.chain.write(ctx, c, &rec.Ops[i], s.Key, v); err != nil {
					return err
				}
			} else if _, err := c.Exec(ctx, w.write, s.Key, v); err != nil {
				return err
			}
			rec.Finish(i)
			continue
		}
		where := "k >= " + strconv.FormatInt(s.Lo, 10) + " AND k <= " + strconv.FormatInt(s.Hi, 10)
		i := rec.Start(Op{Kind: history.PredRead, Pred: &Pred{Table: PredTable, Where: where}})
		rows, err := c.Query(ctx, w.read, s.Lo, s.Hi)
		if err != nil {
			return err
		}
		var out []PredRow
		for rows.Next() {
			var k, v int64
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return err
			}
			out = append(out, PredRow{Key: k, Value: v, HasValue: true})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rec.Ops[i].Pred.Rows = out
		rec.Finish(i)
	}
	return nil
}
