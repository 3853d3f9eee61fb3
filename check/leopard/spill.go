package leopard

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/txray/txray/history"
)

// spillLog is the online verifier's store of explanation-only data: the
// record (id, index, interval, operations) of each collected transaction
// that wrote a version, appended to an unlinked temporary file and read
// back only when an anomaly names the transaction (reporter.ref). The
// verification state never reads it: what a later check needs of a
// collected version (its value, commit and lock bounds, snapshot bound) is
// kept in memory (keySlot, writer), so the heap holds no copy of the
// transaction's operations for the rest of the stream, and the file grows
// by one record per collected writing transaction (about 15 bytes per
// operation). Offsets start at 1 (0 means "not spilled").
//
// Errors are not fatal: put reports false (the caller keeps the record in
// memory instead, so nothing is lost, only memory is not saved) and get
// returns the error (the explanation then names the transaction by index
// only). Not safe for concurrent use.
//
// With a limit (OnlineOptions.SpillLimit) the log is two files, each at
// most half the limit (a record larger than that gets a file of its own):
// when the newer one is full, the older one is removed, with its records
// (counted in dropped; get returns errSpillDropped for them), and a new
// one is started. So the disk used stays within the limit and the most
// recent half of it at least is always readable. Offsets are logical (they
// keep growing across files).
type spillLog struct {
	cur, old *spillSeg // old: the previous file (nil if none)
	w        *bufio.Writer
	off      int64 // logical size: bytes written, buffered ones included
	flushed  int64 // bytes known to be in the file
	limit    int64 // bytes on disk at most (0 = none)
	buf      []byte
	err      error // first error; no more puts after it
	closed   bool
	records  int64
	dropped  int64 // records dropped under the limit
	peak     int64 // most bytes on disk at once
}

// spillSeg is one file of the log: logical offsets [base, next file's
// base) are at file offsets [0, ...).
type spillSeg struct {
	f       *os.File
	name    string // non-empty while the file still has a name to remove
	base    int64
	records int64
}

// errSpillDropped: the record was dropped to stay within the limit.
var errSpillDropped = errors.New("leopard: spilled transaction record dropped (spill limit)")

func (s *spillLog) open(base int64) error {
	f, err := os.CreateTemp("", "txray-leopard-*.spill")
	if err != nil {
		return err
	}
	g := &spillSeg{f: f, name: f.Name(), base: base}
	// Unlink at once where the system allows it (the file lives until
	// closed, and nothing is left behind if the process dies).
	if os.Remove(g.name) == nil {
		g.name = ""
	}
	if s.w == nil {
		s.w = bufio.NewWriterSize(f, 1<<16)
	} else {
		s.w.Reset(f)
	}
	s.cur = g
	return nil
}

func (g *spillSeg) close() {
	g.f.Close()
	if g.name != "" {
		os.Remove(g.name)
	}
}

// size is the number of bytes the log holds on disk.
func (s *spillLog) size() int64 {
	switch {
	case s.old != nil:
		return s.off - s.old.base
	case s.cur != nil:
		return s.off - s.cur.base
	}
	return 0
}

// put appends t's record, with the key recycling epoch its key ids are
// valid in (recycler.stale), and returns its offset (> 0), or false when
// the log cannot be written (I/O error, or closed).
func (s *spillLog) put(t *history.Txn, epoch uint32) (int64, bool) {
	if s.err != nil || s.closed {
		return 0, false
	}
	s.buf = binary.AppendUvarint(s.buf[:0], uint64(epoch))
	s.buf = encodeTxn(s.buf, t)
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(s.buf)))
	size := int64(n + len(s.buf))
	if s.cur == nil {
		if err := s.open(1); err != nil { // offset 0 is "none"
			s.err = err
			return 0, false
		}
		s.off = 1
	} else if s.limit > 0 && s.off > s.cur.base && s.off-s.cur.base+size > s.limit/2 {
		// The newer file is full: drop the older one and start anew.
		if err := s.w.Flush(); err != nil {
			s.err = err
			return 0, false
		}
		s.flushed = s.off
		if s.old != nil {
			s.old.close()
			s.dropped += s.old.records
		}
		s.old = s.cur
		if err := s.open(s.off); err != nil {
			s.err = err
			return 0, false
		}
	}
	at := s.off
	if _, err := s.w.Write(hdr[:n]); err != nil {
		s.err = err
		return 0, false
	}
	if _, err := s.w.Write(s.buf); err != nil {
		s.err = err
		return 0, false
	}
	s.off += size
	s.records++
	s.cur.records++
	s.peak = max(s.peak, s.size())
	return at, true
}

// get reads back the record at off and its epoch.
func (s *spillLog) get(off int64) (*history.Txn, uint32, error) {
	if s.cur == nil || s.closed || off <= 0 || off >= s.off {
		return nil, 0, errors.New("leopard: spilled transaction record unavailable")
	}
	g, end := s.cur, s.off
	if off < s.cur.base {
		if s.old == nil || off < s.old.base {
			return nil, 0, errSpillDropped
		}
		g, end = s.old, s.cur.base
	} else if s.flushed < s.off {
		if err := s.w.Flush(); err != nil {
			s.err = err
			return nil, 0, err
		}
		s.flushed = s.off
	}
	var hdr [binary.MaxVarintLen64]byte
	n, err := g.f.ReadAt(hdr[:], off-g.base)
	if n == 0 && err != nil {
		return nil, 0, err
	}
	size, k := binary.Uvarint(hdr[:n])
	if k <= 0 || size > uint64(end-off) {
		return nil, 0, fmt.Errorf("leopard: bad spill record at offset %d", off)
	}
	p := make([]byte, size)
	if _, err := g.f.ReadAt(p, off-g.base+int64(k)); err != nil && !(err == io.EOF && len(p) == 0) {
		return nil, 0, err
	}
	epoch, k := binary.Uvarint(p)
	if k <= 0 {
		return nil, 0, fmt.Errorf("leopard: bad spill record at offset %d", off)
	}
	t, err := decodeTxn(p[k:])
	return t, uint32(epoch), err
}

// close releases the files (and removes them if they still have a name).
func (s *spillLog) close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.old != nil {
		s.old.close()
	}
	if s.cur != nil {
		s.cur.close()
	}
	s.w, s.buf = nil, nil
}

// encodeTxn appends the fields reports use (those compactTxn keeps).
func encodeTxn(b []byte, t *history.Txn) []byte {
	b = binary.AppendVarint(b, int64(t.Index))
	b = binary.AppendVarint(b, int64(t.Session))
	b = binary.AppendVarint(b, int64(t.Seq))
	b = append(b, byte(t.Status), bit(t.HasTime, 1))
	b = binary.AppendVarint(b, t.Invoke)
	b = binary.AppendVarint(b, t.Complete-t.Invoke)
	b = appendString(b, t.ID)
	b = binary.AppendUvarint(b, uint64(len(t.Ops)))
	for i := range t.Ops {
		o := &t.Ops[i]
		p := t.PredOf(o)
		inv, com, _ := t.OpTime(i)
		b = append(b, byte(o.Kind), bit(o.IsList, 1)|bit(o.ListUnknown, 2)|bit(o.HasTime, 4)|bit(o.IsList, 8)|bit(p != nil, 16))
		b = binary.AppendVarint(b, int64(o.Key))
		b = binary.AppendVarint(b, int64(o.Value))
		b = binary.AppendVarint(b, inv-t.Invoke)
		b = binary.AppendVarint(b, com-inv)
		if o.IsList {
			l := t.ListOf(o)
			b = binary.AppendUvarint(b, uint64(len(l)))
			for _, x := range l {
				b = binary.AppendVarint(b, int64(x))
			}
		}
		if p != nil {
			b = appendString(b, p.Table)
			b = appendString(b, p.Where)
			b = appendRows(b, p.Result)
			b = appendRows(b, p.VersionSet)
			b = append(b, bit(p.HasVersionSet, 1))
		}
	}
	return b
}

func bit(c bool, v byte) byte {
	if c {
		return v
	}
	return 0
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendRows(b []byte, rs []history.Row) []byte {
	if rs == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(rs))+1)
	for _, r := range rs {
		b = binary.AppendVarint(b, int64(r.Key))
		b = binary.AppendVarint(b, int64(r.Value))
	}
	return b
}

// spillReader decodes one record; the first malformed field sets err.
type spillReader struct {
	p   []byte
	err error
}

func (r *spillReader) varint() int64 {
	v, n := binary.Varint(r.p)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *spillReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *spillReader) byte() byte {
	if len(r.p) == 0 {
		r.fail()
		return 0
	}
	c := r.p[0]
	r.p = r.p[1:]
	return c
}

// count reads a length that must fit in what is left (each element takes
// at least one byte), so a corrupt record cannot ask for a huge slice.
func (r *spillReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.p)) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *spillReader) str() string {
	n := r.count()
	s := string(r.p[:n])
	r.p = r.p[n:]
	return s
}

func (r *spillReader) rows() []history.Row {
	n := r.uvarint()
	if n == 0 {
		return nil
	}
	if n-1 > uint64(len(r.p)) {
		r.fail()
		return nil
	}
	rs := make([]history.Row, n-1)
	for i := range rs {
		rs[i] = history.Row{Key: int32(r.varint()), Value: int32(r.varint())}
	}
	return rs
}

func (r *spillReader) fail() {
	if r.err == nil {
		r.err = errors.New("leopard: corrupt spill record")
	}
	r.p = nil
}

// decodeTxn is the inverse of encodeTxn.
func decodeTxn(p []byte) (*history.Txn, error) {
	r := &spillReader{p: p}
	t := &history.Txn{Index: int32(r.varint()), Session: int32(r.varint()), Seq: int32(r.varint())}
	t.Status = history.Status(r.byte())
	t.HasTime = r.byte()&1 != 0
	t.Invoke = r.varint()
	t.Complete = t.Invoke + r.varint()
	t.ID = r.str()
	n := r.count()
	t.Ops = make([]history.Op, n)
	for i := range t.Ops {
		o := &t.Ops[i]
		o.Kind = history.Kind(r.byte())
		f := r.byte()
		o.IsList, o.ListUnknown = f&1 != 0, f&2 != 0
		o.Key = int32(r.varint())
		o.Value = int32(r.varint())
		inv := t.Invoke + r.varint()
		com := inv + r.varint()
		if f&4 != 0 {
			t.SetOpTime(i, inv, com)
		}
		if f&8 != 0 {
			l := make([]int32, r.count())
			for j := range l {
				l[j] = int32(r.varint())
			}
			t.SetList(o, l)
		}
		if f&16 != 0 {
			p := history.Predicate{Table: r.str(), Where: r.str()}
			p.Result = r.rows()
			p.VersionSet = r.rows()
			p.HasVersionSet = r.byte()&1 != 0
			t.SetPred(o, p)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return t, nil
}
