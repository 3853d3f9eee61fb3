package sqlpred

import (
	"fmt"
	"strings"

	"github.com/txray/txray/history"
)

// Schema evaluates a history's predicate reads over its recorded row
// versions (history/schema.go): a WHERE clause on a table the history
// declares (history.Header.Tables) is compiled over the table's columns —
// its key columns, taken from the row key by the key pattern, its row
// columns, taken from each version's row image, and its value column — and
// a WHERE clause on any other table over history.PredColumns (k, v), every
// key of the history being a row of it.
//
// A Schema caches compiled predicates and the table of each key; it is not
// safe for concurrent use (each checker builds its own).
type Schema struct {
	h     *history.History
	preds map[[2]string]*TablePred
	// keyTable[k]: 0 not yet computed, -1 no declared table, i+1 table i.
	keyTable []int32
	// keyCols: scratch for key column values.
	keyCols []history.Cell
	// dead: (key, value) of every Delete op's tombstone (nil: none).
	dead map[uint64]bool
}

// NewSchema returns a Schema for h.
func NewSchema(h *history.History) *Schema {
	s := &Schema{h: h, preds: map[[2]string]*TablePred{}}
	if h.HasDeletes() {
		s.dead = map[uint64]bool{}
		for i := range h.Txns {
			for _, o := range h.Txns[i].Ops {
				if o.Kind == history.Delete {
					s.dead[history.PackKV(o.Key, o.Value)] = true
				}
			}
		}
	}
	return s
}

// Deleted reports whether version value of key is a deleted row: a Delete
// op's tombstone, or a write whose row image says deleted.
func (s *Schema) Deleted(key, value int32) bool {
	if s.dead != nil && s.dead[history.PackKV(key, value)] {
		return true
	}
	img, ok := s.h.RowImage(key, value)
	return ok && img.Deleted
}

// TablePred is a WHERE clause compiled for one table of a Schema.
type TablePred struct {
	// P is the compiled clause; nil when Err is set.
	P *Pred
	// Err is the compile error (an unknown column, a syntax error).
	Err error
	s   *Schema
	// table: index in Header.Tables, or -1 (undeclared: columns k, v).
	table int
	name  string
	// nkey, nrow: number of key and row columns; the value column, when
	// the table names one, follows them.
	nkey, nrow int
	hasValue   bool
	// used[i]: the clause refers to column i.
	used []bool
	row  []Value
}

// Compile compiles where for table (cached per table and text). Compile
// errors are in the result's Err.
func (s *Schema) Compile(table, where string) *TablePred {
	ck := [2]string{table, where}
	if tp, ok := s.preds[ck]; ok {
		return tp
	}
	tp := &TablePred{s: s, table: s.h.TableByName(table), name: table}
	var cols []string
	if tp.table < 0 {
		cols = history.PredColumns
		tp.nkey, tp.nrow, tp.hasValue = 1, 0, true
	} else {
		t := &s.h.Header.Tables[tp.table]
		kc, err := t.KeyColumns()
		if err != nil {
			tp.Err = err
			s.preds[ck] = tp
			return tp
		}
		cols, _ = t.ColumnNames()
		tp.nkey, tp.nrow, tp.hasValue = len(kc), len(t.Columns), t.Value != ""
	}
	tp.P, tp.Err = Compile(where, cols)
	if tp.Err == nil {
		tp.used = make([]bool, len(cols))
		for i := range cols {
			tp.used[i] = tp.P.Uses(i)
		}
		tp.row = make([]Value, len(cols))
	}
	s.preds[ck] = tp
	return tp
}

// Declared reports whether the predicate's table is declared in the
// history's header (columns from key patterns and row images) rather than
// the default (k, v) over every key.
func (tp *TablePred) Declared() bool { return tp.table >= 0 }

// Table returns the index in the history's Header.Tables of the
// predicate's table, or -1 when it is not declared.
func (tp *TablePred) Table() int { return tp.table }

// tableOf returns the declared table index of key (-1: none), cached.
func (s *Schema) tableOf(key int32) int {
	if key < 0 {
		return -1
	}
	for int(key) >= len(s.keyTable) {
		s.keyTable = append(s.keyTable, 0)
	}
	if c := s.keyTable[key]; c != 0 {
		return int(c) - 1
	}
	t := s.h.TableOf(key)
	s.keyTable[key] = int32(t) + 1
	return t
}

// Member reports whether key is a row of the predicate's table: for a
// declared table, a key its key pattern matches (and no earlier declared
// table's); for an undeclared one, every key.
func (tp *TablePred) Member(key int32) bool {
	if tp.table < 0 {
		return key >= 0
	}
	return tp.s.tableOf(key) == tp.table
}

// KeyOnly reports whether the clause uses key columns only, so that every
// live (not unborn, not deleted) version of a row matches alike.
func (tp *TablePred) KeyOnly() bool {
	for i, u := range tp.used {
		if u && i >= tp.nkey {
			return false
		}
	}
	return true
}

// KeyRanges returns, for an undeclared table, the integer keys the clause
// can match (Pred.IntRanges on k); ok is false for a declared table (its
// keys are not integers) or a clause that did not compile.
func (tp *TablePred) KeyRanges() (Ranges, bool) {
	if tp.table >= 0 || tp.P == nil {
		return nil, false
	}
	return tp.P.IntRanges(0), true
}

// CellValue converts a recorded column value to an SQL value.
func CellValue(c history.Cell) Value {
	switch {
	case c.Null:
		return NullV
	case c.V.IsStr:
		return StrV(c.V.S)
	}
	return IntV(c.V.I)
}

// ScalarValue converts an interned key or value to an SQL value.
func ScalarValue(s history.Scalar) Value {
	if s.IsStr {
		return StrV(s.S)
	}
	return IntV(s.I)
}

// Matches reports whether version value of key matches the clause (Emme's
// matches oracle, the seed paper §3). The unborn version (NoValue) and a
// deleted version (a Delete op's tombstone, or a row image with Deleted)
// match nothing. Errors: the
// clause did not compile; key is not a row of a declared table; a column
// the clause uses is not recorded for the version (no row image, or the
// image lacks it); an evaluation error (a type mismatch).
func (tp *TablePred) Matches(key, value int32) (bool, error) {
	if tp.Err != nil {
		return false, tp.Err
	}
	h := tp.s.h
	if value == history.NoValue || tp.s.Deleted(key, value) {
		return false, nil
	}
	if tp.table < 0 {
		tp.row[0], tp.row[1] = ScalarValue(h.Keys.Get(key)), ScalarValue(h.Values.Get(value))
		return tp.P.Matches(tp.row)
	}
	if tp.s.tableOf(key) != tp.table {
		return false, fmt.Errorf("key %s is not a row of table %s (key pattern %s)", h.KeyName(key), tp.name, h.Header.Tables[tp.table].Key)
	}
	img, hasImg := h.RowImage(key, value)
	t := &h.Header.Tables[tp.table]
	kc, ok := t.Match(h.Keys.Get(key), tp.s.keyCols[:0])
	tp.s.keyCols = kc
	if !ok || len(kc) != tp.nkey {
		return false, fmt.Errorf("key %s does not match key pattern %s", h.KeyName(key), t.Key)
	}
	for i := range tp.row {
		tp.row[i] = NullV
	}
	for i, c := range kc {
		tp.row[i] = CellValue(c)
	}
	for i := 0; i < tp.nrow; i++ {
		if !tp.used[tp.nkey+i] {
			continue
		}
		if !hasImg || i >= len(img.Cols) || !img.Has[i] {
			return false, fmt.Errorf("column %s of row %s at version %s is not recorded", t.Columns[i], h.KeyName(key), h.ValueName(value))
		}
		tp.row[tp.nkey+i] = CellValue(img.Cols[i])
	}
	if tp.hasValue {
		tp.row[tp.nkey+tp.nrow] = ScalarValue(h.Values.Get(value))
	}
	return tp.P.Matches(tp.row)
}

// Describe renders the columns of version (key, value) the clause uses,
// for explanations: "ol_w_id=1, ol_o_id=3".
func (tp *TablePred) Describe(key, value int32) string {
	if tp.P == nil {
		return ""
	}
	h := tp.s.h
	if value == history.NoValue {
		return "unborn"
	}
	if tp.s.Deleted(key, value) {
		return "deleted"
	}
	if tp.table < 0 {
		return "k=" + h.KeyName(key) + ", v=" + h.ValueName(value)
	}
	if _, err := tp.Matches(key, value); err != nil {
		return err.Error()
	}
	cols, _ := h.Header.Tables[tp.table].ColumnNames()
	var b strings.Builder
	for i, c := range cols {
		if !tp.used[i] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c + "=" + tp.row[i].String())
	}
	return b.String()
}
