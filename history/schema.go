package history

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Row schemas: what a predicate read's WHERE clause is evaluated over.
//
// A predicate read (PredRead) names a table and a WHERE clause over its
// columns. Without a declared schema a table's rows are the history's
// register keys and the columns are PredColumns: k (the key) and v (the
// version's value). A workload whose WHERE clauses mention other columns
// (the tpcc workload: "ol_w_id = 1 AND ol_o_id >= 3") declares its tables
// in the header (Header.Tables), and the history then carries, for every
// version a predicate may evaluate, the value of each column:
//
//   - columns that are functions of the row key come from the key itself:
//     a table's key pattern ("ol:{ol_w_id}:{ol_d_id}:{ol_o_id}:{ol_number}")
//     says which keys are rows of the table and which part of the key is
//     which column (Table.Match);
//   - columns whose value is set by a write (and may change from version to
//     version: o_carrier_id, c_balance) come from the written version's row
//     image (RowImage, History.RowImages), recorded with the write;
//   - the version's value itself, when the table names a Value column.
//
// A version's row image may instead say the row is deleted (a tombstone
// write: RowImage.Deleted); a deleted version, like the unborn one before a
// row's first write (NoValue), matches no predicate (Adya 1999 §3.1.3:
// predicates are evaluated on the versions of the rows that exist; the
// unborn and dead versions of Adya's model match nothing).
//
// Package sqlpred evaluates a WHERE clause over these columns
// (sqlpred.Schema).

// Table is a declared table: its name (Predicate.Table), its key pattern,
// its row columns (given per version by row images) and, optionally, the
// name of the column that holds the version's value.
//
// Key pattern: literal text with {column} placeholders, e.g.
// "o:{o_w_id}:{o_d_id}:{o_id}". A key is a row of the table when it is a
// string that matches the pattern: the literal parts match exactly, and
// each placeholder matches one or more characters up to (not including) the
// first occurrence of the next literal part (to the end for a last
// placeholder). A placeholder's text is an SQL integer when it is a decimal
// integer in canonical form ("7", "-3"; not "07" or "+3"), else a string.
// The pattern "{id}" alone makes every key (integer or string) a row, its
// value the column id. Patterns must start or end with a placeholder or a
// literal; two placeholders must be separated by a literal.
type Table struct {
	Name    string   `json:"name"`
	Key     string   `json:"key"`
	Columns []string `json:"columns,omitempty"`
	Value   string   `json:"value,omitempty"`
}

// keyPattern is a parsed key pattern: lits[0] {cols[0]} lits[1] {cols[1]}
// ... {cols[n-1]} lits[n].
type keyPattern struct {
	lits []string
	cols []string
}

func parseKeyPattern(p string) (keyPattern, error) {
	var kp keyPattern
	rest := p
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return kp, fmt.Errorf("key pattern %q: unmatched }", p)
			}
			kp.lits = append(kp.lits, rest)
			break
		}
		lit := rest[:i]
		if strings.IndexByte(lit, '}') >= 0 {
			return kp, fmt.Errorf("key pattern %q: unmatched }", p)
		}
		if len(kp.cols) > 0 && lit == "" {
			return kp, fmt.Errorf("key pattern %q: placeholders {%s} and the next need a literal between them", p, kp.cols[len(kp.cols)-1])
		}
		kp.lits = append(kp.lits, lit)
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return kp, fmt.Errorf("key pattern %q: unterminated {", p)
		}
		name := rest[i+1 : i+j]
		if name == "" || strings.ContainsAny(name, "{") {
			return kp, fmt.Errorf("key pattern %q: bad column name %q", p, name)
		}
		kp.cols = append(kp.cols, name)
		rest = rest[i+j+1:]
	}
	if len(kp.cols) == 0 {
		return kp, fmt.Errorf("key pattern %q: no {column} placeholder", p)
	}
	return kp, nil
}

// KeyColumns returns the names of the columns of t's key pattern, in
// pattern order.
func (t *Table) KeyColumns() ([]string, error) {
	kp, err := cachedPattern(t.Key)
	if err != nil {
		return nil, err
	}
	return append([]string(nil), kp.cols...), nil
}

// patterns caches parsed key patterns (safe for concurrent checkers), at
// most maxPatterns of them.
var (
	patterns  sync.Map // string -> *patternEntry
	npatterns atomic.Int32
)

const maxPatterns = 4096

type patternEntry struct {
	kp  keyPattern
	err error
}

func cachedPattern(p string) (*keyPattern, error) {
	if e, ok := patterns.Load(p); ok {
		pe := e.(*patternEntry)
		return &pe.kp, pe.err
	}
	kp, err := parseKeyPattern(p)
	pe := &patternEntry{kp, err}
	if npatterns.Add(1) <= maxPatterns {
		patterns.Store(p, pe)
	}
	return &pe.kp, pe.err
}

// ColumnNames is the list of columns a WHERE clause on t may use: the key
// columns (pattern order), then the row columns, then the value column when
// named.
func (t *Table) ColumnNames() ([]string, error) {
	kc, err := t.KeyColumns()
	if err != nil {
		return nil, err
	}
	out := append(append([]string{}, kc...), t.Columns...)
	if t.Value != "" {
		out = append(out, t.Value)
	}
	return out, nil
}

// Validate checks a declared table: a name, a parseable key pattern, and
// column names that are unique (case-insensitively, as SQL identifiers)
// and non-empty.
func (t *Table) Validate() error {
	if t.Name == "" {
		return fmt.Errorf("table without a name")
	}
	cols, err := t.ColumnNames()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, c := range cols {
		if c == "" {
			return fmt.Errorf("table %s: empty column name", t.Name)
		}
		l := strings.ToLower(c)
		if seen[l] {
			return fmt.Errorf("table %s: column %s declared twice", t.Name, c)
		}
		seen[l] = true
	}
	return nil
}

// Match reports whether key is a row of t and, if so, appends the values of
// its key columns (pattern order) to dst.
func (t *Table) Match(key Scalar, dst []Cell) ([]Cell, bool) {
	kp, err := cachedPattern(t.Key)
	if err != nil {
		return dst, false
	}
	return kp.match(key, dst)
}

func (kp *keyPattern) match(key Scalar, dst []Cell) ([]Cell, bool) {
	s := key.S
	if !key.IsStr {
		if len(kp.cols) != 1 || kp.lits[0] != "" || kp.lits[1] != "" {
			return dst, false
		}
		return append(dst, Cell{V: key}), true
	}
	n0 := len(dst)
	if !strings.HasPrefix(s, kp.lits[0]) {
		return dst, false
	}
	s = s[len(kp.lits[0]):]
	for i := range kp.cols {
		next := kp.lits[i+1]
		var part string
		if i == len(kp.cols)-1 {
			if !strings.HasSuffix(s, next) || len(s) < len(next)+1 {
				return dst[:n0], false
			}
			part, s = s[:len(s)-len(next)], ""
		} else {
			j := strings.Index(s, next)
			if j <= 0 {
				return dst[:n0], false
			}
			part, s = s[:j], s[j+len(next):]
		}
		dst = append(dst, partCell(part))
	}
	return dst, true
}

// partCell is a key part as an SQL value: an integer when the text is a
// canonical decimal integer, else a string.
func partCell(p string) Cell {
	if n, err := strconv.ParseInt(p, 10, 64); err == nil && strconv.FormatInt(n, 10) == p {
		return Cell{V: Scalar{I: n}}
	}
	return Cell{V: Scalar{S: p, IsStr: true}}
}

// Cell is one column value of a row version: an integer, a string, or SQL
// NULL.
type Cell struct {
	V    Scalar
	Null bool
}

func (c Cell) String() string {
	if c.Null {
		return "NULL"
	}
	if c.V.IsStr {
		return strconv.Quote(c.V.S)
	}
	return c.V.String()
}

// RowImage is what a write recorded of the row version it installed: the
// values of the table's row columns (Table.Columns) in declaration order
// (Has[i] reports whether column i was given), or Deleted for a version
// that is a deleted row (a tombstone: SQL DELETE recorded as a write).
type RowImage struct {
	Deleted bool
	Cols    []Cell
	Has     []bool
}

// Equal reports whether two row images are the same.
func (r *RowImage) Equal(o *RowImage) bool {
	if r.Deleted != o.Deleted || len(r.Cols) != len(o.Cols) {
		return false
	}
	for i := range r.Cols {
		if r.Has[i] != o.Has[i] || (r.Has[i] && r.Cols[i] != o.Cols[i]) {
			return false
		}
	}
	return true
}

// PackKV packs a (key id, value id) pair, the identity of a version, into
// one map key.
func PackKV(k, v int32) uint64 { return uint64(uint32(k))<<32 | uint64(uint32(v)) }

// TableOf returns the declared table (index into Header.Tables) key is a
// row of: the first whose key pattern matches; -1 when none does.
func (h *History) TableOf(key int32) int {
	if len(h.Header.Tables) == 0 || key < 0 {
		return -1
	}
	s := h.Keys.Get(key)
	for i := range h.Header.Tables {
		if _, ok := h.Header.Tables[i].Match(s, nil); ok {
			return i
		}
	}
	return -1
}

// TableByName returns the index in Header.Tables of the table named name
// (SQL identifiers: case-insensitive), or -1.
func (h *History) TableByName(name string) int {
	for i := range h.Header.Tables {
		if strings.EqualFold(h.Header.Tables[i].Name, name) {
			return i
		}
	}
	return -1
}

// RowImage returns the row image recorded for version (key, value), if any.
func (h *History) RowImage(key, value int32) (*RowImage, bool) {
	r, ok := h.RowImages[PackKV(key, value)]
	return r, ok
}

// SetRowImage records the row image of version (key, value). A version
// has one image: a second, different one is an error (two writes of one
// value to one key that say different things about the row).
func (h *History) SetRowImage(key, value int32, r *RowImage) error {
	if h.RowImages == nil {
		h.RowImages = map[uint64]*RowImage{}
	}
	p := PackKV(key, value)
	if old, ok := h.RowImages[p]; ok {
		if !old.Equal(r) {
			return fmt.Errorf("version %s of key %s has two different row images", h.ValueName(value), h.KeyName(key))
		}
		return nil
	}
	h.RowImages[p] = r
	return nil
}
