package leopard

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/txray/txray/history"
)

// Encode writes h as one Leopard trace file (a JSON array of
// OperationTrace records, in the shape Leopard's Gson serialisation
// writes): per transaction a START record at its invoke time, one record
// per operation (a read is a SELECT with one consistent-read tuple, a
// write an UPDATE with one written tuple: table "t", the key as primary
// key, column "v"; an op without an interval gets a record without
// timestamps), and a COMMIT or ROLLBACK (an unknown outcome: a
// COMMIT with an exception that names no abort) at its completion. Only
// item reads and writes are representable; other operations are an
// error. Decode maps a key k back to "t,k#v". Used to measure and test the
// decoder on histories of any shape (txray gen output converted).
func Encode(w io.Writer, h *history.History) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	b := make([]byte, 0, 1024)
	b = append(b, "[\n"...)
	first := true
	for ti := range h.Txns {
		t := &h.Txns[ti]
		thread := "-1"
		if t.Session >= 0 {
			thread = h.Sessions.String(t.Session)
		}
		id := t.ID
		if id == "" {
			id = strconv.Itoa(ti)
		}
		rec := func(n int, typ string, st, fin int64, hasTime bool) {
			if !first {
				b = append(b, ",\n"...)
			}
			first = false
			b = append(b, `{"threadID":`...)
			b = strconv.AppendQuote(b, thread)
			b = append(b, `,"transactionID":`...)
			b = strconv.AppendQuote(b, id)
			b = append(b, `,"operationID":`...)
			b = strconv.AppendQuote(b, id+","+strconv.Itoa(n))
			b = append(b, `,"operationTraceType":"`...)
			b = append(b, typ...)
			b = append(b, '"')
			if hasTime {
				b = append(b, `,"startTimestamp":`...)
				b = strconv.AppendInt(b, st, 10)
				b = append(b, `,"finishTimestamp":`...)
				b = strconv.AppendInt(b, fin, 10)
			}
		}
		level := ""
		if ti == 0 && h.Header.Level != "" {
			level = h.Header.Level
		}
		rec(0, "START", t.Invoke, t.Invoke, t.HasTime)
		if level != "" {
			b = append(b, `,"isolationLevel":`...)
			b = strconv.AppendQuote(b, level)
		}
		b = append(b, '}')
		for i := range t.Ops {
			o := &t.Ops[i]
			if (o.Kind != history.Read && o.Kind != history.Write) || o.IsList {
				return fmt.Errorf("leopard: transaction %d op %d: only item reads and writes can be written as traces, not %s", ti, i, o.Kind)
			}
			st, fin, ok := t.OpTime(i)
			typ, list := "SELECT", "readTupleList"
			if o.Kind == history.Write {
				typ, list = "UPDATE", "writeTupleList"
			}
			// An op without an interval (one an aborted transaction never
			// got to run) stays without one.
			rec(i+1, typ, st, fin, t.HasTime && ok)
			if o.Kind == history.Read {
				b = append(b, `,"traceLockMode":"NON_LOCK","readMode":"CONSISTENT_READ"`...)
			} else {
				b = append(b, `,"traceLockMode":"EXCLUSIVE_LOCK"`...)
			}
			b = append(b, `,"`...)
			b = append(b, list...)
			b = append(b, `":[{"table":"t","primaryKey":`...)
			b = strconv.AppendQuote(b, h.Keys.String(o.Key))
			b = append(b, `,"valueMap":{"v":`...)
			switch {
			case o.Value == history.NoValue:
				b = append(b, "null"...)
			default:
				if s := h.Values.Get(o.Value); s.IsStr {
					b = strconv.AppendQuote(b, s.S)
				} else {
					b = strconv.AppendInt(b, s.I, 10)
				}
			}
			b = append(b, "}}]}"...)
		}
		switch t.Status {
		case history.Committed:
			rec(len(t.Ops)+1, "COMMIT", t.Complete, t.Complete, t.HasTime)
		case history.Aborted:
			rec(len(t.Ops)+1, "ROLLBACK", t.Complete, t.Complete, t.HasTime)
		default:
			rec(len(t.Ops)+1, "COMMIT", t.Complete, t.Complete, t.HasTime)
			b = append(b, `,"exception":"connection lost"`...)
		}
		b = append(b, '}')
		if len(b) > 1<<15 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	b = append(b, "\n]\n"...)
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}
