package jsonl

import (
	"bufio"
	"bytes"
	"io"
	"runtime"

	"github.com/txray/txray/history"
)

// Parallel decoding. Big inputs are cut into chunks of whole lines; worker
// goroutines parse each chunk's transaction lines with the fast parser into
// chunk-local interners, and the caller's goroutine merges chunks in input
// order: it interns each chunk's local keys, values and sessions in
// local-id order (which is their order of first appearance, so global ids
// are exactly those a sequential decode assigns), rewrites the chunk's ids,
// and appends its transactions. Lines the fast parser declines (headers,
// evidence records, unusual or malformed lines) are decoded by the
// sequential decoder during the merge, so results and error messages are
// identical to the sequential path.

// parallelMin is the input size from which Decode goes parallel.
var parallelMin int64 = 8 << 20

// chunkSize is the target chunk size in bytes.
var chunkSize = 1 << 20

type chunk struct {
	buf   []byte
	first int // line number of the first line
	lines [][]byte
	txns  []history.Txn
	// per line: index into txns, or -1 (merge decodes it), or -2 (blank)
	slot    []int32
	haveSeq []bool
	// local scalar tables (keys, values, sessions), indexed by local id
	keys, values, sessions []history.Scalar
	// raw integer list elements (fast.raw), indexed by -2-id
	raw   []int64
	anyOT bool
	done  chan struct{}
	// unterminated: the chunk's last line is the input's last and has no
	// line end (a possibly torn line).
	unterminated bool
}

type worker struct {
	d      decoder
	rawCap int // raw integers in the last chunk
}

func (w *worker) parse(c *chunk) {
	w.d.h.Keys.Reset()
	w.d.h.Values.Reset()
	w.d.h.Sessions.Reset()
	// Local key ids are per chunk, so the per-key list caches are emptied,
	// keeping their storage (dropping it cost an allocation per key read).
	for i := range w.d.fast.lastList {
		w.d.fast.lastList[i] = w.d.fast.lastList[i][:0]
	}
	w.d.anyOT = false
	c.slot = make([]int32, len(c.lines))
	// The raw table moves to the chunk; size the next one like the last.
	w.d.fast.raw = true
	w.d.fast.rawInts = make([]int64, 0, w.rawCap+w.rawCap/8)
	c.txns = make([]history.Txn, 0, len(c.lines))
	c.haveSeq = make([]bool, 0, len(c.lines))
	for i, l := range c.lines {
		b := bytes.TrimSpace(l)
		if len(b) == 0 {
			c.slot[i] = -2
			continue
		}
		var t history.Txn
		if b[0] == '{' && len(b) > 2 && b[2] != 't' && w.d.fast.line(b, &w.d, &t) {
			c.slot[i] = int32(len(c.txns))
			c.txns = append(c.txns, t)
			c.haveSeq = append(c.haveSeq, w.d.fast.haveSeq)
			continue
		}
		c.slot[i] = -1
	}
	c.anyOT = w.d.anyOT
	c.raw = w.d.fast.rawInts
	w.rawCap = len(c.raw)
	w.d.fast.rawInts = nil
	// snapshot the local tables for the merge (the interners are reused).
	// A plain table suffices: the merge only maps local ids to scalars.
	c.keys = snapshot(w.d.h.Keys)
	c.values = snapshot(w.d.h.Values)
	c.sessions = snapshot(w.d.h.Sessions)
}

func snapshot(in *history.Interner) []history.Scalar {
	out := make([]history.Scalar, in.Len())
	for i := range out {
		out[i] = in.Get(int32(i))
	}
	return out
}

// decodeParallel is Decode for big inputs.
func decodeParallel(r io.Reader, opts history.DecodeOptions) (*history.History, error) {
	h := history.New()
	d := &decoder{h: h, file: opts.Name, seqs: map[int32]int32{}}
	nw := max(1, runtime.GOMAXPROCS(0))
	work := make(chan *chunk, nw)
	order := make(chan *chunk, 2*nw)
	stop := make(chan struct{})
	defer close(stop)
	for i := 0; i < nw; i++ {
		go func() {
			w := &worker{d: decoder{h: history.New(), seqs: map[int32]int32{}}}
			for c := range work {
				w.parse(c)
				close(c.done)
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(work)
		br := bufio.NewReaderSize(r, 1<<20)
		line := 1
		for {
			c := &chunk{first: line, done: make(chan struct{})}
			buf := make([]byte, 0, chunkSize+chunkSize/4)
			var err error
			for len(buf) < chunkSize {
				var b []byte
				b, err = br.ReadSlice('\n')
				for err == bufio.ErrBufferFull {
					buf = append(buf, b...)
					b, err = br.ReadSlice('\n')
				}
				buf = append(buf, b...)
				if err != nil {
					break
				}
			}
			if line == 1 {
				buf = bytes.TrimPrefix(buf, bom)
			}
			c.buf = buf
			for len(buf) > 0 {
				i := bytes.IndexByte(buf, '\n')
				if i < 0 {
					c.lines = append(c.lines, buf)
					c.unterminated = err == io.EOF
					break
				}
				c.lines = append(c.lines, buf[:i])
				buf = buf[i+1:]
			}
			line += len(c.lines)
			if len(c.lines) > 0 {
				select {
				case order <- c:
				case <-stop:
					return
				}
				select {
				case work <- c:
				case <-stop:
					return
				}
			}
			if err != nil {
				if err != io.EOF {
					readErr <- err
				}
				return
			}
		}
	}()
	var kmap, vmap, smap lazyMap
	presized := false
	for c := range order {
		<-c.done
		if !presized && opts.SizeHint > int64(len(c.buf)) && len(c.buf) > 0 {
			presized = true
			want := int(int64(len(c.txns)) * opts.SizeHint / int64(len(c.buf)) * 11 / 10)
			if want > cap(h.Txns) {
				h.Txns = append(make([]history.Txn, 0, want), h.Txns...)
			}
		}
		kmap.reset(c.keys, h.Keys)
		vmap.reset(c.values, h.Values)
		smap.reset(c.sessions, h.Sessions)
		d.anyOT = d.anyOT || c.anyOT
		for i, l := range c.lines {
			switch s := c.slot[i]; {
			case s == -2:
			case s == -1:
				if err := d.line(bytes.TrimSpace(l), c.first+i); err != nil {
					if c.unterminated && i == len(c.lines)-1 && d.any && incompleteJSON(bytes.TrimSpace(l)) {
						d.torn(c.first+i, err)
						continue
					}
					return nil, err
				}
				d.any = true
			default:
				t := c.txns[s]
				remapTxn(&t, &kmap, &vmap, &smap, c.raw)
				if t.Session >= 0 && !c.haveSeq[s] {
					t.Seq = d.seqs[t.Session]
				}
				d.addTxn(t)
				d.any = true
			}
		}
	}
	select {
	case err := <-readErr:
		return nil, history.Errorf(opts.Name, 0, "", "read error: %v", err)
	default:
	}
	if err := d.resolveVersionSets(); err != nil {
		return nil, err
	}
	d.finish()
	return h, nil
}

// lazyMap maps a chunk's local ids to global ids, interning each local
// scalar on first use. Local ids are numbered in order of first appearance
// in the chunk's fast-parsed lines, and the merge visits those lines in
// input order, so interning on first use (rather than the whole table up
// front) gives exactly the global ids a sequential decode assigns, even
// where lines the merge decodes itself (evidence records) intern scalars
// between them.
type lazyMap struct {
	m      []int32
	local  []history.Scalar
	global *history.Interner
}

func (l *lazyMap) reset(local []history.Scalar, global *history.Interner) {
	l.local, l.global = local, global
	l.m = l.m[:0]
	for range local {
		l.m = append(l.m, -1)
	}
}

func (l *lazyMap) get(id int32) int32 {
	g := l.m[id]
	if g < 0 {
		g = l.global.Scalar(l.local[id])
		l.m[id] = g
	}
	return g
}

// remapTxn rewrites t's chunk-local ids to global ones. Values are
// interned in the order a sequential decode interns them: op by op, each
// op's scalar value or its list elements in list order (raw integers and
// interned strings alike). Remapping all scalar values before all list
// elements gave, e.g., [{"f":"r","k":0,"v":[10]},{"f":"a","k":"","v":""}]
// other value ids than the sequential decode ("" before 10).
func remapTxn(t *history.Txn, km, vm, sm *lazyMap, raw []int64) {
	if t.Session >= 0 {
		t.Session = sm.get(t.Session)
	}
	for j := range t.Ops {
		o := &t.Ops[j]
		o.Key = km.get(o.Key)
		if o.IsList {
			off, n := o.ListSpan()
			l := t.Lists[off : off+n]
			for k, v := range l {
				if v <= -2 {
					l[k] = vm.global.Int(raw[-2-v])
				} else {
					l[k] = vm.get(v)
				}
			}
		} else if o.Value != history.NoValue {
			o.Value = vm.get(o.Value)
		}
	}
}
