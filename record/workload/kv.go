package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/db"
)

// ErrBadData marks a value read back from the database that the workload
// cannot parse (a corrupted list). The runner stops the run on it.
var ErrBadData = errors.New("unparseable data read from the database")

// Table names used by the workloads.
const (
	AppendTable   = "txray_append"
	RegisterTable = "txray_register"
	PredTable     = "txray_pred"
)

// kvMode selects how a key-value workload plans transactions.
type kvMode int

const (
	modeAppend   kvMode = iota // list-append: reads and appends
	modeRW                     // rw-register: reads and blind writes
	modeRMW                    // rmw-register: read-then-write pairs and reads
	modeBlindW                 // blindw-w: writes only
	modeBlindRW                // blindw-rw: read-only or write-only txns
	modeBlindRWP               // blindw-rw+: reads and writes mixed per op
)

func init() {
	for name, m := range map[string]kvMode{"list-append": modeAppend, "rw-register": modeRW,
		"rmw-register": modeRMW, "blindw-w": modeBlindW, "blindw-rw": modeBlindRW, "blindw-rw+": modeBlindRWP} {
		reg(name, func(d db.Dialect) Workload { return newKV(name, m, d) })
	}
}

// kv implements the key-value workloads.
//
// list-append (Elle, Kingsbury & Alvaro VLDB 2020 §5): a table of (k, v
// text); an append of e to k is one atomic upsert that concatenates
// ",e" (PostgreSQL/SQLite INSERT ... ON CONFLICT DO UPDATE SET v = v || ','
// || excluded.v; MySQL ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', VALUES(v))),
// and a read is SELECT v parsed into a list (a missing row is []).
//
// Register workloads use a table of (k, v bigint): a read is SELECT v (a
// missing row is nil, the initial state); a write is a blind upsert of a
// unique value. rmw-register reads a key and then writes it in a second
// statement (the read-modify-write where lost updates show); blindw-*
// follow Cobra (Tan et al. OSDI 2020 §6): blindw-w is write-only
// transactions, blindw-rw is read-only and write-only transactions mixed
// by --read-ratio, blindw-rw+ mixes reads and blind writes inside each
// transaction.
type kv struct {
	name              string
	mode              kvMode
	table             string
	read, write, apnd string
	// chain: the blind-write workloads learn the version each write
	// replaced (chain.go), so the recorder gives them a version order.
	chain *versionChain
}

func newKV(name string, m kvMode, d db.Dialect) *kv {
	w := &kv{name: name, mode: m, table: RegisterTable}
	if m == modeAppend {
		w.table = AppendTable
	}
	w.read = "SELECT v FROM " + w.table + " WHERE k = " + d.Param(1)
	w.write = d.Upsert(w.table, false)
	w.apnd = d.Upsert(w.table, true)
	if m == modeBlindW || m == modeBlindRW || m == modeBlindRWP {
		w.chain = newVersionChain(d, w.table)
	}
	return w
}

func (w *kv) Name() string { return w.name }

func (w *kv) Setup(d db.DB, _ Config) []string {
	vt := "BIGINT"
	if w.mode == modeAppend {
		vt = d.TextType()
	}
	return []string{"DROP TABLE IF EXISTS " + w.table,
		"CREATE TABLE " + w.table + " (k BIGINT NOT NULL PRIMARY KEY, v " + vt + ")"}
}

func (w *kv) Plan(g *Gen) Plan {
	n := g.S.cfg.Ops
	p := Plan{Ops: make([]Spec, 0, n)}
	switch w.mode {
	case modeAppend:
		for range n {
			if g.Read() {
				p.Ops = append(p.Ops, Spec{Kind: history.Read, Key: g.Key(false)})
			} else {
				p.Ops = append(p.Ops, Spec{Kind: history.Append, Key: g.Key(true)})
			}
		}
	case modeRW, modeBlindRWP:
		for range n {
			if g.Read() {
				p.Ops = append(p.Ops, Spec{Kind: history.Read, Key: g.Key(false)})
			} else {
				p.Ops = append(p.Ops, Spec{Kind: history.Write, Key: g.Key(true)})
			}
		}
	case modeRMW:
		// n micro-ops: read-modify-write pairs (2 ops), or plain reads
		// with probability ReadRatio.
		for len(p.Ops) < n {
			if g.Read() || len(p.Ops) == n-1 {
				p.Ops = append(p.Ops, Spec{Kind: history.Read, Key: g.Key(false)})
				continue
			}
			k := g.Key(true)
			p.Ops = append(p.Ops, Spec{Kind: history.Read, Key: k, RMW: true}, Spec{Kind: history.Write, Key: k, RMW: true})
		}
	case modeBlindW:
		for range n {
			p.Ops = append(p.Ops, Spec{Kind: history.Write, Key: g.Key(true)})
		}
	case modeBlindRW:
		ro := g.Read()
		for range n {
			if ro {
				p.Ops = append(p.Ops, Spec{Kind: history.Read, Key: g.Key(false)})
			} else {
				p.Ops = append(p.Ops, Spec{Kind: history.Write, Key: g.Key(true)})
			}
		}
	}
	return p
}

func (w *kv) Exec(ctx context.Context, c db.Conn, g *Gen, p *Plan, rec *Recorder) error {
	for _, s := range p.Ops {
		var err error
		switch s.Kind {
		case history.Read:
			if w.mode == modeAppend {
				err = w.readList(ctx, c, s.Key, rec)
			} else {
				err = w.readReg(ctx, c, s.Key, rec)
			}
		case history.Write:
			v := g.S.Value()
			i := rec.Start(Op{Kind: history.Write, Key: s.Key, Value: v, HasValue: true})
			if w.chain != nil && !g.S.cfg.NoCertificate && !g.S.cfg.CommitOrder {
				err = w.chain.write(ctx, c, &rec.Ops[i], s.Key, v, false)
			} else {
				_, err = c.Exec(ctx, w.write, s.Key, v)
			}
			if err == nil {
				rec.Finish(i)
			}
		case history.Append:
			v := g.S.Value()
			i := rec.Start(Op{Kind: history.Append, Key: s.Key, Value: v, HasValue: true})
			if _, err = c.Exec(ctx, w.apnd, s.Key, strconv.FormatInt(v, 10)); err == nil {
				rec.Finish(i)
			}
		default:
			err = fmt.Errorf("workload %s: unsupported op kind %v", w.name, s.Kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *kv) readReg(ctx context.Context, c db.Conn, k int64, rec *Recorder) error {
	i := rec.Start(Op{Kind: history.Read, Key: k})
	rows, err := c.Query(ctx, w.read, k)
	if err != nil {
		return err
	}
	var v sql.NullInt64
	n, err := scanRows(rows, nil, &v)
	if err != nil {
		return err
	}
	if n > 1 {
		return fmt.Errorf("%w: %d rows for key %d in %s", ErrBadData, n, k, w.table)
	}
	o := &rec.Ops[i]
	o.Value, o.HasValue = v.Int64, n == 1 && v.Valid
	rec.Finish(i)
	return nil
}

func (w *kv) readList(ctx context.Context, c db.Conn, k int64, rec *Recorder) error {
	i := rec.Start(Op{Kind: history.Read, Key: k, IsList: true})
	rows, err := c.Query(ctx, w.read, k)
	if err != nil {
		return err
	}
	var v sql.NullString
	n, err := scanRows(rows, nil, &v)
	if err != nil {
		return err
	}
	if n > 1 {
		return fmt.Errorf("%w: %d rows for key %d in %s", ErrBadData, n, k, w.table)
	}
	l, err := ParseList(v.String)
	if err != nil {
		return fmt.Errorf("%w: key %d: %v", ErrBadData, k, err)
	}
	rec.Ops[i].List = l
	rec.Finish(i)
	return nil
}

// ParseList parses the list-append text encoding "1,2,3" ("" is the empty
// list).
func ParseList(s string) ([]int64, error) {
	if s == "" {
		return []int64{}, nil
	}
	parts := strings.Split(s, ",")
	out := make([]int64, len(parts))
	for j, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("element %d %q of %q is not an integer", j, p, s)
		}
		out[j] = n
	}
	return out, nil
}
