package jsonl

import (
	"strconv"
	"unicode/utf8"

	"github.com/txray/txray/history"
)

// fast is an allocation-lean parser for the common transaction line. It
// handles every well-formed transaction line whose timestamps are integers
// and whose ops are r/w/append/inc; anything else (headers, evidence records,
// predicate reads, HLC objects, malformed input) makes it bail out so the
// reference decoder (encoding/json) handles the line and, for bad input,
// produces the precise error. Both paths therefore accept the same language.
type fast struct {
	b   []byte
	i   int
	ops []history.Op // scratch for one line
	lst []int32      // scratch for one list
	// scratch for one line: list elements of its ops (Txn.Lists), per-op
	// times (Txn.SetOpTimes) and whether any op had a time.
	lists   []int32
	times   []history.OpTime
	anyTime bool
	// arenas: slices handed out to transactions are carved from these.
	opArena  []history.Op
	valArena []int32
	// lastList caches, per key id, the integers and ids of the key's last
	// list read (see op).
	lastList [][]listElem
	// raw (parallel workers only): integer list elements are not interned
	// but appended to rawInts and given the id rawID(index); the merge
	// interns them into the global table (see remapTxn). This spares the
	// workers a random-access interner lookup per element.
	raw     bool
	rawInts []int64
	// haveSeq reports whether the last parsed line had a "seq" field.
	haveSeq bool
	// off disables the fast path (differential tests).
	off bool
}

// rawID is the id of raw integer i (fast.raw): -2, -3, ... (NoValue is -1).
func rawID(i int) int32 { return int32(-2 - i) }

func (p *fast) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *fast) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *fast) eat(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

// str parses a JSON string; esc reports whether it held escapes (then s is
// the decoded text, freshly allocated).
func (p *fast) str() (s []byte, ok bool) {
	if !p.eat('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s = p.b[start:p.i]
			p.i++
			return s, true
		case c == '\\':
			// find the end, then unquote the whole literal
			j := p.i
			for j < len(p.b) {
				if p.b[j] == '\\' {
					j += 2
					continue
				}
				if p.b[j] == '"' {
					break
				}
				j++
			}
			if j >= len(p.b) {
				return nil, false
			}
			u, err := strconv.Unquote(string(p.b[start-1 : j+1]))
			if err != nil || !validJSONEscapes(p.b[start:j]) {
				return nil, false
			}
			p.i = j + 1
			return []byte(u), true
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && n == 1 {
				return nil, false
			}
			p.i += n
			continue
		}
		p.i++
	}
	return nil, false
}

// validJSONEscapes rejects Go-only escapes strconv.Unquote accepts (\x, \a,
// octal, \U) so both paths accept the same strings.
func validJSONEscapes(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if i+4 >= len(b) {
				return false
			}
			for _, h := range b[i+1 : i+5] {
				if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
					return false
				}
			}
			i += 4
		default:
			return false
		}
	}
	return true
}

// int parses a JSON integer (no fraction or exponent).
func (p *fast) int() (int64, bool) {
	p.ws()
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	d := p.i
	var n uint64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		if n > (1<<63)/10 {
			return 0, false
		}
		n = n*10 + uint64(p.b[p.i]-'0')
		p.i++
	}
	if p.i == d || (p.b[d] == '0' && p.i-d > 1) {
		return 0, false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	neg := p.b[start] == '-'
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}

func (p *fast) lit(s string) bool {
	p.ws()
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// skip skips any JSON value.
func (p *fast) skip(depth int) bool {
	if depth > 64 {
		return false
	}
	switch p.peek() {
	case '"':
		_, ok := p.str()
		return ok
	case '{':
		p.i++
		if p.eat('}') {
			return true
		}
		for {
			if _, ok := p.str(); !ok || !p.eat(':') || !p.skip(depth+1) {
				return false
			}
			if p.eat('}') {
				return true
			}
			if !p.eat(',') {
				return false
			}
		}
	case '[':
		p.i++
		if p.eat(']') {
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			if p.eat(']') {
				return true
			}
			if !p.eat(',') {
				return false
			}
		}
	case 't':
		return p.lit("true")
	case 'f':
		return p.lit("false")
	case 'n':
		return p.lit("null")
	default:
		p.ws()
		start := p.i
		for p.i < len(p.b) {
			c := p.b[p.i]
			if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
				p.i++
				continue
			}
			break
		}
		_, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
		return p.i > start && err == nil
	}
}

// scalar parses an integer or string and interns it.
func (p *fast) scalar(in *history.Interner) (int32, bool) {
	switch c := p.peek(); {
	case c == '"':
		s, ok := p.str()
		if !ok {
			return 0, false
		}
		return in.Str(string(s)), true
	case c == '-' || (c >= '0' && c <= '9'):
		n, ok := p.int()
		if !ok {
			return 0, false
		}
		return in.Int(n), true
	}
	return 0, false
}

// idString parses a string or integer as text (ids, session names).
func (p *fast) idString() (string, bool) {
	switch c := p.peek(); {
	case c == '"':
		s, ok := p.str()
		return string(s), ok
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		if _, ok := p.int(); !ok {
			return "", false
		}
		return string(p.b[start:p.i]), true
	}
	return "", false
}

func (p *fast) ts() (history.Timestamp, bool) {
	switch c := p.peek(); {
	case c == 'n':
		return history.Timestamp{}, p.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		n, ok := p.int()
		return history.Timestamp{P: n, Set: true}, ok
	}
	return history.Timestamp{}, false
}

// line parses one transaction line into t; false means "let the reference
// decoder handle it".
func (p *fast) line(b []byte, d *decoder, t *history.Txn) bool {
	if p.off {
		return false
	}
	p.b, p.i = b, 0
	p.ops = p.ops[:0]
	p.lists, p.times, p.anyTime = p.lists[:0], p.times[:0], false
	p.haveSeq = false
	if !p.eat('{') {
		return false
	}
	var (
		haveOps, haveStatus, haveSeq, haveInv, haveCom bool
		haveSession                                    bool
		seq                                            int64
		statusTxt                                      []byte
	)
	*t = history.Txn{Session: -1}
	if p.eat('}') {
		return false
	}
	for {
		key, ok := p.str()
		if !ok || !p.eat(':') {
			return false
		}
		switch string(key) {
		case "ops":
			if haveOps || !p.opsArray(d) {
				return false
			}
			haveOps = true
		case "id":
			if t.ID, ok = p.idString(); !ok {
				return false
			}
		case "session":
			// A repeated field goes to the reference decoder: interning
			// the first value would assign an id the parallel merge
			// never sees.
			if haveSession {
				return false
			}
			haveSession = true
			if p.peek() == 'n' {
				if !p.lit("null") {
					return false
				}
				t.Session = -1
				break
			}
			s, ok := p.idString()
			if !ok {
				return false
			}
			t.Session = d.h.Sessions.Str(s)
		case "seq":
			if seq, ok = p.int(); !ok {
				return false
			}
			haveSeq = true
			p.haveSeq = true
		case "status":
			if statusTxt, ok = p.str(); !ok {
				return false
			}
			haveStatus = true
		case "invoke":
			if t.Invoke, ok = p.int(); !ok {
				return false
			}
			haveInv = true
		case "complete":
			if t.Complete, ok = p.int(); !ok {
				return false
			}
			haveCom = true
		case "start_ts":
			if t.StartTS, ok = p.ts(); !ok {
				return false
			}
		case "commit_ts":
			if t.CommitTS, ok = p.ts(); !ok {
				return false
			}
		case "txray", "type", "k", "order":
			return false
		default:
			// Unknown fields go to the reference decoder, which matches
			// field names case-insensitively.
			return false
		}
		if p.eat('}') {
			break
		}
		if !p.eat(',') {
			return false
		}
	}
	if p.peek() != 0 || !haveOps || !haveStatus || haveInv != haveCom {
		return false
	}
	st, err := history.ParseStatus(string(statusTxt))
	if err != nil {
		return false
	}
	t.Status = st
	if haveInv {
		if t.Complete < t.Invoke {
			return false
		}
		t.HasTime = true
	}
	if t.StartTS.Set && t.CommitTS.Set && t.CommitTS.Less(t.StartTS) {
		return false // the slow path reports it
	}
	if t.HasTime && p.anyTime {
		for j := range p.ops {
			if p.ops[j].HasTime && (p.times[j].Invoke < t.Invoke || p.times[j].Complete > t.Complete) {
				return false // the slow path reports it
			}
		}
	}
	if t.Session >= 0 && haveSeq {
		t.Seq = int32(seq)
	}
	// carve ops from the arena
	n := len(p.ops)
	if cap(p.opArena)-len(p.opArena) < n {
		p.opArena = make([]history.Op, 0, max(n, 1<<14))
	}
	t.Ops = p.opArena[len(p.opArena) : len(p.opArena)+n : len(p.opArena)+n]
	p.opArena = p.opArena[:len(p.opArena)+n]
	copy(t.Ops, p.ops)
	if n := len(p.lists); n > 0 {
		if cap(p.valArena)-len(p.valArena) < n {
			p.valArena = make([]int32, 0, max(n, 1<<16))
		}
		t.Lists = p.valArena[len(p.valArena) : len(p.valArena)+n : len(p.valArena)+n]
		p.valArena = p.valArena[:len(p.valArena)+n]
		copy(t.Lists, p.lists)
	}
	if p.anyTime {
		t.SetOpTimes(append([]history.OpTime(nil), p.times...))
	}
	return true
}

func (p *fast) opsArray(d *decoder) bool {
	if !p.eat('[') {
		return false
	}
	if p.eat(']') {
		return true
	}
	for {
		if !p.op(d) {
			return false
		}
		if p.eat(']') {
			return true
		}
		if !p.eat(',') {
			return false
		}
	}
}

func (p *fast) op(d *decoder) bool {
	if !p.eat('{') {
		return false
	}
	o := history.Op{Value: history.NoValue}
	var tm history.OpTime
	var haveF, haveK, haveV, haveInv, haveCom bool
	var vKind byte // 0 absent/null, 's' scalar, 'l' list
	if p.eat('}') {
		return false
	}
	for {
		key, ok := p.str()
		if !ok || !p.eat(':') {
			return false
		}
		switch string(key) {
		case "f":
			f, ok := p.str()
			if !ok {
				return false
			}
			k, ok := history.ParseKind(string(f))
			if !ok || k == history.PredRead {
				return false
			}
			o.Kind, haveF = k, true
		case "k":
			if haveK { // repeated field: see "session" in line
				return false
			}
			if o.Key, ok = p.scalar(d.h.Keys); !ok {
				return false
			}
			haveK = true
		case "v":
			if haveV {
				return false
			}
			haveV = true
			switch p.peek() {
			case 'n':
				if !p.lit("null") {
					return false
				}
				vKind = 0
			case '[':
				p.i++
				p.lst = p.lst[:0]
				// Successive reads of one key repeat its earlier elements:
				// reuse the ids of the key's previous read where the
				// integers match, instead of a random-access interner
				// lookup per element.
				var cache *[]listElem
				if haveK && !p.raw {
					for int(o.Key) >= len(p.lastList) {
						p.lastList = append(p.lastList, nil)
					}
					cache = &p.lastList[o.Key]
				}
				if !p.eat(']') {
					for j := 0; ; j++ {
						var v int32
						if c := p.peek(); p.raw && (c == '-' || (c >= '0' && c <= '9')) {
							n, ok := p.int()
							if !ok {
								return false
							}
							v = rawID(len(p.rawInts))
							p.rawInts = append(p.rawInts, n)
						} else if cache != nil && (c == '-' || (c >= '0' && c <= '9')) {
							n, ok := p.int()
							if !ok {
								return false
							}
							if j < len(*cache) && (*cache)[j].v == n {
								v = (*cache)[j].id
							} else {
								v = d.h.Values.Int(n)
								if j <= len(*cache) {
									*cache = append((*cache)[:j], listElem{n, v})
								}
							}
						} else {
							if v, ok = p.scalar(d.h.Values); !ok {
								return false
							}
							if cache != nil && j < len(*cache) {
								*cache = (*cache)[:j]
							}
						}
						p.lst = append(p.lst, v)
						if p.eat(']') {
							break
						}
						if !p.eat(',') {
							return false
						}
					}
				}
				vKind = 'l'
				o.SetListSpan(len(p.lists), len(p.lst))
				p.lists = append(p.lists, p.lst...)
			default:
				if o.Value, ok = p.scalar(d.h.Values); !ok {
					return false
				}
				vKind = 's'
			}
		case "invoke":
			if tm.Invoke, ok = p.int(); !ok {
				return false
			}
			haveInv = true
		case "complete":
			if tm.Complete, ok = p.int(); !ok {
				return false
			}
			haveCom = true
		case "table", "where", "result":
			return false
		default:
			// Unknown fields go to the reference decoder, which matches
			// field names case-insensitively.
			return false
		}
		if p.eat('}') {
			break
		}
		if !p.eat(',') {
			return false
		}
	}
	if !haveF || !haveK {
		return false
	}
	switch vKind {
	case 0:
		if o.Kind != history.Read {
			return false
		}
		o.Value = history.NoValue
	case 'l':
		if o.Kind != history.Read {
			return false
		}
		o.IsList = true
		o.Value = history.NoValue
	}
	if haveInv != haveCom {
		return false // the slow path reports it
	}
	if haveInv && haveCom {
		if tm.Complete < tm.Invoke {
			return false // the slow path reports it
		}
		o.HasTime = true
		d.anyOT = true
		p.anyTime = true
	}
	p.ops = append(p.ops, o)
	p.times = append(p.times, tm)
	return true
}

// versionOrder parses a version-order record written in the canonical field
// order {"type":"version_order","k":K,"order":[...]}; false = bail out.
func (p *fast) versionOrder(b []byte, d *decoder, line int) bool {
	if p.off {
		return false
	}
	const prefix = `{"type":"version_order","k":`
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return false
	}
	p.b, p.i = b, len(prefix)
	k, ok := p.scalar(d.h.Keys)
	if !ok || !p.eat(',') {
		return false
	}
	if key, ok := p.str(); !ok || string(key) != "order" || !p.eat(':') || !p.eat('[') {
		return false
	}
	var ord []int32
	if !p.eat(']') {
		for {
			v, ok := p.scalar(d.h.Values)
			if !ok {
				return false
			}
			ord = append(ord, v)
			if p.eat(']') {
				break
			}
			if !p.eat(',') {
				return false
			}
		}
	}
	if !p.eat('}') || p.peek() != 0 {
		return false
	}
	if _, dup := d.voLine[k]; dup {
		return false // the slow path judges a second record of the key
	}
	if d.h.VersionOrder == nil {
		d.h.VersionOrder = map[int32][]int32{}
	}
	if d.voLine == nil {
		d.voLine = map[int32]int{}
	}
	d.voLine[k] = line
	d.h.VersionOrder[k] = ord
	d.h.Evidence.VersionOrder = true
	return true
}

// listElem is one cached list element: the integer and its value id.
type listElem struct {
	v  int64
	id int32
}
