// Package timekiller decodes and encodes the JSON history format of
// TimeKiller (github.com/FertileFragrance/TimeKiller), the reference
// implementation of the Chronos and Aion timestamp-based checkers (ICDE
// 2024). The format name is "chronos".
//
// A history is one JSON array of transactions, each
//
//	{"tid":T, "sid":S, "sts":{"p":P,"l":L}, "cts":{"p":P,"l":L},
//	 "ops":[{"t":"w"|"r"|"a", "k":K, "v":V}, ...]}
//
// listed in session order within each session. Timestamps are hybrid logical
// clock pairs ordered by (p, l); p and l may be JSON numbers or numeric
// strings, and a bare number is accepted as (p, 0). Keys and values are
// integers or strings. In the key-value model "w" writes V and "r" reads V;
// in the list model "a" appends V and "r" reads a list. A read whose v is null
// or absent read the initial value: in the key-value model it is decoded as
// history.NoValue (the checker's "initial-value" parameter says what the
// initial value is); in the list model (any "a" op, or a list-valued read, or
// DecodeOptions.Workload "list-append") as the empty list.
//
// Decode sets Header.Extra[CommitOrderKey] = "true": TimeKiller judges
// serializability by replaying commit timestamps, which assumes the database
// serializes in commit-timestamp order (TiDB-style timestamp ordering).
//
// Extensions written by Encode and accepted here: "status"
// ("committed"|"aborted"|"unknown", default committed), so encoding a
// history loses nothing; in the list model a null read inside an "unknown"
// transaction is a read whose result was never seen (ListUnknown), as
// Encode writes it, not a read of the empty list. Other unknown fields are skipped and counted in
// History.Ignored.
package timekiller

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"unsafe"

	"github.com/txray/txray/history"
	"github.com/txray/txray/internal/digits"
	"github.com/txray/txray/internal/mem"
)

// FormatName is the --format name.
const FormatName = "chronos"

// CommitOrderKey is the History.Header.Extra key Decode sets to "true": a
// TimeKiller history's commit-timestamp order is its serialization order
// (TimeKiller's serializability semantics; see Decode).
const CommitOrderKey = "commit-order-serializes"

func init() {
	history.RegisterFormat(history.Format{
		Name:   FormatName,
		Doc:    "TimeKiller / Chronos JSON (array of {tid,sid,sts,cts,ops}) with start/commit timestamps",
		Sniff:  Sniff,
		Decode: Decode,
		Mapped: true,
	})
}

// Sniff scores a prefix: a JSON array whose first object has "ops" and a
// "sts" or "cts" timestamp. elle-cli's JSON ("index","process","type",
// "value") scores 0.
func Sniff(prefix []byte) int {
	p := history.TrimBOMAndSpace(prefix)
	if len(p) < 2 || p[0] != '[' {
		return 0
	}
	p = history.TrimBOMAndSpace(p[1:])
	if len(p) == 0 || p[0] != '{' {
		return 0
	}
	// Look at the first object only (up to its "ops" array).
	first := p
	if len(first) > 4096 {
		first = first[:4096]
	}
	hasOps := bytes.Contains(first, []byte(`"ops"`))
	hasTS := bytes.Contains(first, []byte(`"sts"`)) || bytes.Contains(first, []byte(`"cts"`))
	elle := bytes.Contains(first, []byte(`"process"`)) || bytes.Contains(first, []byte(`"type"`))
	switch {
	case hasOps && hasTS && !elle:
		return 95
	case hasOps && hasTS:
		return 60
	case hasOps && (bytes.Contains(first, []byte(`"sid"`)) || bytes.Contains(first, []byte(`"tid"`))):
		return 50
	}
	return 0
}

type decoder struct {
	lx     *Lexer
	arena  []history.Op      // ops of decoded transactions are carved from here
	arenas *history.OpArenas // when set, arena comes from here
	// lists collects the list elements of the transaction being decoded
	// (Txn.Lists); valArena is where they are carved to.
	lists    []int32
	valArena []int32
	h        *history.History
	// raw, in a parallel worker, records value occurrences instead of
	// interning them (see rawVals); nil otherwise.
	raw   *rawVals
	ids   []byte // arena of transaction ids (idString)
	file  string
	seqs  []int32
	list  bool
	allTS bool
}

func (d *decoder) errf(field, f string, a ...any) error {
	return history.Errorf(d.file, d.lx.Line(), field, f, a...)
}

func (d *decoder) wrap(field string, err error) error {
	if err == nil {
		return nil
	}
	if ie, ok := err.(*history.InputError); ok {
		return ie
	}
	if d.lx.Err() != nil {
		return fmt.Errorf("%s: read error: %w", d.file, d.lx.Err())
	}
	return d.errf(field, "%v", err)
}

// Decode reads a TimeKiller JSON history, streaming: transactions are
// decoded one by one without building a JSON tree. Inputs of known size
// (opts.SizeHint) from 8 MiB up are decoded in parallel chunks when at least
// 2 CPUs are available (see parallel.go); the result, including every id and
// every error message, is the same as the sequential decode's. With the
// size hint, tables are presized.
//
// Repeated names: each known field (a transaction's tid, sid, sts, cts,
// status and ops; an op's t, k and v; a timestamp object's p and l) may
// appear at most once in its object, and a repeated one is an error naming
// its line and field ("[3].sts: repeated field ..."). JSON leaves the
// meaning of repeated names open, TimeKiller never writes them, and taking
// the last one would still intern the earlier one's keys, values and
// session, or leave an op both a list and a scalar read. Unknown fields
// are skipped (counted in History.Ignored) however often they appear. A
// transaction whose ops array is empty has nil Ops.
func Decode(r io.Reader, opts history.DecodeOptions) (*history.History, error) {
	d := &decoder{h: history.New(), file: opts.Name, allTS: true}
	if d.file == "" {
		d.file = "<input>"
	}
	d.list = opts.Workload == "list-append"
	h := d.h
	h.Header.Format = FormatName
	// TimeKiller's serializability check replays transactions in commit
	// timestamp order: its histories come from timestamp-ordered databases
	// (TiDB, and the TiDB-style simulator it ships with), whose commit order
	// is the serialization order. Record that so checkers (chronos) may
	// treat a failing commit-order replay as a violation.
	h.Header.Extra = map[string]string{CommitOrderKey: "true"}
	var err error
	if opts.SizeHint >= parallelMin && runtime.GOMAXPROCS(0) >= parallelProcs {
		err = d.parallel(r, opts.SizeHint)
	} else if opts.SizeHint >= parallelMin {
		// Big input, fewer than parallelProcs CPUs: decode sequentially,
		// but read ahead and fault the ops' memory in on another
		// goroutine (history.ReadAhead, history.OpArenas).
		ra, stop := r, func() {}
		if _, mapped := r.(*history.MappedInput); !mapped {
			// (a mapped input is in memory, and no goroutine may
			// read it after Decode returns)
			ra, stop = history.ReadAhead(r, 1<<20)
		}
		d.arenas = history.NewOpArenas(1 << 16)
		d.lx = NewLexer(ra)
		err = d.array(tokStart, opts.SizeHint)
		d.arenas.Stop()
		stop()
	} else {
		d.lx = NewLexer(r)
		err = d.array(tokStart, opts.SizeHint)
	}
	if err != nil {
		return nil, err
	}
	if d.list {
		h.Header.Workload = "list-append"
		for i := range h.Txns {
			for j := range h.Txns[i].Ops {
				o := &h.Txns[i].Ops[j]
				if o.Kind == history.Read && !o.IsList && o.Value == history.NoValue {
					// null read of a list = initial (empty) list, except in a
					// transaction of unknown outcome (the "status" extension),
					// where Encode writes the reads the client never saw as
					// null (Jepsen :info): those stay unknown.
					o.IsList = true
					o.ListUnknown = h.Txns[i].Status == history.Unknown
				}
			}
		}
	} else {
		h.Header.Workload = "rw-register"
	}
	h.Evidence.Sessions = len(d.seqs) > 0
	h.Evidence.Timestamps = len(h.Txns) > 0 && d.allTS
	return h, nil
}

// Positions in the top-level array, for resuming a decode between
// transactions (see parallel.go).
type tok uint8

const (
	tokNone  tok = iota
	tokStart     // before the opening '['
	tokOpen      // after '['
	tokElem      // after a transaction
	tokComma     // after a ',' between transactions
	tokClose     // after the closing ']'
)

// follows reports whether b may come right after a in the array grammar
// '[' (elem (',' elem)*)? ']'.
func follows(a, b tok) bool {
	switch a {
	case tokStart:
		return b == tokOpen
	case tokOpen:
		return b == tokElem || b == tokClose
	case tokElem:
		return b == tokComma || b == tokClose
	case tokComma:
		return b == tokElem
	}
	return false
}

// array decodes the top-level array from position st to the end of the
// input with d.lx. With sizeHint (the input's size in bytes), the
// transaction and value tables are presized after the first 1,000
// transactions.
func (d *decoder) array(st tok, sizeHint int64) error {
	h := d.h
	if st == tokStart {
		if err := d.lx.Expect('['); err != nil {
			return d.wrap("", err)
		}
		st = tokOpen
	}
	for st != tokClose {
		if st != tokComma {
			more, err := d.lx.More(']', st == tokOpen)
			if err != nil {
				return d.wrap(fmt.Sprintf("[%d]", len(h.Txns)), err)
			}
			if !more {
				break
			}
		}
		if err := d.txn(); err != nil {
			return err
		}
		st = tokElem
		if len(h.Txns) == 1000 && sizeHint > 0 {
			if off := d.lx.Offset(); off > 0 && sizeHint > 2*off {
				d.presize(float64(sizeHint)/float64(off), len(h.Txns), h.Keys.Len(), h.Values.Len())
			}
		}
	}
	if c, ok := d.lx.Peek(); ok {
		return d.errf("", "unexpected %q after the closing ']'", c)
	}
	if d.lx.Err() != nil {
		return d.wrap("", d.lx.Err())
	}
	return nil
}

// presize grows the transaction, key and value tables for an input about
// scale times the part that held txns transactions, keys keys and vals
// values, so they are not copied over and over while they grow (for a
// 1M-transaction history the copies of the value table alone cost seconds).
// Capacity never touched is not resident.
func (d *decoder) presize(scale float64, txns, keys, vals int) {
	h := d.h
	grow := func(n int) int { return int(float64(n)*scale*1.05) + 16 }
	if want := grow(txns); want > cap(h.Txns) {
		t := make([]history.Txn, len(h.Txns), want)
		copy(t, h.Txns)
		h.Txns = t
	}
	h.Keys.Grow(grow(keys) - h.Keys.Len())
	h.Values.Grow(grow(vals) - h.Values.Len())
}

func (d *decoder) txn() error {
	lx := d.lx
	idx := len(d.h.Txns)
	field := func(f string) string { return "[" + strconv.Itoa(idx) + "]." + f }
	if err := lx.Expect('{'); err != nil {
		return d.wrap(field(""), err)
	}
	t := history.Txn{Session: -1, Status: history.Committed}
	var ops []history.Op
	var seen uint8 // the known fields met so far, one bit each
	for first := true; ; first = false {
		more, err := lx.More('}', first)
		if err != nil {
			return d.wrap(field(""), err)
		}
		if !more {
			break
		}
		name, err := lx.Field()
		if err != nil {
			return d.wrap(field(""), err)
		}
		var nm string
		var bit uint8
		switch string(name) { // constants: no allocation
		case "tid":
			nm, bit = "tid", 1
		case "sid":
			nm, bit = "sid", 2
		case "sts":
			nm, bit = "sts", 4
		case "cts":
			nm, bit = "cts", 8
		case "ops":
			nm, bit = "ops", 16
		case "status":
			nm, bit = "status", 32
		default:
			nm = "other"
		}
		if seen&bit != 0 {
			return d.errf(field(nm), "repeated field (a transaction's fields may each appear once)")
		}
		seen |= bit
		switch nm {
		case "tid", "sid":
			// Fast path: a string without escapes, wholly in the buffer
			// (what String would return).
			if b, ok := lx.plainString(); ok {
				if nm == "tid" {
					t.ID = d.idString(b)
				} else {
					t.Session = d.h.Sessions.StrBytes(b)
				}
				continue
			}
			if c, _ := lx.Peek(); c == 'n' {
				if _, err := lx.Literal(); err != nil {
					return d.wrap(field(nm), err)
				}
				continue
			}
		}
		switch nm {
		case "tid":
			b, err := d.scalarBytes()
			if err != nil {
				return d.wrap(field("tid"), err)
			}
			t.ID = d.idString(b)
		case "sid":
			b, err := d.scalarBytes()
			if err != nil {
				return d.wrap(field("sid"), err)
			}
			t.Session = d.h.Sessions.StrBytes(b)
		case "sts":
			if t.StartTS, err = d.timestamp(); err != nil {
				return d.wrap(field("sts"), err)
			}
		case "cts":
			if t.CommitTS, err = d.timestamp(); err != nil {
				return d.wrap(field("cts"), err)
			}
		case "status":
			s, ok := lx.plainString()
			if !ok {
				if s, err = lx.String(); err != nil {
					return d.wrap(field("status"), err)
				}
			}
			switch string(s) { // the common names without allocating
			case "committed":
				t.Status = history.Committed
			case "aborted":
				t.Status = history.Aborted
			case "unknown":
				t.Status = history.Unknown
			default:
				if t.Status, err = history.ParseStatus(string(s)); err != nil {
					return d.wrap(field("status"), err)
				}
			}
		case "ops":
			if ops, err = d.ops(idx); err != nil {
				return err
			}
		default:
			other := string(name)
			if err := lx.Skip(); err != nil {
				return d.wrap(field(other), err)
			}
			d.h.Ignore("unknown transaction field", 1)
		}
	}
	if seen&16 == 0 {
		return d.errf(field("ops"), "missing (a transaction needs an \"ops\" array)")
	}
	if t.StartTS.Set && t.CommitTS.Set && t.CommitTS.Less(t.StartTS) {
		return d.errf(field("cts"), "commit timestamp %s is before start timestamp %s", t.CommitTS, t.StartTS)
	}
	if t.Status == history.Committed && (!t.StartTS.Set || !t.CommitTS.Set) {
		d.allTS = false
	}
	if t.Session >= 0 {
		for int(t.Session) >= len(d.seqs) {
			d.seqs = append(d.seqs, 0)
		}
		t.Seq = d.seqs[t.Session]
		d.seqs[t.Session]++
	}
	t.Ops = ops
	if n := len(d.lists); n > 0 {
		if cap(d.valArena)-len(d.valArena) < n {
			d.valArena = mem.Make[int32](max(n, 1<<16), 0)[:0]
		}
		t.Lists = d.valArena[len(d.valArena) : len(d.valArena)+n : len(d.valArena)+n]
		d.valArena = d.valArena[:len(d.valArena)+n]
		copy(t.Lists, d.lists)
	}
	d.h.Add(t)
	return nil
}

// idString returns b as a string carved from an arena of transaction ids
// (one allocation per 16 KiB of ids instead of one per transaction; the
// arena's bytes are never written again once carved).
func (d *decoder) idString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > cap(d.ids)-len(d.ids) {
		if len(b) > 1<<10 {
			return string(b)
		}
		d.ids = make([]byte, 0, 16<<10)
	}
	off := len(d.ids)
	d.ids = append(d.ids, b...)
	return unsafe.String(&d.ids[off], len(b))
}

// scalarBytes reads a string or an integer and returns its text, aliasing
// the lexer's buffers (valid until the next lexer call).
func (d *decoder) scalarBytes() ([]byte, error) {
	c, ok := d.lx.Peek()
	if !ok {
		return nil, fmt.Errorf("unexpected end of input")
	}
	if c == '"' {
		return d.lx.String()
	}
	b, err := d.lx.Number()
	if err != nil {
		return nil, err
	}
	if _, err := ParseInt(b); err != nil {
		return nil, fmt.Errorf("want a string or an integer, got %s", b)
	}
	return b, nil
}

func (d *decoder) timestamp() (history.Timestamp, error) {
	lx := d.lx
	if ts, ok := d.fastTS(); ok {
		return ts, nil
	}
	c, ok := lx.Peek()
	if !ok {
		return history.Timestamp{}, fmt.Errorf("unexpected end of input")
	}
	switch c {
	case 'n':
		_, err := lx.Literal()
		return history.Timestamp{}, err
	case '{':
	default:
		p, err := lx.Int64()
		return history.Timestamp{P: p, Set: true}, err
	}
	lx.Next()
	ts := history.Timestamp{}
	sawP, sawL := false, false
	for first := true; ; first = false {
		more, err := lx.More('}', first)
		if err != nil {
			return ts, err
		}
		if !more {
			break
		}
		name, err := lx.String()
		if err != nil {
			return ts, err
		}
		isP, isL := len(name) == 1 && name[0] == 'p', len(name) == 1 && name[0] == 'l'
		if err := lx.Expect(':'); err != nil {
			return ts, err
		}
		switch {
		case isP && sawP, isL && sawL:
			return ts, fmt.Errorf("repeated %q", name)
		case isP:
			if ts.P, err = lx.Int64(); err != nil {
				return ts, fmt.Errorf("p: %v", err)
			}
			sawP = true
		case isL:
			sawL = true
			if c, _ := lx.Peek(); c == 'n' {
				_, err = lx.Literal()
			} else {
				ts.L, err = lx.Int64()
			}
			if err != nil {
				return ts, fmt.Errorf("l: %v", err)
			}
		default:
			if err := lx.Skip(); err != nil {
				return ts, err
			}
		}
	}
	if !sawP {
		return ts, fmt.Errorf("missing \"p\"")
	}
	ts.Set = true
	return ts, nil
}

// fastTS decodes, from the lexer's buffer, a timestamp written compactly
// as {"p":P,"l":L} or {"l":L,"p":P} (P and L integers of at most 18
// digits), as timestamp would; for anything else it consumes nothing and
// reports false.
func (d *decoder) fastTS() (history.Timestamp, bool) {
	if fastOpOff {
		return history.Timestamp{}, false
	}
	lx := d.lx
	b := lx.buf[lx.pos:]
	if len(b) < 14 || b[0] != '{' || b[1] != '"' || b[3] != '"' || b[4] != ':' {
		return history.Timestamp{}, false
	}
	f1 := b[2]
	x, i, ok := fastInt(b, 5)
	if !ok || i+5 >= len(b) || b[i] != ',' || b[i+1] != '"' || b[i+3] != '"' || b[i+4] != ':' {
		return history.Timestamp{}, false
	}
	f2 := b[i+2]
	y, j, ok := fastInt(b, i+5)
	if !ok || b[j] != '}' {
		return history.Timestamp{}, false
	}
	switch {
	case f1 == 'p' && f2 == 'l':
		lx.pos += j + 1
		return history.Timestamp{P: x, L: y, Set: true}, true
	case f1 == 'l' && f2 == 'p':
		lx.pos += j + 1
		return history.Timestamp{P: y, L: x, Set: true}, true
	}
	return history.Timestamp{}, false
}

// ops decodes a transaction's ops array (idx is the transaction's index,
// for error fields). The ops are carved from d.arena; an empty array gives
// nil, whatever the arena's state, so a parallel worker's result does not
// depend on which chunks it decoded before.
func (d *decoder) ops(idx int) ([]history.Op, error) {
	lx := d.lx
	fld := func(i int, f string) string {
		return "[" + strconv.Itoa(idx) + "].ops[" + strconv.Itoa(i) + "]" + f
	}
	if err := lx.Expect('['); err != nil {
		return nil, d.wrap(fld(0, ""), err)
	}
	// Ops are decoded straight into the shared arena (see push).
	ops := d.arena[:0]
	d.lists = d.lists[:0]
	for first := true; ; first = false {
		more, err := lx.More(']', first)
		if err != nil {
			return nil, d.wrap(fld(len(ops), ""), err)
		}
		if !more {
			break
		}
		if o, ok := d.fastOp(); ok {
			ops = d.push(ops, o)
			// The rest of a compact ops array, ",{op},{op}...", without
			// the lexer: what More and fastOp would do for each.
			for !fastOpOff {
				b := lx.buf[lx.pos:]
				if len(b) < 21 || b[0] != ',' {
					break
				}
				o, n, ok := d.exactOp(b[1:])
				if !ok {
					break
				}
				lx.pos += 1 + n
				if len(ops) < cap(ops) {
					ops = append(ops, o) // within the arena: no allocation
				} else {
					ops = d.push(ops, o)
				}
			}
			continue
		}
		i := len(ops)
		if err := lx.Expect('{'); err != nil {
			return nil, d.wrap(fld(i, ""), err)
		}
		o := history.Op{Value: history.NoValue, Key: -1}
		kind := -1
		sawV := false
		var seenOp uint8 // 't', 'k' and 'v' met so far, one bit each
		for f2 := true; ; f2 = false {
			more, err := lx.More('}', f2)
			if err != nil {
				return nil, d.wrap(fld(i, ""), err)
			}
			if !more {
				break
			}
			name, err := lx.Field()
			if err != nil {
				return nil, d.wrap(fld(i, ""), err)
			}
			var which byte
			if len(name) == 1 {
				which = name[0]
			}
			var bit uint8
			switch which {
			case 't':
				bit = 1
			case 'k':
				bit = 2
			case 'v':
				bit = 4
			}
			if seenOp&bit != 0 {
				return nil, d.errf(fld(i, "."+string(which)), "repeated field (an op's fields may each appear once)")
			}
			seenOp |= bit
			switch which {
			case 't':
				s, err := lx.String()
				if err != nil {
					return nil, d.wrap(fld(i, ".t"), err)
				}
				var k history.Kind
				var ok bool
				switch {
				case len(s) == 1 && s[0] == 'r':
					k, ok = history.Read, true
				case len(s) == 1 && s[0] == 'w':
					k, ok = history.Write, true
				case len(s) == 1 && s[0] == 'a':
					k, ok = history.Append, true
				default:
					k, ok = history.ParseKind(string(s))
				}
				if !ok || (k != history.Read && k != history.Write && k != history.Append) {
					return nil, d.errf(fld(i, ".t"), "unsupported op type %q (want w, r or a)", s)
				}
				kind = int(k)
			case 'k':
				if o.Key, err = d.scalar(d.h.Keys); err != nil {
					return nil, d.wrap(fld(i, ".k"), err)
				}
			case 'v':
				sawV = true
				c, ok := lx.Peek()
				if !ok {
					return nil, d.errf(fld(i, ".v"), "unexpected end of input")
				}
				switch c {
				case 'n':
					if _, err := lx.Literal(); err != nil {
						return nil, d.wrap(fld(i, ".v"), err)
					}
				case '[':
					lx.Next()
					off := len(d.lists)
					o.SetListSpan(off, 0)
					for f3 := true; ; f3 = false {
						more, err := lx.More(']', f3)
						if err != nil {
							return nil, d.wrap(fld(i, ".v"), err)
						}
						if !more {
							break
						}
						v, err := d.scalar(nil)
						if err != nil {
							return nil, d.wrap(fld(i, fmt.Sprintf(".v[%d]", len(d.lists)-off)), err)
						}
						d.lists = append(d.lists, v)
					}
					o.SetListSpan(off, len(d.lists)-off)
				default:
					if o.Value, err = d.scalar(nil); err != nil {
						return nil, d.wrap(fld(i, ".v"), err)
					}
				}
			default:
				other := string(name)
				if err := lx.Skip(); err != nil {
					return nil, d.wrap(fld(i, "."+other), err)
				}
				d.h.Ignore("unknown op field", 1)
			}
		}
		if kind < 0 {
			return nil, d.errf(fld(i, ".t"), "missing op type")
		}
		if o.Key < 0 {
			return nil, d.errf(fld(i, ".k"), "missing key")
		}
		o.Kind = history.Kind(kind)
		switch o.Kind {
		case history.Write, history.Append:
			if o.IsList {
				return nil, d.errf(fld(i, ".v"), "%s takes a scalar, not a list", o.Kind)
			}
			if !sawV || o.Value == history.NoValue {
				return nil, d.errf(fld(i, ".v"), "%s needs a value", o.Kind)
			}
			if o.Kind == history.Append {
				d.list = true
			}
		case history.Read:
			if o.IsList {
				d.list = true
			}
		}
		ops = d.push(ops, o)
	}
	if len(ops) == 0 {
		// nil, whatever state the arena is in: an empty ops array must
		// decode the same in a fresh parallel worker (no arena yet) as
		// after other transactions' ops (an empty slice of the arena).
		return nil, nil
	}
	out := ops[:len(ops):len(ops)]
	d.arena = d.arena[len(ops):]
	return out, nil
}

// push appends o to ops, the transaction's ops so far, which start at
// d.arena[0]: the ops of all transactions are carved from shared arenas
// (one allocation per 64Ki ops instead of one per transaction, no capacity
// slack, no copying). When the arena is full the transaction's ops move to
// a new arena.
func (d *decoder) push(ops []history.Op, o history.Op) []history.Op {
	if len(ops) == cap(ops) {
		var na []history.Op
		if d.arenas != nil {
			na = d.arenas.Next(2 * len(ops))
		} else {
			na = mem.Make[history.Op](max(1<<16, 2*len(ops)), 0)
		}
		copy(na, ops)
		d.arena = na
		ops = na[:len(ops)]
	}
	ops = ops[:len(ops)+1]
	ops[len(ops)-1] = o
	return ops
}

// fastOpOff disables the fast paths (differential tests): fastOp and
// exactOp, fastTS, and the plain-string reads of tid, sid and status.
var fastOpOff bool

// fastOp decodes, from the lexer's buffer, an op with integer keys and
// values: {"t":"r"|"w"|"a","k":INT,"v":INT|null|[INT,...]} with the three
// fields in any order (Encode writes t, k, v; TimeKiller's own generator
// sorts them: k, t, v), each exactly once, JSON white space anywhere
// between tokens (pretty-printed files), and integers of at most 18
// digits. For anything else (strings, other fields, a missing or repeated
// field, a write without a value, an op split across buffer refills) it
// consumes nothing and reports false, and the general path decodes the op;
// both give the same Op, count the same lines and intern in the same order
// (the fields in their order in the text).
func (d *decoder) fastOp() (history.Op, bool) {
	if fastOpOff {
		return history.Op{}, false
	}
	lx := d.lx
	b := lx.buf[lx.pos:]
	nl := 0
	ws := func(i int) int {
		for i < len(b) {
			switch b[i] {
			case ' ', '\t', '\r':
			case '\n':
				nl++
			default:
				return i
			}
			i++
		}
		return i
	}
	if len(b) < 20 || b[0] != '{' {
		return history.Op{}, false
	}
	if o, n, ok := d.exactOp(b); ok {
		lx.pos += n
		return o, true
	}
	var (
		kind             history.Kind
		k, v             int64
		seen             uint8 // 1 t, 2 k, 4 v
		vFirst           bool  // v came before k (interning order)
		n, listAt        int   // list elements, index of the first
		isList, null, ok bool
	)
	i := 1
	for {
		i = ws(i)
		if i+4 >= len(b) || b[i] != '"' || b[i+2] != '"' {
			return history.Op{}, false
		}
		f := b[i+1]
		i = ws(i + 3)
		if i >= len(b) || b[i] != ':' {
			return history.Op{}, false
		}
		i = ws(i + 1)
		if i+3 >= len(b) {
			return history.Op{}, false
		}
		switch f {
		case 't':
			if seen&1 != 0 || b[i] != '"' || b[i+2] != '"' {
				return history.Op{}, false
			}
			var ok bool
			if kind, ok = letterKind(b[i+1]); !ok {
				return history.Op{}, false
			}
			seen |= 1
			i += 3
		case 'k':
			if seen&2 != 0 {
				return history.Op{}, false
			}
			if k, i, ok = fastInt(b, i); !ok {
				return history.Op{}, false
			}
			seen |= 2
		case 'v':
			if seen&4 != 0 {
				return history.Op{}, false
			}
			seen |= 4
			vFirst = seen&2 == 0
			switch b[i] {
			case 'n':
				if string(b[i:i+4]) != "null" {
					return history.Op{}, false
				}
				null = true
				i += 4
			case '[':
				isList = true
				i = ws(i + 1)
				listAt = i
				if i < len(b) && b[i] == ']' {
					i++
					break
				}
				for {
					if _, i, ok = fastInt(b, i); !ok {
						return history.Op{}, false
					}
					n++
					i = ws(i)
					if i >= len(b) {
						return history.Op{}, false
					}
					if b[i] == ']' {
						i++
						break
					}
					if b[i] != ',' {
						return history.Op{}, false
					}
					i = ws(i + 1)
				}
			default:
				if v, i, ok = fastInt(b, i); !ok {
					return history.Op{}, false
				}
			}
		default:
			return history.Op{}, false
		}
		i = ws(i)
		if i >= len(b) {
			return history.Op{}, false
		}
		if b[i] == '}' {
			i++
			break
		}
		if b[i] != ',' {
			return history.Op{}, false
		}
		i++
	}
	if seen != 7 || (kind != history.Read && (null || isList)) {
		return history.Op{}, false
	}
	lx.pos += i
	lx.line += nl
	o := history.Op{Kind: kind, Value: history.NoValue}
	if !vFirst {
		o.Key = d.h.Keys.Int(k)
	}
	switch {
	case isList:
		o.SetListSpan(len(d.lists), n)
		for x, at := 0, listAt; x < n; x++ {
			var e int64
			e, at, _ = fastInt(b, at)
			d.lists = append(d.lists, d.valInt(e))
			for at < len(b) && (b[at] == ',' || b[at] == ' ' || b[at] == '\t' || b[at] == '\r' || b[at] == '\n') {
				at++
			}
		}
		d.list = true
	case !null:
		o.Value = d.valInt(v)
	}
	if vFirst {
		o.Key = d.h.Keys.Int(k)
	}
	if kind == history.Append {
		d.list = true
	}
	return o, true
}

// exactOp decodes b's leading op if it is written exactly as Encode writes
// it, {"t":"X","k":K,"v":V}, or as TimeKiller's generator does,
// {"k":K,"t":"X","v":V}: no white space, X one of r, w, a, K an integer, V
// an integer (or null for a read). It returns the op and its length; for
// anything else ok is false and fastOp's general loop decides. The result
// is the one that loop gives (key interned before value).
func (d *decoder) exactOp(b []byte) (o history.Op, n int, ok bool) {
	// The common case, keys and values of 1 to 7 digits, a word at a time
	// (the rest of this function, exactOpBytes, decides the others).
	if len(b) < 40 {
		return d.exactOpBytes(b)
	}
	const (
		mask5  = 1<<40 - 1
		kindAt = 0xFF << 48
		opK    = 0x3a226b227b       // {"k":
		opT    = 0x2200223a2274222c // ,"t":"?"
		opTEnc = 0x2200223a2274227b // {"t":"?"
		opV    = 0x2276222c         // ,"v"
		opK4   = 0x226b222c         // ,"k"
		null4  = 0x6c6c756e         // null
	)
	var (
		k, v   int64
		nk, nv int
		i      int
		kindC  byte
	)
	le := binary.LittleEndian
	switch w := le.Uint64(b); {
	case w&mask5 == opK:
		if k, nk = digits.Word(le.Uint64(b[5:])); nk == 0 || nk == 8 {
			return d.exactOpBytes(b)
		}
		i = 5 + nk
		w2 := le.Uint64(b[i:])
		if w2&^kindAt != opT || le.Uint32(b[i+8:]) != opV || b[i+12] != ':' {
			return d.exactOpBytes(b)
		}
		kindC = byte(w2 >> 48)
		i += 13
	case w&^kindAt == opTEnc:
		if le.Uint32(b[8:]) != opK4 || b[12] != ':' {
			return d.exactOpBytes(b)
		}
		kindC = byte(w >> 48)
		if k, nk = digits.Word(le.Uint64(b[13:])); nk == 0 || nk == 8 {
			return d.exactOpBytes(b)
		}
		i = 13 + nk
		if le.Uint32(b[i:]) != opV || b[i+4] != ':' {
			return d.exactOpBytes(b)
		}
		i += 5
	default:
		return d.exactOpBytes(b)
	}
	o = history.Op{Value: history.NoValue}
	if o.Kind, ok = letterKind(kindC); !ok {
		return d.exactOpBytes(b)
	}
	null := false
	if v, nv = digits.Word(le.Uint64(b[i:])); nv == 0 {
		if le.Uint32(b[i:]) != null4 || o.Kind != history.Read {
			return d.exactOpBytes(b)
		}
		null, i = true, i+4
	} else if nv == 8 {
		return d.exactOpBytes(b)
	} else {
		i += nv
	}
	if b[i] != '}' {
		return d.exactOpBytes(b)
	}
	o.Key = d.h.Keys.Int(k)
	if !null {
		o.Value = d.valInt(v)
	}
	if o.Kind == history.Append {
		d.list = true
	}
	return o, i + 1, true
}

// exactOpBytes is exactOp byte by byte.
func (d *decoder) exactOpBytes(b []byte) (o history.Op, n int, ok bool) {
	if len(b) < 20 || b[0] != '{' {
		return o, 0, false
	}
	var (
		k     int64
		i     int
		kindC byte
	)
	switch {
	case b[1] == '"' && b[2] == 'k' && b[3] == '"' && b[4] == ':':
		if k, i, ok = fastInt(b, 5); !ok || i+8 > len(b) {
			return o, 0, false
		}
		if b[i] != ',' || b[i+1] != '"' || b[i+2] != 't' || b[i+3] != '"' || b[i+4] != ':' || b[i+5] != '"' || b[i+7] != '"' {
			return o, 0, false
		}
		kindC = b[i+6]
		i += 8
	case b[1] == '"' && b[2] == 't' && b[3] == '"' && b[4] == ':' && b[5] == '"' && b[7] == '"' &&
		b[8] == ',' && b[9] == '"' && b[10] == 'k' && b[11] == '"' && b[12] == ':':
		kindC = b[6]
		if k, i, ok = fastInt(b, 13); !ok {
			return o, 0, false
		}
	default:
		return o, 0, false
	}
	if i+6 > len(b) || b[i] != ',' || b[i+1] != '"' || b[i+2] != 'v' || b[i+3] != '"' || b[i+4] != ':' {
		return o, 0, false
	}
	i += 5 // b[i] exists
	o = history.Op{Value: history.NoValue}
	if o.Kind, ok = letterKind(kindC); !ok {
		return o, 0, false
	}
	var v int64
	null := false
	switch {
	case b[i] == 'n':
		if i+5 > len(b) || b[i+1] != 'u' || b[i+2] != 'l' || b[i+3] != 'l' || o.Kind != history.Read {
			return o, 0, false
		}
		null, i = true, i+4
	default:
		if v, i, ok = fastInt(b, i); !ok {
			return o, 0, false
		}
	}
	if b[i] != '}' {
		return o, 0, false
	}
	o.Key = d.h.Keys.Int(k)
	if !null {
		o.Value = d.valInt(v)
	}
	if o.Kind == history.Append {
		d.list = true
	}
	return o, i + 1, true
}

// fastInt parses a decimal integer of 1 to 18 digits (optionally negative)
// at b[i:] that is followed by another byte; j is the index after it.
func fastInt(b []byte, i int) (n int64, j int, ok bool) {
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	n, j = digits.Parse(b, i, 18)
	if j == i || j >= len(b) || (b[j] >= '0' && b[j] <= '9') {
		return 0, 0, false
	}
	if neg {
		n = -n
	}
	return n, j, true
}

// scalar reads a key (into in) or, with in nil, a value (d.valInt,
// d.valStr): an integer or a string.
func (d *decoder) scalar(in *history.Interner) (int32, error) {
	c, ok := d.lx.Peek()
	if !ok {
		return 0, fmt.Errorf("unexpected end of input")
	}
	if c == '"' {
		b, err := d.lx.String()
		if err != nil {
			return 0, err
		}
		if in == nil {
			return d.valStr(string(b)), nil
		}
		return in.Str(string(b)), nil
	}
	n, ok := d.lx.fastInt()
	if !ok {
		b, err := d.lx.Number()
		if err != nil {
			return 0, err
		}
		if n, err = ParseInt(b); err != nil {
			return 0, fmt.Errorf("want an integer or a string, got %s", b)
		}
	}
	if in == nil {
		return d.valInt(n), nil
	}
	return in.Int(n), nil
}

// valInt interns the integer value v: in the history's value table, or in
// a parallel worker as the chunk's next value occurrence (see rawVals).
func (d *decoder) valInt(v int64) int32 {
	if d.raw != nil {
		return d.raw.int(v)
	}
	return d.h.Values.Int(v)
}

// valStr is valInt for a string value.
func (d *decoder) valStr(s string) int32 {
	if d.raw != nil {
		return d.raw.str(s)
	}
	return d.h.Values.Str(s)
}

// Encode writes h in TimeKiller JSON, one transaction per line inside the
// array, in History order (which keeps session order). Transactions that are
// not committed carry a "status" field (a txray extension Decode accepts);
// missing timestamps are written as null. Reads of NoValue are written as
// null (the initial value); list reads as arrays.
func Encode(w io.Writer, h *history.History) error {
	e := NewEncoder(w)
	for i := range h.Txns {
		if err := e.WriteTxn(h, &h.Txns[i]); err != nil {
			return err
		}
	}
	return e.Close()
}

// Encoder writes TimeKiller JSON one transaction at a time, producing the
// same bytes as Encode of the transactions in the order given, with memory
// bounded by one transaction (for streamed histories, e.g. sim.Stream).
// Close writes the closing bracket and flushes; it does not close w.
type Encoder struct {
	bw *bufio.Writer
	b  []byte
	n  int // transactions written
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{bw: bufio.NewWriterSize(w, 1<<16), b: make([]byte, 0, 512)}
}

// WriteTxn writes t; h resolves its session, key and value ids (only during
// the call). A transaction without an ID is named by its position among the
// transactions written so far.
func (e *Encoder) WriteTxn(h *history.History, t *history.Txn) error {
	i := e.n
	b := e.b[:0]
	if i == 0 {
		b = append(b, "[\n"...)
	} else {
		b = append(b, ",\n"...)
	}
	b = append(b, `{"tid":`...)
	if t.ID != "" {
		b = appendString(b, t.ID)
	} else {
		b = strconv.AppendInt(b, int64(i), 10)
	}
	b = append(b, `,"sid":`...)
	if t.Session >= 0 {
		b = appendString(b, h.Sessions.String(t.Session))
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"sts":`...)
	b = appendTS(b, t.StartTS)
	b = append(b, `,"cts":`...)
	b = appendTS(b, t.CommitTS)
	if t.Status != history.Committed {
		b = append(b, `,"status":"`...)
		b = append(b, t.Status.String()...)
		b = append(b, '"')
	}
	b = append(b, `,"ops":[`...)
	for j := range t.Ops {
		o := &t.Ops[j]
		if j > 0 {
			b = append(b, ',')
		}
		switch o.Kind {
		case history.Read:
			b = append(b, `{"t":"r","k":`...)
		case history.Write:
			b = append(b, `{"t":"w","k":`...)
		case history.Append:
			b = append(b, `{"t":"a","k":`...)
		default:
			return fmt.Errorf("timekiller: %s: op %d: %s ops cannot be written in TimeKiller JSON", h.TxnName(t.Index), j, o.Kind)
		}
		b = appendScalar(b, h.Keys, o.Key)
		b = append(b, `,"v":`...)
		switch {
		case o.Kind == history.Read && o.IsList && !o.ListUnknown:
			b = append(b, '[')
			for x, v := range t.ListOf(o) {
				if x > 0 {
					b = append(b, ',')
				}
				b = appendScalar(b, h.Values, v)
			}
			b = append(b, ']')
		case o.Value == history.NoValue || (o.IsList && o.ListUnknown):
			b = append(b, "null"...)
		default:
			b = appendScalar(b, h.Values, o.Value)
		}
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	e.b = b
	e.n++
	_, err := e.bw.Write(b)
	return err
}

// Close ends the array (an empty array if no transaction was written) and
// flushes.
func (e *Encoder) Close() error {
	if e.n == 0 {
		e.bw.WriteString("[\n")
	}
	e.bw.WriteString("\n]\n")
	return e.bw.Flush()
}

func appendTS(b []byte, ts history.Timestamp) []byte {
	if !ts.Set {
		return append(b, "null"...)
	}
	b = append(b, `{"p":`...)
	b = strconv.AppendInt(b, ts.P, 10)
	b = append(b, `,"l":`...)
	b = strconv.AppendInt(b, ts.L, 10)
	return append(b, '}')
}

func appendScalar(b []byte, in *history.Interner, id int32) []byte {
	s := in.Get(id)
	if s.IsStr {
		return appendString(b, s.S)
	}
	return strconv.AppendInt(b, s.I, 10)
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// letterKind is the op kind TimeKiller's one-letter "t" field names: r
// (read), w (write), a (append); false for any other letter (the fast
// paths then fall back to the general reader).
func letterKind(c byte) (history.Kind, bool) {
	switch c {
	case 'r':
		return history.Read, true
	case 'w':
		return history.Write, true
	case 'a':
		return history.Append, true
	}
	return 0, false
}
