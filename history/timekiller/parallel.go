package timekiller

import (
	"bytes"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/txray/txray/history"
)

// Parallel decoding of big inputs.
//
// A reader goroutine cuts the input into chunks of about chunkSize bytes
// that end at a newline, where it can before a line that starts as the
// first transaction's line does (see preader.elem). A raw newline is white
// space outside every JSON string, so a cut never splits a token; it may
// still fall inside a transaction (pretty-printed input with no line like
// the first transaction's in 8 chunk sizes). Worker goroutines decode each
// chunk on its own: the tokens of the top-level array ('[', ',', ']') and whole
// transactions, with the sequential decoder's code, into chunk-local
// interners for keys and sessions; values are not looked up but recorded
// in text order (rawVals). The caller's goroutine merges chunks in input
// order: it checks that the chunk continues the array grammar where the
// previous chunk left it, interns the chunk's local keys and sessions in
// local-id order (their order of first appearance in the chunk) and its
// values in text order, so the global ids are exactly those a sequential
// decode assigns, rewrites the chunk's ids, numbers each session's
// transactions and appends them.
//
// A chunk that does not decode completely (a cut inside a transaction, or
// bad input), or that does not continue the grammar, ends parallel
// decoding: the sequential decoder resumes at the start of that chunk, in
// the array position the previous chunks ended in, with the same line
// number, and reads the rest of the input. Everything before the chunk was
// decoded completely, so the chunk starts between transactions, and the
// result, including error messages, is the sequential decoder's. Input with
// no newline for 8 chunk sizes is handed to the sequential decoder the same
// way (so a single-line file is streamed, not buffered).

// parallelMin is the input size from which Decode goes parallel.
var parallelMin int64 = 8 << 20

// parallelProcs is the number of Ps from which Decode goes parallel. On 2
// CPUs, decoding 1M transactions × 15 ops (563 MB) takes about 1.1 s in
// parallel against 1.8-2.0 s sequentially (with read-ahead and op arenas
// faulted in on the second CPU): the workers do the scanning, which is
// most of the work, and the merge only interns values and rewrites ids
// (see rawVals). With 1 CPU there is nothing to gain.
var parallelProcs = 2

// chunkSize is the target chunk size in bytes.
var chunkSize = 1 << 20

type pchunk struct {
	buf   []byte
	first int  // line number of buf's first byte
	nl    int  // newlines in buf
	raw   bool // not cut at a newline (or cut short by a read error): resume sequentially here
	done  chan struct{}

	// set by the worker
	ok                bool // decoded completely
	firstTok, lastTok tok
	txns              []history.Txn
	keys, sess        []history.Scalar // local id tables
	vals              rawVals          // value occurrences, in text order
	list, allTS       bool
	ignored           map[string]int
}

type pworker struct {
	d  decoder
	lx Lexer
}

func newPWorker(file string) *pworker {
	w := &pworker{}
	w.lx.scratch = make([]byte, 0, 64)
	w.d = decoder{lx: &w.lx, h: history.New(), file: file}
	return w
}

// parse decodes c into chunk-local tables.
func (w *pworker) parse(c *pchunk) {
	d := &w.d
	h := d.h
	h.Keys.Reset()
	h.Sessions.Reset()
	c.vals.reset()
	d.raw = &c.vals
	clear(h.Ignored)
	h.Txns = c.txns[:0]
	d.list, d.allTS = false, true
	w.lx.resetBytes(c.buf, c.first)
	c.ok, c.firstTok = true, tokNone
	prev := tokNone
	for c.ok {
		ch, more := w.lx.Peek()
		if !more {
			break
		}
		var t tok
		switch ch {
		case '[':
			t = tokOpen
		case ',':
			t = tokComma
		case ']':
			t = tokClose
		case '{':
			t = tokElem
		}
		if t == tokNone || (prev != tokNone && !follows(prev, t)) {
			c.ok = false
			break
		}
		if t == tokElem {
			if err := d.txn(); err != nil {
				c.ok = false
				break
			}
		} else {
			w.lx.pos++
		}
		if c.firstTok == tokNone {
			c.firstTok = t
		}
		prev = t
	}
	c.lastTok = prev
	c.txns, h.Txns = h.Txns, nil
	if !c.ok {
		return
	}
	c.keys = appendTab(c.keys[:0], h.Keys)
	c.sess = appendTab(c.sess[:0], h.Sessions)
	c.list, c.allTS = d.list, d.allTS
	c.ignored = nil
	if len(h.Ignored) > 0 {
		c.ignored = maps(h.Ignored)
	}
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func appendTab(dst []history.Scalar, in *history.Interner) []history.Scalar {
	for i := 0; i < in.Len(); i++ {
		dst = append(dst, in.Get(int32(i)))
	}
	return dst
}

// preader is the reader goroutine's state; the merge reads it only after
// the goroutine has ended.
type preader struct {
	r       io.Reader
	m       *history.MappedInput // r, when it is a mapped input (runMapped)
	line    int
	carry   []byte  // bytes read after the last cut
	pending *pchunk // cut but not handed over when stopped
	eof     bool
	err     error // read error other than io.EOF
	// elem is "\n" plus the white space before the first transaction's
	// '{' on its line, plus '{' (nil until known, or if the first
	// transaction does not start a line): chunks are cut before a line
	// that starts like it when there is one (a pretty-printed file's
	// transactions start at one indentation, their ops deeper), else at
	// the last newline.
	elem   []byte
	looked bool
}

// learnElem sets p.elem from the first bytes of the input (the first
// chunk's), once: later chunks do not hold the start.
func (p *preader) learnElem(buf []byte) {
	if p.looked {
		return
	}
	p.looked = true
	b := history.TrimBOMAndSpace(buf)
	if len(b) == 0 || b[0] != '[' {
		return
	}
	b = b[1:]
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	nl := bytes.LastIndexByte(b[:i], '\n')
	if i == len(b) || b[i] != '{' || nl < 0 {
		return
	}
	p.elem = append(append([]byte{}, b[nl:i]...), '{')
}

func (p *preader) run(order, work chan<- *pchunk, free <-chan *pchunk, stop <-chan struct{}) {
	defer close(order)
	defer close(work)
	for !p.eof {
		var c *pchunk
		select {
		case c = <-free:
		default:
			c = &pchunk{}
		}
		c.done = make(chan struct{})
		c.raw = false
		buf := append(c.buf[:0], p.carry...)
		p.carry = p.carry[:0]
		// Read chunkSize bytes past the carry: reads of at least the
		// bufio.Reader's size go straight to its source (no second copy).
		limit := len(buf) + chunkSize
		cut := -1
		for {
			for len(buf) < limit && !p.eof {
				if cap(buf) < limit {
					buf = slices.Grow(buf, limit-len(buf))
				}
				n, err := p.r.Read(buf[len(buf):limit])
				buf = buf[:len(buf)+n]
				if err != nil {
					p.eof = true
					if err != io.EOF {
						p.err = err
						c.raw = true
					}
				}
			}
			if p.eof {
				cut = len(buf)
				break
			}
			var ok bool
			if cut, c.raw, ok = p.cutPoint(buf); ok {
				break
			}
			limit = len(buf) + chunkSize
		}
		p.carry = append(p.carry, buf[cut:]...)
		c.buf = buf[:cut]
		if !p.send(c, order, work, stop) {
			return
		}
	}
}

// send hands chunk c, cut by run or runMapped, to the sequential stage
// (order) and, unless it is the raw rest of the input, to a worker; it
// numbers c's lines first. It reports whether the cutter goes on: false
// after an empty last chunk, the raw rest, or a stop (a chunk the
// sequential stage did not take is kept in p.pending).
func (p *preader) send(c *pchunk, order, work chan<- *pchunk, stop <-chan struct{}) bool {
	if len(c.buf) == 0 && !c.raw {
		return false
	}
	c.first = p.line
	c.nl = bytes.Count(c.buf, []byte{'\n'})
	p.line += c.nl
	select {
	case order <- c:
	case <-stop:
		p.pending = c
		return false
	}
	if c.raw {
		return false
	}
	select {
	case work <- c:
	case <-stop:
		return false
	}
	return true
}

// cutPoint applies the chunk cut rules to buf, which does not reach the
// end of the input: after the last complete array element when the
// element separator is known and occurs, else after the last line, else
// (once buf holds 8 chunks) all of buf as a raw chunk; ok is false when
// buf needs to grow first.
func (p *preader) cutPoint(buf []byte) (cut int, raw, ok bool) {
	p.learnElem(buf)
	if p.elem != nil {
		if i := bytes.LastIndex(buf, p.elem); i >= 0 {
			return i + 1, false, true
		}
		if len(buf) < 8*chunkSize {
			return 0, false, false
		}
	}
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		return i + 1, false, true
	}
	if len(buf) >= 8*chunkSize {
		return len(buf), true, true
	}
	return 0, false, false
}

// runMapped is run for a mapped input (p.m): chunks are cut in place, by
// the same rules, and nothing is carried (the input after a cut is simply
// not consumed yet).
func (p *preader) runMapped(order, work chan<- *pchunk, free <-chan *pchunk, stop <-chan struct{}) {
	defer close(order)
	defer close(work)
	for !p.eof {
		rem := p.m.Bytes()
		var c *pchunk
		select {
		case c = <-free:
		default:
			c = &pchunk{}
		}
		c.done = make(chan struct{})
		c.raw = false
		limit := chunkSize
		cut := -1
		for {
			buf := rem[:min(limit, len(rem))]
			if len(buf) == len(rem) {
				p.eof = true
				cut = len(buf)
				break
			}
			var ok bool
			if cut, c.raw, ok = p.cutPoint(buf); ok {
				break
			}
			limit = len(buf) + chunkSize
		}
		c.buf = rem[:cut:cut] // read-only: never appended to
		p.m.Advance(cut)
		if !p.send(c, order, work, stop) {
			return
		}
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// parallel decodes the whole input into d.h (see the comment at the top of
// this file).
func (d *decoder) parallel(r io.Reader, sizeHint int64) error {
	_, err := d.parallelAt(r, sizeHint)
	return err
}

// parallelAt is parallel, also returning the line at which the sequential
// decoder took over (0 if it did not), for tests.
func (d *decoder) parallelAt(r io.Reader, sizeHint int64) (resumed int, err error) {
	h := d.h
	nw := max(1, runtime.GOMAXPROCS(0))
	order := make(chan *pchunk, 2*nw)
	work := make(chan *pchunk, nw)
	free := make(chan *pchunk, 4*nw+4)
	stop := make(chan struct{})
	rd := &preader{r: r, line: 1}
	rd.m, _ = r.(*history.MappedInput)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		if rd.m != nil {
			rd.runMapped(order, work, free, stop)
		} else {
			rd.run(order, work, free, stop)
		}
	}()
	var wg sync.WaitGroup
	for range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newPWorker(d.file)
			for c := range work {
				w.parse(c)
				close(c.done)
			}
		}()
	}
	stopped := false
	halt := func() {
		if !stopped {
			stopped = true
			close(stop)
		}
		<-readerDone
	}
	defer func() {
		halt()
		wg.Wait()
	}()

	// resume decodes sequentially from chunk c (not merged) to the end.
	st := tokStart
	resume := func(c *pchunk) (int, error) {
		halt()
		rs := []io.Reader{bytes.NewReader(c.buf)}
		for c2 := range order {
			rs = append(rs, bytes.NewReader(c2.buf))
		}
		if rd.pending != nil {
			rs = append(rs, bytes.NewReader(rd.pending.buf))
		}
		rs = append(rs, bytes.NewReader(rd.carry))
		switch {
		case rd.err != nil:
			rs = append(rs, errReader{rd.err})
		case !rd.eof:
			rs = append(rs, rd.r)
		}
		// As the sequential decoder of big inputs on few CPUs: read ahead
		// and fault the ops' memory in on another goroutine. (A mapped
		// input is in memory already, and no goroutine may read it after
		// Decode returns: no read-ahead.)
		var ra io.Reader = io.MultiReader(rs...)
		stopRA := func() {}
		if rd.m == nil {
			ra, stopRA = history.ReadAhead(ra, 1<<20)
		}
		d.arenas = history.NewOpArenas(1 << 16)
		defer func() {
			d.arenas.Stop()
			d.arenas = nil
			stopRA()
		}()
		d.lx = NewLexer(ra)
		d.lx.line = c.first
		return c.first, d.array(st, 0)
	}

	var km, vm, sm []int32
	var faulter *history.TxnPrefaulter
	presized := false
	line := 1
	for c := range order {
		if c.raw {
			return resume(c)
		}
		<-c.done
		if !c.ok || (c.firstTok != tokNone && !follows(st, c.firstTok)) {
			return resume(c)
		}
		km = intern(km, c.keys, h.Keys)
		vm = c.vals.intern(vm, h.Values)
		sm = intern(sm, c.sess, h.Sessions)
		if !presized && len(c.buf) > 0 && sizeHint > 2*int64(len(c.buf)) {
			presized = true
			d.presize(float64(sizeHint)/float64(len(c.buf)), len(c.txns), h.Keys.Len(), h.Values.Len())
			// Fault the table's pages in ahead of the appends below on
			// another goroutine (150 MB for 1M transactions).
			faulter = history.PrefaultTxns(h.Txns)
			defer faulter.Stop()
		}
		for i := range c.txns {
			t := &c.txns[i]
			if t.Session >= 0 {
				t.Session = sm[t.Session]
				for int(t.Session) >= len(d.seqs) {
					d.seqs = append(d.seqs, 0)
				}
				t.Seq = d.seqs[t.Session]
				d.seqs[t.Session]++
			}
			for j := range t.Ops {
				o := &t.Ops[j]
				o.Key = km[o.Key]
				if o.Value != history.NoValue {
					o.Value = vm[o.Value]
				}
			}
			for x, v := range t.Lists {
				t.Lists[x] = vm[v]
			}
			h.Add(*t)
		}
		faulter.Advance(len(h.Txns))
		d.list = d.list || c.list
		d.allTS = d.allTS && c.allTS
		for k, n := range c.ignored {
			h.Ignore(k, n)
		}
		if c.lastTok != tokNone {
			st = c.lastTok
		}
		line = c.first + c.nl
		c.txns = c.txns[:0]
		if rd.m != nil {
			rd.m.Drop(c.buf)
			c.buf = nil
		}
		select {
		case free <- c:
		default:
		}
	}
	if st == tokClose {
		return 0, nil
	}
	// The input ended inside the array (or before it): let the sequential
	// decoder report it.
	d.lx = NewLexer(bytes.NewReader(nil))
	d.lx.line = line
	return line, d.array(st, 0)
}

// intern maps a chunk's local id table to global ids, interning in local-id
// order.
func intern(m []int32, local []history.Scalar, global *history.Interner) []int32 {
	m = m[:0]
	for _, s := range local {
		m = append(m, global.Scalar(s))
	}
	return m
}

// rawVals records the values a parallel worker meets, one entry per
// occurrence in text order (ops' values and list elements): the worker's
// ops and lists hold occurrence indexes, and the merge interns the entries
// into the history's value table in that order, which is the order in
// which a sequential decode interns them, so every id is the same. The
// worker does no value lookups (a chunk-local value table would cost a
// lookup per value on the worker and a copy of every distinct value).
type rawVals struct {
	v     []int64  // the integer, or for a string its index in s
	strAt []int32  // occurrence indexes of the strings, ascending
	s     []string // string values
}

func (r *rawVals) reset() {
	r.v, r.strAt = r.v[:0], r.strAt[:0]
	clear(r.s)
	r.s = r.s[:0]
}

func (r *rawVals) int(v int64) int32 {
	r.v = append(r.v, v)
	return int32(len(r.v) - 1)
}

func (r *rawVals) str(s string) int32 {
	r.strAt = append(r.strAt, int32(len(r.v)))
	r.v = append(r.v, int64(len(r.s)))
	r.s = append(r.s, s)
	return int32(len(r.v) - 1)
}

// intern interns r's occurrences into in, in order, and returns the map
// from occurrence index to id.
func (r *rawVals) intern(m []int32, in *history.Interner) []int32 {
	m = slices.Grow(m[:0], len(r.v))[:len(r.v)]
	if len(r.strAt) == 0 {
		for i, v := range r.v {
			m[i] = in.Int(v)
		}
		return m
	}
	next := 0
	for i, v := range r.v {
		if next < len(r.strAt) && int(r.strAt[next]) == i {
			m[i] = in.Str(r.s[v])
			next++
			continue
		}
		m[i] = in.Int(v)
	}
	return m
}
