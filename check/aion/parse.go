package aion

import (
	"fmt"
	"io"
	"math"
	"slices"
	"unsafe"

	"github.com/txray/txray/history"
	"github.com/txray/txray/history/timekiller"
)

// Reader decodes native txray transaction records (docs/history-format.md:
// one JSON object per transaction with id, session, status, start_ts,
// commit_ts and ops [{f,k,v}]) from a stream of JSON values: JSON Lines, or
// JSON arrays of such objects (as an HTTP POST body may be). Header lines
// ({"txray":1,...}) and non-transaction records are skipped and counted.
// The ops of an aborted transaction are decoded and validated but not kept
// (Txn.Ops is nil): Checker.Add only counts aborted transactions.
type Reader struct {
	lx      *timekiller.Lexer
	c       *Checker
	name    string
	depth   int // inside a top-level array
	Skipped int
	// LineOffset is added to line numbers in errors (for input fed in chunks).
	LineOffset int
	// Keys are not interned here: each op keeps its raw key (Op.raw) and
	// Checker.Add interns it, so a Reader holds no key ids (the checker
	// may forget a key and recycle its id, see keys.go) and may run in a
	// different goroutine from the checker. skeys shares string keys'
	// strings between transactions (cleared when full).
	skeys map[string]string
	// opBuf: the ops of the transaction being decoded (in opArena, see
	// keepOps)
	opBuf []Op
	// opArena: the free rest of the chunk ops are decoded into
	opArena []Op
	// sessions shares session name strings
	sessions map[string]string
	// rc, when set, supplies recycled transactions (free) and op slabs
	// (slab: the one opArena lies in, and how many transactions kept
	// ops in it), see Recycler
	rc    *Recycler
	free  []*Txn
	slab  *opSlab
	nslab int64
	// fresh: transactions to allocate before asking rc again (it had
	// none)
	fresh int
}

// Recycle makes r decode into the transactions and op slabs rc recycles
// (see Recycler; the checker r's transactions go to must have the same
// Recycler). The caller then owns each transaction r returns only until
// it passes it to that checker's AddAll.
func (r *Reader) Recycle(rc *Recycler) { r.rc = rc }

// newTxn returns a transaction to decode into: a recycled one if there
// is one, else a new one.
func (r *Reader) newTxn() *Txn {
	if r.rc != nil {
		if len(r.free) == 0 && r.fresh > 0 {
			r.fresh--
		} else if len(r.free) == 0 {
			if r.free = r.rc.take(r.free); len(r.free) == 0 {
				r.fresh = takeBatch / 4
			}
		}
		if n := len(r.free); n > 0 {
			t := r.free[n-1]
			r.free[n-1] = nil
			r.free = r.free[:n-1]
			ks, ki := t.keyStrs[:0], t.keyInts[:0]
			*t = Txn{Status: history.Committed, keyStrs: ks, keyInts: ki}
			return t
		}
	}
	return &Txn{Status: history.Committed}
}

// newArena makes opArena a fresh chunk: a recycled slab if there is one.
// The slab it leaves is recycled once the transactions with ops in it are.
func (r *Reader) newArena() {
	if r.rc == nil {
		r.opArena = make([]Op, opChunk)
		return
	}
	if s := r.slab; s != nil {
		// drop the Reader's own reference (slabBias), counting the
		// transactions that kept ops in it
		if s.live.Add(r.nslab-slabBias) == 0 {
			r.rc.mu.Lock()
			r.rc.freeSlab(s)
			r.rc.mu.Unlock()
		}
	}
	s := r.rc.slab()
	if s == nil {
		s = &opSlab{ops: make([]Op, r.rc.chunkOps())}
	}
	s.live.Store(slabBias)
	r.slab, r.nslab = s, 0
	r.opArena = s.ops
}

// NewBytesReader returns a reader over b (which must not change meanwhile).
func NewBytesReader(b []byte, c *Checker, name string) *Reader {
	return &Reader{lx: timekiller.NewLexerBytes(b), c: c, name: name}
}

// Reset makes r read b next (keeping its key caches), with line numbers
// counted from lineOffset+1.
func (r *Reader) Reset(b []byte, lineOffset int) {
	r.lx = timekiller.NewLexerBytes(b)
	r.LineOffset = lineOffset
	r.depth = 0
}

// NewReader returns a reader interning keys and strings in c.
func NewReader(r io.Reader, c *Checker, name string) *Reader {
	return &Reader{lx: timekiller.NewLexer(r), c: c, name: name}
}

func (r *Reader) errf(field, f string, a ...any) error {
	return history.Errorf(r.name, r.LineOffset+r.lx.Line(), field, f, a...)
}

func (r *Reader) wrap(field string, err error) error {
	if err == nil {
		return nil
	}
	if ie, ok := err.(*history.InputError); ok {
		return ie
	}
	if r.lx.Err() != nil {
		return fmt.Errorf("%s: read error: %w", r.name, r.lx.Err())
	}
	return r.errf(field, "%v", err)
}

// Next returns the next transaction, or io.EOF at the end of input.
func (r *Reader) Next() (*Txn, error) {
	lx := r.lx
	for {
		c, ok := lx.Peek()
		if !ok {
			if lx.Err() != nil {
				return nil, r.wrap("", lx.Err())
			}
			if r.depth > 0 {
				return nil, r.errf("", "unexpected end of input inside an array")
			}
			return nil, io.EOF
		}
		switch {
		case c == '[' && r.depth == 0:
			lx.Next()
			r.depth = 1
			if c2, ok := lx.Peek(); ok && c2 == ']' {
				lx.Next()
				r.depth = 0
			}
			continue
		case r.depth > 0 && c == ',':
			lx.Next()
			continue
		case r.depth > 0 && c == ']':
			lx.Next()
			r.depth = 0
			continue
		case c != '{':
			return nil, r.errf("", "unexpected %q, want a transaction object", c)
		}
		if r.fastSkip() {
			r.Skipped++
			continue
		}
		t, skip, err := r.object()
		if err != nil {
			return nil, err
		}
		if skip {
			r.Skipped++
			continue
		}
		return t, nil
	}
}

func (r *Reader) object() (*Txn, bool, error) {
	lx := r.lx
	lx.Next()
	t := r.newTxn()
	skip, sawOps, sawStatus := false, false, false
	for first := true; ; first = false {
		// The member name: as txray writes it (fastName), else through
		// the lexer. Each value below likewise has a fast path for the
		// shape txray writes that consumes nothing when the input has
		// another shape, and the general path decodes it; both give the
		// same result (FuzzFastRecord).
		nb, ok := r.fastName(first)
		if !ok {
			more, err := lx.More('}', first)
			if err != nil {
				return nil, false, r.wrap("", err)
			}
			if !more {
				break
			}
			if nb, err = lx.Field(); err != nil {
				return nil, false, r.wrap("", err)
			}
		}
		name := fieldName(nb)
		var err error
		switch name {
		case "txray":
			skip = true
			err = lx.Skip()
		case "type":
			var s []byte
			if s, err = lx.String(); err == nil && string(s) != "txn" {
				skip = true
			}
		case "id":
			if s, ok := r.fastStr(); ok {
				t.ID = string(s)
			} else {
				t.ID, err = r.text()
			}
		case "session":
			if s, ok := r.fastStr(); ok {
				t.Session = r.sessionName(s)
			} else if c, _ := lx.Peek(); c == 'n' {
				_, err = lx.Literal()
			} else {
				t.Session, err = r.session()
			}
		case "status":
			if st, ok := r.fastStatus(); ok {
				t.Status, sawStatus = st, true
				break
			}
			var s []byte
			if s, err = lx.String(); err == nil {
				t.Status, err = history.ParseStatus(string(s))
				sawStatus = true
			}
		case "start_ts":
			if p, ok := r.fastMemberInt(); ok {
				t.StartTS = history.Timestamp{P: p, Set: true}
			} else {
				t.StartTS, err = r.ts()
			}
		case "commit_ts":
			if p, ok := r.fastMemberInt(); ok {
				t.CommitTS = history.Timestamp{P: p, Set: true}
			} else {
				t.CommitTS, err = r.ts()
			}
		case "ops":
			sawOps = true
			err = r.ops(t)
		default:
			if !r.fastSkipInt() {
				err = lx.Skip()
			}
		}
		if err != nil {
			return nil, false, r.wrap(name, err)
		}
	}
	if skip {
		if r.rc != nil {
			r.free = append(r.free, t) // not returned: decode the next one into it
		}
		return nil, true, nil
	}
	if !sawOps {
		return nil, false, r.errf("ops", "missing (a transaction needs an \"ops\" array)")
	}
	if !sawStatus {
		return nil, false, r.errf("status", "missing (committed, aborted or unknown)")
	}
	if t.Status != history.Aborted {
		t.Ops = r.keepOps(t, r.opBuf)
	} else {
		t.keyStrs, t.keyInts = nil, nil
	}
	return t, false, nil
}

// opChunk is how many ops a chunk of opArena holds.
const opChunk = 8192

// keepOps keeps the ops just decoded (ops): they were decoded straight
// into the free rest of a chunk shared by consecutive transactions (one
// allocation per opChunk ops instead of one per transaction, and no copy;
// Op holds no pointers, so the chunks cost the garbage collector nothing
// to scan), which now moves past them. A transaction with more ops than
// the chunk had left grew its own array, kept as it is. The ops of a
// transaction that is not kept (aborted, or a decoding error) are
// overwritten by the next one. A chunk lives as long as any transaction in
// it: about --final-after of arrivals, as the transactions do (or, with a
// Recycler, until they are all released and the chunk is reused).
func (r *Reader) keepOps(t *Txn, ops []Op) []Op {
	n := len(ops)
	if cap(ops) == 0 || unsafe.SliceData(ops) != unsafe.SliceData(r.opArena) {
		return slices.Clip(ops)
	}
	r.opArena = r.opArena[n:]
	if r.slab != nil {
		t.slab = r.slab
		r.nslab++
	}
	return ops[:n:n]
}

// session reads a session name, sharing one string per distinct name (a
// stream has few sessions and many transactions).
func (r *Reader) session() (string, error) {
	b, err := r.rawText()
	if err != nil {
		return "", err
	}
	return r.sessionName(b), nil
}

// sessionName returns the shared string of session name b.
func (r *Reader) sessionName(b []byte) string {
	if s, ok := r.sessions[string(b)]; ok {
		return s
	}
	s := string(b)
	if r.sessions == nil {
		r.sessions = map[string]string{}
	}
	if len(r.sessions) < 1<<16 {
		r.sessions[s] = s
	}
	return s
}

func (r *Reader) text() (string, error) {
	b, err := r.rawText()
	return string(b), err
}

// rawText reads a string or a number as its raw bytes (valid until the next
// read).
func (r *Reader) rawText() ([]byte, error) {
	if c, _ := r.lx.Peek(); c == '"' {
		return r.lx.String()
	}
	return r.lx.Number()
}

func (r *Reader) ts() (history.Timestamp, error) {
	lx := r.lx
	c, ok := lx.Peek()
	if !ok {
		return history.Timestamp{}, fmt.Errorf("unexpected end of input")
	}
	if c == 'n' {
		_, err := lx.Literal()
		return history.Timestamp{}, err
	}
	if c != '{' {
		p, err := lx.Int64()
		return history.Timestamp{P: p, Set: true}, err
	}
	lx.Next()
	ts := history.Timestamp{Set: true}
	for first := true; ; first = false {
		more, err := lx.More('}', first)
		if err != nil || !more {
			return ts, err
		}
		nb, err := lx.String()
		if err != nil {
			return ts, err
		}
		n := string(nb)
		if err := lx.Expect(':'); err != nil {
			return ts, err
		}
		switch n {
		case "p":
			ts.P, err = lx.Int64()
		case "l":
			ts.L, err = lx.Int64()
		default:
			err = lx.Skip()
		}
		if err != nil {
			return ts, err
		}
	}
}

func (r *Reader) val() (Val, error) {
	lx := r.lx
	c, ok := lx.Peek()
	if !ok {
		return Val{}, fmt.Errorf("unexpected end of input")
	}
	switch c {
	case 'n':
		_, err := lx.Literal()
		return Val{}, err
	case '"':
		b, err := lx.String()
		if err != nil {
			return Val{}, err
		}
		return Val{N: r.c.internStr(b), K: 2}, nil
	}
	n, err := lx.Int64()
	return Val{N: n, K: 1}, err
}

func (r *Reader) ops(t *Txn) error {
	lx := r.lx
	if err := lx.Expect('['); err != nil {
		return err
	}
	// Ops are decoded into the free rest of the current chunk; object
	// keeps them (keepOps) once the status is known, or not if the
	// transaction aborted (the checker never looks at an aborted
	// transaction's ops).
	if len(r.opArena) < opChunk/8 && (r.rc == nil || len(r.opArena) < max(1, r.rc.chunkOps()/8)) {
		r.newArena()
	}
	ops := r.opArena[:0]
	defer func() { r.opBuf = ops }()
	for first := true; ; first = false {
		more, err := lx.More(']', first)
		if err != nil || !more {
			return err
		}
		if o, ok := r.fastOp(t); ok {
			ops = append(ops, o)
			continue
		}
		if err := lx.Expect('{'); err != nil {
			return err
		}
		o := Op{Key: -1}
		kindOK := false
		for f2 := true; ; f2 = false {
			more, err := lx.More('}', f2)
			if err != nil {
				return err
			}
			if !more {
				break
			}
			nb, err := lx.Field()
			if err != nil {
				return err
			}
			var which byte
			if len(nb) == 1 {
				which = nb[0]
			}
			switch which {
			case 'f':
				s, err := lx.String()
				if err != nil {
					return err
				}
				if len(s) == 1 && s[0] == 'r' {
					o.Kind, kindOK = history.Read, true
				} else if len(s) == 1 && s[0] == 'w' {
					o.Kind, kindOK = history.Write, true
				} else if o.Kind, kindOK = history.ParseKind(string(s)); !kindOK {
					return fmt.Errorf("ops[%d].f: unsupported micro-op %q", len(ops), s)
				}
			case 'k':
				c, _ := lx.Peek()
				if c == '"' {
					b, err := lx.String()
					if err != nil {
						return err
					}
					ks, ok := r.skeys[string(b)]
					if !ok {
						ks = string(b)
						if r.skeys == nil || len(r.skeys) >= 1<<12 {
							r.skeys = map[string]string{}
						}
						r.skeys[ks] = ks
					}
					o.raw, o.Key = rawStr, int32(len(t.keyStrs))
					t.keyStrs = append(t.keyStrs, ks)
				} else {
					n, err := lx.Int64()
					if err != nil {
						return fmt.Errorf("ops[%d].k: %v", len(ops), err)
					}
					setIntKey(t, &o, n)
				}
			case 'v':
				if c, _ := lx.Peek(); c == '[' {
					o.List = true
					if err := lx.Skip(); err != nil {
						return err
					}
				} else if o.V, err = r.val(); err != nil {
					return fmt.Errorf("ops[%d].v: %v", len(ops), err)
				}
			default:
				if err := lx.Skip(); err != nil {
					return err
				}
			}
		}
		if !kindOK {
			return fmt.Errorf("ops[%d].f: missing", len(ops))
		}
		if o.raw == rawNone && o.Kind != history.PredRead {
			return fmt.Errorf("ops[%d].k: missing", len(ops))
		}
		if o.Kind == history.Append {
			o.List = true
		}
		if o.Kind != history.Read && o.Kind != history.Write && o.Kind != history.Append {
			o.List = true // predicate reads / increments / deletes: not checked online
		}
		ops = append(ops, o)
	}
}

// fieldName maps a member name to a constant string (no allocation for the
// names a transaction record uses).
func fieldName(b []byte) string {
	switch string(b) {
	case "txray":
		return "txray"
	case "type":
		return "type"
	case "id":
		return "id"
	case "session":
		return "session"
	case "status":
		return "status"
	case "start_ts":
		return "start_ts"
	case "commit_ts":
		return "commit_ts"
	case "ops":
		return "ops"
	case "seq":
		return "seq"
	case "invoke":
		return "invoke"
	case "complete":
		return "complete"
	}
	return string(b)
}

// fastOpOff disables fastOp (differential tests).
var fastOpOff bool

// fastOp decodes, straight from the lexer's buffer, an op written the way
// txray writes register ops: {"f":"r"|"w","k":INT,"v":INT|null} in that
// order, optionally followed by more members whose names have at least two
// plain characters and whose values are plain integers (invoke, complete),
// with no white space and integers of at most 18 digits. For anything else
// it consumes nothing and reports false, and the general path decodes the
// op; both give the same Op.
func (r *Reader) fastOp(t *Txn) (Op, bool) {
	if fastOpOff {
		return Op{}, false
	}
	b := r.lx.Window()
	const head = `{"f":"`
	if len(b) < 13 || string(b[:len(head)]) != head || b[7] != '"' {
		return Op{}, false
	}
	var o Op
	switch b[6] {
	case 'r':
		o.Kind = history.Read
	case 'w':
		o.Kind = history.Write
	default:
		return Op{}, false
	}
	if string(b[8:13]) != `,"k":` {
		return Op{}, false
	}
	k, i, ok := timekiller.FastInt(b, 13)
	if !ok || i+5 >= len(b) || string(b[i:i+5]) != `,"v":` {
		return Op{}, false
	}
	i += 5
	if b[i] == 'n' {
		if i+4 > len(b) || string(b[i:i+4]) != "null" {
			return Op{}, false
		}
		i += 4
	} else {
		var v int64
		if v, i, ok = timekiller.FastInt(b, i); !ok {
			return Op{}, false
		}
		o.V = Val{N: v, K: 1}
	}
	// further members: ,"name":INT
	for {
		if i >= len(b) {
			return Op{}, false
		}
		if b[i] == '}' {
			i++
			break
		}
		if b[i] != ',' || i+1 >= len(b) || b[i+1] != '"' {
			return Op{}, false
		}
		j := i + 2
		for j < len(b) && b[j] != '"' && b[j] != '\\' && b[j] >= 0x20 {
			j++
		}
		if j-(i+2) < 2 || j+1 >= len(b) || b[j] != '"' || b[j+1] != ':' {
			return Op{}, false
		}
		if j, ok = skipInt(b, j+2); !ok {
			return Op{}, false
		}
		i = j
	}
	setIntKey(t, &o, k)
	r.lx.Consume(i, 0)
	return o, true
}

// setIntKey leaves integer key n in o, raw (see Op.raw).
func setIntKey(t *Txn, o *Op, n int64) {
	if n >= 0 && n <= math.MaxInt32 {
		o.raw, o.Key = rawInt, int32(n)
		return
	}
	o.raw, o.Key = rawBig, int32(len(t.keyInts))
	t.keyInts = append(t.keyInts, n)
}

// skipInt accepts exactly what timekiller.FastInt accepts at b[i:] (an
// optional minus, 1 to 18 digits, then a byte that is not a digit) without
// computing the value, and returns the index after the digits.
func skipInt(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	j := i
	for j < len(b) && j-i < 18 && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == i || j >= len(b) || (b[j] >= '0' && b[j] <= '9') {
		return 0, false
	}
	return j, true
}

// fastRecOff disables the record fast paths (fastName, fastStr,
// fastStatus, fastMemberInt, fastSkipInt, fastSkip; differential tests).
var fastRecOff bool

// The record fast paths below decode, straight from the lexer's buffer,
// the parts of a record written the way txray writes them (no white
// space, plain strings without escapes, integers of at most 18 digits
// followed by ',' or '}'). For anything else they consume nothing and
// report false, and the general path decodes the input; both give the
// same result, error and line number (FuzzFastRecord).

// fastName reads a member name and its colon (after a comma unless first):
// ,"name": or "name":.
func (r *Reader) fastName(first bool) ([]byte, bool) {
	if fastRecOff {
		return nil, false
	}
	b := r.lx.Window()
	i := 0
	if !first {
		if len(b) == 0 || b[0] != ',' {
			return nil, false
		}
		i = 1
	}
	j, ok := plainStr(b, i)
	if !ok || j >= len(b) || b[j] != ':' {
		return nil, false
	}
	r.lx.Consume(j+1, 0)
	return b[i+1 : j-1], true
}

// plainStr reads, from b at i, a string of plain bytes (no escape, no
// control character) with its quotes, and returns the index after it.
func plainStr(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	j := i + 1
	for j < len(b) && b[j] != '"' {
		if b[j] == '\\' || b[j] < 0x20 {
			return 0, false
		}
		j++
	}
	if j >= len(b) {
		return 0, false
	}
	return j + 1, true
}

// fastStr reads a plain string value (its bytes alias the input).
func (r *Reader) fastStr() ([]byte, bool) {
	if fastRecOff {
		return nil, false
	}
	b := r.lx.Window()
	j, ok := plainStr(b, 0)
	if !ok {
		return nil, false
	}
	r.lx.Consume(j, 0)
	return b[1 : j-1], true
}

// fastStatus reads "committed", "aborted" or "unknown".
func (r *Reader) fastStatus() (history.Status, bool) {
	if fastRecOff {
		return 0, false
	}
	b := r.lx.Window()
	j, ok := plainStr(b, 0)
	if !ok {
		return 0, false
	}
	var st history.Status
	switch string(b[1 : j-1]) {
	case "committed":
		st = history.Committed
	case "aborted":
		st = history.Aborted
	case "unknown":
		st = history.Unknown
	default:
		return 0, false
	}
	r.lx.Consume(j, 0)
	return st, true
}

// fastMemberInt reads an integer member value followed by ',' or '}'.
func (r *Reader) fastMemberInt() (int64, bool) {
	if fastRecOff {
		return 0, false
	}
	b := r.lx.Window()
	n, j, ok := timekiller.FastInt(b, 0)
	if !ok || (b[j] != ',' && b[j] != '}') {
		return 0, false
	}
	r.lx.Consume(j, 0)
	return n, true
}

// fastSkipInt skips an integer member value followed by ',' or '}'.
func (r *Reader) fastSkipInt() bool {
	if fastRecOff {
		return false
	}
	b := r.lx.Window()
	j, ok := skipInt(b, 0)
	if !ok || (b[j] != ',' && b[j] != '}') {
		return false
	}
	r.lx.Consume(j, 0)
	return true
}

// recordMember reports whether a member of this name is decoded (and may
// be refused) even in a record that is skipped.
func recordMember(b []byte) bool {
	switch string(b) {
	case "type", "id", "session", "status", "start_ts", "commit_ts", "ops":
		return true
	}
	return false
}

// fastSkip skips a whole record that is not a transaction, written the
// way txray writes its version_order records: {"type":"X" with X not
// "txn", then members whose values are integers or arrays of integers
// ({"type":"version_order","k":N,"order":[N,...]}). The general path
// skips the same records; for anything else fastSkip consumes nothing.
func (r *Reader) fastSkip() bool {
	if fastRecOff {
		return false
	}
	b := r.lx.Window()
	const head = `{"type":`
	if len(b) < len(head) || string(b[:len(head)]) != head {
		return false
	}
	i, ok := plainStr(b, len(head))
	if !ok || string(b[len(head)+1:i-1]) == "txn" {
		return false
	}
	for {
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			r.lx.Consume(i+1, 0)
			return true
		}
		if b[i] != ',' {
			return false
		}
		j, ok := plainStr(b, i+1)
		if !ok || j >= len(b) || b[j] != ':' || recordMember(b[i+2:j-1]) {
			return false
		}
		i = j + 1
		if i < len(b) && b[i] == '[' {
			i++
			if i < len(b) && b[i] == ']' {
				i++
				continue
			}
			for {
				k, ok := skipInt(b, i)
				if !ok {
					return false
				}
				i = k + 1
				if b[k] == ']' {
					break
				}
				if b[k] != ',' {
					return false
				}
			}
			continue
		}
		k, ok := skipInt(b, i)
		if !ok || (b[k] != ',' && b[k] != '}') {
			return false
		}
		i = k
	}
}
