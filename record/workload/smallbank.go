package workload

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/db"
)

func init() {
	reg("smallbank", func(d db.Dialect) Workload { return newSmallBank(d) })
}

// SmallBank tables.
const (
	SavingsTable  = "txray_sb_savings"
	CheckingTable = "txray_sb_checking"
)

// SmallBank procedures, with the H-Store / OLTPBench mix (percent).
const (
	sbAmalgamate = iota
	sbBalance
	sbDepositChecking
	sbSendPayment
	sbTransactSavings
	sbWriteCheck
)

var sbMix = []struct {
	proc, pct int
}{{sbAmalgamate, 15}, {sbBalance, 15}, {sbDepositChecking, 15}, {sbSendPayment, 25}, {sbTransactSavings, 15}, {sbWriteCheck, 15}}

// smallbank is the SmallBank benchmark (Alomari et al., "The Cost of
// Serializability on Platforms That Use Snapshot Isolation", ICDE 2008;
// transaction mix of H-Store/OLTPBench): --keys customers, each with a
// savings and a checking account row (custid, bal, ver) loaded with balance
// 10000.
//
// To make the history checkable, every account row carries a version tag
// ver: each balance update writes a fresh unique ver, and each balance read
// reads ver. The history records account "sav:<c>" / "chk:<c>" as a
// register whose value is ver (nil before the first update), so Elle's
// rw-register checker sees each procedure's reads and writes; balances are
// computed by the client (SELECT, then UPDATE ... SET bal = <new>), the
// read-modify-write where lost updates and write skew show.
//
// Procedures: Balance (read both accounts), DepositChecking, TransactSavings
// (read, write one account), WriteCheck (read both, write checking, with the
// overdraft penalty), SendPayment (read and write two checking accounts),
// Amalgamate (read three accounts, zero two, credit one).
type smallbank struct {
	readSav, readChk, writeSav, writeChk string
}

func newSmallBank(d db.Dialect) *smallbank {
	p1, p2, p3 := d.Param(1), d.Param(2), d.Param(3)
	return &smallbank{
		readSav:  "SELECT bal, ver FROM " + SavingsTable + " WHERE custid = " + p1,
		readChk:  "SELECT bal, ver FROM " + CheckingTable + " WHERE custid = " + p1,
		writeSav: "UPDATE " + SavingsTable + " SET bal = " + p1 + ", ver = " + p2 + " WHERE custid = " + p3,
		writeChk: "UPDATE " + CheckingTable + " SET bal = " + p1 + ", ver = " + p2 + " WHERE custid = " + p3,
	}
}

func (w *smallbank) Name() string { return "smallbank" }

func (w *smallbank) Setup(d db.DB, cfg Config) []string {
	var out []string
	for _, t := range []string{SavingsTable, CheckingTable} {
		out = append(out, "DROP TABLE IF EXISTS "+t,
			"CREATE TABLE "+t+" (custid BIGINT NOT NULL PRIMARY KEY, bal BIGINT NOT NULL, ver BIGINT)")
		for lo := 0; lo < cfg.Keys; lo += 500 {
			var b strings.Builder
			b.WriteString("INSERT INTO " + t + " (custid, bal) VALUES ")
			for c := lo; c < min(cfg.Keys, lo+500); c++ {
				if c > lo {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "(%d, 10000)", c)
			}
			out = append(out, b.String())
		}
	}
	return out
}

func (w *smallbank) Plan(g *Gen) Plan {
	x := g.R.IntN(100)
	proc := sbMix[len(sbMix)-1].proc
	for _, m := range sbMix {
		if x < m.pct {
			proc = m.proc
			break
		}
		x -= m.pct
	}
	c1 := int64(g.Slot())
	c2 := c1
	if g.S.cfg.Keys > 1 {
		for c2 == c1 {
			c2 = int64(g.Slot())
		}
	}
	amt := int64(1 + g.R.IntN(100))
	return Plan{Proc: proc, Args: []int64{c1, c2, amt}}
}

func (w *smallbank) read(ctx context.Context, c db.Conn, rec *Recorder, sav bool, cust int64) (int64, error) {
	q, key := w.readChk, "chk:"
	if sav {
		q, key = w.readSav, "sav:"
	}
	i := rec.Start(Op{Kind: history.Read, KeyS: key + strconv.FormatInt(cust, 10)})
	rows, err := c.Query(ctx, q, cust)
	if err != nil {
		return 0, err
	}
	var bal int64
	var ver sql.NullInt64
	n, err := scanRows(rows, nil, &bal, &ver)
	if err != nil {
		return 0, err
	}
	if n != 1 {
		return 0, fmt.Errorf("%w: %d rows for account %s%d", ErrBadData, n, key, cust)
	}
	o := &rec.Ops[i]
	o.Value, o.HasValue = ver.Int64, ver.Valid
	rec.Finish(i)
	return bal, nil
}

func (w *smallbank) write(ctx context.Context, c db.Conn, g *Gen, rec *Recorder, sav bool, cust, bal int64) error {
	q, key := w.writeChk, "chk:"
	if sav {
		q, key = w.writeSav, "sav:"
	}
	v := g.S.Value()
	i := rec.Start(Op{Kind: history.Write, KeyS: key + strconv.FormatInt(cust, 10), Value: v, HasValue: true})
	n, err := c.Exec(ctx, q, bal, v, cust)
	if err != nil {
		return err
	}
	if n != 1 {
		// MySQL reports rows changed, not matched; bal and ver always
		// change here (ver is fresh), so 1 is expected everywhere.
		return fmt.Errorf("%w: update of %s%d changed %d rows", ErrBadData, key, cust, n)
	}
	rec.Finish(i)
	return nil
}

func (w *smallbank) Exec(ctx context.Context, c db.Conn, g *Gen, p *Plan, rec *Recorder) error {
	c1, c2, amt := p.Args[0], p.Args[1], p.Args[2]
	switch p.Proc {
	case sbBalance:
		if _, err := w.read(ctx, c, rec, true, c1); err != nil {
			return err
		}
		_, err := w.read(ctx, c, rec, false, c1)
		return err
	case sbDepositChecking, sbTransactSavings:
		sav := p.Proc == sbTransactSavings
		b, err := w.read(ctx, c, rec, sav, c1)
		if err != nil {
			return err
		}
		return w.write(ctx, c, g, rec, sav, c1, b+amt)
	case sbWriteCheck:
		s, err := w.read(ctx, c, rec, true, c1)
		if err != nil {
			return err
		}
		k, err := w.read(ctx, c, rec, false, c1)
		if err != nil {
			return err
		}
		nb := k - amt
		if s+k < amt {
			nb-- // overdraft penalty
		}
		return w.write(ctx, c, g, rec, false, c1, nb)
	case sbSendPayment:
		a, err := w.read(ctx, c, rec, false, c1)
		if err != nil {
			return err
		}
		b, err := w.read(ctx, c, rec, false, c2)
		if err != nil {
			return err
		}
		if err := w.write(ctx, c, g, rec, false, c1, a-amt); err != nil {
			return err
		}
		return w.write(ctx, c, g, rec, false, c2, b+amt)
	case sbAmalgamate:
		s, err := w.read(ctx, c, rec, true, c1)
		if err != nil {
			return err
		}
		k, err := w.read(ctx, c, rec, false, c1)
		if err != nil {
			return err
		}
		k2, err := w.read(ctx, c, rec, false, c2)
		if err != nil {
			return err
		}
		if err := w.write(ctx, c, g, rec, true, c1, 0); err != nil {
			return err
		}
		if err := w.write(ctx, c, g, rec, false, c1, 0); err != nil {
			return err
		}
		return w.write(ctx, c, g, rec, false, c2, k2+s+k)
	}
	return fmt.Errorf("smallbank: unknown procedure %d", p.Proc)
}
