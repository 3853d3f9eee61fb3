package workload

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/db"
)

func init() {
	reg("tpcc", func(d db.Dialect) Workload { return newTPCC(d) })
}

// TPC-C scale of this subset (TPC-C v5.11 §1.2 uses 10 districts, 3000
// customers per district and 100000 items; the subset keeps the districts
// and shrinks the rest so a run on a laptop contends).
const (
	tpccDistricts = 10
	tpccCustomers = 30 // per district
	tpccItems     = 100
)

// TPC-C transaction types and the minimum mix of §5.2.3.
const (
	tpNewOrder = iota
	tpPayment
	tpOrderStatus
	tpDelivery
	tpStockLevel
)

var tpccMix = []struct{ proc, pct int }{{tpNewOrder, 45}, {tpPayment, 43}, {tpOrderStatus, 4}, {tpDelivery, 4}, {tpStockLevel, 4}}

// tpcc is a small, faithful subset of TPC-C (TPC Benchmark C v5.11 §2):
// the five transactions over --keys warehouses (10 districts each, 30
// customers per district, 100 items, one stock row per item and
// warehouse), starting with no orders.
//
// Recording: every mutable row carries a version tag ver that each update
// sets to a fresh unique value, so each row is a register in the history —
// warehouse "w:<w>", district "d:<w>:<d>", customer "c:<w>:<d>:<c>", stock
// "s:<w>:<i>", order "o:<w>:<d>:<o>", new-order "no:<w>:<d>:<o>", order line
// "ol:<w>:<d>:<o>:<n>", item "i:<i>" (read-only, always nil). Inserts are
// writes of the new row's ver. Delivery's DELETE of a new-order row is
// recorded as a write of a fresh tombstone value to its key (the history
// model has no delete). Reads that select rows by a condition are predicate
// reads whose where text is the SQL condition and whose result rows are the
// row keys with their ver.
//
// Simplifications, each documented in docs/recorder.md: customers are
// chosen by id only (no by-last-name lookup), no history-table insert in
// Payment, no remote warehouses, 5-10 order lines, numbers instead of
// strings and dates. Kept: New-Order's 1% rollback on an unused item
// (ErrUserAbort), district next order id allocation, stock quantity
// replenishment (+91 below 10), Delivery of the oldest new order per
// district, Stock-Level over the last 20 orders.
type tpcc struct {
	d db.Dialect
}

func newTPCC(d db.Dialect) *tpcc { return &tpcc{d: d} }

func (w *tpcc) Name() string { return "tpcc" }

// PredicateReads: SELECTs by a condition are recorded as predicate reads.
func (w *tpcc) PredicateReads() bool { return true }

// Row columns the history records per version (history.RowImage), in
// declaration order: the columns of the predicate reads' WHERE clauses
// that are not in the key (o_c_id), and the columns Delivery changes
// (o_carrier_id, ol_delivery_d), so every version's value of them is known.
const (
	colOCID = iota
	colOCarrier
)

// Tables implements TableDecls: every table's key pattern (the row keys
// above) and the row columns its writes record, so that each predicate
// read's WHERE clause can be evaluated on every version (history/schema.go).
func (w *tpcc) Tables() []history.Table {
	return []history.Table{
		{Name: tpccTable("warehouse"), Key: "w:{w_id}"},
		{Name: tpccTable("district"), Key: "d:{d_w_id}:{d_id}"},
		{Name: tpccTable("customer"), Key: "c:{c_w_id}:{c_d_id}:{c_id}"},
		{Name: tpccTable("item"), Key: "i:{i_id}"},
		{Name: tpccTable("stock"), Key: "s:{s_w_id}:{s_i_id}"},
		{Name: tpccTable("orders"), Key: "o:{o_w_id}:{o_d_id}:{o_id}", Columns: []string{"o_c_id", "o_carrier_id"}},
		{Name: tpccTable("new_order"), Key: "no:{no_w_id}:{no_d_id}:{no_o_id}"},
		{Name: tpccTable("order_line"), Key: "ol:{ol_w_id}:{ol_d_id}:{ol_o_id}:{ol_number}", Columns: []string{"ol_delivery_d"}},
	}
}

// rowImage builds a row image from column values (nil: NULL).
func rowImage(vals ...*int64) *history.RowImage {
	r := &history.RowImage{Cols: make([]history.Cell, len(vals)), Has: make([]bool, len(vals))}
	for i, v := range vals {
		r.Has[i] = true
		if v == nil {
			r.Cols[i].Null = true
		} else {
			r.Cols[i].V = history.Scalar{I: *v}
		}
	}
	return r
}

func i64(v int64) *int64 { return &v }

func tpccTable(n string) string { return "txray_tpcc_" + n }

// ph renders n placeholders starting at from, comma separated.
func (w *tpcc) ph(from, n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = w.d.Param(from + i)
	}
	return strings.Join(s, ", ")
}

func (w *tpcc) Setup(d db.DB, cfg Config) []string {
	W := max(1, cfg.Keys)
	ddl := map[string]string{
		"warehouse":  "w_id BIGINT NOT NULL PRIMARY KEY, w_tax BIGINT NOT NULL, w_ytd BIGINT NOT NULL, ver BIGINT",
		"district":   "d_w_id BIGINT NOT NULL, d_id BIGINT NOT NULL, d_tax BIGINT NOT NULL, d_ytd BIGINT NOT NULL, d_next_o_id BIGINT NOT NULL, ver BIGINT, PRIMARY KEY (d_w_id, d_id)",
		"customer":   "c_w_id BIGINT NOT NULL, c_d_id BIGINT NOT NULL, c_id BIGINT NOT NULL, c_discount BIGINT NOT NULL, c_balance BIGINT NOT NULL, c_ytd_payment BIGINT NOT NULL, c_payment_cnt BIGINT NOT NULL, c_delivery_cnt BIGINT NOT NULL, ver BIGINT, PRIMARY KEY (c_w_id, c_d_id, c_id)",
		"item":       "i_id BIGINT NOT NULL PRIMARY KEY, i_price BIGINT NOT NULL",
		"stock":      "s_w_id BIGINT NOT NULL, s_i_id BIGINT NOT NULL, s_quantity BIGINT NOT NULL, s_ytd BIGINT NOT NULL, s_order_cnt BIGINT NOT NULL, ver BIGINT, PRIMARY KEY (s_w_id, s_i_id)",
		"orders":     "o_w_id BIGINT NOT NULL, o_d_id BIGINT NOT NULL, o_id BIGINT NOT NULL, o_c_id BIGINT NOT NULL, o_carrier_id BIGINT, o_ol_cnt BIGINT NOT NULL, ver BIGINT, PRIMARY KEY (o_w_id, o_d_id, o_id)",
		"new_order":  "no_w_id BIGINT NOT NULL, no_d_id BIGINT NOT NULL, no_o_id BIGINT NOT NULL, ver BIGINT, PRIMARY KEY (no_w_id, no_d_id, no_o_id)",
		"order_line": "ol_w_id BIGINT NOT NULL, ol_d_id BIGINT NOT NULL, ol_o_id BIGINT NOT NULL, ol_number BIGINT NOT NULL, ol_i_id BIGINT NOT NULL, ol_quantity BIGINT NOT NULL, ol_amount BIGINT NOT NULL, ol_delivery_d BIGINT, ver BIGINT, PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)",
	}
	var out []string
	for _, t := range []string{"warehouse", "district", "customer", "item", "stock", "orders", "new_order", "order_line"} {
		out = append(out, "DROP TABLE IF EXISTS "+tpccTable(t), "CREATE TABLE "+tpccTable(t)+" ("+ddl[t]+")")
	}
	batch := func(table, cols string, rows []string) {
		for lo := 0; lo < len(rows); lo += 500 {
			out = append(out, "INSERT INTO "+tpccTable(table)+" ("+cols+") VALUES "+strings.Join(rows[lo:min(len(rows), lo+500)], ","))
		}
	}
	var items, whs, dists, custs, stock []string
	for i := 1; i <= tpccItems; i++ {
		items = append(items, fmt.Sprintf("(%d, %d)", i, 100+i*7%9900))
	}
	for wi := 1; wi <= W; wi++ {
		whs = append(whs, fmt.Sprintf("(%d, %d, 300000)", wi, wi*37%2000))
		for di := 1; di <= tpccDistricts; di++ {
			dists = append(dists, fmt.Sprintf("(%d, %d, %d, 30000, 1)", wi, di, (wi*10+di)*13%2000))
			for ci := 1; ci <= tpccCustomers; ci++ {
				custs = append(custs, fmt.Sprintf("(%d, %d, %d, %d, -10, 10, 1, 0)", wi, di, ci, ci*17%5000))
			}
		}
		for i := 1; i <= tpccItems; i++ {
			stock = append(stock, fmt.Sprintf("(%d, %d, %d, 0, 0)", wi, i, 10+(wi*i)%91))
		}
	}
	batch("item", "i_id, i_price", items)
	batch("warehouse", "w_id, w_tax, w_ytd", whs)
	batch("district", "d_w_id, d_id, d_tax, d_ytd, d_next_o_id", dists)
	batch("customer", "c_w_id, c_d_id, c_id, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt", custs)
	batch("stock", "s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt", stock)
	return out
}

// Plan args: [warehouse, district, customer, amount/threshold/carrier,
// rollback flag, n items, item ids..., quantities...].
func (w *tpcc) Plan(g *Gen) Plan {
	x := g.R.IntN(100)
	proc := tpNewOrder
	for _, m := range tpccMix {
		if x < m.pct {
			proc = m.proc
			break
		}
		x -= m.pct
	}
	wh := int64(g.Slot() + 1)
	d := int64(1 + g.R.IntN(tpccDistricts))
	c := int64(1 + g.R.IntN(tpccCustomers))
	args := []int64{wh, d, c, 0, 0}
	switch proc {
	case tpNewOrder:
		n := 5 + g.R.IntN(6)
		if g.R.IntN(100) == 0 {
			args[4] = 1 // §2.4.1.4: 1% of New-Orders use an unused item and roll back
		}
		args = append(args, int64(n))
		seen := map[int64]bool{}
		var its []int64
		for len(its) < n {
			i := int64(1 + g.R.IntN(tpccItems))
			if !seen[i] {
				seen[i] = true
				its = append(its, i)
			}
		}
		args = append(args, its...)
		for range n {
			args = append(args, int64(1+g.R.IntN(10)))
		}
	case tpPayment:
		args[3] = int64(100 + g.R.IntN(500000))
	case tpDelivery:
		args[3] = int64(1 + g.R.IntN(10))
	case tpStockLevel:
		args[3] = int64(10 + g.R.IntN(11))
	}
	return Plan{Proc: proc, Args: args}
}

// tx carries one transaction's connection and recorder.
type tpccTx struct {
	w   *tpcc
	ctx context.Context
	c   db.Conn
	g   *Gen
	rec *Recorder
}

func key(parts ...any) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprint(&b, p)
	}
	return b.String()
}

// readRow runs a one-row SELECT whose last column is ver, scanning the
// other columns into dst, and records a read of k.
func (t *tpccTx) readRow(k, q string, args []any, dst ...any) error {
	i := t.rec.Start(Op{Kind: history.Read, KeyS: k})
	rows, err := t.c.Query(t.ctx, q, args...)
	if err != nil {
		return err
	}
	var ver sql.NullInt64
	n, err := scanRows(rows, nil, append(dst, &ver)...)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%w: %d rows for %s", ErrBadData, n, k)
	}
	o := &t.rec.Ops[i]
	o.Value, o.HasValue = ver.Int64, ver.Valid
	t.rec.Finish(i)
	return nil
}

// write runs an INSERT/UPDATE/DELETE whose first parameter is the fresh
// ver, and records a write of k.
func (t *tpccTx) write(k, q string, args ...any) error {
	return t.writeRow(k, nil, q, args...)
}

// writeRow is write with the row image of the version written (nil for a
// table without row columns).
func (t *tpccTx) writeRow(k string, row *history.RowImage, q string, args ...any) error {
	v := t.g.S.Value()
	i := t.rec.Start(Op{Kind: history.Write, KeyS: k, Value: v, HasValue: true, Row: row})
	n, err := t.c.Exec(t.ctx, q, append([]any{v}, args...)...)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%w: %s changed %d rows", ErrBadData, k, n)
	}
	t.rec.Finish(i)
	return nil
}

// predRead runs a SELECT of (id columns..., ver) and records a predicate
// read on table with the where text; keyOf renders a row's key from its id
// columns.
func (t *tpccTx) predRead(table, where, q string, args []any, ncols int, keyOf func(ids []int64) string) ([][]int64, error) {
	i := t.rec.Start(Op{Kind: history.PredRead, Pred: &Pred{Table: tpccTable(table), Where: where}})
	rows, err := t.c.Query(t.ctx, q, args...)
	if err != nil {
		return nil, err
	}
	var out [][]int64
	var prs []PredRow
	for rows.Next() {
		ids := make([]int64, ncols)
		dst := make([]any, 0, ncols+1)
		for j := range ids {
			dst = append(dst, &ids[j])
		}
		var ver sql.NullInt64
		if err := rows.Scan(append(dst, &ver)...); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, ids)
		prs = append(prs, PredRow{KeyS: keyOf(ids), Value: ver.Int64, HasValue: ver.Valid})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	t.rec.Ops[i].Pred.Rows = prs
	t.rec.Finish(i)
	return out, nil
}

func (w *tpcc) Exec(ctx context.Context, c db.Conn, g *Gen, p *Plan, rec *Recorder) error {
	t := &tpccTx{w: w, ctx: ctx, c: c, g: g, rec: rec}
	switch p.Proc {
	case tpNewOrder:
		return t.newOrder(p.Args)
	case tpPayment:
		return t.payment(p.Args)
	case tpOrderStatus:
		return t.orderStatus(p.Args)
	case tpDelivery:
		return t.delivery(p.Args)
	case tpStockLevel:
		return t.stockLevel(p.Args)
	}
	return fmt.Errorf("tpcc: unknown transaction %d", p.Proc)
}

// newOrder is TPC-C §2.4.2.
func (t *tpccTx) newOrder(a []int64) error {
	w, P := t.w, t.w.d.Param
	wh, d, c, rollback, n := a[0], a[1], a[2], a[4], int(a[5])
	items, qtys := a[6:6+n], a[6+n:6+2*n]
	var tax int64
	if err := t.readRow(key("w", wh), "SELECT w_tax, ver FROM "+tpccTable("warehouse")+" WHERE w_id = "+P(1), []any{wh}, &tax); err != nil {
		return err
	}
	var dtax, next int64
	if err := t.readRow(key("d", wh, d), "SELECT d_tax, d_next_o_id, ver FROM "+tpccTable("district")+" WHERE d_w_id = "+P(1)+" AND d_id = "+P(2),
		[]any{wh, d}, &dtax, &next); err != nil {
		return err
	}
	if err := t.write(key("d", wh, d), "UPDATE "+tpccTable("district")+" SET ver = "+P(1)+", d_next_o_id = "+P(2)+" WHERE d_w_id = "+P(3)+" AND d_id = "+P(4),
		next+1, wh, d); err != nil {
		return err
	}
	var disc int64
	if err := t.readRow(key("c", wh, d, c), "SELECT c_discount, ver FROM "+tpccTable("customer")+" WHERE c_w_id = "+P(1)+" AND c_d_id = "+P(2)+" AND c_id = "+P(3),
		[]any{wh, d, c}, &disc); err != nil {
		return err
	}
	o := next
	if err := t.writeRow(key("o", wh, d, o), rowImage(i64(c), nil), "INSERT INTO "+tpccTable("orders")+" (ver, o_w_id, o_d_id, o_id, o_c_id, o_ol_cnt) VALUES ("+w.ph(1, 6)+")",
		wh, d, o, c, int64(n)); err != nil {
		return err
	}
	if err := t.write(key("no", wh, d, o), "INSERT INTO "+tpccTable("new_order")+" (ver, no_w_id, no_d_id, no_o_id) VALUES ("+w.ph(1, 4)+")", wh, d, o); err != nil {
		return err
	}
	for j := 0; j < n; j++ {
		item := items[j]
		if rollback == 1 && j == n-1 {
			// The unused item: the lookup finds nothing (§2.4.2.3) and the
			// transaction rolls back. Recorded as a read of the item that
			// the client did see return no row.
			i := t.rec.Start(Op{Kind: history.Read, KeyS: key("i", tpccItems+1)})
			rows, err := t.c.Query(t.ctx, "SELECT i_price FROM "+tpccTable("item")+" WHERE i_id = "+P(1), int64(tpccItems+1))
			if err != nil {
				return err
			}
			found := rows.Next()
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if found {
				return fmt.Errorf("%w: unused item %d exists", ErrBadData, tpccItems+1)
			}
			t.rec.Finish(i)
			return ErrUserAbort
		}
		price, err := t.readItem(item)
		if err != nil {
			return err
		}
		var sq int64
		if err := t.readRow(key("s", wh, item), "SELECT s_quantity, ver FROM "+tpccTable("stock")+" WHERE s_w_id = "+P(1)+" AND s_i_id = "+P(2),
			[]any{wh, item}, &sq); err != nil {
			return err
		}
		q := qtys[j]
		nq := sq - q
		if sq < q+10 {
			nq += 91
		}
		if err := t.write(key("s", wh, item), "UPDATE "+tpccTable("stock")+" SET ver = "+P(1)+", s_quantity = "+P(2)+", s_ytd = s_ytd + "+P(3)+", s_order_cnt = s_order_cnt + 1 WHERE s_w_id = "+P(4)+" AND s_i_id = "+P(5),
			nq, q, wh, item); err != nil {
			return err
		}
		amount := q * price * (10000 + tax + dtax) * (10000 - disc) / 100000000
		if err := t.writeRow(key("ol", wh, d, o, j+1), rowImage(nil), "INSERT INTO "+tpccTable("order_line")+" (ver, ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_quantity, ol_amount) VALUES ("+w.ph(1, 8)+")",
			wh, d, o, int64(j+1), item, q, amount); err != nil {
			return err
		}
	}
	return nil
}

// payment is TPC-C §2.5.2 (customer by id, home warehouse).
func (t *tpccTx) payment(a []int64) error {
	P := t.w.d.Param
	wh, d, c, amt := a[0], a[1], a[2], a[3]
	var ytd int64
	if err := t.readRow(key("w", wh), "SELECT w_ytd, ver FROM "+tpccTable("warehouse")+" WHERE w_id = "+P(1), []any{wh}, &ytd); err != nil {
		return err
	}
	if err := t.write(key("w", wh), "UPDATE "+tpccTable("warehouse")+" SET ver = "+P(1)+", w_ytd = "+P(2)+" WHERE w_id = "+P(3), ytd+amt, wh); err != nil {
		return err
	}
	var dytd int64
	if err := t.readRow(key("d", wh, d), "SELECT d_ytd, ver FROM "+tpccTable("district")+" WHERE d_w_id = "+P(1)+" AND d_id = "+P(2), []any{wh, d}, &dytd); err != nil {
		return err
	}
	if err := t.write(key("d", wh, d), "UPDATE "+tpccTable("district")+" SET ver = "+P(1)+", d_ytd = "+P(2)+" WHERE d_w_id = "+P(3)+" AND d_id = "+P(4), dytd+amt, wh, d); err != nil {
		return err
	}
	var bal, cytd, cnt int64
	if err := t.readRow(key("c", wh, d, c), "SELECT c_balance, c_ytd_payment, c_payment_cnt, ver FROM "+tpccTable("customer")+" WHERE c_w_id = "+P(1)+" AND c_d_id = "+P(2)+" AND c_id = "+P(3),
		[]any{wh, d, c}, &bal, &cytd, &cnt); err != nil {
		return err
	}
	return t.write(key("c", wh, d, c), "UPDATE "+tpccTable("customer")+" SET ver = "+P(1)+", c_balance = "+P(2)+", c_ytd_payment = "+P(3)+", c_payment_cnt = "+P(4)+" WHERE c_w_id = "+P(5)+" AND c_d_id = "+P(6)+" AND c_id = "+P(7),
		bal-amt, cytd+amt, cnt+1, wh, d, c)
}

// orderStatus is TPC-C §2.6.2 (customer by id).
func (t *tpccTx) orderStatus(a []int64) error {
	P := t.w.d.Param
	wh, d, c := a[0], a[1], a[2]
	var bal int64
	if err := t.readRow(key("c", wh, d, c), "SELECT c_balance, ver FROM "+tpccTable("customer")+" WHERE c_w_id = "+P(1)+" AND c_d_id = "+P(2)+" AND c_id = "+P(3),
		[]any{wh, d, c}, &bal); err != nil {
		return err
	}
	where := fmt.Sprintf("o_w_id = %d AND o_d_id = %d AND o_c_id = %d", wh, d, c)
	// §2.6.2.2: the customer's last order with its carrier (0 for an
	// undelivered order, whose o_carrier_id is NULL) and its lines with
	// their delivery dates, so Order-Status sees what Delivery writes.
	orders, err := t.predRead("orders", where, "SELECT o_id, COALESCE(o_carrier_id, 0), ver FROM "+tpccTable("orders")+" WHERE o_w_id = "+P(1)+" AND o_d_id = "+P(2)+" AND o_c_id = "+P(3),
		[]any{wh, d, c}, 2, func(ids []int64) string { return key("o", wh, d, ids[0]) })
	if err != nil || len(orders) == 0 {
		return err
	}
	last := orders[0][0]
	for _, o := range orders {
		last = max(last, o[0])
	}
	where = fmt.Sprintf("ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d", wh, d, last)
	_, err = t.predRead("order_line", where, "SELECT ol_number, COALESCE(ol_delivery_d, 0), ver FROM "+tpccTable("order_line")+" WHERE ol_w_id = "+P(1)+" AND ol_d_id = "+P(2)+" AND ol_o_id = "+P(3),
		[]any{wh, d, last}, 2, func(ids []int64) string { return key("ol", wh, d, last, ids[0]) })
	return err
}

// delivery is TPC-C §2.7.4, one district after another in one
// transaction.
func (t *tpccTx) delivery(a []int64) error {
	P := t.w.d.Param
	wh, carrier := a[0], a[3]
	for d := int64(1); d <= tpccDistricts; d++ {
		where := fmt.Sprintf("no_w_id = %d AND no_d_id = %d", wh, d)
		nos, err := t.predRead("new_order", where, "SELECT no_o_id, ver FROM "+tpccTable("new_order")+" WHERE no_w_id = "+P(1)+" AND no_d_id = "+P(2),
			[]any{wh, d}, 1, func(ids []int64) string { return key("no", wh, d, ids[0]) })
		if err != nil {
			return err
		}
		if len(nos) == 0 {
			continue // §2.7.4.2: no outstanding order in this district
		}
		o := nos[0][0]
		for _, r := range nos {
			o = min(o, r[0])
		}
		// DELETE, recorded as a write of a fresh tombstone value whose
		// row image says the row is deleted (it matches no predicate).
		v := t.g.S.Value()
		i := t.rec.Start(Op{Kind: history.Write, KeyS: key("no", wh, d, o), Value: v, HasValue: true, Row: &history.RowImage{Deleted: true}})
		n, err := t.c.Exec(t.ctx, "DELETE FROM "+tpccTable("new_order")+" WHERE no_w_id = "+P(1)+" AND no_d_id = "+P(2)+" AND no_o_id = "+P(3), wh, d, o)
		if err != nil {
			return err
		}
		if n != 1 {
			// Another Delivery took this order first (possible below
			// serializable): record what happened and let it abort.
			return fmt.Errorf("%w: delete of new order %s removed %d rows", errConflict, key("no", wh, d, o), n)
		}
		t.rec.Finish(i)
		var cust int64
		if err := t.readRow(key("o", wh, d, o), "SELECT o_c_id, ver FROM "+tpccTable("orders")+" WHERE o_w_id = "+P(1)+" AND o_d_id = "+P(2)+" AND o_id = "+P(3),
			[]any{wh, d, o}, &cust); err != nil {
			return err
		}
		if err := t.writeRow(key("o", wh, d, o), rowImage(i64(cust), i64(carrier)), "UPDATE "+tpccTable("orders")+" SET ver = "+P(1)+", o_carrier_id = "+P(2)+" WHERE o_w_id = "+P(3)+" AND o_d_id = "+P(4)+" AND o_id = "+P(5),
			carrier, wh, d, o); err != nil {
			return err
		}
		where = fmt.Sprintf("ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d", wh, d, o)
		lines, err := t.predRead("order_line", where, "SELECT ol_number, ol_amount, ver FROM "+tpccTable("order_line")+" WHERE ol_w_id = "+P(1)+" AND ol_d_id = "+P(2)+" AND ol_o_id = "+P(3),
			[]any{wh, d, o}, 2, func(ids []int64) string { return key("ol", wh, d, o, ids[0]) })
		if err != nil {
			return err
		}
		var total int64
		for _, l := range lines {
			total += l[1]
			if err := t.writeRow(key("ol", wh, d, o, l[0]), rowImage(i64(1)), "UPDATE "+tpccTable("order_line")+" SET ver = "+P(1)+", ol_delivery_d = 1 WHERE ol_w_id = "+P(2)+" AND ol_d_id = "+P(3)+" AND ol_o_id = "+P(4)+" AND ol_number = "+P(5),
				wh, d, o, l[0]); err != nil {
				return err
			}
		}
		var bal, dc int64
		if err := t.readRow(key("c", wh, d, cust), "SELECT c_balance, c_delivery_cnt, ver FROM "+tpccTable("customer")+" WHERE c_w_id = "+P(1)+" AND c_d_id = "+P(2)+" AND c_id = "+P(3),
			[]any{wh, d, cust}, &bal, &dc); err != nil {
			return err
		}
		if err := t.write(key("c", wh, d, cust), "UPDATE "+tpccTable("customer")+" SET ver = "+P(1)+", c_balance = "+P(2)+", c_delivery_cnt = "+P(3)+" WHERE c_w_id = "+P(4)+" AND c_d_id = "+P(5)+" AND c_id = "+P(6),
			bal+total, dc+1, wh, d, cust); err != nil {
			return err
		}
	}
	return nil
}

// stockLevel is TPC-C §2.8.2: distinct items of the district's last 20
// orders whose stock is below the threshold. Each item's stock row is read
// (and recorded) individually.
func (t *tpccTx) stockLevel(a []int64) error {
	P := t.w.d.Param
	wh, d, threshold := a[0], a[1], a[3]
	var next int64
	if err := t.readRow(key("d", wh, d), "SELECT d_next_o_id, ver FROM "+tpccTable("district")+" WHERE d_w_id = "+P(1)+" AND d_id = "+P(2), []any{wh, d}, &next); err != nil {
		return err
	}
	where := fmt.Sprintf("ol_w_id = %d AND ol_d_id = %d AND ol_o_id >= %d AND ol_o_id < %d", wh, d, next-20, next)
	lines, err := t.predRead("order_line", where, "SELECT ol_o_id, ol_number, ol_i_id, ver FROM "+tpccTable("order_line")+" WHERE ol_w_id = "+P(1)+" AND ol_d_id = "+P(2)+" AND ol_o_id >= "+P(3)+" AND ol_o_id < "+P(4),
		[]any{wh, d, next - 20, next}, 3, func(ids []int64) string { return key("ol", wh, d, ids[0], ids[1]) })
	if err != nil {
		return err
	}
	seen := map[int64]bool{}
	var items []int64
	for _, l := range lines {
		if !seen[l[2]] {
			seen[l[2]] = true
			items = append(items, l[2])
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i] < items[j] })
	// The count of items below threshold is the transaction's output; the
	// reads it is computed from are what the history records.
	for _, it := range items {
		var q int64
		if err := t.readRow(key("s", wh, it), "SELECT s_quantity, ver FROM "+tpccTable("stock")+" WHERE s_w_id = "+P(1)+" AND s_i_id = "+P(2), []any{wh, it}, &q); err != nil {
			return err
		}
		_ = q < threshold
	}
	return nil
}

// readItem reads an item's price; items are never written, so the read is
// recorded with value nil (the initial state).
func (t *tpccTx) readItem(item int64) (int64, error) {
	i := t.rec.Start(Op{Kind: history.Read, KeyS: key("i", item)})
	var price int64
	rows, err := t.c.Query(t.ctx, "SELECT i_price FROM "+tpccTable("item")+" WHERE i_id = "+t.w.d.Param(1), item)
	if err != nil {
		return 0, err
	}
	n, err := scanRows(rows, nil, &price)
	if err != nil {
		return 0, err
	}
	if n != 1 {
		return 0, fmt.Errorf("%w: %d rows for item %d", ErrBadData, n, item)
	}
	t.rec.Finish(i)
	return price, nil
}

// errConflict is a conflict the workload detects itself (a row it saw
// vanished); the transaction is rolled back and recorded as aborted.
var errConflict = fmt.Errorf("concurrent change detected by the workload: %w", ErrUserAbort)
