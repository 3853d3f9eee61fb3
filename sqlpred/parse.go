package sqlpred

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxDepth bounds expression nesting; MaxLen bounds the text length.
const (
	MaxDepth = 256
	MaxLen   = 1 << 20
)

// Error is a parse or compile error with the byte offset it refers to.
type Error struct {
	Off int
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("offset %d: %s", e.Off, e.Msg) }

type tokKind uint8

const (
	tEOF tokKind = iota
	tNum
	tStr
	tIdent  // unquoted identifier or keyword (lower-cased in s)
	tQIdent // "quoted" identifier
	tOp     // operator or punctuation
)

type token struct {
	k   tokKind
	s   string
	off int
}

// upperKw maps upper-case keywords to their lower-case form without
// allocating.
var upperKw = map[string]string{"AND": "and", "OR": "or", "NOT": "not", "BETWEEN": "between", "IN": "in", "IS": "is",
	"LIKE": "like", "ESCAPE": "escape", "NULL": "null", "TRUE": "true", "FALSE": "false", "K": "k", "V": "v"}

func lower(s string) string {
	if l, ok := upperKw[s]; ok {
		return l
	}
	return strings.ToLower(s)
}

func lex(src string) ([]token, error) {
	toks := make([]token, 0, 4+len(src)/3)
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && src[k] >= '0' && src[k] <= '9' {
					for k < len(src) && src[k] >= '0' && src[k] <= '9' {
						k++
					}
					j = k
				}
			}
			toks = append(toks, token{tNum, src[i:j], i})
			i = j
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(src) {
					return nil, &Error{i, "unterminated string literal"}
				}
				if src[j] == '\'' {
					if j+1 < len(src) && src[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					j++
					break
				}
				b.WriteByte(src[j])
				j++
			}
			toks = append(toks, token{tStr, b.String(), i})
			i = j
		case c == '"':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(src) {
					return nil, &Error{i, "unterminated quoted identifier"}
				}
				if src[j] == '"' {
					if j+1 < len(src) && src[j+1] == '"' {
						b.WriteByte('"')
						j += 2
						continue
					}
					j++
					break
				}
				b.WriteByte(src[j])
				j++
			}
			if b.Len() == 0 {
				return nil, &Error{i, "empty quoted identifier"}
			}
			toks = append(toks, token{tQIdent, b.String(), i})
			i = j
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '$' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			toks = append(toks, token{tIdent, lower(src[i:j]), i})
			i = j
		default:
			if i+1 < len(src) {
				switch two := src[i : i+2]; two {
				case "<=", ">=", "<>", "!=", "||":
					toks = append(toks, token{tOp, two, i})
					i += 2
					continue
				}
			}
			switch c {
			case '=', '<', '>', '+', '-', '*', '/', '%', '(', ')', ',':
				toks = append(toks, token{tOp, string(c), i})
				i++
			default:
				return nil, &Error{i, fmt.Sprintf("unexpected character %q", c)}
			}
		}
	}
	return append(toks, token{tEOF, "", len(src)}), nil
}

type parser struct {
	toks  []token
	p     int
	cols  []string
	depth int
}

func (p *parser) peek() token { return p.toks[p.p] }
func (p *parser) next() token {
	t := p.toks[p.p]
	if t.k != tEOF {
		p.p++
	}
	return t
}
func (p *parser) isKw(kw string) bool { t := p.peek(); return t.k == tIdent && t.s == kw }
func (p *parser) isOp(op string) bool { t := p.peek(); return t.k == tOp && t.s == op }
func (p *parser) kwAt(i int, kw string) bool {
	if p.p+i >= len(p.toks) {
		return false
	}
	t := p.toks[p.p+i]
	return t.k == tIdent && t.s == kw
}

func (p *parser) errf(f string, a ...any) error {
	return &Error{p.peek().off, fmt.Sprintf(f, a...)}
}

func (p *parser) expectOp(op string) error {
	if !p.isOp(op) {
		return p.errf("expected %q, found %s", op, p.desc())
	}
	p.next()
	return nil
}

func (p *parser) expectKw(kw string) error {
	if !p.isKw(kw) {
		return p.errf("expected %s, found %s", strings.ToUpper(kw), p.desc())
	}
	p.next()
	return nil
}

func (p *parser) desc() string {
	t := p.peek()
	if t.k == tEOF {
		return "end of input"
	}
	return strconv.Quote(t.s)
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return p.errf("expression nested deeper than %d", MaxDepth)
	}
	return nil
}

var reserved = map[string]bool{"and": true, "or": true, "not": true, "between": true, "in": true, "is": true,
	"like": true, "escape": true, "null": true, "true": true, "false": true, "select": true, "from": true, "where": true}

func (p *parser) or() (node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.isKw("or") {
		p.next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &logic{or: true, l: l, r: r}
	}
	return l, nil
}

func (p *parser) and() (node, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.isKw("and") {
		p.next()
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		l = &logic{l: l, r: r}
	}
	return l, nil
}

func (p *parser) not() (node, error) {
	if p.isKw("not") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		p.next()
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &notN{x}, nil
	}
	return p.pred()
}

func (p *parser) pred() (node, error) {
	l, err := p.add()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.k == tOp {
		var op cmpOp
		switch t.s {
		case "=":
			op = opEq
		case "<>", "!=":
			op = opNe
		case "<":
			op = opLt
		case "<=":
			op = opLe
		case ">":
			op = opGt
		case ">=":
			op = opGe
		default:
			return l, nil
		}
		p.next()
		r, err := p.add()
		if err != nil {
			return nil, err
		}
		return &cmp{op: op, l: l, r: r}, nil
	}
	neg := false
	if p.isKw("not") && (p.kwAt(1, "between") || p.kwAt(1, "in") || p.kwAt(1, "like")) {
		p.next()
		neg = true
	}
	switch {
	case p.isKw("between"):
		p.next()
		lo, err := p.add()
		if err != nil {
			return nil, err
		}
		if err := p.expectKw("and"); err != nil {
			return nil, err
		}
		hi, err := p.add()
		if err != nil {
			return nil, err
		}
		return &between{x: l, lo: lo, hi: hi, neg: neg}, nil
	case p.isKw("in"):
		p.next()
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		n := &in{x: l, neg: neg}
		for {
			e, err := p.add()
			if err != nil {
				return nil, err
			}
			n.list = append(n.list, e)
			if p.isOp(",") {
				p.next()
				continue
			}
			break
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return n, nil
	case p.isKw("like"):
		p.next()
		pat, err := p.add()
		if err != nil {
			return nil, err
		}
		n := &like{x: l, pat: pat, neg: neg, esc: '\\', hasEsc: true}
		if p.isKw("escape") {
			p.next()
			t := p.next()
			if t.k != tStr || len(t.s) > 1 {
				return nil, &Error{t.off, "ESCAPE needs a one-character string literal (or '')"}
			}
			if t.s == "" {
				n.hasEsc = false
			} else {
				n.esc = t.s[0]
			}
		}
		return n, nil
	case p.isKw("is"):
		p.next()
		isNot := false
		if p.isKw("not") {
			p.next()
			isNot = true
		}
		if err := p.expectKw("null"); err != nil {
			return nil, err
		}
		return &isNull{x: l, neg: isNot}, nil
	}
	if neg {
		return nil, p.errf("expected BETWEEN, IN or LIKE after NOT")
	}
	return l, nil
}

func (p *parser) add() (node, error) { return p.arithChain(p.mul, "+", "-", "||") }

func (p *parser) mul() (node, error) { return p.arithChain(p.unary, "*", "/", "%") }

// arithChain parses operand { op operand } for the operators ops, left
// associative (a - b - c is (a - b) - c); an arith node's op is the
// operator's first byte ('|' for ||).
func (p *parser) arithChain(operand func() (node, error), ops ...string) (node, error) {
	l, err := operand()
	if err != nil {
		return nil, err
	}
	for slices.ContainsFunc(ops, p.isOp) {
		op := p.next().s[0]
		r, err := operand()
		if err != nil {
			return nil, err
		}
		l = &arith{op: op, l: l, r: r}
	}
	return l, nil
}

func (p *parser) unary() (node, error) {
	if p.isOp("-") || p.isOp("+") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		neg := p.next().s == "-"
		// A negative integer literal: fold, so -9223372036854775808 parses.
		if t := p.peek(); neg && t.k == tNum {
			if i, err := strconv.ParseInt("-"+t.s, 10, 64); err == nil {
				p.next()
				return &lit{IntV(i)}, nil
			}
		}
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if !neg {
			return &arith{op: '+', l: &lit{IntV(0)}, r: x, unary: true}, nil
		}
		return &arith{op: '-', l: &lit{IntV(0)}, r: x, unary: true}, nil
	}
	return p.primary()
}

func (p *parser) primary() (node, error) {
	t := p.peek()
	switch t.k {
	case tNum:
		p.next()
		if i, err := strconv.ParseInt(t.s, 10, 64); err == nil {
			return &lit{IntV(i)}, nil
		}
		f, err := strconv.ParseFloat(t.s, 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, &Error{t.off, fmt.Sprintf("bad number %q", t.s)}
		}
		return &lit{FloatV(f)}, nil
	case tStr:
		p.next()
		return &lit{StrV(t.s)}, nil
	case tQIdent:
		p.next()
		return p.column(t, t.s)
	case tIdent:
		switch t.s {
		case "null":
			p.next()
			return &lit{NullV}, nil
		case "true":
			p.next()
			return &lit{BoolV(true)}, nil
		case "false":
			p.next()
			return &lit{BoolV(false)}, nil
		}
		if reserved[t.s] {
			return nil, p.errf("unexpected keyword %s", strings.ToUpper(t.s))
		}
		p.next()
		return p.column(t, t.s)
	case tOp:
		if t.s == "(" {
			if err := p.enter(); err != nil {
				return nil, err
			}
			defer func() { p.depth-- }()
			p.next()
			x, err := p.or()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return x, nil
		}
	}
	return nil, p.errf("expected an expression, found %s", p.desc())
}

func (p *parser) column(t token, name string) (node, error) {
	for i, c := range p.cols {
		if strings.EqualFold(c, name) {
			return &col{i: i, name: c}, nil
		}
	}
	return nil, &Error{t.off, fmt.Sprintf("unknown column %q (known: %s)", name, strings.Join(p.cols, ", "))}
}
