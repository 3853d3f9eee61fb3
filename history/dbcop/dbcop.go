// Package dbcop decodes the histories of dbcop (Biswas & Enea, "On the
// Complexity of Checking Transactional Consistency", OOPSLA 2019; tool
// github.com/rnbguy/dbcop, fork amnore/dbcop used by PolySI), in both of
// the serde encodings of its History struct (src/db/history.rs):
//
//	History { params: {id, n_node, n_variable, n_transaction, n_event},
//	          info: string, start: string, end: string,
//	          data: [session: [transaction: {events: [event], success: bool}]] }
//	event = {write: bool, variable: u64, value: u64, success: bool}
//
// Bincode (dbcop's own history.bincode): integers are u64 little-endian,
// bools one byte (0 or 1), strings and sequences a u64 length then the
// items; the dates are RFC 3339 strings. JSON: the same struct through
// serde_json, field names as above.
//
// Mapping to txray's model, following dbcop's verifier and PolySI's loader:
//   - session i of data is session i+1 (dbcop numbers nodes from 1; node 0
//     is its initial transaction); History.Txns lists sessions in order,
//     each in session order;
//   - a transaction with success = false is aborted (its executed writes can
//     still be read, which is an aborted read);
//   - an event with success = false did not execute (dbcop and PolySI ignore
//     it): it is dropped and counted in History.Ignored;
//   - value 0 is the initial value of every variable: a read of 0 is a read
//     of the initial state (nil) unless some transaction writes 0 to that
//     variable, in which case it stays a read of 0 and a note says so;
//   - info (the database name), start and end go to the header.
//
// Bad input is an InputError naming the file, the byte offset (bincode, and
// JSON type errors) or line (JSON syntax errors), and the field.
package dbcop

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/txray/txray/history"
)

func init() {
	history.RegisterFormat(history.Format{
		Name:   "dbcop",
		Doc:    "dbcop history (bincode history.bincode, or its serde JSON form)",
		Sniff:  Sniff,
		Decode: Decode,
	})
}

// Event, Txn and Hist mirror dbcop's serde structs.
type Event struct {
	Write    bool   `json:"write"`
	Variable uint64 `json:"variable"`
	Value    uint64 `json:"value"`
	Success  bool   `json:"success"`
}

// Txn is a dbcop transaction.
type Txn struct {
	Events  []Event `json:"events"`
	Success bool    `json:"success"`
}

// Params are dbcop's history parameters.
type Params struct {
	ID           uint64 `json:"id"`
	NNode        uint64 `json:"n_node"`
	NVariable    uint64 `json:"n_variable"`
	NTransaction uint64 `json:"n_transaction"`
	NEvent       uint64 `json:"n_event"`
}

// Hist is a dbcop history.
type Hist struct {
	Params Params  `json:"params"`
	Info   string  `json:"info"`
	Start  string  `json:"start"`
	End    string  `json:"end"`
	Data   [][]Txn `json:"data"`
}

// maxLen bounds bincode lengths before allocation: no sequence can have
// more items than bytes left.
const maxStr = 1 << 20

// Sniff scores a prefix: 85 for a plausible bincode header (five small
// counts, then an info string and an RFC 3339 start date), 90 for a JSON
// object with "params" and "data" and dbcop's event fields.
func Sniff(prefix []byte) int {
	p := history.TrimBOMAndSpace(prefix)
	if len(p) > 0 && p[0] == '{' {
		if bytes.Contains(p, []byte(`"params"`)) && bytes.Contains(p, []byte(`"n_node"`)) &&
			(bytes.Contains(p, []byte(`"data"`)) || bytes.Contains(p, []byte(`"info"`))) {
			return 90
		}
		return 0
	}
	if len(prefix) < 48 {
		return 0
	}
	for i := 1; i < 5; i++ { // n_node .. n_event: small counts
		if binary.LittleEndian.Uint64(prefix[8*i:]) > 1<<32 {
			return 0
		}
	}
	n := binary.LittleEndian.Uint64(prefix[40:])
	if n > 4096 || 48+n+8 > uint64(len(prefix)) || !utf8.Valid(prefix[48:48+n]) {
		return 0
	}
	off := 48 + n
	m := binary.LittleEndian.Uint64(prefix[off:])
	off += 8
	if m < 10 || m > 64 || off+m > uint64(len(prefix)) {
		return 0
	}
	d := prefix[off : off+m]
	if d[0] < '0' || d[0] > '9' || d[4] != '-' {
		return 0
	}
	return 85
}

// Decode reads a dbcop history, bincode or JSON (told by the first
// non-space byte: '{' is JSON).
func Decode(r io.Reader, opts history.DecodeOptions) (*history.History, error) {
	data, err := io.ReadAll(bufio.NewReader(r))
	if err != nil {
		return nil, err
	}
	var hh *Hist
	if p := history.TrimBOMAndSpace(data); len(p) > 0 && p[0] == '{' {
		hh, err = decodeJSON(data, opts.Name)
	} else {
		hh, err = DecodeBincode(data, opts.Name)
	}
	if err != nil {
		return nil, err
	}
	return Build(hh), nil
}

func decodeJSON(data []byte, name string) (*Hist, error) {
	var h Hist
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&h); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, history.Errorf(name, lineOf(data, se.Offset), "", "JSON syntax error at byte offset %d: %v", se.Offset, err)
		case errors.As(err, &te):
			return nil, history.Errorf(name, lineOf(data, te.Offset), te.Field, "byte offset %d: want %s, got JSON %s", te.Offset, te.Type, te.Value)
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			return nil, history.Errorf(name, lineOf(data, int64(len(data))), "", "truncated JSON at byte offset %d", len(data))
		}
		return nil, history.Errorf(name, 0, "", "%v", err)
	}
	if dec.More() {
		off := dec.InputOffset()
		return nil, history.Errorf(name, lineOf(data, off), "", "unexpected data after the history at byte offset %d", off)
	}
	return &h, nil
}

func lineOf(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// binReader reads bincode values, naming the field and offset on error.
type binReader struct {
	data []byte
	off  int
	name string
}

func (b *binReader) fail(at int, field, format string, args ...any) error {
	return history.Errorf(b.name, 0, field, "byte offset %d: %s", at, fmt.Sprintf(format, args...))
}

func (b *binReader) u64(field string) (uint64, error) {
	if len(b.data)-b.off < 8 {
		return 0, b.fail(b.off, field, "truncated: %d byte(s) left, want 8 (u64)", len(b.data)-b.off)
	}
	v := binary.LittleEndian.Uint64(b.data[b.off:])
	b.off += 8
	return v, nil
}

func (b *binReader) boolean(field string) (bool, error) {
	if b.off >= len(b.data) {
		return false, b.fail(b.off, field, "truncated: want 1 byte (bool)")
	}
	c := b.data[b.off]
	if c > 1 {
		return false, b.fail(b.off, field, "bool byte is %d, want 0 or 1", c)
	}
	b.off++
	return c == 1, nil
}

func (b *binReader) str(field string) (string, error) {
	at := b.off
	n, err := b.u64(field + ".len")
	if err != nil {
		return "", err
	}
	if n > maxStr || n > uint64(len(b.data)-b.off) {
		return "", b.fail(at, field, "string length %d exceeds the %d byte(s) left", n, len(b.data)-b.off)
	}
	s := b.data[b.off : b.off+int(n)]
	if !utf8.Valid(s) {
		return "", b.fail(b.off, field, "string is not valid UTF-8")
	}
	b.off += int(n)
	return string(s), nil
}

// count reads a sequence length; each item takes at least minItem bytes.
func (b *binReader) count(field string, minItem int) (int, error) {
	at := b.off
	n, err := b.u64(field)
	if err != nil {
		return 0, err
	}
	if n > uint64((len(b.data)-b.off)/minItem) {
		return 0, b.fail(at, field, "%d item(s) cannot fit in the %d byte(s) left", n, len(b.data)-b.off)
	}
	return int(n), nil
}

// DecodeBincode parses dbcop's bincode form; name is used in errors.
func DecodeBincode(data []byte, name string) (*Hist, error) {
	b := &binReader{data: data, name: name}
	h := &Hist{}
	var err error
	for _, f := range []struct {
		p    *uint64
		name string
	}{{&h.Params.ID, "params.id"}, {&h.Params.NNode, "params.n_node"}, {&h.Params.NVariable, "params.n_variable"},
		{&h.Params.NTransaction, "params.n_transaction"}, {&h.Params.NEvent, "params.n_event"}} {
		if *f.p, err = b.u64(f.name); err != nil {
			return nil, err
		}
	}
	if h.Info, err = b.str("info"); err != nil {
		return nil, err
	}
	if h.Start, err = b.str("start"); err != nil {
		return nil, err
	}
	if h.End, err = b.str("end"); err != nil {
		return nil, err
	}
	ns, err := b.count("data.len", 8)
	if err != nil {
		return nil, err
	}
	h.Data = make([][]Txn, ns)
	for s := range h.Data {
		f := "data[" + strconv.Itoa(s) + "]"
		nt, err := b.count(f+".len", 9)
		if err != nil {
			return nil, err
		}
		txns := make([]Txn, nt)
		for t := range txns {
			ft := f + "[" + strconv.Itoa(t) + "]"
			ne, err := b.count(ft+".events.len", 18)
			if err != nil {
				return nil, err
			}
			evs := make([]Event, ne)
			for e := range evs {
				fe := ft + ".events[" + strconv.Itoa(e) + "]"
				ev := &evs[e]
				if ev.Write, err = b.boolean(fe + ".write"); err != nil {
					return nil, err
				}
				if ev.Variable, err = b.u64(fe + ".variable"); err != nil {
					return nil, err
				}
				if ev.Value, err = b.u64(fe + ".value"); err != nil {
					return nil, err
				}
				if ev.Success, err = b.boolean(fe + ".success"); err != nil {
					return nil, err
				}
			}
			txns[t].Events = evs
			if txns[t].Success, err = b.boolean(ft + ".success"); err != nil {
				return nil, err
			}
		}
		h.Data[s] = txns
	}
	if b.off != len(data) {
		return nil, b.fail(b.off, "", "%d unexpected byte(s) after the history", len(data)-b.off)
	}
	return h, nil
}

// Build converts a dbcop history to txray's model (rules in the package
// comment).
func Build(d *Hist) *history.History {
	h := history.New()
	h.Header.Format = "dbcop"
	h.Header.Workload = "rw-register"
	h.Header.DB = d.Info
	h.Header.Extra = map[string]string{
		"dbcop_id": strconv.FormatUint(d.Params.ID, 10), "n_node": strconv.FormatUint(d.Params.NNode, 10),
		"n_variable": strconv.FormatUint(d.Params.NVariable, 10), "n_transaction": strconv.FormatUint(d.Params.NTransaction, 10),
		"n_event": strconv.FormatUint(d.Params.NEvent, 10), "start": d.Start, "end": d.End,
	}
	zeroWritten := map[int32]bool{}
	dropped := 0
	for s, sess := range d.Data {
		sid := h.Sessions.Int(int64(s + 1))
		for t, tx := range sess {
			st := history.Committed
			if !tx.Success {
				st = history.Aborted
			}
			x := history.Txn{Session: sid, Seq: int32(t), Status: st, ID: strconv.Itoa(s+1) + ":" + strconv.Itoa(t)}
			x.Ops = make([]history.Op, 0, len(tx.Events))
			for _, ev := range tx.Events {
				if !ev.Success {
					dropped++
					continue
				}
				k := h.Keys.Int(int64(ev.Variable))
				var v int32
				if ev.Value > 1<<63-1 {
					v = h.Values.Str(strconv.FormatUint(ev.Value, 10))
				} else {
					v = h.Values.Int(int64(ev.Value))
				}
				o := history.Op{Kind: history.Read, Key: k, Value: v}
				if ev.Write {
					o.Kind = history.Write
					if ev.Value == 0 {
						zeroWritten[k] = true
					}
				}
				x.Ops = append(x.Ops, o)
			}
			h.Add(x)
		}
	}
	if dropped > 0 {
		h.Ignore("dbcop event not executed (success=false)", dropped)
	}
	if zero, ok := h.Values.LookupInt(0); ok {
		kept := 0
		for i := range h.Txns {
			ops := h.Txns[i].Ops
			for j := range ops {
				if o := &ops[j]; o.Kind == history.Read && o.Value == zero {
					if zeroWritten[o.Key] {
						kept++
					} else {
						o.Value = history.NoValue
					}
				}
			}
		}
		if kept > 0 {
			h.Notes = append(h.Notes, strconv.Itoa(kept)+" read(s) of 0 kept as reads of the value 0 because 0 is also written to their variable (0 is otherwise the initial value)")
		}
	}
	if uint64(len(d.Data)) != d.Params.NNode {
		h.Notes = append(h.Notes, fmt.Sprintf("params.n_node is %d but the history has %d session(s)", d.Params.NNode, len(d.Data)))
	}
	h.Evidence.Sessions = len(h.Txns) > 0
	return h
}
