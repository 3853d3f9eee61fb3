package edn

import (
	"bufio"
	"bytes"
	"io"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/txray/txray/history"
	"github.com/txray/txray/internal/digits"
	"github.com/txray/txray/internal/edn"
	"github.com/txray/txray/internal/mem"
)

// The fast path. Jepsen and Elle write one op map per line,
//
//	{:index 4, :time 123, :type :ok, :process 0, :f :txn, :value [[:append 1 2] [:r 3 [1 2]]]}
//
// (fields in any order). Such a line is scanned straight into a record,
// without building EDN values: a map of the fields :type, :process, :f,
// :value, :time and :index, each at most once, whose values are keywords,
// integers of at most 18 digits, nil, strings without escapes, and a
// :value vector of micro-ops [f k] / [f k v] with f one of :r :read :w
// :write :append and a v that is a scalar or a flat vector of scalars.
// Everything else — other fields, tagged records, comments, maps over
// several lines, the top-level-vector form, and every malformed line — is
// read by the general reader (package internal/edn) exactly as Feed reads
// it, one top-level value at a time, with the same line numbers; the fast
// path resumes at the next line once the general reader has consumed a
// whole line. The fast path interns scalars and fills the Builder in the
// order Builder.Add does, so both paths produce the same history, ids and
// errors (differential test and fuzz target in fast_test.go).

// scal is a scanned key or value: an integer i (n < 0), or the text of a
// keyword or string at line[off:off+n]. Offsets instead of slices keep the
// scan tables free of pointers.
type scal struct {
	i      int64
	off, n int32
}

const (
	vNone   uint8 = iota // [f k] or nil
	vScalar              // [f k v]
	vList                // [f k [v ...]]
)

type fmop struct {
	kind   history.Kind
	vkind  uint8
	key    scal
	val    scal
	l0, l1 int32 // list elements: scanTab.elems[l0:l1]
}

// scanTab holds the micro-ops and list elements of scanned lines.
type scanTab struct {
	mops  []fmop
	elems []scal
	// ids holds the :index texts of a chunk's completions (fline.idOff),
	// one string per chunk instead of one per transaction.
	ids string
}

// fline is one scanned op map.
type fline struct {
	seen   uint8 // fields present (bits f*)
	typ    OpType
	proc   uint8 // pNil (absent or nil), pInt, pName
	procI  int64
	f      scal // :f keyword name when fSet
	fSet   bool
	fTxn   bool // ... and the name is txn (so the decoder need not read the line)
	hasT   bool
	time   int64
	hasIdx bool
	index  int64
	// id: the :index's decimal text (as strconv.FormatInt writes it) at
	// scanTab.ids[idOff:idOff+idN] when idN > 0 (set by the parallel
	// scanner for completions, so the decoder allocates no ID string).
	idOff, idN int32
	ixOff, ixN int32 // the :index's text in line (scan1)
	valVec     bool  // :value is a vector (else absent or nil)
	m0, m1     int32 // micro-ops: scanTab.mops[m0:m1]
	line       []byte
	ok         bool // scanned (echunk)
}

const (
	fType = 1 << iota
	fProcess
	fF
	fValue
	fTime
	fIndex
)

const (
	pNil uint8 = iota
	pInt
	pName
)

// isFastDelim: bytes that may follow a token in the fast grammar.
var isFastDelim = [256]bool{' ': true, '\t': true, '\r': true, '\n': true, ',': true, ']': true, '}': true}

func isWS(c byte) bool { return wsTab[c] }

// wsTab: the white space the fast path skips (EDN counts commas as white
// space; line ends are handled by the callers).
var wsTab = [256]bool{' ': true, ',': true, '\t': true, '\r': true}

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// keyword scans :name at b[i] (name: a letter, then letters, digits, '-'
// and '_') followed by a delimiter; it returns the name and the index after
// it, or ok false.
func keyword(b []byte, i int) (name []byte, j int, ok bool) {
	if i >= len(b) || b[i] != ':' {
		return nil, 0, false
	}
	j = i + 1
	if j >= len(b) || !(b[j] >= 'a' && b[j] <= 'z' || b[j] >= 'A' && b[j] <= 'Z') {
		return nil, 0, false
	}
	for j < len(b) {
		c := b[j]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			j++
			continue
		}
		break
	}
	if j >= len(b) || !isFastDelim[b[j]] {
		return nil, 0, false
	}
	return b[i+1 : j], j, true
}

// integer scans -?(0|[1-9][0-9]{0,17}) followed by a delimiter.
func integer(b []byte, i int) (n int64, j int, ok bool) {
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	n, j = digits.Parse(b, i, 18)
	if j == i || j >= len(b) || !isFastDelim[b[j]] || (b[i] == '0' && j-i > 1) || (neg && n == 0) {
		return 0, 0, false
	}
	if neg {
		n = -n
	}
	return n, j, true
}

// The scalars of the two fast paths (this EDN line scanner and FeedJSON,
// fastjson.go) share one scanner: an integer (integer), a string without
// escapes, and in EDN a keyword; each followed by a byte of isFastDelim
// (the same set for both syntaxes). The syntaxes differ only in which
// bytes a plain string may hold and in keywords.

// scalarSyntax is one fast path's scalar syntax.
type scalarSyntax struct {
	keywords bool      // :name is a keyword (EDN)
	strBad   [256]bool // bytes a plain string may not hold (escapes and the like: the general reader's case)
}

// ednScalars: EDN strings without a backslash, on one line.
var ednScalars = scalarSyntax{keywords: true, strBad: [256]bool{'\\': true, '\n': true}}

// jsonScalars: JSON strings of printable ASCII without escapes.
var jsonScalars = func() (x scalarSyntax) {
	for c := range x.strBad {
		x.strBad[c] = c < 0x20 || c >= 0x7f || c == '\\'
	}
	return x
}()

// quoted scans a plain string at b[i] == '"'; it returns the offset and
// length of its text and the index after the closing quote.
func (x *scalarSyntax) quoted(b []byte, i int) (off, n int32, j int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, 0, 0, false
	}
	for j = i + 1; j < len(b); j++ {
		c := b[j]
		if c == '"' {
			return int32(i + 1), int32(j - i - 1), j + 1, true
		}
		if x.strBad[c] {
			return 0, 0, 0, false
		}
	}
	return 0, 0, 0, false
}

// scalar scans an integer, a plain string or (EDN) a keyword at b[i],
// followed by a delimiter.
func (x *scalarSyntax) scalar(b []byte, i int) (s scal, j int, ok bool) {
	if i >= len(b) {
		return s, 0, false
	}
	switch c := b[i]; {
	case c == ':' && x.keywords:
		var name []byte
		name, j, ok = keyword(b, i)
		s.off, s.n = int32(i+1), int32(len(name))
		return s, j, ok
	case c == '"':
		if s.off, s.n, j, ok = x.quoted(b, i); !ok || j >= len(b) || !isFastDelim[b[j]] {
			return s, 0, false
		}
		return s, j, true
	case c == '-' || c >= '0' && c <= '9':
		s.i, j, ok = integer(b, i)
		s.n = -1
		return s, j, ok
	}
	return s, 0, false
}

// scanScalar scans an EDN scalar.
func scanScalar(b []byte, i int) (s scal, j int, ok bool) { return ednScalars.scalar(b, i) }

// word reports whether the literal w (nil, null, true, false) stands at
// b[i], followed by a delimiter.
func word(b []byte, i int, w string) bool {
	return len(b) > i+len(w) && string(b[i:i+len(w)]) == w && isFastDelim[b[i+len(w)]]
}

func isNil(b []byte, i int) bool { return word(b, i, "nil") }

// fieldBit is the fline bit of the op field name (type, process, f,
// value, time, index), 0 for any other name.
func fieldBit(name []byte) uint8 {
	switch string(name) {
	case "type":
		return fType
	case "process":
		return fProcess
	case "f":
		return fF
	case "value":
		return fValue
	case "time":
		return fTime
	case "index":
		return fIndex
	}
	return 0
}

// fieldAt is fieldBit(name), j for the op field keyword :name at b[i]
// followed by a delimiter (as keyword scans it), for the six field names
// only; 0 for anything else (the caller then scans it with keyword).
func fieldAt(b []byte, i int) (bit uint8, j int) {
	if i+2 >= len(b) || b[i] != ':' {
		return 0, 0
	}
	var name string
	switch b[i+1] {
	case 'i':
		bit, name = fIndex, "index"
	case 't':
		if b[i+2] == 'i' {
			bit, name = fTime, "time"
		} else {
			bit, name = fType, "type"
		}
	case 'p':
		bit, name = fProcess, "process"
	case 'f':
		bit, name = fF, "f"
	case 'v':
		bit, name = fValue, "value"
	default:
		return 0, 0
	}
	if j = i + 1 + len(name); j < len(b) && string(b[i+1:j]) == name && isFastDelim[b[j]] {
		return bit, j
	}
	return 0, 0
}

// typeAt is parseType of the keyword at b[i] and the index after it, for
// :invoke and :ok followed by a delimiter; ok false for anything else (the
// caller then scans it with keyword).
func typeAt(b []byte, i int) (t OpType, j int, ok bool) {
	if i+3 >= len(b) || b[i] != ':' {
		return 0, 0, false
	}
	switch {
	case b[i+1] == 'o' && b[i+2] == 'k':
		t, j = OK, i+3
	case len(b) > i+7 && string(b[i+1:i+7]) == "invoke":
		t, j = Invoke, i+7
	default:
		return 0, 0, false
	}
	return t, j, isFastDelim[b[j]]
}

// mopAt is mopKind of the keyword at b[i] and the index after it, for :r
// and :append followed by a delimiter; ok false for anything else (the
// caller then scans it with keyword).
func mopAt(b []byte, i int) (k history.Kind, j int, ok bool) {
	if i+2 >= len(b) || b[i] != ':' {
		return 0, 0, false
	}
	switch {
	case b[i+1] == 'r':
		k, j = history.Read, i+2
	case len(b) > i+7 && string(b[i+1:i+7]) == "append":
		k, j = history.Append, i+7
	default:
		return 0, 0, false
	}
	return k, j, isFastDelim[b[j]]
}

// setInt sets the :time or :index field (bit) of l to n.
func (l *fline) setInt(bit uint8, n int64) {
	if bit == fTime {
		l.hasT, l.time = true, n
	} else {
		l.hasIdx, l.index = true, n
	}
}

// mopKind is the kind of the micro-op function f (r, read, w, write,
// append); false for any other.
func mopKind(f []byte) (history.Kind, bool) {
	switch string(f) {
	case "r", "read":
		return history.Read, true
	case "w", "write":
		return history.Write, true
	case "append":
		return history.Append, true
	}
	return 0, false
}

// fits reports whether the fast path can feed m: a write needs a value
// and a list only fits a read; the general path reports the others'
// errors.
func (m *fmop) fits() bool { return m.kind == history.Read || m.vkind == vScalar }

// scan scans line b into l, appending its micro-ops to t; false means the
// general reader must read it (t is then as before).
func (l *fline) scan(b []byte, t *scanTab) bool {
	nm, ne := len(t.mops), len(t.elems)
	if l.scan1(b, t) {
		return true
	}
	t.mops, t.elems = t.mops[:nm], t.elems[:ne]
	return false
}

func (l *fline) scan1(b []byte, t *scanTab) bool {
	l.seen, l.proc, l.fSet, l.fTxn, l.hasT, l.hasIdx, l.valVec, l.idN = 0, pNil, false, false, false, false, false, 0
	l.line = b
	l.m0 = int32(len(t.mops))
	l.m1 = l.m0
	if len(b) > 1<<30 {
		return false
	}
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i++
	for {
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			i++
			break
		}
		bit, j := fieldAt(b, i)
		var ok bool
		if bit == 0 {
			name, j2, ok := keyword(b, i)
			if !ok {
				return false
			}
			bit, j = fieldBit(name), j2
		}
		if bit == 0 || l.seen&bit != 0 {
			return false
		}
		l.seen |= bit
		i = skipWS(b, j)
		if i >= len(b) {
			return false
		}
		switch bit {
		case fType:
			if typ, j, ok := typeAt(b, i); ok {
				l.typ, i = typ, j
				break
			}
			t, j, ok := keyword(b, i)
			if !ok {
				return false
			}
			if l.typ, ok = parseType(t); !ok {
				return false
			}
			i = j
		case fProcess:
			switch {
			case isNil(b, i):
				i += 3
			case b[i] == ':':
				if _, j, ok = keyword(b, i); !ok {
					return false
				}
				l.proc, i = pName, j
			default:
				if l.procI, j, ok = integer(b, i); !ok {
					return false
				}
				l.proc, i = pInt, j
			}
		case fF:
			if isNil(b, i) {
				i += 3
				break
			}
			if l.f, j, ok = scanScalar(b, i); !ok || b[i] != ':' {
				return false
			}
			l.fSet, l.fTxn, i = true, string(b[l.f.off:l.f.off+l.f.n]) == "txn", j
		case fTime, fIndex:
			if isNil(b, i) {
				i += 3
				break
			}
			n, j, ok := integer(b, i)
			if !ok {
				return false
			}
			l.setInt(bit, n)
			if bit == fIndex {
				l.ixOff, l.ixN = int32(i), int32(j-i)
			}
			i = j
		case fValue:
			if isNil(b, i) {
				i += 3
				break
			}
			if i, ok = t.scanMops(b, i); !ok {
				return false
			}
			l.m1 = int32(len(t.mops))
			l.valVec = true
		}
	}
	// Only white space may follow the map on its line.
	for ; i < len(b); i++ {
		if !isWS(b[i]) && b[i] != '\n' {
			return false
		}
	}
	return l.seen&fType != 0
}

// scanMops scans a :value vector of micro-ops at b[i] == '['.
func (l *scanTab) scanMops(b []byte, i int) (int, bool) {
	if b[i] != '[' {
		return 0, false
	}
	i++
	for {
		i = skipWS(b, i)
		if i >= len(b) {
			return 0, false
		}
		if b[i] == ']' {
			i++
			if i >= len(b) || !isFastDelim[b[i]] {
				return 0, false
			}
			return i, true
		}
		if b[i] != '[' {
			return 0, false
		}
		i = skipWS(b, i+1)
		var m fmop
		var j int
		var ok bool
		if m.kind, j, ok = mopAt(b, i); !ok {
			var f []byte
			if f, j, ok = keyword(b, i); !ok {
				return 0, false
			}
			if m.kind, ok = mopKind(f); !ok {
				return 0, false
			}
		}
		i = skipWS(b, j)
		if m.key, i, ok = scanScalar(b, i); !ok {
			return 0, false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return 0, false
		}
		switch c := b[i]; {
		case c == ']':
		case c == '[':
			m.vkind = vList
			m.l0 = int32(len(l.elems))
			i++
			for {
				if i >= len(b) {
					return 0, false
				}
				if c := b[i]; c >= '1' && c <= '9' {
					// the common element: a positive integer (what
					// integer takes, without its sign and zero cases)
					n, j := digits.Parse(b, i, 18)
					if j >= len(b) || !isFastDelim[b[j]] {
						return 0, false
					}
					l.elems = append(l.elems, scal{i: n, n: -1})
					i = j
					if b[i] == ' ' {
						i++
					}
					continue
				}
				i = skipWS(b, i)
				if i >= len(b) {
					return 0, false
				}
				if b[i] == ']' {
					i++
					break
				}
				if c := b[i]; c >= '1' && c <= '9' {
					continue
				}
				var e scal
				if e, i, ok = scanScalar(b, i); !ok {
					return 0, false
				}
				l.elems = append(l.elems, e)
			}
			m.l1 = int32(len(l.elems))
			i = skipWS(b, i)
		case isNil(b, i):
			i = skipWS(b, i+3)
		default:
			m.vkind = vScalar
			if m.val, i, ok = scanScalar(b, i); !ok {
				return 0, false
			}
			i = skipWS(b, i)
		}
		if i >= len(b) || b[i] != ']' {
			return 0, false
		}
		if !m.fits() {
			return 0, false
		}
		i++
		if i >= len(b) || !isFastDelim[b[i]] {
			return 0, false
		}
		l.mops = append(l.mops, m)
	}
}

func internScal(in *history.Interner, line []byte, s scal) int32 {
	if s.n >= 0 {
		return in.StrBytes(line[s.off : s.off+s.n])
	}
	return in.Int(s.i)
}

// addFast feeds the scanned line l (read at line) to b, as Add would feed
// the same map.
func (b *Builder) addFast(l *fline, t *scanTab, line int) error {
	var rec record
	rec.line = line
	rec.typ = l.typ
	if l.proc != pNil {
		rec.procSet = true
		if l.proc == pInt {
			rec.procInt, rec.proc = true, l.procI
		}
	}
	if rec.procSet && !rec.procInt {
		b.H.Ignore("nemesis op", 1)
		return nil
	}
	if l.fSet {
		rec.fSet = true
		if l.fTxn {
			rec.f = "txn"
		} else {
			rec.f = string(l.line[l.f.off : l.f.off+l.f.n])
		}
	}
	rec.hasT, rec.time = l.hasT, l.time
	rec.hasIdx, rec.index = l.hasIdx, l.index
	if l.idN > 0 {
		rec.id = t.ids[l.idOff : l.idOff+l.idN]
	}
	txnF := !rec.fSet || rec.f == "txn"
	switch {
	case !l.valVec:
		rec.noVal = true
	case l.m1 > l.m0 || txnF:
		rec.isMops = true
		rec.ops, rec.lists = b.fastOps(l, t, rec.typ == Invoke)
	}
	if rec.typ == Invoke {
		b.anyInvoke = true
	}
	b.pos++
	rec.pos = b.pos
	return b.add(&rec)
}

// fastOps interns l's micro-ops (key, then value or list elements, op by
// op, as mops does) into ops carved from the builder's arenas; an
// invocation's ops go to a recycled buffer (see Builder.freeOps), since a
// completion with a :value replaces them.
func (b *Builder) fastOps(l *fline, t *scanTab, invoke bool) ([]history.Op, []int32) {
	mops := t.mops[l.m0:l.m1]
	n := len(mops)
	// The transaction's list elements, carved from valArena in one piece.
	var lists []int32
	nl := 0
	for i := range mops {
		if mops[i].vkind == vList {
			nl += int(mops[i].l1 - mops[i].l0)
		}
	}
	if nl > 0 {
		if cap(b.valArena)-len(b.valArena) < nl {
			if b.lists != nil {
				b.valArena = b.lists.Next(nl)[:0]
			} else {
				b.valArena = make([]int32, 0, max(nl, 1<<16))
			}
		}
		lists = b.valArena[len(b.valArena) : len(b.valArena)+nl : len(b.valArena)+nl]
		b.valArena = b.valArena[:len(b.valArena)+nl]
	}
	off := 0
	var ops []history.Op
	if invoke {
		if k := len(b.freeOps); k > 0 && cap(b.freeOps[k-1]) >= n {
			ops = b.freeOps[k-1][:n]
			b.freeOps = b.freeOps[:k-1]
		} else {
			ops = make([]history.Op, n, max(n, 4))
		}
	} else {
		if cap(b.opArena)-len(b.opArena) < max(n, 1) {
			if b.arenas != nil {
				b.opArena = b.arenas.Next(n)[:0]
			} else {
				b.opArena = make([]history.Op, 0, max(n, 1<<14))
			}
		}
		ops = b.opArena[len(b.opArena) : len(b.opArena)+n : len(b.opArena)+n]
		b.opArena = b.opArena[:len(b.opArena)+n]
	}
	line := l.line
	for i := range mops {
		m := &mops[i]
		o := &ops[i]
		*o = history.Op{Kind: m.kind, Key: internScal(b.H.Keys, line, m.key), Value: history.NoValue}
		switch m.vkind {
		case vScalar:
			o.Value = internScal(b.H.Values, line, m.val)
		case vList:
			k := int(m.l1 - m.l0)
			lst := lists[off : off+k]
			// Successive reads of a key repeat its earlier elements:
			// reuse the ids of the key's previous read where the
			// integers match instead of an interner lookup per element
			// (the values of one key are far apart in the interner's
			// tables, so each lookup is a cache miss).
			for int(o.Key) >= len(b.lastList) {
				b.lastList = append(b.lastList, nil)
			}
			cache := &b.lastList[o.Key]
			for x, e := range t.elems[m.l0:m.l1] {
				if e.n >= 0 {
					lst[x] = b.H.Values.StrBytes(line[e.off : e.off+e.n])
					if x < len(*cache) {
						*cache = (*cache)[:x]
					}
					continue
				}
				if x < len(*cache) && (*cache)[x].v == e.i {
					lst[x] = (*cache)[x].id
					continue
				}
				lst[x] = b.H.Values.Int(e.i)
				if x <= len(*cache) {
					c := (*cache)[:x]
					if x == cap(c) {
						c = b.growCache(c)
					}
					*cache = append(c, listElem{e.i, lst[x]})
				}
			}
			o.SetListSpan(off, k)
			off += k
		}
	}
	return ops, lists
}

// listElem is one cached list element: the integer and its value id.
type listElem struct {
	v  int64
	id int32
}

// Cache blocks (Builder.lastList) hold 8 << class elements; blocks up to
// maxCacheClass are carved from slabs of cacheSlab elements and recycled
// when a cache outgrows them, so growing the caches of a million keys
// costs no allocation per growth (it cost 10 % of the decoding goroutine's
// time in mallocgc and fresh spans).
const (
	maxCacheClass = 6
	cacheSlab     = 1 << 14
)

// growCache returns a block twice c's capacity (at least 8) holding c's
// elements; c's block is kept for reuse.
func (b *Builder) growCache(c []listElem) []listElem {
	n := max(8, 2*cap(c))
	class := bits.Len(uint(n>>3)) - 1
	if class > maxCacheClass || n != 8<<class {
		return append(make([]listElem, 0, n), c...)
	}
	var nb []listElem
	if fl := &b.cacheFree[class]; len(*fl) > 0 {
		nb = (*fl)[len(*fl)-1][:0]
		*fl = (*fl)[:len(*fl)-1]
	} else {
		if len(b.cacheSlab)+n > cap(b.cacheSlab) {
			b.cacheSlab = mem.Make[listElem](cacheSlab, 0)[:0]
		}
		l := len(b.cacheSlab)
		nb = b.cacheSlab[l : l : l+n]
		b.cacheSlab = b.cacheSlab[:l+n]
	}
	nb = append(nb, c...)
	if k := cap(c); k >= 8 {
		if oc := bits.Len(uint(k>>3)) - 1; oc <= maxCacheClass && k == 8<<oc {
			b.cacheFree[oc] = append(b.cacheFree[oc], c[:0])
		}
	}
	return nb
}

// source yields the input's lines in order; a line may come scanned.
type source interface {
	// next returns the next line (with its '\n'; none on a last line
	// without one) and, when the source scanned it successfully, its scan
	// (valid until the next call); ok false at the end of the input or on
	// a read error (err).
	next() (b []byte, l *fline, t *scanTab, ok bool)
	// lineNo is the number of the line next returned last; read the bytes
	// returned so far.
	lineNo() int
	read() int64
	err() error
}

// lineSrc is the sequential source: it reads and scans lines one by one.
type lineSrc struct {
	br    *bufio.Reader
	long  []byte
	line  int
	nread int64
	rerr  error
	l     fline
	t     scanTab
}

func (s *lineSrc) lineNo() int { return s.line }
func (s *lineSrc) read() int64 { return s.nread }
func (s *lineSrc) err() error  { return s.rerr }

func (s *lineSrc) next() ([]byte, *fline, *scanTab, bool) {
	b, err := s.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.long = append(s.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = s.br.ReadSlice('\n')
			s.long = append(s.long, b...)
		}
		b = s.long
	}
	if err != nil && err != io.EOF {
		s.rerr = err
		return nil, nil, nil, false
	}
	if len(b) == 0 {
		return nil, nil, nil, false
	}
	s.line++
	s.nread += int64(len(b))
	s.t.mops, s.t.elems = s.t.mops[:0], s.t.elems[:0]
	if s.l.scan(b, &s.t) {
		return b, &s.l, &s.t, true
	}
	return b, nil, nil, true
}

// feeder hands the general reader the rest of the current line, then
// further lines one Read at a time, so the reader never reads past the
// line on which the value it reads ends.
type feeder struct {
	src     source
	pending []byte
}

func (f *feeder) Read(p []byte) (int, error) {
	if len(f.pending) == 0 {
		b, _, _, ok := f.src.next()
		if !ok {
			if err := f.src.err(); err != nil {
				return 0, err
			}
			return 0, io.EOF
		}
		f.pending = b
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func blank(b []byte) bool {
	for _, c := range b {
		if !isWS(c) && c != '\n' {
			return false
		}
	}
	return true
}

// decodeStream is Feed for a stream of op maps read from src, with the
// fast path: the first value is read by the general reader (so the
// top-level vector form, comments and discards before it are read as Feed
// reads them); after a general read that consumed its last line
// completely, each line the fast path scanned is added directly, and a line
// it declined is handed back to the general reader.
func decodeStream(src source, b *Builder, file string, sizeHint int64) error {
	fd := &feeder{src: src}
	rd := edn.NewReader(fd)
	c, err := rd.Peek()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return synErr(err, file)
	}
	if c == '[' || c == '(' {
		return Feed(rd, b, file)
	}
	presized := false
	general := true // the general reader holds the position
	for {
		if general {
			v, err := rd.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return synErr(err, file)
			}
			if err := b.Add(v, int(v.Line)); err != nil {
				return err
			}
			if !blank(rd.Buffered()) || !blank(fd.pending) {
				continue
			}
			fd.pending = nil
			general = false
		}
		line, l, t, ok := src.next()
		if !ok {
			return src.err()
		}
		if l != nil {
			if err := b.addFast(l, t, src.lineNo()); err != nil {
				return err
			}
		} else if !blank(line) {
			rd.Resync(src.lineNo())
			fd.pending = line
			general = true
		}
		if !presized && src.lineNo() >= 4096 && sizeHint > 2*src.read() {
			presized = true
			b.presize(float64(sizeHint) / float64(src.read()))
		}
	}
}

// presize grows the transaction table for an input about scale times the
// part read so far.
func (b *Builder) presize(scale float64) {
	h := b.H
	if want := int(float64(len(h.Txns))*scale*1.05) + 16; want > cap(h.Txns) {
		t := make([]history.Txn, len(h.Txns), want)
		copy(t, h.Txns)
		h.Txns = t
		if b.prefault {
			b.faulter.Stop()
			b.faulter = history.PrefaultTxns(t)
		}
		b.lines = append(make([]int32, 0, want), b.lines...)
		if !b.anyTime {
			b.posInv = append(make([]int64, 0, want), b.posInv...)
			b.posCom = append(make([]int64, 0, want), b.posCom...)
		}
		// about one new value per op written, as many as so far per txn
		if n := len(h.Txns); n > 0 {
			h.Values.Grow(int(float64(h.Values.Len()) * (scale - 1) * 1.05))
		}
	}
}

// Parallel scanning. A reader goroutine cuts the input into chunks of
// whole lines; worker goroutines split each chunk into lines and scan them;
// the decoding goroutine takes the chunks in input order (chunkSrc) and
// interns and pairs (Builder), which must be sequential. Lines a worker
// could not scan go to the general reader exactly as in the sequential
// decode, so the result is the same.

// parallelMin is the input size from which Decode scans in parallel, and
// chunkSize the target chunk size.
// parallelProcs is the number of Ps from which it does.
var (
	parallelMin   int64 = 8 << 20
	chunkSize           = 1 << 20
	parallelProcs       = 2
)

type echunk struct {
	buf   []byte
	idBuf []byte
	fl    []fline // one per line (fline.line), fline.ok if scanned
	tab   scanTab
	done  chan struct{}
}

func (c *echunk) scan() {
	buf := c.buf
	c.fl = c.fl[:0]
	c.tab.mops, c.tab.elems = c.tab.mops[:0], c.tab.elems[:0]
	ids := c.idBuf[:0]
	// Each line is scanned right after its end is found, while it is in
	// the cache.
	for len(buf) > 0 {
		var l []byte
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			l, buf = buf[:i+1], buf[i+1:]
		} else {
			l, buf = buf, nil
		}
		if len(c.fl) == cap(c.fl) {
			c.fl = append(c.fl, fline{})
		} else {
			c.fl = c.fl[:len(c.fl)+1]
		}
		fl := &c.fl[len(c.fl)-1]
		fl.ok = fl.scan(l, &c.tab)
		if fl.ok && fl.hasIdx && fl.typ != Invoke {
			// The scanner takes integers only in strconv.FormatInt's form
			// (no sign but '-', no leading zeros, no -0), so the text is
			// the ID emit would format.
			fl.idOff, fl.idN = int32(len(ids)), fl.ixN
			ids = append(ids, l[fl.ixOff:fl.ixOff+fl.ixN]...)
		}
	}
	c.idBuf = ids
	c.tab.ids = string(ids)
}

// chunkSrc is the parallel source.
type chunkSrc struct {
	order   chan *echunk
	free    chan *echunk // chunks the decoder is done with, for reuse
	readErr chan error
	stop    chan struct{}
	// m, when set, is the mapped input the chunks are cut from in place;
	// wg counts the reader and the workers, which must be done with m
	// before Decode returns (history.MappedInput).
	m  *history.MappedInput
	wg sync.WaitGroup
	// most lines, micro-ops and list elements a chunk has held so far:
	// new chunks' tables are made that big at once (newChunk).
	maxFl, maxMops, maxElems atomic.Int64
	// firstDone is the done channel of the first chunk while its scan has
	// not been waited for (newChunk; only the reader goroutine uses it).
	firstDone chan struct{}
	made      bool // a chunk was made (newChunk)
	c         *echunk
	i         int
	line      int
	nread     int64
	rerr      error
	ended     bool
}

func (s *chunkSrc) lineNo() int { return s.line }
func (s *chunkSrc) read() int64 { return s.nread }
func (s *chunkSrc) err() error  { return s.rerr }

func (s *chunkSrc) next() ([]byte, *fline, *scanTab, bool) {
	for s.c == nil || s.i >= len(s.c.fl) {
		if s.ended {
			return nil, nil, nil, false
		}
		if s.c != nil {
			// Nothing refers to the chunk any more: every line of it was
			// returned and used (the feeder asks for a line only once
			// it has handed on the previous one; strings are copied
			// when interned).
			if s.m != nil {
				s.m.Drop(s.c.buf)
				s.c.buf = nil
			}
			select {
			case s.free <- s.c:
			default:
			}
			s.c = nil
		}
		c, ok := <-s.order
		if !ok {
			s.ended = true
			select {
			case err := <-s.readErr:
				s.rerr = err
			default:
			}
			return nil, nil, nil, false
		}
		<-c.done
		s.c, s.i = c, 0
	}
	l := &s.c.fl[s.i]
	s.i++
	s.line++
	s.nread += int64(len(l.line))
	if l.ok {
		return l.line, l, &s.c.tab, true
	}
	return l.line, nil, nil, true
}

// startChunks starts the reader and nw scanning workers on r.
func startChunks(r io.Reader, nw int) *chunkSrc {
	s := &chunkSrc{order: make(chan *echunk, 2*nw), free: make(chan *echunk, 3*nw+2), readErr: make(chan error, 1), stop: make(chan struct{})}
	work := make(chan *echunk, nw)
	s.wg.Add(nw + 1)
	for range nw {
		go func() {
			defer s.wg.Done()
			for c := range work {
				c.scan()
				s.noteSizes(c)
				close(c.done)
			}
		}()
	}
	if m, ok := r.(*history.MappedInput); ok {
		s.m = m
		go func() {
			defer s.wg.Done()
			s.cutMapped(work)
		}()
		return s
	}
	go func() {
		defer s.wg.Done()
		defer close(s.order)
		defer close(work)
		var carry []byte // a partial last line, carried to the next chunk
		var c *echunk    // the chunk to fill; one left unsent is filled again
		for {
			if c == nil {
				c = s.nextChunk()
			}
			want := max(chunkSize, 2*len(carry))
			if cap(c.buf) < want+len(carry) {
				// Room for a longer carry than this one: a buffer sized
				// to the exact carry was too small for the next chunk's
				// carry about every other time, and each reallocation is
				// a fresh MiB to fault in (28 buffers for 6 chunks on a
				// 383 MB file).
				c.buf = make([]byte, 0, want+len(carry)+chunkSize/8)
			}
			buf := append(c.buf[:0], carry...)
			n, err := io.ReadFull(r, buf[len(buf):len(buf)+want])
			buf = buf[:len(buf)+n]
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			if err != nil && err != io.EOF {
				// as the sequential source: lines after the last
				// complete one are not returned, the error is
				if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
					buf = buf[:i+1]
				} else {
					buf = buf[:0]
				}
				carry = nil
			} else if err == nil {
				i := bytes.LastIndexByte(buf, '\n')
				// keep a partial last line for the next chunk (a chunk
				// without a line end grows until one comes)
				carry = append(carry[:0], buf[i+1:]...)
				buf = buf[:i+1]
			} else {
				carry = nil
			}
			c.buf = buf
			if len(buf) > 0 {
				if !s.send(work, c) {
					return
				}
				c = nil
			}
			if err != nil {
				if err != io.EOF {
					s.readErr <- err
				}
				return
			}
		}
	}()
	return s
}

// send hands c to the sequential stage (order, first) and to a worker;
// false when the decode was stopped.
func (s *chunkSrc) send(work chan<- *echunk, c *echunk) bool {
	select {
	case s.order <- c:
	case <-s.stop:
		return false
	}
	select {
	case work <- c:
	case <-s.stop:
		return false
	}
	return true
}

// cutMapped is the reader of a mapped input: it cuts chunks of whole lines
// (about chunkSize bytes; a longer line makes a longer chunk) in place.
func (s *chunkSrc) cutMapped(work chan<- *echunk) {
	defer close(s.order)
	defer close(work)
	for {
		rem := s.m.Bytes()
		if len(rem) == 0 {
			return
		}
		n := len(rem)
		if n > chunkSize {
			if i := bytes.LastIndexByte(rem[:chunkSize], '\n'); i >= 0 {
				n = i + 1
			} else if i := bytes.IndexByte(rem[chunkSize:], '\n'); i >= 0 {
				n = chunkSize + i + 1
			}
		}
		c := s.nextChunk()
		c.buf = rem[:n:n] // read-only: never appended to
		s.m.Advance(n)
		if !s.send(work, c) {
			return
		}
	}
}

// close stops the reader and the workers; with a mapped input it waits
// until they are done with it.
func (s *chunkSrc) close() {
	close(s.stop)
	if s.m != nil {
		s.wg.Wait()
	}
}

// nextChunk returns a chunk to fill (the reader's): a recycled one, else a
// new one. Only the first chunk is made before any table size is known:
// making the second waits for the first one's scan. (Before, the reader
// made the pipeline's 6 chunks at once, each growing its tables by append
// from nothing: about 60 MB of fresh memory in doubling steps, 0.15–0.2
// CPU-s of page faults when the VM's memory is cold.)
func (s *chunkSrc) nextChunk() *echunk {
	var c *echunk
	select {
	case c = <-s.free:
	default:
		if s.firstDone != nil && s.maxFl.Load() == 0 {
			<-s.firstDone
		}
		s.firstDone = nil
		c = s.newChunk()
	}
	c.done = make(chan struct{})
	if !s.made {
		s.made, s.firstDone = true, c.done
	}
	return c
}

// newChunk returns a chunk whose tables have room for 5/4 of the most
// lines, micro-ops and list elements a chunk has held so far, faulted in
// at once (internal/mem): grown by appends, the tables of the first
// chunks cost a page fault per fresh page and copies.
func (s *chunkSrc) newChunk() *echunk {
	c := &echunk{}
	if n := int(s.maxFl.Load()); n > 0 {
		c.fl = mem.Make[fline](n+n/4, 0)[:0]
		c.tab.mops = mem.Make[fmop](int(s.maxMops.Load())*5/4, 0)[:0]
		c.tab.elems = mem.Make[scal](int(s.maxElems.Load())*5/4, 0)[:0]
	}
	return c
}

// noteSizes records the sizes of chunk c's tables (newChunk).
func (s *chunkSrc) noteSizes(c *echunk) {
	for _, x := range []struct {
		m *atomic.Int64
		n int
	}{{&s.maxFl, len(c.fl)}, {&s.maxMops, len(c.tab.mops)}, {&s.maxElems, len(c.tab.elems)}} {
		for {
			old := x.m.Load()
			if int64(x.n) <= old || x.m.CompareAndSwap(old, int64(x.n)) {
				break
			}
		}
	}
}
