package isodiff

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
)

// Op is one operation of a transaction class.
type Op struct {
	Table, Column string
	Write         bool
	Locked        bool // a locking read (conflicts like a write, see Access.Locked)
	Insert        bool // a write that creates the row
	Stmt          int  // index into Class.Stmts
	Row           int  // row variable within the class (see Class.Rows)
}

// ColumnName renders table.column.
func (o Op) ColumnName() string { return o.Table + "." + o.Column }

func (o Op) letter() string {
	switch {
	case o.Write:
		return "w"
	case o.Locked:
		return "l"
	}
	return "r"
}

// ClassStmt is a statement of a class, with an example SQL text.
type ClassStmt struct {
	SQL string `json:"sql"`
	Sig string `json:"ops"`
}

// RowVar is a row a class touches: the accesses with the same row
// variable touch the same row in every observed instance (§3.3's
// correlation from same-row accesses). Pinned rows are named by equality
// conditions (the same conditions in every instance name the same rows);
// unpinned ones are range reads or scans that may touch any rows.
type RowVar struct {
	Table  string
	Pinned bool
	// Predicate: the equality conditions do not cover the key columns any
	// UPDATE or DELETE of the table uses, so the access may select several
	// rows (a row lock does not cover rows inserted later).
	Predicate bool
	// Unique: each instance of the class touches a row of its own
	// (a unique ID, inferred when the trace shows instances never sharing
	// the row's key values, or declared with the "unique" hint).
	Unique bool
	// Cols are the columns of the equality conditions (INSERT values) that
	// pin the row, in every statement that touches it.
	Cols []string
	// IDCols, for a unique-ID row, are the key columns whose values make
	// it unique (a minimal set: without any of them two instances would
	// share the row). Another transaction that names the row by all of
	// them must have learned its ID (see feasChecker.check).
	IDCols []string
}

// Class is a transaction class: the distinct operation sequence shared
// by a set of committed transactions after loops collapse (Thm 3.3).
type Class struct {
	ID        string // stable: a hash of the operation sequence
	Label     string // the label of most of its instances (trace labels or label hints)
	dupLabel  bool   // another class has the same label
	Stmts     []ClassStmt
	Ops       []Op
	Rows      []RowVar
	Instances int
	Replicas  int // set by the analysis (2 for RC, 3 for SI; hints may lower it)
	// TxnIDs are the recorder ids of the committed instances (traces
	// written by txray run --sql-trace name each transaction), used to
	// find the class of a history transaction (Observe).
	TxnIDs []string
}

// returning: statement st returns rows to the application (it reads and
// writes nothing, or it has a RETURNING clause).
func (c *Class) returning(st int) bool {
	reads, writes := false, false
	for _, o := range c.Ops {
		if o.Stmt == st {
			reads = reads || !o.Write
			writes = writes || o.Write
		}
	}
	return reads && (!writes || strings.Contains(strings.ToUpper(c.Stmts[st].SQL), "RETURNING"))
}

// Name is the label if any, else the ID.
func (c *Class) Name() string {
	if c.Label != "" {
		if c.dupLabel {
			return c.Label + "/" + c.ID
		}
		return c.Label
	}
	return c.ID
}

// App is an application model built from a trace.
type App struct {
	Classes []*Class
	Stats   TraceStats
}

// TraceStats counts what the trace held.
type TraceStats struct {
	Statements   int            `json:"statements"`
	Transactions int            `json:"transactions"`
	Committed    int            `json:"committed"`
	RolledBack   int            `json:"rolled_back"`
	Incomplete   int            `json:"incomplete"` // open at the end of the trace or at a session's reconnect
	Unparsable   int            `json:"unparsable"`
	Unparsed     []Unparsable   `json:"unparsable_examples,omitempty"`
	NoAccess     int            `json:"statements_without_table_access"`
	Collapsed    int            `json:"loop_iterations_collapsed"`
	Files        []string       `json:"files"`
	Formats      []string       `json:"formats"`
	ParseErrors  map[string]int `json:"-"`
}

// Unparsable is a statement no parser of the dialect accepted.
type Unparsable struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	SQL   string `json:"sql"`
	Error string `json:"error"`
}

type txnStmt struct {
	sql  string
	stmt Stmt
}

type txn struct {
	label string
	id    string // recorder id ("-- txn: ID"), "" when none
	stmts []txnStmt
}

// Builder accumulates traces into an App.
type Builder struct {
	Dialect string
	stats   TraceStats
	txns    []txn
	cache   map[string]cached
	// rowKeys[table] holds the key column sets UPDATE and DELETE
	// statements identify the table's rows by.
	rowKeys map[string]map[string]bool
}

type cached struct {
	stmts []Stmt
	err   error
}

// NewBuilder returns a Builder for the dialect (DialectAuto tries the
// PostgreSQL grammar first and the MySQL grammar when it fails).
func NewBuilder(dialect string) *Builder {
	return &Builder{Dialect: dialect, cache: map[string]cached{}, rowKeys: map[string]map[string]bool{}}
}

func (b *Builder) parse(sql string, params []string) ([]Stmt, error) {
	key := sql
	if params != nil {
		key = sql + "\x00" + strings.Join(params, "\x00")
	}
	if c, ok := b.cache[key]; ok {
		return c.stmts, c.err
	}
	var (
		st  []Stmt
		err error
	)
	switch b.Dialect {
	case DialectPostgres:
		st, err = parsePostgres(sql, params)
	case DialectMySQL:
		st, err = parseMySQL(sql, params)
	default:
		st, err = parsePostgres(sql, params)
		if err != nil {
			if st2, err2 := parseMySQL(sql, params); err2 == nil {
				st, err = st2, nil
			}
		}
	}
	if len(b.cache) < 1<<16 {
		b.cache[key] = cached{st, err}
	}
	return st, err
}

// Add groups a trace's statements into transactions per session:
// BEGIN/START TRANSACTION opens one, COMMIT closes it, ROLLBACK discards
// it; a statement outside a transaction is a transaction of its own
// (autocommit). Statements that cannot be parsed are counted, and the
// transaction they belong to is kept without them.
func (b *Builder) Add(file, format string, entries []Entry) {
	b.stats.Files = append(b.stats.Files, file)
	b.stats.Formats = append(b.stats.Formats, format)
	open := map[string]*txn{}
	var order []string
	closeTxn := func(sess string, commit bool) {
		t := open[sess]
		if t == nil {
			return
		}
		delete(open, sess)
		b.stats.Transactions++
		if commit {
			b.stats.Committed++
			b.txns = append(b.txns, *t)
		} else {
			b.stats.RolledBack++
		}
	}
	for _, e := range entries {
		if e.SQL == "" { // a reconnect marker
			if open[e.Session] != nil {
				delete(open, e.Session)
				b.stats.Transactions++
				b.stats.Incomplete++
			}
			continue
		}
		b.stats.Statements++
		sts, err := b.parse(e.SQL, e.Params)
		if err != nil {
			b.stats.Unparsable++
			if len(b.stats.Unparsed) < 20 {
				b.stats.Unparsed = append(b.stats.Unparsed, Unparsable{File: file, Line: e.Line, SQL: clip(e.SQL, 200), Error: err.Error()})
			}
			continue
		}
		for _, st := range sts {
			switch st.Kind {
			case KindBegin:
				if open[e.Session] != nil {
					// BEGIN inside a transaction is a warning in PostgreSQL
					// and an implicit commit in MySQL; keep the open one.
					if b.Dialect == DialectMySQL {
						closeTxn(e.Session, true)
					} else {
						continue
					}
				}
				open[e.Session] = &txn{label: e.Label, id: e.Txn}
				order = append(order, e.Session)
			case KindCommit:
				closeTxn(e.Session, true)
			case KindRollback:
				closeTxn(e.Session, false)
			case KindAccess:
				for _, a := range st.Accesses {
					if a.Write && !a.Insert && st.Keys[a.Rel] != "" {
						m := b.rowKeys[a.Table]
						if m == nil {
							m = map[string]bool{}
							b.rowKeys[a.Table] = m
						}
						m[keyCols(st.Keys[a.Rel])] = true
					}
				}
				t := open[e.Session]
				if t == nil {
					b.stats.Transactions++
					b.stats.Committed++
					b.txns = append(b.txns, txn{label: e.Label, id: e.Txn, stmts: []txnStmt{{e.SQL, st}}})
					continue
				}
				if t.label == "" {
					t.label = e.Label
				}
				t.stmts = append(t.stmts, txnStmt{e.SQL, st})
			default:
				b.stats.NoAccess++
			}
		}
	}
	for s := range open {
		_ = s
		b.stats.Transactions++
		b.stats.Incomplete++
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func sig(st Stmt) string {
	var s strings.Builder
	for i, a := range st.Accesses {
		if i > 0 {
			s.WriteByte(' ')
		}
		switch {
		case a.Write:
			s.WriteString("w(")
		case a.Locked:
			s.WriteString("l(")
		default:
			s.WriteString("r(")
		}
		s.WriteString(a.Table)
		s.WriteByte('.')
		s.WriteString(a.Column)
		if a.Rel > 0 {
			s.WriteString("#")
			s.WriteString(itoa(a.Rel))
		}
		s.WriteByte(')')
	}
	return s.String()
}

// collapse removes loop iterations and returns the indices kept (Thm 3.3:
// a loop body repeated any number of times adds no Δ cycle that one
// iteration lacks). Two rules, applied until neither changes anything:
//
//   - a block of statements repeated back to back is one iteration: the
//     last copy is kept (its row keys are then those of the iteration
//     adjacent to the statements that follow, so same-row correlation
//     between a loop's statements and what follows is kept);
//   - an early-exit iteration (a loop body cut short by continue/break:
//     a proper prefix P of a block B that is adjacent to B, as in "P B" or
//     "B P") is dropped next to the full iteration B, provided P itself
//     shows it is a loop iteration: it was repeated (collapsed by the first
//     rule) or B was. Its operations are the first operations of B, so the
//     full iteration represents it, and the class is the same whether or
//     not some iterations exit early (TPC-C Delivery: districts without a
//     new order run only the first SELECT of the body).
func collapse(sigs []string) ([]int, int) {
	idx := make([]int, len(sigs))
	for i := range idx {
		idx[i] = i
	}
	// rep[i]: the statement at idx position i stands for a collapsed run
	// (loop evidence).
	rep := make([]bool, len(sigs))
	removed := 0
	// Signatures as small integers: comparisons are the inner loops.
	id := make([]int, len(sigs))
	ids := map[string]int{}
	for k, sg := range sigs {
		v, ok := ids[sg]
		if !ok {
			v = len(ids)
			ids[sg] = v
		}
		id[k] = v
	}
	eq := func(a, b int) bool { return id[idx[a]] == id[idx[b]] }
	for changed := true; changed; {
		changed = false
		for L := 1; L <= len(idx)/2 && !changed; L++ {
			for i := 0; i+2*L <= len(idx); i++ {
				same := true
				for j := 0; j < L; j++ {
					if !eq(i+j, i+L+j) {
						same = false
						break
					}
				}
				if same {
					for j := 0; j < L; j++ {
						rep[i+L+j] = true
					}
					idx = append(idx[:i], idx[i+L:]...)
					rep = append(rep[:i], rep[i+L:]...)
					removed++
					changed = true
					break
				}
			}
		}
		if changed {
			continue
		}
		// Early-exit iterations. Positions per statement signature bound
		// the candidates of "P B" (P starts with B's first statement).
		pos := map[int][]int{}
		for k := range idx {
			pos[id[idx[k]]] = append(pos[id[idx[k]]], k)
		}
		evidence := func(from, to int) bool {
			for j := from; j < to; j++ {
				if rep[j] {
					return true
				}
			}
			return false
		}
		for L := 2; L <= len(idx) && !changed; L++ {
			for i := 0; i+L <= len(idx) && !changed; i++ {
				// B P: the longest proper prefix of B following it.
				if i+L < len(idx) && eq(i, i+L) {
					p := 0
					for p < L-1 && i+L+p < len(idx) && eq(i+p, i+L+p) {
						p++
					}
					if p > 0 && (i+L+p == len(idx) || !eq(i+p, i+L+p)) && (evidence(i, i+L) || evidence(i+L, i+L+p)) {
						idx = append(idx[:i+L], idx[i+L+p:]...)
						rep = append(rep[:i+L], rep[i+L+p:]...)
						removed++
						changed = true
						break
					}
				}
				// P B: the longest proper prefix of B right before it.
				for _, q := range pos[id[idx[i]]] {
					if q >= i {
						break
					}
					p := i - q
					if p > L-1 {
						continue
					}
					ok := true
					for j := 0; j < p; j++ {
						if !eq(q+j, i+j) {
							ok = false
							break
						}
					}
					if !ok {
						continue
					}
					if evidence(i, i+L) || evidence(q, i) {
						idx = append(idx[:q], idx[i:]...)
						rep = append(rep[:q], rep[i:]...)
						removed++
						changed = true
					}
					break
				}
			}
		}
	}
	return idx, removed
}

// Build turns the transactions into classes.
func (b *Builder) Build() *App {
	type classAcc struct {
		c      *Class
		labels map[string]int
		// keys[instance][group] = the row key observed, group = (stmt, rel)
		keys [][]string
	}
	byKey := map[string]*classAcc{}
	var order []string
	for _, t := range b.txns {
		if len(t.stmts) == 0 {
			continue
		}
		sigs := make([]string, len(t.stmts))
		for i, s := range t.stmts {
			sigs[i] = sig(s.stmt)
		}
		kept, removed := collapse(sigs)
		b.stats.Collapsed += removed
		var ck strings.Builder
		for _, i := range kept {
			ck.WriteString(sigs[i])
			ck.WriteString(";")
		}
		acc := byKey[ck.String()]
		if acc == nil {
			h := fnv.New32a()
			h.Write([]byte(ck.String()))
			c := &Class{ID: fmt.Sprintf("c%08x", h.Sum32())}
			for _, i := range kept {
				c.Stmts = append(c.Stmts, ClassStmt{SQL: clip(t.stmts[i].sql, 400), Sig: sigs[i]})
			}
			acc = &classAcc{c: c, labels: map[string]int{}}
			byKey[ck.String()] = acc
			order = append(order, ck.String())
		}
		acc.c.Instances++
		if t.id != "" {
			acc.c.TxnIDs = append(acc.c.TxnIDs, t.id)
		}
		if t.label != "" {
			acc.labels[t.label]++
		}
		var ks []string
		for _, i := range kept {
			ks = append(ks, t.stmts[i].stmt.Keys...)
		}
		acc.keys = append(acc.keys, ks)
		if len(acc.c.Ops) == 0 {
			// Operations and row groups from the first instance; the
			// structure is the same in every instance of the class.
			g := 0
			for si, i := range kept {
				st := t.stmts[i].stmt
				for _, a := range st.Accesses {
					acc.c.Ops = append(acc.c.Ops, Op{Table: a.Table, Column: a.Column, Write: a.Write, Locked: a.Locked, Insert: a.Insert, Stmt: si, Row: g + a.Rel})
				}
				g += len(st.Keys)
			}
		}
	}
	app := &App{Stats: b.stats}
	for _, k := range order {
		acc := byKey[k]
		c := acc.c
		best := 0
		for l, n := range acc.labels {
			if n > best || n == best && l < c.Label {
				c.Label, best = l, n
			}
		}
		correlate(c, acc.keys, b.rowKeys)
		app.Classes = append(app.Classes, c)
	}
	sort.SliceStable(app.Classes, func(i, j int) bool { return app.Classes[i].Name() < app.Classes[j].Name() })
	app.markDup()
	return app
}

func (a *App) markDup() {
	seen := map[string]int{}
	for _, c := range a.Classes {
		seen[c.Label]++
	}
	for _, c := range a.Classes {
		c.dupLabel = c.Label != "" && seen[c.Label] > 1
	}
}

// ApplyLabels names classes by the label hints: a class gets the label of
// the first rule all of whose column accesses it makes (a trace label is
// kept).
func (a *App) ApplyLabels(h *Hints) {
	if h == nil {
		return
	}
	for _, c := range a.Classes {
		if c.Label != "" {
			continue
		}
		for _, r := range h.Labels {
			ok := true
			for _, need := range r.Need {
				found := false
				for _, o := range c.Ops {
					if colMatch(need.Column, o.Table, o.Column) && (!need.Write || o.Write) && (need.Write || !o.Write) {
						found = true
						break
					}
				}
				if !found {
					ok = false
					break
				}
			}
			if ok {
				c.Label = r.Name
				break
			}
		}
	}
	a.markDup()
	sort.SliceStable(a.Classes, func(i, j int) bool { return a.Classes[i].Name() < a.Classes[j].Name() })
}

// correlate merges the row groups (statement, relation) of a class into
// row variables: two groups on the same table are the same row when every
// instance shows the same key values for both. A group whose statement
// pins no key is a row variable of its own, unpinned. A pinned row is
// unique when no two instances share its key.
func correlate(c *Class, keys [][]string, rowKeys map[string]map[string]bool) {
	if len(keys) == 0 {
		return
	}
	n := len(keys[0])
	table := make([]string, n)
	for _, o := range c.Ops {
		if o.Row < n {
			table[o.Row] = o.Table
		}
	}
	ins := make([]bool, n)
	for _, o := range c.Ops {
		if o.Row < n && o.Insert {
			ins[o.Row] = true
		}
	}
	pinned := func(g int) bool {
		for _, k := range keys {
			if g >= len(k) || k[g] == "" {
				return false
			}
		}
		return true
	}
	predicate := func(g int) bool {
		for _, k := range keys {
			if g < len(k) && k[g] != "" && !ins[g] && !identifies(k[g], rowKeys[table[g]]) {
				return true
			}
		}
		return false
	}
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for g := 0; g < n; g++ {
		if !pinned(g) || table[g] == "" {
			continue
		}
		for h := 0; h < g; h++ {
			if table[h] != table[g] || !pinned(h) {
				continue
			}
			same := true
			for _, k := range keys {
				if !sameRow(k[g], k[h]) {
					same = false
					break
				}
			}
			if same {
				parent[find(g)] = find(h)
			}
		}
	}
	ids := map[int]int{}
	rowOf := make([]int, n)
	for g := 0; g < n; g++ {
		r := find(g)
		id, ok := ids[r]
		if !ok {
			id = len(c.Rows)
			ids[r] = id
			rv := RowVar{Table: table[r], Pinned: pinned(r), Predicate: predicate(r)}
			if rv.Pinned && len(keys) > 1 && insertsRow(c, r, find) {
				rv.IDCols = uniqueCols(keys, r, rowKeys[table[r]])
				rv.Unique = rv.IDCols != nil
			}
			c.Rows = append(c.Rows, rv)
		}
		rowOf[g] = id
		if pinned(g) {
			rv := &c.Rows[id]
			for _, kv := range strings.Split(keys[0][g], ",") {
				col, _, _ := strings.Cut(kv, "=")
				if !slices.Contains(rv.Cols, col) {
					rv.Cols = append(rv.Cols, col)
				}
			}
			sort.Strings(rv.Cols)
		}
	}
	for i := range c.Ops {
		c.Ops[i].Row = rowOf[c.Ops[i].Row]
	}
}

// uniqueCols decides whether the row group g, which the class inserts, is
// a unique-ID row: the instances never share its identity (the key columns
// an UPDATE or DELETE of the table names its rows by, or all the inserted
// columns when no such statement is in the trace). It returns a minimal
// set of those columns that is still distinct across the instances
// (columns are dropped in name order while distinctness holds), or nil
// when the row is not unique.
func uniqueCols(keys [][]string, g int, sets map[string]bool) []string {
	vals := make([]map[string]string, len(keys))
	for i, k := range keys {
		vals[i] = map[string]string{}
		for _, kv := range strings.Split(k[g], ",") {
			col, v, _ := strings.Cut(kv, "=")
			vals[i][col] = v
		}
	}
	var id []string
	var setNames []string
	for set := range sets {
		setNames = append(setNames, set)
	}
	sort.Strings(setNames)
	for _, set := range setNames {
		cs := strings.Split(set, ",")
		ok := true
		for _, col := range cs {
			if _, has := vals[0][col]; !has {
				ok = false
				break
			}
		}
		if ok {
			id = cs
			break
		}
	}
	if id == nil {
		for col := range vals[0] {
			id = append(id, col)
		}
	}
	sort.Strings(id)
	distinct := func(cols []string) bool {
		seen := map[string]bool{}
		for _, v := range vals {
			var b strings.Builder
			for _, col := range cols {
				b.WriteString(v[col])
				b.WriteByte(0)
			}
			if seen[b.String()] {
				return false
			}
			seen[b.String()] = true
		}
		return true
	}
	if !distinct(id) {
		return nil
	}
	for i := 0; i < len(id); {
		rest := append(append([]string(nil), id[:i]...), id[i+1:]...)
		if len(rest) > 0 && distinct(rest) {
			id = rest
			continue
		}
		i++
	}
	return id
}

// identifies: the equality conditions key name one row, judged by the
// trace (the schema is not known): they cover the key columns some UPDATE
// or DELETE of the table uses. An INSERT's row is always one row.
func identifies(key string, sets map[string]bool) bool {
	have := map[string]bool{}
	for _, kv := range strings.Split(key, ",") {
		c, _, _ := strings.Cut(kv, "=")
		have[c] = true
	}
	for set := range sets {
		ok := true
		for _, c := range strings.Split(set, ",") {
			if !have[c] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func keyCols(key string) string {
	var cs []string
	for _, kv := range strings.Split(key, ",") {
		c, _, _ := strings.Cut(kv, "=")
		cs = append(cs, c)
	}
	return strings.Join(cs, ",")
}

// sameRow: two key renderings name the same row when one's conditions
// include the other's (the key columns of one statement may be a superset,
// e.g. a WHERE with an extra non-key condition).
func sameRow(a, b string) bool {
	if a == b {
		return true
	}
	as, bs := strings.Split(a, ","), strings.Split(b, ",")
	if len(as) > len(bs) {
		as, bs = bs, as
	}
	set := map[string]bool{}
	for _, x := range bs {
		set[x] = true
	}
	for _, x := range as {
		if !set[x] {
			return false
		}
	}
	return true
}

// insertsRow: only rows a class creates can be unique IDs (a row the class
// finds by key was created by someone else and may be shared).
func insertsRow(c *Class, g int, find func(int) int) bool {
	for _, o := range c.Ops {
		if find(o.Row) == g && o.Insert {
			return true
		}
	}
	return false
}
