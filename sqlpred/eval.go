package sqlpred

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Pred is a compiled WHERE clause over a fixed list of columns.
type Pred struct {
	src  string
	cols []string
	root node
}

// Compile parses where against the column names cols (matched
// case-insensitively). The clause must be boolean-valued where its type is
// known statically (a bare column or literal is accepted and checked at
// evaluation). Errors are *Error with a byte offset.
func Compile(where string, cols []string) (*Pred, error) {
	if len(where) > MaxLen {
		return nil, &Error{0, fmt.Sprintf("predicate longer than %d bytes", MaxLen)}
	}
	toks, err := lex(where)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, cols: cols}
	if p.peek().k == tEOF {
		return nil, &Error{0, "empty predicate"}
	}
	root, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.k != tEOF {
		return nil, &Error{t.off, fmt.Sprintf("unexpected %q after the predicate", t.s)}
	}
	if k := root.static(); k != Null && k != Bool {
		return nil, &Error{0, "predicate is not boolean"}
	}
	return &Pred{src: where, cols: cols, root: root}, nil
}

// String returns the source text.
func (p *Pred) String() string { return p.src }

// Eval evaluates the predicate on row (one value per compiled column, in
// order; missing trailing values are NULL). Errors are evaluation errors
// (type mismatch, overflow, division by zero).
func (p *Pred) Eval(row []Value) (Truth, error) {
	v, err := p.root.eval(row)
	if err != nil {
		return Unknown, err
	}
	if v.T != Null && v.T != Bool {
		return Unknown, errors.New("predicate is not boolean: " + v.String())
	}
	return truthOf(v), nil
}

// Matches reports whether row satisfies the predicate as a WHERE clause
// does: only TRUE matches (UNKNOWN and FALSE rows are filtered out).
func (p *Pred) Matches(row []Value) (bool, error) {
	t, err := p.Eval(row)
	return t == True, err
}

type node interface {
	eval(row []Value) (Value, error)
	// static is the value type if known without a row, else Null.
	static() Type
}

type lit struct{ v Value }

func (n *lit) eval([]Value) (Value, error) { return n.v, nil }
func (n *lit) static() Type                { return n.v.T }

type col struct {
	i    int
	name string
}

func (n *col) eval(row []Value) (Value, error) {
	if n.i < len(row) {
		return row[n.i], nil
	}
	return NullV, nil
}
func (n *col) static() Type { return Null }

type logic struct {
	or   bool
	l, r node
}

func (n *logic) static() Type { return Bool }
func (n *logic) eval(row []Value) (Value, error) {
	a, err := boolOf(n.l, row)
	if err != nil {
		return NullV, err
	}
	// Short-circuit only where the result is decided (errors on the right
	// are then not raised, as databases may also skip them).
	if n.or && a == True {
		return BoolV(true), nil
	}
	if !n.or && a == False {
		return BoolV(false), nil
	}
	b, err := boolOf(n.r, row)
	if err != nil {
		return NullV, err
	}
	if n.or {
		return truthV(or3(a, b)), nil
	}
	return truthV(and3(a, b)), nil
}

func boolOf(n node, row []Value) (Truth, error) {
	v, err := n.eval(row)
	if err != nil {
		return Unknown, err
	}
	if v.T != Null && v.T != Bool {
		return Unknown, fmt.Errorf("argument of AND/OR/NOT must be boolean, not %s", v)
	}
	return truthOf(v), nil
}

type notN struct{ x node }

func (n *notN) static() Type { return Bool }
func (n *notN) eval(row []Value) (Value, error) {
	t, err := boolOf(n.x, row)
	if err != nil {
		return NullV, err
	}
	return truthV(not3(t)), nil
}

type cmpOp uint8

const (
	opEq cmpOp = iota
	opNe
	opLt
	opLe
	opGt
	opGe
)

var cmpNames = [...]string{"=", "<>", "<", "<=", ">", ">="}

type cmp struct {
	op   cmpOp
	l, r node
}

func (n *cmp) static() Type { return Bool }
func (n *cmp) eval(row []Value) (Value, error) {
	a, err := n.l.eval(row)
	if err != nil {
		return NullV, err
	}
	b, err := n.r.eval(row)
	if err != nil {
		return NullV, err
	}
	c, null, err := compare(a, b)
	if err != nil || null {
		return NullV, err
	}
	var r bool
	switch n.op {
	case opEq:
		r = c == 0
	case opNe:
		r = c != 0
	case opLt:
		r = c < 0
	case opLe:
		r = c <= 0
	case opGt:
		r = c > 0
	case opGe:
		r = c >= 0
	}
	return BoolV(r), nil
}

// compare orders a and b (-1, 0, +1); null reports a NULL operand.
func compare(a, b Value) (c int, null bool, err error) {
	if a.T == Null || b.T == Null {
		return 0, true, nil
	}
	switch {
	case a.T == Int && b.T == Int:
		return cmp3(a.I < b.I, a.I > b.I), false, nil
	case (a.T == Int || a.T == Float) && (b.T == Int || b.T == Float):
		x, y := num(a), num(b)
		if math.IsNaN(x) || math.IsNaN(y) {
			// PostgreSQL orders NaN above every number and equal to itself.
			return cmp3(!math.IsNaN(x), !math.IsNaN(y)), false, nil
		}
		return cmp3(x < y, x > y), false, nil
	case a.T == Str && b.T == Str:
		return strings.Compare(a.S, b.S), false, nil
	case a.T == Bool && b.T == Bool:
		return cmp3(a.I < b.I, a.I > b.I), false, nil
	}
	return 0, false, fmt.Errorf("cannot compare %s with %s", a, b)
}

func cmp3(lt, gt bool) int {
	switch {
	case lt:
		return -1
	case gt:
		return 1
	}
	return 0
}

func num(v Value) float64 {
	if v.T == Int {
		return float64(v.I)
	}
	return v.F
}

type between struct {
	x, lo, hi node
	neg       bool
}

func (n *between) static() Type { return Bool }
func (n *between) eval(row []Value) (Value, error) {
	x, err := n.x.eval(row)
	if err != nil {
		return NullV, err
	}
	lo, err := n.lo.eval(row)
	if err != nil {
		return NullV, err
	}
	hi, err := n.hi.eval(row)
	if err != nil {
		return NullV, err
	}
	// x BETWEEN lo AND hi = x >= lo AND x <= hi (SQL:2016 8.3).
	t1, err := cmpTruth(x, lo, func(c int) bool { return c >= 0 })
	if err != nil {
		return NullV, err
	}
	t2, err := cmpTruth(x, hi, func(c int) bool { return c <= 0 })
	if err != nil {
		return NullV, err
	}
	t := and3(t1, t2)
	if n.neg {
		t = not3(t)
	}
	return truthV(t), nil
}

func cmpTruth(a, b Value, ok func(int) bool) (Truth, error) {
	c, null, err := compare(a, b)
	if err != nil {
		return Unknown, err
	}
	if null {
		return Unknown, nil
	}
	if ok(c) {
		return True, nil
	}
	return False, nil
}

type in struct {
	x    node
	list []node
	neg  bool
}

func (n *in) static() Type { return Bool }
func (n *in) eval(row []Value) (Value, error) {
	x, err := n.x.eval(row)
	if err != nil {
		return NullV, err
	}
	// x IN (a, b) = x = a OR x = b (SQL:2016 8.4).
	t := False
	for _, e := range n.list {
		v, err := e.eval(row)
		if err != nil {
			return NullV, err
		}
		u, err := cmpTruth(x, v, func(c int) bool { return c == 0 })
		if err != nil {
			return NullV, err
		}
		t = or3(t, u)
		if t == True {
			break
		}
	}
	if n.neg {
		t = not3(t)
	}
	return truthV(t), nil
}

type isNull struct {
	x   node
	neg bool
}

func (n *isNull) static() Type { return Bool }
func (n *isNull) eval(row []Value) (Value, error) {
	x, err := n.x.eval(row)
	if err != nil {
		return NullV, err
	}
	// IS NULL is never UNKNOWN; a boolean UNKNOWN is a NULL here.
	return BoolV((x.T == Null) != n.neg), nil
}

type like struct {
	x, pat node
	neg    bool
	esc    byte
	hasEsc bool
}

func (n *like) static() Type { return Bool }
func (n *like) eval(row []Value) (Value, error) {
	x, err := n.x.eval(row)
	if err != nil {
		return NullV, err
	}
	p, err := n.pat.eval(row)
	if err != nil {
		return NullV, err
	}
	if x.T == Null || p.T == Null {
		return NullV, nil
	}
	if x.T != Str || p.T != Str {
		return NullV, fmt.Errorf("LIKE needs strings, not %s and %s", x, p)
	}
	m, err := likeMatch(x.S, p.S, n.esc, n.hasEsc)
	if err != nil {
		return NullV, err
	}
	return BoolV(m != n.neg), nil
}

// likeMatch matches s against a LIKE pattern (% any run, _ any one byte;
// the escape byte makes the next pattern byte literal). Greedy with one
// backtrack point per %, O(len(s)·len(pat)) worst case, no recursion.
func likeMatch(s, pat string, esc byte, hasEsc bool) (bool, error) {
	// Compile the pattern into literal/any-one/any-run elements.
	type el struct {
		kind byte // 'l' literal, '_' one, '%' run
		c    byte
	}
	els := make([]el, 0, len(pat))
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case hasEsc && c == esc:
			if i+1 >= len(pat) {
				return false, errors.New("LIKE pattern must not end with the escape character")
			}
			i++
			els = append(els, el{'l', pat[i]})
		case c == '%':
			els = append(els, el{'%', 0})
		case c == '_':
			els = append(els, el{'_', 0})
		default:
			els = append(els, el{'l', c})
		}
	}
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(els) && (els[pi].kind == '_' || els[pi].kind == 'l' && els[pi].c == s[si]) {
			si++
			pi++
			continue
		}
		if pi < len(els) && els[pi].kind == '%' {
			starP, starS = pi, si
			pi++
			continue
		}
		if starP >= 0 {
			starS++
			si, pi = starS, starP+1
			continue
		}
		return false, nil
	}
	for pi < len(els) && els[pi].kind == '%' {
		pi++
	}
	return pi == len(els), nil
}

type arith struct {
	op    byte
	l, r  node
	unary bool
}

func (n *arith) static() Type {
	if n.op == '|' {
		return Str
	}
	a, b := n.l.static(), n.r.static()
	if a == Float || b == Float {
		return Float
	}
	if a == Int && b == Int {
		return Int
	}
	return Null
}

func (n *arith) eval(row []Value) (Value, error) {
	a, err := n.l.eval(row)
	if err != nil {
		return NullV, err
	}
	b, err := n.r.eval(row)
	if err != nil {
		return NullV, err
	}
	if a.T == Null || b.T == Null {
		return NullV, nil
	}
	if n.op == '|' {
		return StrV(plain(a) + plain(b)), nil
	}
	if n.unary && b.T != Int && b.T != Float {
		return NullV, fmt.Errorf("unary %c needs a number, not %s", n.op, b)
	}
	if (a.T != Int && a.T != Float) || (b.T != Int && b.T != Float) {
		return NullV, fmt.Errorf("operator %c needs numbers, not %s and %s", n.op, a, b)
	}
	if a.T == Int && b.T == Int {
		return intArith(n.op, a.I, b.I)
	}
	x, y := num(a), num(b)
	var r float64
	switch n.op {
	case '+':
		r = x + y
	case '-':
		r = x - y
	case '*':
		r = x * y
	case '/':
		if y == 0 {
			return NullV, errors.New("division by zero")
		}
		r = x / y
	case '%':
		return NullV, errors.New("operator % needs integers")
	}
	if math.IsInf(r, 0) {
		return NullV, errors.New("float out of range")
	}
	return FloatV(r), nil
}

// plain renders a value for || (strings without quotes).
func plain(v Value) string {
	if v.T == Str {
		return v.S
	}
	if v.T == Bool {
		if v.I != 0 {
			return "true"
		}
		return "false"
	}
	return v.String()
}

var errOverflow = errors.New("integer out of range")

func intArith(op byte, x, y int64) (Value, error) {
	switch op {
	case '+':
		r := x + y
		if (r > x) != (y > 0) {
			return NullV, errOverflow
		}
		return IntV(r), nil
	case '-':
		r := x - y
		if (r < x) != (y > 0) {
			return NullV, errOverflow
		}
		return IntV(r), nil
	case '*':
		if x == 0 || y == 0 {
			return IntV(0), nil
		}
		r := x * y
		if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
			return NullV, errOverflow
		}
		return IntV(r), nil
	case '/':
		if y == 0 {
			return NullV, errors.New("division by zero")
		}
		if x == math.MinInt64 && y == -1 {
			return NullV, errOverflow
		}
		return IntV(x / y), nil
	case '%':
		if y == 0 {
			return NullV, errors.New("division by zero")
		}
		if y == -1 {
			return IntV(0), nil
		}
		return IntV(x % y), nil
	}
	return NullV, fmt.Errorf("unknown operator %c", op)
}

// Uses reports whether the predicate refers to column c. A predicate that
// does not use a column evaluates the same whatever that column holds.
func (p *Pred) Uses(c int) bool { return uses(p.root, c) }

func uses(n node, c int) bool {
	switch n := n.(type) {
	case *col:
		return n.i == c
	case *logic:
		return uses(n.l, c) || uses(n.r, c)
	case *notN:
		return uses(n.x, c)
	case *cmp:
		return uses(n.l, c) || uses(n.r, c)
	case *between:
		return uses(n.x, c) || uses(n.lo, c) || uses(n.hi, c)
	case *in:
		if uses(n.x, c) {
			return true
		}
		for _, e := range n.list {
			if uses(e, c) {
				return true
			}
		}
		return false
	case *isNull:
		return uses(n.x, c)
	case *like:
		return uses(n.x, c) || uses(n.pat, c)
	case *arith:
		return uses(n.l, c) || uses(n.r, c)
	}
	return false
}
