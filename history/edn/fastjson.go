package edn

// The fast path for elle-cli JSON (package ellejson). elle-cli writes a
// history as one JSON array of op objects, or as one object per line:
//
//	{"type":"ok","f":"txn","value":[["append",1,2],["r",3,[1,2]]],"process":0,"time":123,"index":4}
//
// FeedJSON scans such input held in memory straight into the Builder,
// without building EDN values: objects with the fields "type", "process",
// "f", "value", "time" and "index" (each at most once, any order), plus
// other fields whose values are plain JSON (null, true, false, integers,
// strings without escapes, arrays and objects of those, nested at most
// 32 deep), which are skipped as Builder.Add ignores them. Values are read
// as Builder.Add reads them from the general reader in JSON mode: integers
// of at most 18 digits, null, printable ASCII strings without escapes, and
// a "value" array of micro-ops [f, k] / [f, k, v] with f one of "r",
// "read", "w", "write", "append" and v a scalar, null or a flat array of
// scalars. Separators are JSON white space and commas (the general reader
// treats commas as white space too); a key is followed by ':'.
//
// On anything else (floats, escapes, non-ASCII text, a BOM, other shapes)
// and on every error the Builder reports, FeedJSON gives up and its caller
// decodes the whole input again with the general reader, so results, ids
// and error messages are those of the general reader by construction for
// every input the fast path declines, and equal to them (differential test
// and fuzz target in package ellejson) for every input it takes.

// jsonWS reports JSON white space; jsonSep also accepts ','.
func jsonWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// jscan scans one object; b is the input from the object's '{' on and
// offsets are relative to it.
type jscan struct {
	b  []byte
	nl int // newlines passed
}

func (s *jscan) sep(i int) int {
	b := s.b
	for i < len(b) {
		switch b[i] {
		case '\n':
			s.nl++
		case ' ', '\t', '\r', ',':
		default:
			return i
		}
		i++
	}
	return i
}

// isJDelim: bytes that may follow a scalar token (the EDN fast path's
// set, isFastDelim).
func isJDelim(c byte) bool { return isFastDelim[c] }

// str scans a string without escapes of printable ASCII at b[i] == '"';
// it returns the offset and length of its text and the index after the
// closing quote.
func (s *jscan) str(i int) (off, n int32, j int, ok bool) { return jsonScalars.quoted(s.b, i) }

// scalar scans an integer or a string followed by a delimiter.
func (s *jscan) scalar(i int) (v scal, j int, ok bool) { return jsonScalars.scalar(s.b, i) }

func (s *jscan) null(i int) bool { return word(s.b, i, "null") }

// skip skips a plain JSON value (see the package comment) at b[i].
func (s *jscan) skip(i, depth int) (int, bool) {
	b := s.b
	if i >= len(b) || depth > 32 {
		return 0, false
	}
	switch c := b[i]; c {
	case 'n', 't', 'f':
		for _, w := range []string{"null", "true", "false"} {
			if word(b, i, w) {
				return i + len(w), true
			}
		}
		return 0, false
	case '[', '{':
		i = s.sep(i + 1)
		for {
			if i >= len(b) {
				return 0, false
			}
			if c == '[' && b[i] == ']' || c == '{' && b[i] == '}' {
				i++
				if i >= len(b) || !isJDelim(b[i]) {
					return 0, false
				}
				return i, true
			}
			var ok bool
			if c == '{' {
				if _, _, i, ok = s.str(i); !ok {
					return 0, false
				}
				if i = s.colon(i); i < 0 {
					return 0, false
				}
			}
			if i, ok = s.skip(i, depth+1); !ok {
				return 0, false
			}
			i = s.sep(i)
		}
	}
	_, j, ok := s.scalar(i)
	return j, ok
}

// colon skips white space, one ':' and white space after a key; -1 if
// there is no ':'.
func (s *jscan) colon(i int) int {
	b := s.b
	for i < len(b) && jsonWS(b[i]) {
		if b[i] == '\n' {
			s.nl++
		}
		i++
	}
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	i++
	for i < len(b) && jsonWS(b[i]) {
		if b[i] == '\n' {
			s.nl++
		}
		i++
	}
	return i
}

// object scans the op object at s.b[0] == '{' into l (micro-ops into t)
// and returns the index after its '}'.
func (s *jscan) object(l *fline, t *scanTab) (int, bool) {
	b := s.b
	l.seen, l.proc, l.fSet, l.fTxn, l.hasT, l.hasIdx, l.valVec, l.idN = 0, pNil, false, false, false, false, false, 0
	l.m0 = int32(len(t.mops))
	l.m1 = l.m0
	i := s.sep(1)
	for {
		if i >= len(b) {
			return 0, false
		}
		if b[i] == '}' {
			i++
			break
		}
		off, n, j, ok := s.str(i)
		if !ok {
			return 0, false
		}
		bit := fieldBit(b[off : off+n])
		if i = s.colon(j); i < 0 || i >= len(b) {
			return 0, false
		}
		if bit == 0 {
			if i, ok = s.skip(i, 1); !ok {
				return 0, false
			}
			i = s.sep(i)
			continue
		}
		if l.seen&bit != 0 {
			return 0, false
		}
		l.seen |= bit
		switch bit {
		case fType:
			off, n, j, ok := s.str(i)
			if !ok || j >= len(b) || !isJDelim(b[j]) {
				return 0, false
			}
			if l.typ, ok = parseType(b[off : off+n]); !ok {
				return 0, false
			}
			i = j
		case fProcess:
			switch {
			case s.null(i):
				i += 4
			case b[i] == '"':
				if _, i, ok = s.scalar(i); !ok {
					return 0, false
				}
				l.proc = pName
			default:
				var v scal
				if v, i, ok = s.scalar(i); !ok {
					return 0, false
				}
				l.proc, l.procI = pInt, v.i
			}
		case fF:
			if s.null(i) {
				i += 4
				break
			}
			if b[i] != '"' {
				return 0, false
			}
			if l.f, i, ok = s.scalar(i); !ok {
				return 0, false
			}
			l.fSet, l.fTxn = true, string(b[l.f.off:l.f.off+l.f.n]) == "txn"
		case fTime, fIndex:
			if s.null(i) {
				i += 4
				break
			}
			if b[i] == '"' {
				return 0, false
			}
			var v scal
			if v, i, ok = s.scalar(i); !ok {
				return 0, false
			}
			l.setInt(bit, v.i)
		case fValue:
			if s.null(i) {
				i += 4
				break
			}
			if i, ok = s.mops(i, t); !ok {
				return 0, false
			}
			l.m1 = int32(len(t.mops))
			l.valVec = true
		}
		i = s.sep(i)
	}
	return i, l.seen&fType != 0
}

// mops scans a "value" array of micro-ops at b[i].
func (s *jscan) mops(i int, t *scanTab) (int, bool) {
	b := s.b
	if b[i] != '[' {
		return 0, false
	}
	i = s.sep(i + 1)
	for {
		if i >= len(b) {
			return 0, false
		}
		if b[i] == ']' {
			i++
			if i >= len(b) || !isJDelim(b[i]) {
				return 0, false
			}
			return i, true
		}
		if b[i] != '[' {
			return 0, false
		}
		i = s.sep(i + 1)
		off, n, j, ok := s.str(i)
		if !ok || j >= len(b) || !isJDelim(b[j]) {
			return 0, false
		}
		var m fmop
		if m.kind, ok = mopKind(b[off : off+n]); !ok {
			return 0, false
		}
		i = s.sep(j)
		if m.key, i, ok = s.scalar(i); !ok {
			return 0, false
		}
		i = s.sep(i)
		if i >= len(b) {
			return 0, false
		}
		switch c := b[i]; {
		case c == ']':
		case c == '[':
			m.vkind = vList
			m.l0 = int32(len(t.elems))
			i = s.sep(i + 1)
			for {
				if i >= len(b) {
					return 0, false
				}
				if b[i] == ']' {
					i++
					break
				}
				var e scal
				if e, i, ok = s.scalar(i); !ok {
					return 0, false
				}
				t.elems = append(t.elems, e)
				i = s.sep(i)
			}
			m.l1 = int32(len(t.elems))
			if i >= len(b) || !isJDelim(b[i]) {
				return 0, false
			}
			i = s.sep(i)
		case s.null(i):
			i = s.sep(i + 4)
		default:
			m.vkind = vScalar
			if m.val, i, ok = s.scalar(i); !ok {
				return 0, false
			}
			i = s.sep(i)
		}
		if i >= len(b) || b[i] != ']' {
			return 0, false
		}
		if !m.fits() {
			return 0, false
		}
		i++
		if i >= len(b) || !isJDelim(b[i]) {
			return 0, false
		}
		t.mops = append(t.mops, m)
		i = s.sep(i)
	}
}

// FeedJSON feeds the elle-cli JSON history data (the whole input) to b,
// a fresh Builder, on the fast path. It returns false when it declined the
// input or b reported an error: the caller must then decode data again
// with the general reader into a new Builder (see the comment above).
func FeedJSON(data []byte, b *Builder) bool {
	var (
		s     jscan
		l     fline
		t     scanTab
		line  = 1
		i     int
		array bool
		n     int
	)
	s.b = data
	i = s.sep(0)
	if i < len(data) && data[i] == '[' {
		array = true
		i = s.sep(i + 1)
	}
	line += s.nl
	for {
		if i >= len(data) {
			return !array && n > 0
		}
		if array && data[i] == ']' {
			s.b, s.nl = data, 0
			return n > 0 && s.sep(i+1) == len(data)
		}
		if data[i] != '{' {
			return false
		}
		end := min(len(data), i+1<<30)
		s.b, s.nl = data[i:end], 0
		t.mops, t.elems = t.mops[:0], t.elems[:0]
		j, ok := s.object(&l, &t)
		if !ok || j >= len(s.b) && (array || end < len(data)) || j < len(s.b) && !isJDelim(s.b[j]) {
			return false
		}
		l.line = s.b
		if b.addFast(&l, &t, line) != nil {
			return false
		}
		n++
		line += s.nl
		s.nl = 0
		j = s.sep(j)
		line += s.nl
		i += j
		if n == 4096 && len(data) > 2*i {
			b.presize(float64(len(data)) / float64(i))
		}
	}
}
