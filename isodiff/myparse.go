package isodiff

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/xwb1989/sqlparser"
)

// parseMySQL parses one statement of the MySQL/MariaDB dialect with
// sqlparser (the MySQL grammar of Vitess, as a standalone package) and
// turns it into accesses.
func parseMySQL(sql string, params []string) ([]Stmt, error) {
	st, err := mysqlParse(sql)
	if err != nil {
		return nil, err
	}
	b := &builder{params: params}
	w := myWalker{b: b}
	w.stmt(st)
	return []Stmt{b.finish()}, nil
}

// mysqlParse is sqlparser.Parse with its panics turned into errors: the
// Vitess-derived parser panics on some malformed input (an empty MySQL
// version comment "/*!*/" slices out of range in ExtractMysqlComment;
// FuzzReadTrace input in testdata), and a trace is untrusted input.
func mysqlParse(sql string) (st sqlparser.Statement, err error) {
	defer func() {
		if r := recover(); r != nil {
			st, err = nil, fmt.Errorf("MySQL parser failed on this statement: %v", r)
		}
	}()
	return sqlparser.Parse(sql)
}

type myWalker struct{ b *builder }

func (w myWalker) stmt(st sqlparser.Statement) {
	switch s := st.(type) {
	case *sqlparser.Begin:
		w.b.st.Kind = KindBegin
	case *sqlparser.Commit:
		w.b.st.Kind = KindCommit
	case *sqlparser.Rollback:
		w.b.st.Kind = KindRollback
	case sqlparser.SelectStatement:
		w.selectStmt(s, nil, false)
	case *sqlparser.Insert:
		w.insert(s)
	case *sqlparser.Update:
		w.update(s)
	case *sqlparser.Delete:
		w.delete(s)
	}
}

func (w myWalker) selectStmt(s sqlparser.SelectStatement, outer *scope, lockedAbove bool) {
	switch v := s.(type) {
	case *sqlparser.Union:
		l := lockedAbove || strings.Contains(strings.ToLower(v.Lock), "for update") || strings.Contains(strings.ToLower(v.Lock), "share")
		w.selectStmt(v.Left, outer, l)
		w.selectStmt(v.Right, outer, l)
	case *sqlparser.ParenSelect:
		w.selectStmt(v.Select, outer, lockedAbove)
	case *sqlparser.Select:
		sc := newScope(outer)
		var quals []sqlparser.Expr
		for _, te := range v.From {
			w.from(te, sc, &quals)
		}
		lk := strings.ToLower(v.Lock)
		locked := lockedAbove || strings.Contains(lk, "for update") || strings.Contains(lk, "share")
		extra := []sqlparser.SQLNode{v.GroupBy}
		if v.Having != nil {
			extra = append(extra, v.Having.Expr)
		}
		extra = append(extra, v.SelectExprs, v.OrderBy)
		w.clauses(sc, quals, v.Where, extra, locked, -2)
	}
}

// clauses walks a statement's join conditions quals, its WHERE clause
// where (nil: none) and its other expressions extra, in that order: first
// the sub-queries of all, then the key equalities of quals and where,
// then the columns all read (locked: the reads lock; target: the table the
// statement writes, -2 none).
func (w myWalker) clauses(sc *scope, quals []sqlparser.Expr, where *sqlparser.Where, extra []sqlparser.SQLNode, locked bool, target int) {
	var nodes []sqlparser.SQLNode
	for _, q := range quals {
		nodes = append(nodes, q)
	}
	if where != nil {
		nodes = append(nodes, where.Expr)
	}
	nodes = append(nodes, extra...)
	for _, n := range nodes {
		w.sublinks(n, sc)
	}
	for _, q := range quals {
		w.keys(q, sc)
	}
	if where != nil {
		w.keys(where.Expr, sc)
	}
	for _, n := range nodes {
		w.columns(n, sc, locked, target)
	}
}

func (w myWalker) table(tn sqlparser.TableName, alias string, sc *scope) int {
	name := strings.ToLower(tn.Name.String())
	if name == "dual" && tn.Qualifier.IsEmpty() {
		return -1
	}
	rel := w.b.rel(name)
	if sc != nil {
		if alias == "" {
			alias = name
		}
		sc.bind(alias, rel)
	}
	return rel
}

func (w myWalker) from(te sqlparser.TableExpr, sc *scope, quals *[]sqlparser.Expr) {
	switch t := te.(type) {
	case *sqlparser.AliasedTableExpr:
		switch e := t.Expr.(type) {
		case sqlparser.TableName:
			w.table(e, t.As.String(), sc)
		case *sqlparser.Subquery:
			w.selectStmt(e.Select, sc.outer, false)
			sc.bind(t.As.String(), -1)
		}
	case *sqlparser.ParenTableExpr:
		for _, x := range t.Exprs {
			w.from(x, sc, quals)
		}
	case *sqlparser.JoinTableExpr:
		w.from(t.LeftExpr, sc, quals)
		w.from(t.RightExpr, sc, quals)
		if t.Condition.On != nil {
			*quals = append(*quals, t.Condition.On)
		}
		for _, c := range t.Condition.Using {
			for _, r := range sc.order {
				if r >= 0 {
					w.b.read(r, strings.ToLower(c.String()), false)
				}
			}
		}
	}
}

// sublinks walks the subqueries under n, in source order, before the
// expression's own columns are read.
func (w myWalker) sublinks(n sqlparser.SQLNode, sc *scope) {
	_ = sqlparser.Walk(func(x sqlparser.SQLNode) (bool, error) {
		if sq, ok := x.(*sqlparser.Subquery); ok {
			w.selectStmt(sq.Select, sc, false)
			return false, nil
		}
		return true, nil
	}, n)
}

func (w myWalker) columns(n sqlparser.SQLNode, sc *scope, locked bool, target int) {
	_ = sqlparser.Walk(func(x sqlparser.SQLNode) (bool, error) {
		switch c := x.(type) {
		case *sqlparser.Subquery:
			return false, nil
		case *sqlparser.ColName:
			w.colName(c, sc, locked, target)
		case *sqlparser.StarExpr:
			for _, r := range sc.resolve(strings.ToLower(c.TableName.Name.String())) {
				if r >= 0 {
					w.b.read(r, "*", locked || r == target)
				}
			}
		}
		return true, nil
	}, n)
}

func (w myWalker) colName(c *sqlparser.ColName, sc *scope, locked bool, target int) {
	qual := c.Qualifier.Name.String()
	for _, r := range sc.resolve(qual) {
		if r >= 0 {
			w.b.read(r, strings.ToLower(c.Name.String()), locked || r == target)
		}
	}
}

func (w myWalker) keys(e sqlparser.Expr, sc *scope) {
	switch v := e.(type) {
	case *sqlparser.AndExpr:
		w.keys(v.Left, sc)
		w.keys(v.Right, sc)
	case *sqlparser.ParenExpr:
		w.keys(v.Expr, sc)
	case *sqlparser.ComparisonExpr:
		if v.Operator != sqlparser.EqualStr {
			return
		}
		w.keyPair(v.Left, v.Right, sc)
		w.keyPair(v.Right, v.Left, sc)
	}
}

func (w myWalker) keyPair(colE, valE sqlparser.Expr, sc *scope) {
	c, ok := colE.(*sqlparser.ColName)
	if !ok {
		return
	}
	val, ok := w.constant(valE)
	if !ok {
		return
	}
	rels := sc.resolve(c.Qualifier.Name.String())
	if len(rels) == 1 && rels[0] >= 0 {
		w.b.key(rels[0], strings.ToLower(c.Name.String()), val)
	}
}

func (w myWalker) constant(e sqlparser.Expr) (string, bool) {
	switch v := e.(type) {
	case *sqlparser.SQLVal:
		switch v.Type {
		case sqlparser.IntVal, sqlparser.FloatVal, sqlparser.HexNum:
			return string(v.Val), true
		case sqlparser.StrVal:
			return normValue("'" + string(v.Val) + "'"), true
		case sqlparser.ValArg:
			// "?" placeholders are numbered :v1, :v2, ... by the parser.
			if n, err := strconv.Atoi(strings.TrimPrefix(string(v.Val), ":v")); err == nil {
				return normValue(w.b.param(n)), true
			}
			return string(v.Val), true
		}
	case *sqlparser.NullVal:
		return "NULL", true
	case sqlparser.BoolVal:
		if v {
			return "true", true
		}
		return "false", true
	case *sqlparser.UnaryExpr:
		if s, ok := w.constant(v.Expr); ok && v.Operator == sqlparser.UMinusStr {
			return "-" + s, true
		}
	}
	return "", false
}

func (w myWalker) insert(s *sqlparser.Insert) {
	sc := newScope(nil)
	rel := w.table(s.Table, "", nil)
	var cols []string
	for _, c := range s.Columns {
		cols = append(cols, strings.ToLower(c.String()))
	}
	switch rows := s.Rows.(type) {
	case sqlparser.Values:
		w.sublinks(rows, sc)
		w.columns(rows, sc, false, -2)
		if len(rows) == 1 && rel >= 0 {
			for i, v := range rows[0] {
				if i < len(cols) {
					if val, ok := w.constant(v); ok {
						w.b.key(rel, cols[i], val)
					}
				}
			}
		}
	case sqlparser.SelectStatement:
		w.selectStmt(rows, sc, false)
	}
	if rel < 0 {
		return
	}
	if len(cols) == 0 {
		w.b.insert(rel, "*")
	}
	for _, c := range cols {
		w.b.insert(rel, c)
	}
	if len(s.OnDup) > 0 {
		tsc := newScope(nil)
		tsc.bind(w.b.tables[rel], rel)
		for _, u := range s.OnDup {
			w.sublinks(u.Expr, tsc)
			w.columns(u.Expr, tsc, false, rel)
			w.b.write(rel, strings.ToLower(u.Name.Name.String()))
		}
	}
}

func (w myWalker) update(s *sqlparser.Update) {
	sc := newScope(nil)
	var quals []sqlparser.Expr
	for _, te := range s.TableExprs {
		w.from(te, sc, &quals)
	}
	target := -2
	if len(sc.order) > 0 {
		target = sc.order[0]
	}
	var set []sqlparser.SQLNode
	for _, u := range s.Exprs {
		set = append(set, u.Expr)
	}
	w.clauses(sc, quals, s.Where, set, false, target)
	for _, u := range s.Exprs {
		for _, r := range sc.resolve(u.Name.Qualifier.Name.String()) {
			if r >= 0 {
				w.b.write(r, strings.ToLower(u.Name.Name.String()))
			}
			break
		}
	}
}

func (w myWalker) delete(s *sqlparser.Delete) {
	sc := newScope(nil)
	var quals []sqlparser.Expr
	for _, te := range s.TableExprs {
		w.from(te, sc, &quals)
	}
	targets := []int{}
	if len(s.Targets) == 0 && len(sc.order) > 0 {
		targets = append(targets, sc.order[0])
	}
	for _, t := range s.Targets {
		targets = append(targets, sc.resolve(strings.ToLower(t.Name.String()))...)
	}
	target := -2
	if len(targets) > 0 {
		target = targets[0]
	}
	w.clauses(sc, quals, s.Where, nil, false, target)
	for _, t := range targets {
		if t >= 0 {
			w.b.write(t, "*")
		}
	}
}
