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
type spillLog struct {
	f       *os.File
	name    string // non-empty while the file still has a name to remove
	w       *bufio.Writer
	off     int64 // logical size: bytes written, buffered ones included
	flushed int64 // bytes known to be in the file
	buf     []byte
	err     error // first error; no more puts after it
	closed  bool
	records int64
}

// put appends t's record and returns its offset (> 0), or false when the
// log cannot be written (I/O error, or closed).
func (s *spillLog) put(t *history.Txn) (int64, bool) {
	if s.err != nil || s.closed {
		return 0, false
	}
	if s.f == nil {
		f, err := os.CreateTemp("", "txray-leopard-*.spill")
		if err != nil {
			s.err = err
			return 0, false
		}
		s.f, s.name = f, f.Name()
		// Unlink at once where the system allows it (the file lives until
		// closed, and nothing is left behind if the process dies).
		if os.Remove(s.name) == nil {
			s.name = ""
		}
		s.w = bufio.NewWriterSize(f, 1<<16)
		if _, err := s.w.Write([]byte{0}); err != nil { // offset 0 is "none"
			s.err = err
			return 0, false
		}
		s.off = 1
	}
	s.buf = encodeTxn(s.buf[:0], t)
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(s.buf)))
	at := s.off
	if _, err := s.w.Write(hdr[:n]); err != nil {
		s.err = err
		return 0, false
	}
	if _, err := s.w.Write(s.buf); err != nil {
		s.err = err
		return 0, false
	}
	s.off += int64(n + len(s.buf))
	s.records++
	return at, true
}

// get reads back the record at off.
func (s *spillLog) get(off int64) (*history.Txn, error) {
	if s.f == nil || s.closed || off <= 0 || off >= s.off {
		return nil, errors.New("leopard: spilled transaction record unavailable")
	}
	if s.flushed < s.off {
		if err := s.w.Flush(); err != nil {
			s.err = err
			return nil, err
		}
		s.flushed = s.off
	}
	var hdr [binary.MaxVarintLen64]byte
	n, err := s.f.ReadAt(hdr[:], off)
	if n == 0 && err != nil {
		return nil, err
	}
	size, k := binary.Uvarint(hdr[:n])
	if k <= 0 || size > uint64(s.off-off) {
		return nil, fmt.Errorf("leopard: bad spill record at offset %d", off)
	}
	p := make([]byte, size)
	if _, err := s.f.ReadAt(p, off+int64(k)); err != nil && !(err == io.EOF && len(p) == 0) {
		return nil, err
	}
	return decodeTxn(p)
}

// close releases the file (and removes it if it still has a name).
func (s *spillLog) close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.f != nil {
		s.f.Close()
		if s.name != "" {
			os.Remove(s.name)
		}
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
