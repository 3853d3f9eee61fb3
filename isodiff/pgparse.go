package isodiff

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// parsePostgres parses one statement of the PostgreSQL dialect with
// libpg_query (the PostgreSQL server's own grammar, through pg_query_go)
// and turns it into accesses. params are the bound values of $1, $2, ...
// (from a log's "parameters:" detail), nil when not known.
func parsePostgres(sql string, params []string) ([]Stmt, error) {
	js, err := pg.ParseToJSON(sql)
	if err != nil {
		return nil, err
	}
	var tree struct {
		Stmts []struct {
			Stmt map[string]any `json:"stmt"`
		} `json:"stmts"`
	}
	if err := json.Unmarshal([]byte(js), &tree); err != nil {
		return nil, fmt.Errorf("pg_query JSON: %v", err)
	}
	var out []Stmt
	for _, s := range tree.Stmts {
		b := &builder{params: params}
		w := pgWalker{b: b}
		w.stmt(s.Stmt)
		out = append(out, b.finish())
	}
	return out, nil
}

type pgWalker struct{ b *builder }

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// node unwraps {"Type": {...}} into its type name and body.
func node(v any) (string, map[string]any) {
	for k, b := range obj(v) {
		return k, obj(b)
	}
	return "", nil
}

func (w pgWalker) stmt(n map[string]any) {
	typ, body := node(n)
	switch typ {
	case "TransactionStmt":
		switch str(body["kind"]) {
		case "TRANS_STMT_BEGIN", "TRANS_STMT_START":
			w.b.st.Kind = KindBegin
		case "TRANS_STMT_COMMIT":
			w.b.st.Kind = KindCommit
		case "TRANS_STMT_ROLLBACK":
			w.b.st.Kind = KindRollback
		}
	case "SelectStmt":
		w.selectStmt(body, nil, false)
	case "InsertStmt":
		w.insert(body, nil)
	case "UpdateStmt":
		w.update(body, nil)
	case "DeleteStmt":
		w.delete(body, nil)
	case "ExplainStmt":
		// EXPLAIN without ANALYZE runs nothing; with ANALYZE it runs the
		// query, whose accesses are the query's.
		for _, o := range list(body["options"]) {
			if _, d := node(o); str(d["defname"]) == "analyze" {
				w.stmt(obj(body["query"]))
			}
		}
	}
}

// with walks a WITH clause (its queries run before the outer statement)
// and binds the CTE names to no table.
func (w pgWalker) with(wc map[string]any, sc *scope) {
	for _, c := range list(wc["ctes"]) {
		_, cte := node(c)
		_, q := node(cte["ctequery"])
		w.stmt(obj(cte["ctequery"]))
		_ = q
		sc.bind(str(cte["ctename"]), -1)
	}
}

func (w pgWalker) rangeVar(rv map[string]any, sc *scope) int {
	name := strings.ToLower(str(rv["relname"]))
	if sc != nil {
		// A reference to a CTE of an enclosing scope is no table.
		for s := sc; s != nil; s = s.outer {
			if r, ok := s.names[name]; ok && r < 0 && str(rv["schemaname"]) == "" {
				sc.bind(aliasOf(rv, name), -1)
				return -1
			}
		}
	}
	rel := w.b.rel(name)
	if sc != nil {
		sc.bind(aliasOf(rv, name), rel)
	}
	return rel
}

func aliasOf(rv map[string]any, name string) string {
	if a := obj(rv["alias"]); a != nil && str(a["aliasname"]) != "" {
		return str(a["aliasname"])
	}
	return name
}

// from binds a FROM item; quals of joins are returned to be read with the
// WHERE clause, subqueries in FROM are walked at once.
func (w pgWalker) from(item any, sc *scope, quals *[]any) {
	typ, body := node(item)
	switch typ {
	case "RangeVar":
		w.rangeVar(body, sc)
	case "JoinExpr":
		w.from(body["larg"], sc, quals)
		w.from(body["rarg"], sc, quals)
		if q := body["quals"]; q != nil {
			*quals = append(*quals, q)
		}
		for _, u := range list(body["usingClause"]) {
			_, s := node(u)
			col := str(s["sval"])
			for _, r := range sc.order {
				if r >= 0 {
					w.b.read(r, col, false)
				}
			}
		}
	case "RangeSubselect":
		_, sub := node(body["subquery"])
		w.selectStmt(sub, sc.outer, false)
		if a := obj(body["alias"]); a != nil {
			sc.bind(str(a["aliasname"]), -1)
		}
	case "RangeFunction":
		w.exprs(body["functions"], sc, false, -2)
	}
}

// exprs reads the columns an expression tree mentions. Subqueries are
// walked first (subLinks pass), then the expression's own columns. target
// is the relation whose reads are locked (an UPDATE/DELETE target), -2
// for none; locked locks every read (FOR UPDATE).
func (w pgWalker) exprs(e any, sc *scope, locked bool, target int) {
	w.sublinks(e, sc)
	w.columns(e, sc, locked, target)
}

type located struct {
	loc int
	v   map[string]any
}

// find collects the nodes of type typ under e in source order, not
// descending into nodes of type stop.
func find(e any, typ, stop string, out *[]located) {
	switch v := e.(type) {
	case map[string]any:
		for k, x := range v {
			if k == typ {
				b := obj(x)
				loc, _ := b["location"].(float64)
				*out = append(*out, located{int(loc), b})
				continue
			}
			if k == stop {
				continue
			}
			find(x, typ, stop, out)
		}
	case []any:
		for _, x := range v {
			find(x, typ, stop, out)
		}
	}
	sort.SliceStable(*out, func(i, j int) bool { return (*out)[i].loc < (*out)[j].loc })
}

func (w pgWalker) sublinks(e any, sc *scope) {
	var sls []located
	find(e, "SubLink", "", &sls)
	for _, sl := range sls {
		w.sublinks(sl.v["testexpr"], sc)
		_, sub := node(sl.v["subselect"])
		w.selectStmt(sub, sc, false)
	}
}

func (w pgWalker) columns(e any, sc *scope, locked bool, target int) {
	var crs []located
	find(e, "ColumnRef", "subselect", &crs)
	for _, cr := range crs {
		w.columnRef(cr.v, sc, locked, target)
	}
}

func (w pgWalker) columnRef(cr map[string]any, sc *scope, locked bool, target int) {
	var parts []string
	for _, f := range list(cr["fields"]) {
		typ, b := node(f)
		if typ == "A_Star" {
			parts = append(parts, "*")
		} else {
			parts = append(parts, str(b["sval"]))
		}
	}
	if len(parts) == 0 {
		return
	}
	col := parts[len(parts)-1]
	qual := ""
	if len(parts) >= 2 {
		qual = parts[len(parts)-2]
	}
	for _, r := range sc.resolve(qual) {
		if r >= 0 {
			w.b.read(r, col, locked || r == target)
		}
	}
}

// keys records col = constant conjuncts of a condition.
func (w pgWalker) keys(e any, sc *scope) {
	typ, body := node(e)
	switch typ {
	case "BoolExpr":
		if str(body["boolop"]) == "AND_EXPR" {
			for _, a := range list(body["args"]) {
				w.keys(a, sc)
			}
		}
	case "A_Expr":
		if str(body["kind"]) != "AEXPR_OP" {
			return
		}
		names := list(body["name"])
		if len(names) != 1 {
			return
		}
		if _, s := node(names[0]); str(s["sval"]) != "=" {
			return
		}
		w.keyPair(body["lexpr"], body["rexpr"], sc)
		w.keyPair(body["rexpr"], body["lexpr"], sc)
	}
}

func (w pgWalker) keyPair(colE, valE any, sc *scope) {
	typ, cr := node(colE)
	if typ != "ColumnRef" {
		return
	}
	val, ok := w.constant(valE)
	if !ok {
		return
	}
	fields := list(cr["fields"])
	if len(fields) == 0 {
		return
	}
	_, last := node(fields[len(fields)-1])
	qual := ""
	if len(fields) >= 2 {
		_, q := node(fields[len(fields)-2])
		qual = str(q["sval"])
	}
	rels := sc.resolve(qual)
	if len(rels) == 1 && rels[0] >= 0 {
		w.b.key(rels[0], str(last["sval"]), val)
	}
}

// constant renders a literal or bound parameter; ok is false for anything
// else.
func (w pgWalker) constant(e any) (string, bool) {
	typ, body := node(e)
	switch typ {
	case "A_Const":
		if body["isnull"] == true {
			return "NULL", true
		}
		if iv, ok := body["ival"]; ok {
			n, _ := obj(iv)["ival"].(float64)
			return strconv.FormatInt(int64(n), 10), true
		}
		if sv, ok := body["sval"]; ok {
			return normValue("'" + str(obj(sv)["sval"]) + "'"), true
		}
		if fv, ok := body["fval"]; ok {
			return str(obj(fv)["fval"]), true
		}
		if bv, ok := body["boolval"]; ok {
			return fmt.Sprint(obj(bv)["boolval"] == true), true
		}
	case "ParamRef":
		n, _ := body["number"].(float64)
		return normValue(w.b.param(int(n))), true
	case "TypeCast":
		return w.constant(body["arg"])
	}
	return "", false
}

func (w pgWalker) selectStmt(s map[string]any, outer *scope, lockedAbove bool) {
	if s == nil {
		return
	}
	if op := str(s["op"]); op != "" && op != "SETOP_NONE" {
		_, l := node(s["larg"])
		_, r := node(s["rarg"])
		w.selectStmt(l, outer, lockedAbove)
		w.selectStmt(r, outer, lockedAbove)
		return
	}
	sc := newScope(outer)
	if wc := obj(s["withClause"]); wc != nil {
		w.with(wc, sc)
	}
	var quals []any
	for _, f := range list(s["fromClause"]) {
		w.from(f, sc, &quals)
	}
	locked := lockedAbove || len(list(s["lockingClause"])) > 0
	clauses := append(quals, s["whereClause"], s["groupClause"], s["havingClause"], s["valuesLists"], s["targetList"], s["sortClause"])
	for _, c := range clauses {
		w.sublinks(c, sc)
	}
	for _, q := range quals {
		w.keys(q, sc)
	}
	w.keys(s["whereClause"], sc)
	for _, c := range clauses {
		w.columns(c, sc, locked, -2)
	}
}

func (w pgWalker) insert(s map[string]any, outer *scope) {
	sc := newScope(outer)
	if wc := obj(s["withClause"]); wc != nil {
		w.with(wc, sc)
	}
	rel := w.rangeVar(obj(s["relation"]), nil)
	var cols []string
	for _, c := range list(s["cols"]) {
		_, rt := node(c)
		cols = append(cols, str(rt["name"]))
	}
	_, sel := node(s["selectStmt"])
	if vl := list(sel["valuesLists"]); len(vl) > 0 && len(list(sel["fromClause"])) == 0 {
		w.sublinks(vl, sc)
		w.columns(vl, sc, false, -2)
		if len(vl) == 1 && rel >= 0 {
			_, row := node(vl[0])
			for i, v := range list(row["items"]) {
				if i < len(cols) {
					if val, ok := w.constant(v); ok {
						w.b.key(rel, cols[i], val)
					}
				}
			}
		}
	} else if sel != nil {
		w.selectStmt(sel, sc, false)
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
	if oc := obj(s["onConflictClause"]); oc != nil {
		tsc := newScope(sc)
		tsc.bind(aliasOf(obj(s["relation"]), w.b.tables[rel]), rel)
		tsc.bind("excluded", -1)
		w.exprs(oc["whereClause"], tsc, false, rel)
		for _, t := range list(oc["targetList"]) {
			_, rt := node(t)
			w.exprs(rt["val"], tsc, false, rel)
			w.b.write(rel, str(rt["name"]))
		}
	}
	if rl := s["returningList"]; rl != nil {
		tsc := newScope(sc)
		tsc.bind(w.b.tables[rel], rel)
		w.exprs(rl, tsc, false, rel)
	}
}

func (w pgWalker) update(s map[string]any, outer *scope) {
	sc := newScope(outer)
	if wc := obj(s["withClause"]); wc != nil {
		w.with(wc, sc)
	}
	rel := w.rangeVar(obj(s["relation"]), sc)
	var quals []any
	for _, f := range list(s["fromClause"]) {
		w.from(f, sc, &quals)
	}
	var vals []any
	for _, t := range list(s["targetList"]) {
		_, rt := node(t)
		vals = append(vals, rt["val"])
	}
	all := append(append(quals, s["whereClause"]), vals...)
	for _, c := range all {
		w.sublinks(c, sc)
	}
	for _, q := range quals {
		w.keys(q, sc)
	}
	w.keys(s["whereClause"], sc)
	for _, q := range quals {
		w.columns(q, sc, false, rel)
	}
	w.columns(s["whereClause"], sc, false, rel)
	for _, v := range vals {
		w.columns(v, sc, false, rel)
	}
	if rel < 0 {
		return
	}
	for _, t := range list(s["targetList"]) {
		_, rt := node(t)
		w.b.write(rel, str(rt["name"]))
	}
	if rl := s["returningList"]; rl != nil {
		w.columns(rl, sc, false, rel)
	}
}

func (w pgWalker) delete(s map[string]any, outer *scope) {
	sc := newScope(outer)
	if wc := obj(s["withClause"]); wc != nil {
		w.with(wc, sc)
	}
	rel := w.rangeVar(obj(s["relation"]), sc)
	var quals []any
	for _, f := range list(s["usingClause"]) {
		w.from(f, sc, &quals)
	}
	all := append(quals, s["whereClause"])
	for _, c := range all {
		w.sublinks(c, sc)
	}
	for _, q := range quals {
		w.keys(q, sc)
	}
	w.keys(s["whereClause"], sc)
	for _, c := range all {
		w.columns(c, sc, false, rel)
	}
	if rel >= 0 {
		w.b.write(rel, "*")
	}
	if rl := s["returningList"]; rl != nil {
		w.columns(rl, sc, false, rel)
	}
}

// normValue renders a literal so that the same value written as a quoted
// string ('42', as PostgreSQL logs bound parameters) and as a number (42)
// compare equal.
func normValue(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		in := s[1 : len(s)-1]
		if _, err := strconv.ParseFloat(in, 64); err == nil && in != "" {
			return in
		}
		return s
	}
	return s
}
