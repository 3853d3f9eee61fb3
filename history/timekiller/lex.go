package timekiller

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Lexer is a minimal streaming JSON tokenizer. It reads its input in large
// blocks into its own buffer, tracks the 1-based line for error messages,
// and returns strings and numbers as byte slices that alias an internal
// scratch buffer (valid until the next call). It allocates nothing per
// token, which is what lets the TimeKiller decoder and `txray watch` stream
// millions of transactions quickly.
//
// Errors are plain errors carrying a message; callers wrap them in
// history.InputError with the line from Line.
type Lexer struct {
	r       io.Reader
	buf     []byte
	pos     int
	eof     bool
	line    int
	scratch []byte
	err     error
	base    int64 // input bytes before buf
}

// NewLexer returns a lexer reading r.
func NewLexer(r io.Reader) *Lexer {
	size := 1 << 20
	if br, ok := r.(*bufio.Reader); ok && br.Size() < size {
		size = br.Size()
		if size < 4096 {
			size = 4096
		}
	}
	return &Lexer{r: r, line: 1, buf: make([]byte, 0, size), scratch: make([]byte, 0, 64)}
}

// NewLexerBytes returns a lexer over b (no copying; b must not change while
// the lexer is in use).
func NewLexerBytes(b []byte) *Lexer {
	return &Lexer{buf: b, eof: true, line: 1, scratch: make([]byte, 0, 64)}
}

// Line is the current 1-based input line.
func (l *Lexer) Line() int { return l.line }

// Offset is the number of input bytes consumed so far.
func (l *Lexer) Offset() int64 { return l.base + int64(l.pos) }

// resetBytes makes l a lexer over b (as NewLexerBytes) whose first line is
// numbered line, keeping its scratch buffer.
func (l *Lexer) resetBytes(b []byte, line int) {
	*l = Lexer{buf: b, eof: true, line: line, scratch: l.scratch[:0]}
}

// Err is the first I/O error met other than io.EOF.
func (l *Lexer) Err() error { return l.err }

// fill reads more input; false at end of input.
func (l *Lexer) fill() bool {
	if l.eof {
		return false
	}
	l.base += int64(len(l.buf))
	l.buf = l.buf[:0]
	l.pos = 0
	for len(l.buf) == 0 {
		n, err := l.r.Read(l.buf[:cap(l.buf)])
		l.buf = l.buf[:n]
		if err != nil {
			if err != io.EOF && l.err == nil {
				l.err = err
			}
			l.eof = true
			return n > 0
		}
	}
	return true
}

func (l *Lexer) readByte() (byte, bool) {
	if l.pos >= len(l.buf) && !l.fill() {
		return 0, false
	}
	c := l.buf[l.pos]
	l.pos++
	if c == '\n' {
		l.line++
	}
	return c, true
}

// Peek skips white space and returns the next byte without consuming it;
// ok is false at end of input.
func (l *Lexer) Peek() (byte, bool) {
	if l.pos < len(l.buf) {
		if c := l.buf[l.pos]; c > ' ' {
			return c, true
		}
	}
	return l.peekSlow()
}

func (l *Lexer) peekSlow() (byte, bool) {
	for {
		for l.pos < len(l.buf) {
			c := l.buf[l.pos]
			switch c {
			case ' ', '\t', '\r':
				l.pos++
				continue
			case '\n':
				l.pos++
				l.line++
				continue
			}
			return c, true
		}
		if !l.fill() {
			return 0, false
		}
	}
}

// Next skips white space and consumes one byte.
func (l *Lexer) Next() (byte, bool) {
	c, ok := l.Peek()
	if ok {
		l.pos++
	}
	return c, ok
}

// Expect consumes the byte c (after white space) or fails.
func (l *Lexer) Expect(c byte) error {
	if l.pos < len(l.buf) && l.buf[l.pos] == c {
		l.pos++
		return nil
	}
	got, ok := l.Next()
	if !ok {
		return fmt.Errorf("unexpected end of input, want %q", c)
	}
	if got != c {
		return fmt.Errorf("unexpected %q, want %q", got, c)
	}
	return nil
}

// More consumes a ',' and reports true, or consumes the closing byte end and
// reports false; first is true for the first element (no comma expected).
func (l *Lexer) More(end byte, first bool) (bool, error) {
	c, ok := l.Peek()
	if !ok {
		return false, fmt.Errorf("unexpected end of input, want %q", end)
	}
	if c == end {
		l.pos++
		return false, nil
	}
	if first {
		return true, nil
	}
	if c != ',' {
		return false, fmt.Errorf("unexpected %q, want ',' or %q", c, end)
	}
	l.pos++
	return true, nil
}

// String reads a JSON string (the opening quote not yet consumed) and
// returns its unescaped bytes (aliasing the scratch buffer).
func (l *Lexer) String() ([]byte, error) {
	if err := l.Expect('"'); err != nil {
		return nil, err
	}
	b := l.scratch[:0]
	for {
		// fast path: plain bytes up to a quote or backslash
		i := l.pos
		for i < len(l.buf) {
			c := l.buf[i]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			i++
		}
		b = append(b, l.buf[l.pos:i]...)
		l.pos = i
		c, ok := l.readByte()
		if !ok {
			return nil, fmt.Errorf("unterminated string")
		}
		switch {
		case c == '"':
			l.scratch = b
			return b, nil
		case c == '\\':
			e, ok := l.readByte()
			if !ok {
				return nil, fmt.Errorf("unterminated string")
			}
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				var hex [4]byte
				for i := range hex {
					if hex[i], ok = l.readByte(); !ok {
						return nil, fmt.Errorf("unterminated string")
					}
				}
				n, err := strconv.ParseUint(string(hex[:]), 16, 32)
				if err != nil {
					return nil, fmt.Errorf("bad \\u escape")
				}
				b = utf8.AppendRune(b, rune(n))
			default:
				return nil, fmt.Errorf("bad escape \\%c", e)
			}
		case c < 0x20:
			return nil, fmt.Errorf("control character in string")
		default:
			b = append(b, c)
		}
	}
}

// plainString reads a string at the current position (no white space
// skipped) that holds no escape or control character and lies wholly in
// the buffer, returning its bytes (aliasing the buffer: valid until the
// next call), as String would; otherwise (or with fastOpOff) it consumes
// nothing and reports false.
func (l *Lexer) plainString() ([]byte, bool) {
	b, p := l.buf, l.pos
	if p >= len(b) || b[p] != '"' || fastOpOff {
		return nil, false
	}
	for i := p + 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			l.pos = i + 1
			return b[p+1 : i], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// Number reads a JSON number's text (aliasing the scratch buffer).
func (l *Lexer) Number() ([]byte, error) {
	if _, ok := l.Peek(); !ok {
		return nil, fmt.Errorf("unexpected end of input, want a number")
	}
	b := l.scratch[:0]
	for {
		i := l.pos
		for i < len(l.buf) {
			c := l.buf[i]
			if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
				i++
				continue
			}
			break
		}
		b = append(b, l.buf[l.pos:i]...)
		l.pos = i
		if i < len(l.buf) || !l.fill() {
			break
		}
	}
	l.scratch = b
	if len(b) == 0 {
		c, _ := l.Peek()
		return nil, fmt.Errorf("unexpected %q, want a number", c)
	}
	return b, nil
}

// Literal reads true, false or null and returns it.
func (l *Lexer) Literal() (string, error) {
	c, ok := l.Peek()
	if !ok {
		return "", fmt.Errorf("unexpected end of input")
	}
	var want string
	switch c {
	case 't':
		want = "true"
	case 'f':
		want = "false"
	case 'n':
		want = "null"
	default:
		return "", fmt.Errorf("unexpected %q", c)
	}
	for i := 0; i < len(want); i++ {
		got, ok := l.readByte()
		if !ok || got != want[i] {
			return "", fmt.Errorf("bad literal, want %s", want)
		}
	}
	return want, nil
}

// Field reads an object member name and the colon after it, returning the
// name's bytes (aliasing the scratch buffer or the input buffer; valid until
// the next call). Short plain names are read without copying.
func (l *Lexer) Field() ([]byte, error) {
	b := l.buf
	p := l.pos
	if p+3 < len(b) && b[p] == '"' {
		// fast path: "x": or "xy": ... without escapes
		for i := p + 1; i < len(b) && i < p+24; i++ {
			c := b[i]
			if c == '\\' || c < 0x20 {
				break
			}
			if c == '"' {
				if i+1 < len(b) && b[i+1] == ':' {
					l.pos = i + 2
					return b[p+1 : i], nil
				}
				break
			}
		}
	}
	name, err := l.String()
	if err != nil {
		return nil, err
	}
	if err := l.Expect(':'); err != nil {
		return nil, err
	}
	return name, nil
}

// Int64 reads an integer given as a JSON number or a numeric string.
func (l *Lexer) Int64() (int64, error) {
	// fast path: a plain decimal number entirely in the buffer
	if p := l.pos; p < len(l.buf) {
		b := l.buf
		i := p
		neg := b[i] == '-'
		if neg {
			i++
		}
		var n int64
		j := i
		for j < len(b) && j-i < 18 && b[j] >= '0' && b[j] <= '9' {
			n = n*10 + int64(b[j]-'0')
			j++
		}
		if j > i && j < len(b) {
			if c := b[j]; c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
				l.pos = j
				if neg {
					n = -n
				}
				return n, nil
			}
		}
	}
	c, ok := l.Peek()
	if !ok {
		return 0, fmt.Errorf("unexpected end of input, want an integer")
	}
	var b []byte
	var err error
	if c == '"' {
		b, err = l.String()
	} else {
		b, err = l.Number()
	}
	if err != nil {
		return 0, err
	}
	n, perr := ParseInt(b)
	if perr != nil {
		return 0, fmt.Errorf("want an integer, got %q", b)
	}
	return n, nil
}

// Window returns the unread bytes already in the buffer (no read), for a
// caller's fast path; see Consume.
func (l *Lexer) Window() []byte { return l.buf[l.pos:] }

// Consume advances past the first n bytes of Window, which hold nl
// newlines.
func (l *Lexer) Consume(n, nl int) {
	l.pos += n
	l.line += nl
}

// FastInt reads, from b at i, a plain decimal integer of at most 18
// digits followed by a byte of b that is not a digit; it returns the value
// and the index after it, or false.
func FastInt(b []byte, i int) (n int64, j int, ok bool) { return fastInt(b, i) }

// fastInt reads a plain decimal integer of at most 18 digits that lies
// wholly in the buffer and is followed by a delimiter (',', '}', ']' or
// white space); otherwise it consumes nothing and reports false.
func (l *Lexer) fastInt() (int64, bool) {
	n, j, ok := fastInt(l.buf, l.pos)
	if !ok {
		return 0, false
	}
	switch l.buf[j] {
	case ',', '}', ']', ' ', '\n', '\r', '\t':
		l.pos = j
		return n, true
	}
	return 0, false
}

// ParseInt parses a decimal int64 without allocating.
func ParseInt(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 20 {
		return strconv.ParseInt(string(b), 10, 64)
	}
	neg := false
	i := 0
	if b[0] == '-' {
		neg, i = true, 1
		if len(b) == 1 {
			return 0, strconv.ErrSyntax
		}
	}
	var n uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return strconv.ParseInt(string(b), 10, 64)
		}
		d := uint64(c - '0')
		if n > (1<<63)/10 {
			return strconv.ParseInt(string(b), 10, 64)
		}
		n = n*10 + d
	}
	if neg {
		if n > 1<<63 {
			return strconv.ParseInt(string(b), 10, 64)
		}
		return -int64(n), nil
	}
	if n > 1<<63-1 {
		return strconv.ParseInt(string(b), 10, 64)
	}
	return int64(n), nil
}

// Skip consumes one JSON value of any kind.
func (l *Lexer) Skip() error { return l.skip(0) }

func (l *Lexer) skip(depth int) error {
	if depth > 10000 {
		return fmt.Errorf("nesting too deep")
	}
	c, ok := l.Peek()
	if !ok {
		return fmt.Errorf("unexpected end of input, want a value")
	}
	switch {
	case c == '"':
		_, err := l.String()
		return err
	case c == '{':
		l.pos++
		for first := true; ; first = false {
			more, err := l.More('}', first)
			if err != nil || !more {
				return err
			}
			if _, err := l.String(); err != nil {
				return err
			}
			if err := l.Expect(':'); err != nil {
				return err
			}
			if err := l.skip(depth + 1); err != nil {
				return err
			}
		}
	case c == '[':
		l.pos++
		for first := true; ; first = false {
			more, err := l.More(']', first)
			if err != nil || !more {
				return err
			}
			if err := l.skip(depth + 1); err != nil {
				return err
			}
		}
	case c == 't' || c == 'f' || c == 'n':
		_, err := l.Literal()
		return err
	default:
		if _, ok := l.fastInt(); ok {
			return nil // a plain integer, read without copying
		}
		_, err := l.Number()
		return err
	}
}
