package jsonl

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"

	"github.com/txray/txray/history"
)

// Writer writes a native history incrementally: WriteHeader once, then
// WriteTxn per transaction as it completes, then Close, which flushes and,
// when the destination is an *os.File, fsyncs it. A crash leaves a readable
// prefix (every line is complete once Flush returns).
type Writer struct {
	w   *bufio.Writer
	f   *os.File
	buf []byte
}

// NewWriter wraps w.
func NewWriter(w io.Writer) *Writer {
	wr := &Writer{w: bufio.NewWriterSize(w, 256<<10)}
	if f, ok := w.(*os.File); ok {
		wr.f = f
	}
	return wr
}

// WriteHeader writes the header line.
func (w *Writer) WriteHeader(hd history.Header, ev history.Evidence) error {
	b, err := json.Marshal(HeaderLine{Txray: 1, DB: hd.DB, Version: hd.Version, Level: hd.Level,
		Workload: hd.Workload, Clock: hd.Clock, Evidence: &ev, Extra: hd.Extra, Tables: hd.Tables})
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.w.Write(b)
	return err
}

// WriteTxn writes one transaction of h (interners render keys and values).
func (w *Writer) WriteTxn(h *history.History, t *history.Txn) error {
	w.buf = AppendTxn(w.buf[:0], h, t)
	_, err := w.w.Write(w.buf)
	return err
}

// WriteVersionOrder writes a version-order evidence record.
func (w *Writer) WriteVersionOrder(h *history.History, key int32, order []int32) error {
	b := append(w.buf[:0], `{"type":"version_order","k":`...)
	b = appendScalar(b, h.Keys, key)
	b = append(b, `,"order":[`...)
	for i, v := range order {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendScalar(b, h.Values, v)
	}
	b = append(b, "]}\n"...)
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// WriteVersionSet writes a version_set evidence record: the version set of
// predicate read op (0-based) of t, for writers that learn it after t was
// written (docs/history-format.md).
func (w *Writer) WriteVersionSet(h *history.History, t *history.Txn, op int, vs []history.Row) error {
	b := append(w.buf[:0], `{"type":"version_set","txn":`...)
	b = strconv.AppendQuote(b, t.ID)
	b = append(b, `,"op":`...)
	b = strconv.AppendInt(b, int64(op), 10)
	b = appendVersionSet(b, h, vs)
	b = append(b, "}\n"...)
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// Flush pushes buffered lines to the destination.
func (w *Writer) Flush() error { return w.w.Flush() }

// Close flushes and fsyncs (for files). It does not close the destination.
func (w *Writer) Close() error {
	if err := w.w.Flush(); err != nil {
		return err
	}
	if w.f != nil {
		if err := w.f.Sync(); err != nil {
			// Sync of a pipe or terminal is not supported; ignore only that.
			if st, e2 := w.f.Stat(); e2 == nil && st.Mode().IsRegular() {
				return err
			}
		}
	}
	return nil
}

// Encode writes a whole history (header, transactions, version orders).
func Encode(w io.Writer, h *history.History) error {
	wr := NewWriter(w)
	if err := wr.WriteHeader(h.Header, h.Evidence); err != nil {
		return err
	}
	for i := range h.Txns {
		if err := wr.WriteTxn(h, &h.Txns[i]); err != nil {
			return err
		}
	}
	// in key-id order, so that encoding is deterministic
	for _, k := range slices.Sorted(maps.Keys(h.VersionOrder)) {
		if err := wr.WriteVersionOrder(h, k, h.VersionOrder[k]); err != nil {
			return err
		}
	}
	return wr.Flush()
}

// AppendTxn appends the JSON line (with trailing newline) for t.
func AppendTxn(b []byte, h *history.History, t *history.Txn) []byte {
	b = append(b, `{"id":`...)
	id := t.ID
	if id == "" {
		id = strconv.Itoa(int(t.Index))
	}
	b = appendQuote(b, id)
	if t.Session >= 0 {
		b = append(b, `,"session":`...)
		b = appendQuote(b, h.Sessions.String(t.Session))
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, int64(t.Seq), 10)
	}
	b = append(b, `,"status":"`...)
	b = append(b, t.Status.String()...)
	b = append(b, '"')
	if t.HasTime {
		b = append(b, `,"invoke":`...)
		b = strconv.AppendInt(b, t.Invoke, 10)
		b = append(b, `,"complete":`...)
		b = strconv.AppendInt(b, t.Complete, 10)
	}
	if t.StartTS.Set {
		b = append(b, `,"start_ts":`...)
		b = appendTS(b, t.StartTS)
	}
	if t.CommitTS.Set {
		b = append(b, `,"commit_ts":`...)
		b = appendTS(b, t.CommitTS)
	}
	b = append(b, `,"ops":[`...)
	for i := range t.Ops {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendOp(b, h, t, i)
	}
	return append(b, "]}\n"...)
}

func appendTS(b []byte, ts history.Timestamp) []byte {
	if ts.L == 0 {
		return strconv.AppendInt(b, ts.P, 10)
	}
	b = append(b, `{"p":`...)
	b = strconv.AppendInt(b, ts.P, 10)
	b = append(b, `,"l":`...)
	b = strconv.AppendInt(b, ts.L, 10)
	return append(b, '}')
}

func appendOp(b []byte, h *history.History, t *history.Txn, j int) []byte {
	o := &t.Ops[j]
	b = append(b, `{"f":"`...)
	b = append(b, o.Kind.String()...)
	b = append(b, '"')
	if p := t.PredOf(o); o.Kind == history.PredRead && p != nil {
		b = append(b, `,"table":`...)
		b = appendQuote(b, p.Table)
		b = append(b, `,"where":`...)
		b = appendQuote(b, p.Where)
		b = append(b, `,"result":[`...)
		for i, r := range p.Result {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = appendScalar(b, h.Keys, r.Key)
			b = append(b, ',')
			b = appendScalar(b, h.Values, r.Value)
			b = append(b, ']')
		}
		b = append(b, ']')
		if p.HasVersionSet {
			b = appendVersionSet(b, h, p.VersionSet)
		}
	} else {
		b = append(b, `,"k":`...)
		b = appendScalar(b, h.Keys, o.Key)
		b = append(b, `,"v":`...)
		switch {
		case o.IsList && !o.ListUnknown:
			b = append(b, '[')
			for i, v := range t.ListOf(o) {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendScalar(b, h.Values, v)
			}
			b = append(b, ']')
		case o.Value == history.NoValue:
			b = append(b, "null"...)
		default:
			b = appendScalar(b, h.Values, o.Value)
		}
		if o.Kind == history.Write && h.RowImages != nil {
			if img, ok := h.RowImage(o.Key, o.Value); ok {
				b = appendRowImage(b, h, o.Key, img)
			}
		}
	}
	if inv, com, ok := t.OpTime(j); ok {
		b = append(b, `,"invoke":`...)
		b = strconv.AppendInt(b, inv, 10)
		b = append(b, `,"complete":`...)
		b = strconv.AppendInt(b, com, 10)
	}
	return append(b, '}')
}

// appendRowImage appends `,"row":...` for img, a row image of key.
func appendRowImage(b []byte, h *history.History, key int32, img *history.RowImage) []byte {
	if img.Deleted {
		return append(b, `,"row":null`...)
	}
	ti := h.TableOf(key)
	if ti < 0 {
		return b // no declared table: the image cannot be named
	}
	b = append(b, `,"row":{`...)
	n := 0
	for i, c := range img.Cols {
		if !img.Has[i] || ti < 0 || i >= len(h.Header.Tables[ti].Columns) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendQuote(b, h.Header.Tables[ti].Columns[i])
		b = append(b, ':')
		switch {
		case c.Null:
			b = append(b, "null"...)
		case c.V.IsStr:
			b = appendQuote(b, c.V.S)
		default:
			b = strconv.AppendInt(b, c.V.I, 10)
		}
	}
	return append(b, '}')
}

func appendScalar(b []byte, in *history.Interner, id int32) []byte {
	if id < 0 {
		return append(b, "null"...)
	}
	s := in.Get(id)
	if s.IsStr {
		return appendQuote(b, s.S)
	}
	return strconv.AppendInt(b, s.I, 10)
}

// appendQuote appends s as a JSON string.
func appendQuote(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
