// Package edn is a streaming reader for EDN (extensible data notation, the
// format Jepsen and Elle write histories in; spec: github.com/edn-format/edn).
//
// It reads one top-level value at a time from an io.Reader and tracks 1-based
// line and column numbers for error messages. Supported syntax: ; comments,
// #_ discard, commas as whitespace, nil/true/false, integers (with an N
// suffix; integers beyond int64 become BigInt values carrying their digits),
// floats (M suffix, ##Inf, ##-Inf, ##NaN), ratios (a/b, kept as text and as a
// float), strings with escapes (\t \r \n \b \f \" \\ \/ \uXXXX), characters
// (\c, \newline, \space, \tab, \return, \backspace, \formfeed, \uXXXX),
// keywords (also namespaced, :a/b), symbols, lists, vectors, maps, sets, and
// tagged literals (#inst "...", #uuid "...", and record syntax such as
// #jepsen.history.Op{...}), which are returned as Tagged values wrapping the
// tagged element. Clojure reader extras that Jepsen output occasionally
// contains are tolerated: namespaced maps #:ns{...} (keys get the ns/ prefix),
// and ^metadata (skipped).
//
// With JSON set, the reader also accepts JSON text: ':' between a key and a
// value is white space and null is nil, so a JSON document reads as the
// equivalent EDN value (objects become maps with string keys).
//
// Memory: collection items are carved out of an arena that is recycled on the
// next call to Read, so a Value (and everything it points to, except strings)
// is valid only until the next Read. Strings, keywords and symbols are Go
// strings and remain valid; repeated keywords and symbols are interned.
package edn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/txray/txray/internal/safetext"
)

// Kind is the type of a Value.
type Kind uint8

const (
	Nil Kind = iota
	Bool
	Int
	BigInt // Str holds the decimal digits (with sign)
	Float
	Ratio // Str holds the text "a/b"; Float() gives its value
	String
	Char // Int holds the code point
	Keyword
	Symbol
	List
	Vector
	Map // Items holds key, value, key, value, ...
	Set
	Tagged // Str holds the tag; Items[0] is the tagged element
)

var kindNames = [...]string{"nil", "boolean", "integer", "big integer", "float", "ratio", "string", "character",
	"keyword", "symbol", "list", "vector", "map", "set", "tagged value"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one EDN value. Which fields are meaningful depends on Kind:
// Bool and Int use I (0/1 for Bool); Float keeps its bits in I (use F);
// String, Keyword (without the leading ':'), Symbol, BigInt, Ratio and
// Tagged (the tag) use Str; List, Vector, Set, Map and Tagged use Items.
// Line and Col locate the value's first character.
type Value struct {
	Kind  Kind
	Line  int32
	Col   int32
	I     int64
	Str   string
	Items []Value
}

// F returns the value of a Float, Int or Ratio as a float64.
func (v *Value) F() float64 {
	switch v.Kind {
	case Float:
		return math.Float64frombits(uint64(v.I))
	case Int:
		return float64(v.I)
	case Ratio:
		return math.Float64frombits(uint64(v.I))
	}
	return math.NaN()
}

// IsSeq reports whether v is a list or a vector.
func (v *Value) IsSeq() bool { return v.Kind == List || v.Kind == Vector }

// Name returns the name of a keyword, symbol or string (the text used as a
// map key or an enum value in JSON and EDN alike), and whether v is one.
func (v *Value) Name() (string, bool) {
	switch v.Kind {
	case Keyword, Symbol, String:
		return v.Str, true
	}
	return "", false
}

// Unwrap returns the element of a tagged value (recursively), or v itself.
// A record such as #jepsen.history.Op{...} unwraps to its map.
func (v *Value) Unwrap() *Value {
	for v.Kind == Tagged && len(v.Items) == 1 {
		v = &v.Items[0]
	}
	return v
}

// Get looks up a map entry whose key is a keyword, symbol or string named
// name (so :type and "type" both match "type"). It returns nil if v is not a
// map (after Unwrap) or has no such key.
func (v *Value) Get(name string) *Value {
	v = v.Unwrap()
	if v.Kind != Map {
		return nil
	}
	for i := 0; i+1 < len(v.Items); i += 2 {
		k := &v.Items[i]
		if (k.Kind == Keyword || k.Kind == String || k.Kind == Symbol) && k.Str == name {
			return &v.Items[i+1]
		}
	}
	return nil
}

// String renders v as EDN (for messages and tests).
func (v *Value) String() string {
	var b []byte
	b = v.AppendEDN(b)
	return string(b)
}

// AppendEDN appends the EDN text of v to b.
func (v *Value) AppendEDN(b []byte) []byte {
	switch v.Kind {
	case Nil:
		return append(b, "nil"...)
	case Bool:
		if v.I != 0 {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case Int:
		return strconv.AppendInt(b, v.I, 10)
	case BigInt:
		return append(append(b, v.Str...), 'N')
	case Float:
		f := v.F()
		switch {
		case math.IsInf(f, 1):
			return append(b, "##Inf"...)
		case math.IsInf(f, -1):
			return append(b, "##-Inf"...)
		case math.IsNaN(f):
			return append(b, "##NaN"...)
		}
		s := strconv.FormatFloat(f, 'g', -1, 64)
		b = append(b, s...)
		if !bytes.ContainsAny([]byte(s), ".eEn") {
			b = append(b, ".0"...)
		}
		return b
	case Ratio, Symbol:
		return append(b, v.Str...)
	case String:
		return AppendString(b, v.Str)
	case Char:
		switch v.I {
		case '\n':
			return append(b, `\newline`...)
		case ' ':
			return append(b, `\space`...)
		case '\t':
			return append(b, `\tab`...)
		case '\r':
			return append(b, `\return`...)
		}
		return utf8.AppendRune(append(b, '\\'), rune(v.I))
	case Keyword:
		return append(append(b, ':'), v.Str...)
	case Tagged:
		b = append(append(b, '#'), v.Str...)
		if len(v.Items) == 1 {
			if v.Items[0].Kind != Map {
				b = append(b, ' ')
			}
			b = v.Items[0].AppendEDN(b)
		}
		return b
	}
	var open, close string
	switch v.Kind {
	case List:
		open, close = "(", ")"
	case Vector:
		open, close = "[", "]"
	case Map:
		open, close = "{", "}"
	case Set:
		open, close = "#{", "}"
	}
	b = append(b, open...)
	for i := range v.Items {
		if i > 0 {
			if v.Kind == Map && i%2 == 0 {
				b = append(b, ',')
			}
			b = append(b, ' ')
		}
		b = v.Items[i].AppendEDN(b)
	}
	return append(b, close...)
}

// AppendString appends s as an EDN (and JSON-compatible) string literal.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\t':
			b = append(b, '\\', 't')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			if c < 0x20 {
				b = append(b, `\u00`...)
				b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// SyntaxError is a malformed-input error at a 1-based line and column
// (column counted in bytes).
type SyntaxError struct {
	Line, Col int
	Msg       string
}

// Error renders the position and message, with control characters and
// invalid UTF-8 escaped (internal/safetext): messages quote input.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, safetext.Escape(e.Msg))
}

// MaxDepth bounds nesting so hostile input cannot exhaust the stack: it
// counts every construct the reader recurses on — collections, and the
// prefixes that apply to the next value (#tag, #_ discard, ^metadata) —
// so a chain of a million #_ or ^m is an error at depth MaxDepth, not a
// stack overflow.
const MaxDepth = 10000

// nest enters one level of a recursive construct (leave with unnest).
func (r *Reader) nest(what string) error {
	if r.depth >= MaxDepth {
		return r.errf("%s nested deeper than %d levels (collections, #tags, #_ discards and ^metadata count)", what, MaxDepth)
	}
	r.depth++
	return nil
}

func (r *Reader) unnest() { r.depth-- }

// Reader reads EDN values from an io.Reader.
type Reader struct {
	// JSON makes ':' white space and reads null as nil (see package doc).
	JSON bool

	r    io.Reader
	buf  []byte
	pos  int   // next byte in buf
	end  int   // valid bytes in buf
	base int64 // offset of buf[0] in the input
	eof  bool
	rerr error

	line      int
	lineStart int64 // input offset of the current line's first byte

	stack  []Value   // items of open collections
	chunks [][]Value // arena
	chunk  int       // current chunk index
	used   int       // used in current chunk
	names  map[string]string
	cache  [256]string
	sbuf   []byte
	depth  int
	// started: the input's start was checked for a UTF-8 BOM.
	started bool
}

// NewReader returns a Reader reading from r with its own buffer.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, buf: make([]byte, 64<<10), line: 1, names: map[string]string{}}
}

// NewBytesReader returns a Reader over b (no copying).
func NewBytesReader(b []byte) *Reader {
	return &Reader{buf: b, end: len(b), eof: true, line: 1, names: map[string]string{}}
}

// Pos returns the current 1-based line and column.
func (r *Reader) Pos() (line, col int) {
	return r.line, int(r.base+int64(r.pos)-r.lineStart) + 1
}

func (r *Reader) errAt(line, col int, format string, a ...any) error {
	return &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf(format, a...)}
}

func (r *Reader) errf(format string, a ...any) error {
	l, c := r.Pos()
	return r.errAt(l, c, format, a...)
}

// fill makes more input available; it returns false at end of input.
func (r *Reader) fill() bool {
	if r.eof {
		return false
	}
	if r.pos > 0 {
		n := copy(r.buf, r.buf[r.pos:r.end])
		r.base += int64(r.pos)
		r.end = n
		r.pos = 0
	}
	if r.end == len(r.buf) {
		nb := make([]byte, 2*len(r.buf))
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for {
		n, err := r.r.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.eof = true
			if err != io.EOF {
				r.rerr = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// peekByte returns the next byte without consuming it; ok false at EOF.
func (r *Reader) peekByte() (byte, bool) {
	if r.pos >= r.end && !r.fill() {
		return 0, false
	}
	return r.buf[r.pos], true
}

func (r *Reader) newline() {
	r.line++
	r.lineStart = r.base + int64(r.pos)
}

// skipSpace skips white space, commas and ; comments (and a UTF-8 byte
// order mark at the very start of the input).
func (r *Reader) skipSpace() {
	if !r.started {
		r.started = true
		for r.end-r.pos < 3 && r.fill() {
		}
		if r.base == 0 && r.pos == 0 && r.end >= 3 && r.buf[0] == 0xEF && r.buf[1] == 0xBB && r.buf[2] == 0xBF {
			r.pos = 3
			r.lineStart = 3
		}
	}
	for {
		for r.pos < r.end {
			c := r.buf[r.pos]
			switch c {
			case ' ', '\t', '\r', ',', '\f', '\v':
				r.pos++
			case '\n':
				r.pos++
				r.newline()
			case ';':
				r.pos++
				r.skipComment()
			case ':':
				if !r.JSON {
					return
				}
				r.pos++
			default:
				return
			}
		}
		if !r.fill() {
			return
		}
	}
}

func (r *Reader) skipComment() {
	for {
		for r.pos < r.end {
			c := r.buf[r.pos]
			r.pos++
			if c == '\n' {
				r.newline()
				return
			}
		}
		if !r.fill() {
			return
		}
	}
}

// Peek skips white space, comments and #_ discards and returns the next
// significant byte without consuming it. It returns io.EOF at end of input.
func (r *Reader) Peek() (byte, error) {
	for {
		r.skipSpace()
		c, ok := r.peekByte()
		if !ok {
			if r.rerr != nil {
				return 0, r.rerr
			}
			return 0, io.EOF
		}
		if c == '#' {
			if r.pos+1 >= r.end {
				r.fill()
			}
			if r.pos+1 < r.end && r.buf[r.pos+1] == '_' {
				r.pos += 2
				r.resetArenaIfTop()
				if _, err := r.value(); err != nil {
					if err == io.EOF {
						return 0, r.errf("#_ at end of input")
					}
					return 0, err
				}
				continue
			}
		}
		return c, nil
	}
}

// Skip consumes one byte (as returned by Peek).
func (r *Reader) Skip() {
	if r.pos < r.end {
		if r.buf[r.pos] == '\n' {
			r.pos++
			r.newline()
			return
		}
		r.pos++
	}
}

func (r *Reader) resetArenaIfTop() {
	if r.depth == 0 {
		r.chunk, r.used = 0, 0
		r.stack = r.stack[:0]
	}
}

// Read returns the next top-level value, or io.EOF when the input holds no
// more values. The returned value is valid until the next call to Read or
// Peek (see package doc).
func (r *Reader) Read() (*Value, error) {
	if _, err := r.Peek(); err != nil {
		return nil, err
	}
	r.resetArenaIfTop()
	v, err := r.value()
	if err != nil {
		if err == io.EOF {
			return nil, r.errf("unexpected end of input")
		}
		return nil, err
	}
	r.stack = append(r.stack, v)
	return &r.stack[len(r.stack)-1], nil
}

// alloc returns n zeroed Values from the arena.
func (r *Reader) alloc(n int) []Value {
	if n == 0 {
		return nil
	}
	for {
		if r.chunk < len(r.chunks) {
			c := r.chunks[r.chunk]
			if len(c)-r.used >= n {
				s := c[r.used : r.used+n : r.used+n]
				r.used += n
				return s
			}
			if r.used == 0 && len(c) < n {
				// Too small even when empty: replace it.
				r.chunks[r.chunk] = make([]Value, max(n, 2*len(c)))
				continue
			}
			r.chunk++
			r.used = 0
			continue
		}
		size := 4096
		if len(r.chunks) > 0 {
			size = min(2*len(r.chunks[len(r.chunks)-1]), 1<<20)
		}
		r.chunks = append(r.chunks, make([]Value, max(size, n)))
	}
}

// value reads one value (white space already skipped or not). It returns
// io.EOF only if the input ends before the value starts.
func (r *Reader) value() (Value, error) {
	r.skipSpace()
	c, ok := r.peekByte()
	if !ok {
		if r.rerr != nil {
			return Value{}, r.rerr
		}
		return Value{}, io.EOF
	}
	line, col := r.Pos()
	v := Value{Line: int32(line), Col: int32(col)}
	switch {
	case c == '(':
		r.pos++
		return r.coll(v, List, ')')
	case c == '[':
		r.pos++
		return r.coll(v, Vector, ']')
	case c == '{':
		r.pos++
		return r.coll(v, Map, '}')
	case c == ')' || c == ']' || c == '}':
		return v, r.errf("unexpected %q", c)
	case c == '"':
		r.pos++
		s, err := r.str()
		v.Kind, v.Str = String, s
		return v, err
	case c == '\\':
		r.pos++
		return r.char(v)
	case c == '#':
		r.pos++
		return r.dispatch(v)
	case c == '^':
		r.pos++
		if err := r.nest("^metadata"); err != nil {
			return v, err
		}
		defer r.unnest()
		if _, err := r.valueNoEOF(); err != nil { // metadata
			return v, err
		}
		return r.valueNoEOF()
	case c == ':' && !r.JSON:
		r.pos++
		tok := r.token()
		if len(tok) > 0 && tok[0] == ':' { // ::auto-resolved
			tok = tok[1:]
		}
		if len(tok) == 0 {
			return v, r.errAt(line, col, "empty keyword")
		}
		v.Kind, v.Str = Keyword, r.intern(tok)
		return v, nil
	case c >= '0' && c <= '9':
		return r.number(v, r.token())
	case c == '+' || c == '-':
		tok := r.token()
		if len(tok) > 1 && tok[1] >= '0' && tok[1] <= '9' {
			return r.number(v, tok)
		}
		v.Kind, v.Str = Symbol, r.intern(tok)
		return v, nil
	case isSymbolStart(c):
		tok := r.token()
		switch string(tok) {
		case "nil":
			v.Kind = Nil
		case "null":
			if r.JSON {
				v.Kind = Nil
			} else {
				v.Kind, v.Str = Symbol, "null"
			}
		case "true":
			v.Kind, v.I = Bool, 1
		case "false":
			v.Kind = Bool
		default:
			v.Kind, v.Str = Symbol, r.intern(tok)
		}
		return v, nil
	}
	return v, r.errf("unexpected character %q", c)
}

func (r *Reader) valueNoEOF() (Value, error) {
	v, err := r.value()
	if err == io.EOF {
		return v, r.errf("unexpected end of input")
	}
	return v, err
}

func isSymbolStart(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	}
	switch c {
	case '.', '*', '!', '_', '?', '$', '%', '&', '=', '<', '>', '/', '\'':
		return true
	}
	return c >= 0x80
}

var delims = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r,\f\v()[]{}\";\\") {
		t[c] = true
	}
	return t
}()

var jsonDelims = func() (t [256]bool) {
	t = delims
	t[':'] = true
	return t
}()

func isDelim(c byte) bool { return delims[c] }

// token reads bytes up to a delimiter. The result aliases the buffer and is
// valid until the next read.
func (r *Reader) token() []byte {
	start := r.pos
	tab := &delims
	if r.JSON {
		tab = &jsonDelims
	}
	for {
		for r.pos < r.end {
			if tab[r.buf[r.pos]] {
				return r.buf[start:r.pos]
			}
			r.pos++
		}
		n := r.pos - start
		r.pos = start
		if !r.fill() {
			r.pos += n
			return r.buf[r.pos-n : r.pos]
		}
		start = r.pos
		r.pos += n
	}
}

func (r *Reader) intern(b []byte) string {
	// A direct-mapped cache in front of the map: histories repeat a handful
	// of keywords (:type :ok :value :append ...) on every line.
	var h uint32
	if len(b) > 0 {
		h = uint32(len(b))*31 + uint32(b[0])*7 + uint32(b[len(b)-1])
		if len(b) > 2 {
			h = h*131 + uint32(b[1])
		}
	}
	slot := &r.cache[h%uint32(len(r.cache))]
	if *slot == string(b) && len(b) > 0 {
		return *slot
	}
	s := r.internMap(b)
	*slot = s
	return s
}

func (r *Reader) internMap(b []byte) string {
	if s, ok := r.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(r.names) < 1<<16 {
		r.names[s] = s
	}
	return s
}

func (r *Reader) number(v Value, tok []byte) (Value, error) {
	t := tok
	if len(t) == 0 {
		return v, r.errf("empty number")
	}
	// Fast path: plain decimal integer.
	neg := false
	i := 0
	if t[0] == '+' || t[0] == '-' {
		neg = t[0] == '-'
		i = 1
	}
	if i < len(t) {
		var n uint64
		j := i
		for ; j < len(t) && t[j] >= '0' && t[j] <= '9' && j-i < 18; j++ {
			n = n*10 + uint64(t[j]-'0')
		}
		if j == len(t) {
			v.Kind = Int
			v.I = int64(n)
			if neg {
				v.I = -v.I
			}
			return v, nil
		}
	}
	s := string(t)
	bad := func() (Value, error) {
		return v, r.errAt(int(v.Line), int(v.Col), "invalid number %q", s)
	}
	switch last := t[len(t)-1]; {
	case last == 'N':
		s = s[:len(s)-1]
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			v.Kind, v.I = Int, n
			return v, nil
		}
		if !isDigits(s) {
			return bad()
		}
		v.Kind, v.Str = BigInt, trimPlus(s)
		return v, nil
	case last == 'M':
		s = s[:len(s)-1]
	}
	if k := bytes.IndexByte(t, '/'); k > 0 {
		num, err1 := strconv.ParseFloat(s[:k], 64)
		den, err2 := strconv.ParseFloat(s[k+1:], 64)
		if err1 != nil || err2 != nil || !isDigits(s[:k]) || !isDigits(s[k+1:]) {
			return bad()
		}
		v.Kind, v.Str, v.I = Ratio, s, int64(math.Float64bits(num/den))
		return v, nil
	}
	if isDigits(s) {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			v.Kind, v.I = Int, n
			return v, nil
		}
		v.Kind, v.Str = BigInt, trimPlus(s)
		return v, nil
	}
	if !isFloatText(s) {
		return bad()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return bad()
	}
	v.Kind, v.I = Float, int64(math.Float64bits(f))
	return v, nil
}

func trimPlus(s string) string {
	if len(s) > 0 && s[0] == '+' {
		return s[1:]
	}
	return s
}

func isDigits(s string) bool {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if len(s) == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isFloatText accepts [+-]digits[.digits][e[+-]digits] (strconv alone would
// also accept hex floats, underscores, "inf" and "nan").
func isFloatText(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	d := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		d++
	}
	if d == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		e := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			e++
		}
		if e == 0 {
			return false
		}
	}
	return i == len(s)
}

// coll reads items up to close; v is positioned at the opening bracket.
func (r *Reader) coll(v Value, kind Kind, close byte) (Value, error) {
	v.Kind = kind
	if r.depth >= MaxDepth {
		return v, r.errAt(int(v.Line), int(v.Col), "nesting deeper than %d", MaxDepth)
	}
	r.depth++
	defer func() { r.depth-- }()
	start := len(r.stack)
	tab := &delims
	if r.JSON {
		tab = &jsonDelims
	}
	for {
		// Fast paths for the common items of a history (integers and
		// keywords wholly inside the buffer); everything else goes through
		// Peek and value.
		r.skipSpace()
		if r.pos < r.end {
			c := r.buf[r.pos]
			if c == close {
				r.pos++
				break
			}
			if c >= '0' && c <= '9' {
				j, n := r.pos, uint64(0)
				for j < r.end && j-r.pos < 18 && r.buf[j] >= '0' && r.buf[j] <= '9' {
					n = n*10 + uint64(r.buf[j]-'0')
					j++
				}
				if j < r.end && tab[r.buf[j]] {
					col := int32(r.base + int64(r.pos) - r.lineStart + 1)
					r.stack = append(r.stack, Value{Kind: Int, I: int64(n), Line: int32(r.line), Col: col})
					r.pos = j
					continue
				}
			} else if c == ':' && !r.JSON {
				j := r.pos + 1
				for j < r.end && !tab[r.buf[j]] {
					j++
				}
				if j < r.end && j > r.pos+1 && r.buf[r.pos+1] != ':' {
					col := int32(r.base + int64(r.pos) - r.lineStart + 1)
					r.stack = append(r.stack, Value{Kind: Keyword, Str: r.intern(r.buf[r.pos+1 : j]), Line: int32(r.line), Col: col})
					r.pos = j
					continue
				}
			}
		}
		c, err := r.Peek()
		if err != nil {
			r.stack = r.stack[:start]
			if err == io.EOF {
				return v, r.errAt(int(v.Line), int(v.Col), "%s opened here is never closed (expected %q)", kind, close)
			}
			return v, err
		}
		if c == close {
			r.pos++
			break
		}
		item, err := r.value()
		if err != nil {
			r.stack = r.stack[:start]
			return v, err
		}
		r.stack = append(r.stack, item)
	}
	n := len(r.stack) - start
	if kind == Map && n%2 != 0 {
		r.stack = r.stack[:start]
		return v, r.errAt(int(v.Line), int(v.Col), "map literal has an odd number of forms (%d)", n)
	}
	v.Items = r.alloc(n)
	copy(v.Items, r.stack[start:])
	r.stack = r.stack[:start]
	return v, nil
}

// str reads a string body after the opening quote.
func (r *Reader) str() (string, error) {
	line, col := r.Pos()
	col--
	r.sbuf = r.sbuf[:0]
	start := r.pos
	// Fast path: no escapes, no newlines, within the buffer.
	for i := r.pos; i < r.end; i++ {
		c := r.buf[i]
		if c == '"' {
			s := string(r.buf[start:i])
			r.pos = i + 1
			return s, nil
		}
		if c == '\\' || c == '\n' {
			break
		}
	}
	for {
		if r.pos >= r.end && !r.fill() {
			return "", r.errAt(line, col, "string opened here is never closed")
		}
		c := r.buf[r.pos]
		r.pos++
		switch c {
		case '"':
			return string(r.sbuf), nil
		case '\n':
			r.newline()
			r.sbuf = append(r.sbuf, c)
		case '\\':
			if r.pos >= r.end && !r.fill() {
				return "", r.errAt(line, col, "string opened here is never closed")
			}
			e := r.buf[r.pos]
			r.pos++
			switch e {
			case 't':
				r.sbuf = append(r.sbuf, '\t')
			case 'r':
				r.sbuf = append(r.sbuf, '\r')
			case 'n':
				r.sbuf = append(r.sbuf, '\n')
			case 'b':
				r.sbuf = append(r.sbuf, '\b')
			case 'f':
				r.sbuf = append(r.sbuf, '\f')
			case '"', '\\', '/', '\'':
				r.sbuf = append(r.sbuf, e)
			case 'u':
				cp, err := r.hex4()
				if err != nil {
					return "", err
				}
				if cp >= 0xD800 && cp < 0xDC00 {
					// A high surrogate pairs with an immediately following
					// \uDC00-\uDFFF; otherwise it stands alone (U+FFFD) and
					// the next escape is read on its own. Peek without
					// consuming: fill may move the buffer, so no saved
					// position survives a refill.
					if lo, ok := r.peekLowSurrogate(); ok {
						cp = 0x10000 + (cp-0xD800)<<10 + (lo - 0xDC00)
						r.pos += 6
					}
				}
				r.sbuf = utf8.AppendRune(r.sbuf, rune(cp))
			default:
				return "", r.errf("unsupported string escape \\%c", e)
			}
		default:
			r.sbuf = append(r.sbuf, c)
		}
	}
}

func (r *Reader) lookingAt(s string) bool {
	for r.end-r.pos < len(s) {
		if !r.fill() {
			break
		}
	}
	return r.end-r.pos >= len(s) && string(r.buf[r.pos:r.pos+len(s)]) == s
}

// peekLowSurrogate reports whether the next six bytes are \uXXXX with
// XXXX in DC00-DFFF, and its value, without consuming anything.
func (r *Reader) peekLowSurrogate() (int, bool) {
	if !r.lookingAt(`\u`) {
		return 0, false
	}
	for r.end-r.pos < 6 {
		if !r.fill() {
			return 0, false
		}
	}
	n := 0
	for _, c := range r.buf[r.pos+2 : r.pos+6] {
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return 0, false
		}
		n = n<<4 | d
	}
	return n, n >= 0xDC00 && n < 0xE000
}

func (r *Reader) hex4() (int, error) {
	for r.end-r.pos < 4 {
		if !r.fill() {
			return 0, r.errf("\\u needs 4 hex digits")
		}
	}
	n := 0
	for i := 0; i < 4; i++ {
		c := r.buf[r.pos+i]
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return 0, r.errf("\\u needs 4 hex digits")
		}
		n = n<<4 | d
	}
	r.pos += 4
	return n, nil
}

var charNames = map[string]rune{
	"newline": '\n', "space": ' ', "tab": '\t', "return": '\r', "backspace": '\b', "formfeed": '\f',
}

// char reads a character literal after the backslash.
func (r *Reader) char(v Value) (Value, error) {
	v.Kind = Char
	c, ok := r.peekByte()
	if !ok {
		return v, r.errf("character literal at end of input")
	}
	if isDelim(c) {
		// \( \space-like single delimiters such as \" \( \; are characters.
		r.pos++
		if c == '\n' {
			r.newline()
		}
		v.I = int64(c)
		return v, nil
	}
	// Read the first rune then any following token bytes.
	start := r.pos
	tok := r.token()
	_ = start
	if len(tok) == 0 {
		return v, r.errf("empty character literal")
	}
	ru, size := utf8.DecodeRune(tok)
	if size == len(tok) {
		v.I = int64(ru)
		return v, nil
	}
	if cp, ok := charNames[string(tok)]; ok {
		v.I = int64(cp)
		return v, nil
	}
	if tok[0] == 'u' && len(tok) == 5 {
		if n, err := strconv.ParseUint(string(tok[1:]), 16, 32); err == nil {
			v.I = int64(n)
			return v, nil
		}
	}
	if tok[0] == 'o' && len(tok) >= 2 && len(tok) <= 4 {
		if n, err := strconv.ParseUint(string(tok[1:]), 8, 32); err == nil && n <= 0377 {
			v.I = int64(n)
			return v, nil
		}
	}
	return v, r.errAt(int(v.Line), int(v.Col), "unsupported character literal \\%s", tok)
}

// dispatch reads what follows '#'.
func (r *Reader) dispatch(v Value) (Value, error) {
	c, ok := r.peekByte()
	if !ok {
		return v, r.errf("'#' at end of input")
	}
	switch {
	case c == '{':
		r.pos++
		return r.coll(v, Set, '}')
	case c == '_':
		r.pos++
		if err := r.nest("#_ discard"); err != nil {
			return v, err
		}
		defer r.unnest()
		if _, err := r.valueNoEOF(); err != nil {
			return v, err
		}
		return r.valueNoEOF()
	case c == '#':
		r.pos++
		tok := r.token()
		var f float64
		switch string(tok) {
		case "Inf":
			f = math.Inf(1)
		case "-Inf":
			f = math.Inf(-1)
		case "NaN":
			f = math.NaN()
		default:
			return v, r.errf("unknown symbolic value ##%s", tok)
		}
		v.Kind, v.I = Float, int64(math.Float64bits(f))
		return v, nil
	case c == ':':
		// Namespaced map #:ns{...}.
		r.pos++
		ns := string(r.token())
		if nc, ok := r.peekByte(); !ok || nc != '{' {
			return v, r.errf("namespaced map #:%s needs a map", ns)
		}
		r.pos++
		m, err := r.coll(v, Map, '}')
		if err != nil {
			return m, err
		}
		for i := 0; i < len(m.Items); i += 2 {
			if k := &m.Items[i]; k.Kind == Keyword && !bytes.ContainsRune([]byte(k.Str), '/') {
				k.Str = ns + "/" + k.Str
			}
		}
		return m, nil
	case isSymbolStart(c):
		tag := r.intern(r.token())
		if err := r.nest("#" + tag); err != nil {
			return v, err
		}
		defer r.unnest()
		el, err := r.valueNoEOF()
		if err != nil {
			return v, err
		}
		v.Kind, v.Str = Tagged, tag
		v.Items = r.alloc(1)
		v.Items[0] = el
		return v, nil
	}
	return v, r.errf("unsupported dispatch #%c", c)
}

// Buffered returns the input the Reader has read from its source but not
// consumed yet (valid until the next call on the Reader). A caller that
// shares the source with the Reader uses it to find where the Reader
// stopped.
func (r *Reader) Buffered() []byte { return r.buf[r.pos:r.end] }

// Resync discards the buffered input (see Buffered) and numbers the next
// byte the Reader reads from its source as the first of line. It lets a
// caller that reads some lines of the source itself hand the rest back to
// the Reader with correct positions. A byte-order mark is no longer
// skipped after Resync (it is only skipped at the start of the input).
func (r *Reader) Resync(line int) {
	r.base += int64(r.end)
	r.pos, r.end = 0, 0
	r.line = line
	r.lineStart = r.base
	r.started = true
}
