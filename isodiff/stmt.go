package isodiff

import (
	"sort"
	"strings"
)

// Kind is what a statement does to the transaction structure.
type Kind uint8

const (
	KindOther    Kind = iota // a statement with no table access (SET, SHOW, ...)
	KindBegin                // BEGIN / START TRANSACTION
	KindCommit               // COMMIT / END
	KindRollback             // ROLLBACK / ABORT
	KindAccess               // SELECT, INSERT, UPDATE, DELETE (and their combinations)
)

// Access is one read or write of table.column by a statement, in the
// order IsoDiff (Gan et al., VLDB 2020, §3.1) gives a statement's
// operations: WHERE and join conditions first, subqueries before their
// outer statement, the main operation (projection reads, SET/INSERT
// writes) last; function arguments are reads.
type Access struct {
	Table  string
	Column string // "*" for every column (SELECT *, DELETE, INSERT without a column list)
	Write  bool
	// Locked marks a read that holds a row lock until commit: SELECT ...
	// FOR UPDATE/SHARE, and the reads an UPDATE or DELETE makes of its own
	// target rows (re-evaluated under the row lock by PostgreSQL and InnoDB).
	// A locked read conflicts like a write (it cannot be overtaken by a
	// concurrent writer of the row).
	Locked bool
	// Rel numbers the relation occurrence within the statement; accesses
	// with the same Rel touch the same row(s).
	Rel int
	// Insert marks the writes of an INSERT (they create the row).
	Insert bool
}

// Stmt is a parsed statement.
type Stmt struct {
	Kind     Kind
	Accesses []Access
	// Keys gives, per relation occurrence (index = Rel), the equality
	// conditions col = value (WHERE/ON conjuncts and INSERT values) that
	// identify the row it touches, rendered "col=value,..." sorted; "" when
	// the statement does not pin the row down (a predicate read or scan).
	Keys []string
}

// builder collects a statement's accesses while a dialect walker visits
// its syntax tree.
type builder struct {
	st     Stmt
	params []string // bound parameter values ($1 is params[0]); nil when unknown
	keys   []map[string]string
	tables []string
}

// rel registers a relation occurrence and returns its number.
func (b *builder) rel(table string) int {
	b.tables = append(b.tables, table)
	b.keys = append(b.keys, nil)
	return len(b.tables) - 1
}

func (b *builder) add(a Access) {
	for _, x := range b.st.Accesses {
		if x == a {
			return
		}
	}
	b.st.Accesses = append(b.st.Accesses, a)
}

func (b *builder) read(rel int, col string, locked bool) {
	b.add(Access{Table: b.tables[rel], Column: col, Rel: rel, Locked: locked})
}

func (b *builder) write(rel int, col string) {
	b.add(Access{Table: b.tables[rel], Column: col, Write: true, Rel: rel})
}

func (b *builder) insert(rel int, col string) {
	b.add(Access{Table: b.tables[rel], Column: col, Write: true, Rel: rel, Insert: true})
}

// key records col = value for relation rel.
func (b *builder) key(rel int, col, val string) {
	if b.keys[rel] == nil {
		b.keys[rel] = map[string]string{}
	}
	if _, dup := b.keys[rel][col]; !dup {
		b.keys[rel][col] = val
	}
}

// param renders bound parameter n (1-based), or "$n" when its value is
// unknown.
func (b *builder) param(n int) string {
	if n >= 1 && n <= len(b.params) {
		return b.params[n-1]
	}
	return "$" + itoa(n)
}

func (b *builder) finish() Stmt {
	b.st.Keys = make([]string, len(b.keys))
	for i, m := range b.keys {
		if len(m) == 0 {
			continue
		}
		cols := make([]string, 0, len(m))
		for c := range m {
			cols = append(cols, c)
		}
		sort.Strings(cols)
		var s strings.Builder
		for j, c := range cols {
			if j > 0 {
				s.WriteByte(',')
			}
			s.WriteString(c)
			s.WriteByte('=')
			s.WriteString(m[c])
		}
		b.st.Keys[i] = s.String()
	}
	if len(b.st.Accesses) > 0 {
		b.st.Kind = KindAccess
	}
	return b.st
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var d [20]byte
	i := len(d)
	for n > 0 {
		i--
		d[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		d[i] = '-'
	}
	return string(d[i:])
}

// scope maps the names a statement may qualify columns with (table names
// and aliases) to relation occurrences.
type scope struct {
	names map[string]int
	order []int // relation occurrences in FROM order, for unqualified columns
	outer *scope
}

func newScope(outer *scope) *scope { return &scope{names: map[string]int{}, outer: outer} }

func (s *scope) bind(name string, rel int) {
	s.names[strings.ToLower(name)] = rel
	s.order = append(s.order, rel)
}

// resolve returns the relation occurrences a column reference may belong
// to: the qualified one, or for an unqualified name the only relation in
// the innermost scope that has any, or all of them when several could
// (the schema is not known, so an ambiguous column is read from each).
func (s *scope) resolve(qual string) []int {
	for sc := s; sc != nil; sc = sc.outer {
		if qual != "" {
			if r, ok := sc.names[strings.ToLower(qual)]; ok {
				return []int{r}
			}
			continue
		}
		if len(sc.order) > 0 {
			return dedupInts(sc.order)
		}
	}
	return nil
}

func dedupInts(x []int) []int {
	var out []int
	seen := map[int]bool{}
	for _, v := range x {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
