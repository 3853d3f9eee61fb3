// Package leopard decodes the interval-based operation traces of Leopard
// (Li, Cui et al., "Leopard: A Black-Box Approach for Efficiently Verifying
// Various Isolation Levels", ICDE 2023) and its tool OrcaVerify/Pisco:
// one JSON record per operation (Java class trace.OperationTrace, as
// serialised by Gson), a JSON array per client file, or a directory of
// such files (a client's trace may be split over numbered files,
// name.0.trace, name.1.trace, ...; files are read in natural name order).
//
// Record fields used: threadID (the client), transactionID, operationID,
// operationTraceType (START, SELECT, UPDATE, INSERT, DELETE, COMMIT,
// ROLLBACK; SET_SNAPSHOT, DDL, DistributeSchedule and FAULT are tolerated
// and counted in History.Ignored), startTimestamp and finishTimestamp (the
// client-side interval, nanoseconds), exception (a statement that failed
// has no effect), isolationLevel (header level), and readTupleList /
// writeTupleList: tuples {table, primaryKey, valueMap{column: value}}.
// traceLockMode and readMode are not represented in the history model:
// only consistent reads (SELECT with readMode CONSISTENT_READ or none)
// become read ops; locking and uncommitted reads, and tuples read by DML
// statements, are counted in Ignored (they read the newest version, not
// the snapshot, so checking them as snapshot reads would be wrong).
//
// Mapping. Each (table, primary key, column) is a key "table,pk#column";
// each read tuple column becomes a read of that key, each written one a
// write, with the operation's interval; a statement's reads precede its
// writes. DELETE writes the value "<deleted>" to the columns it lists. A
// transaction begins at its START (or first record) and ends at its COMMIT
// (committed) or ROLLBACK (aborted); a COMMIT that raised an exception is
// aborted when the message says so (serialization failure, deadlock,
// rollback, abort) and unknown otherwise; a transaction without an end is
// unknown. Values are JSON strings or numbers; the initial contents of the
// tables are not in the trace, so the header carries extra
// "initial": "unknown" (checkers then take a key's first observed value as
// its initial one).
package leopard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/txray/txray/history"
)

func init() {
	history.RegisterFormat(history.Format{
		Name:      "leopard",
		Doc:       "Leopard/OrcaVerify interval operation traces (JSON array of OperationTrace per client file, or a directory of them)",
		Sniff:     Sniff,
		Decode:    Decode,
		DecodeDir: DecodeDir,
		SniffDir:  SniffDir,
	})
}

// Sniff scores a file prefix: a JSON array or object stream mentioning
// operationTraceType.
func Sniff(prefix []byte) int {
	p := history.TrimBOMAndSpace(prefix)
	if len(p) == 0 || (p[0] != '[' && p[0] != '{') {
		return 0
	}
	if bytes.Contains(p, []byte(`"operationTraceType"`)) {
		return 95
	}
	return 0
}

// SniffDir scores a directory: some of its first files sniff as traces.
func SniffDir(dir string) int {
	files, err := traceFiles(dir, 16)
	if err != nil || len(files) == 0 {
		return 0
	}
	return 90
}

// traceFiles lists the regular files of dir that sniff as traces, in
// natural order; limit > 0 stops after that many candidates examined.
func traceFiles(dir string, limit int) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	var out []string
	for i, n := range names {
		if limit > 0 && i >= limit {
			break
		}
		p := filepath.Join(dir, n)
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		buf := make([]byte, 64<<10)
		k, _ := io.ReadFull(f, buf)
		f.Close()
		if Sniff(buf[:k]) > 0 {
			out = append(out, p)
		}
	}
	return out, nil
}

// naturalLess orders names with digit runs compared numerically
// (t.2.trace < t.10.trace).
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			x, y := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(x) != len(y) {
				return len(x) < len(y)
			}
			if x != y {
				return x < y
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// record is one OperationTrace as Gson writes it.
type record struct {
	ThreadID           scalar  `json:"threadID"`
	TransactionID      scalar  `json:"transactionID"`
	OperationID        scalar  `json:"operationID"`
	OperationTraceType string  `json:"operationTraceType"`
	StartTimestamp     *int64  `json:"startTimestamp"`
	FinishTimestamp    *int64  `json:"finishTimestamp"`
	IsolationLevel     string  `json:"isolationLevel"`
	Exception          string  `json:"exception"`
	TraceLockMode      string  `json:"traceLockMode"`
	ReadMode           string  `json:"readMode"`
	ReadTupleList      []tuple `json:"readTupleList"`
	WriteTupleList     []tuple `json:"writeTupleList"`
}

type tuple struct {
	Table      scalar            `json:"table"`
	PrimaryKey scalar            `json:"primaryKey"`
	ValueMap   map[string]scalar `json:"valueMap"`
	// cols holds the columns sorted by name when the fast scanner
	// (fast.go) read the tuple (ValueMap is then nil); fast marks that.
	cols []colVal
	fast bool
}

// colVal is one column of a tuple's valueMap.
type colVal struct {
	c string
	v scalar
}

// columns returns the tuple's columns sorted by name.
func (tp *tuple) columns() []colVal {
	if tp.fast {
		return tp.cols
	}
	cols := make([]colVal, 0, len(tp.ValueMap))
	for c, v := range tp.ValueMap {
		cols = append(cols, colVal{c, v})
	}
	sort.Slice(cols, func(i, j int) bool { return cols[i].c < cols[j].c })
	return cols
}

// scalar is a JSON string, number, boolean or null, kept as text.
type scalar struct {
	S     string
	Set   bool
	IsNum bool
	// n is the integer the fast scanner parsed (hasN; S is then empty).
	n    int64
	hasN bool
}

func (s *scalar) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*s = scalar{}
	case b[0] == '"':
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		*s = scalar{S: str, Set: true}
	case b[0] == '{' || b[0] == '[':
		return fmt.Errorf("want a string or number, got %.20s", b)
	default:
		*s = scalar{S: string(b), Set: true, IsNum: b[0] == '-' || (b[0] >= '0' && b[0] <= '9')}
	}
	return nil
}

// builder accumulates transactions across the files of one history.
type builder struct {
	h       *history.History
	open    map[string]int // txn key -> index in pending
	pending []*history.Txn
	order   []*history.Txn // finished, in end order
	seq     map[int32]int32
	modes   bool
	buf     []byte // scratch for map keys
}

func newBuilder() *builder {
	h := history.New()
	h.Header.Format = "leopard"
	h.Header.Extra = map[string]string{"initial": "unknown"}
	return &builder{h: h, open: map[string]int{}, seq: map[int32]int32{}}
}

// Decode reads one trace file (a JSON array of records, or a stream of
// records).
func Decode(r io.Reader, opts history.DecodeOptions) (*history.History, error) {
	data, err := readTrace(r)
	if err != nil {
		return nil, err
	}
	b := newBuilder()
	ok, err := b.fast(data, opts.Name)
	if !ok {
		// A shape the fast scanner leaves to the general reader: start
		// over with it (same result, fast.go).
		b = newBuilder()
		err = b.file(data, opts.Name)
	}
	if err != nil {
		return nil, err
	}
	return b.finish(), nil
}

func readTrace(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), nil
}

// DecodeDir reads every trace file of a directory (natural name order);
// files that are not traces are counted in Ignored.
func DecodeDir(dir string, opts history.DecodeOptions) (*history.History, error) {
	files, err := traceFiles(dir, 0)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, &history.InputError{File: dir, Msg: "no Leopard trace files in the directory"}
	}
	ents, _ := os.ReadDir(dir)
	// The fast scanner first; a file it leaves to the general reader
	// makes the whole directory start over with the general reader (the
	// files share one builder).
	for _, fast := range []bool{true, false} {
		b := newBuilder()
		if n := countRegular(ents) - len(files); n > 0 {
			b.h.Ignore("non-trace file in directory", n)
		}
		bailed := false
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
			if fast {
				var ok bool
				if ok, err = b.fast(data, p); !ok {
					bailed = true
					break
				}
			} else {
				err = b.file(data, p)
			}
			if err != nil {
				return nil, err
			}
		}
		if !bailed {
			return b.finish(), nil
		}
	}
	panic("unreachable")
}

func countRegular(ents []os.DirEntry) int {
	n := 0
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// file is the general reader: one trace file's bytes (BOM removed) through
// encoding/json.
func (b *builder) file(data []byte, name string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	array := len(trimmed) > 0 && trimmed[0] == '['
	if array {
		if _, err := dec.Token(); err != nil {
			return history.Errorf(name, lineAt(data, dec.InputOffset()), "", "invalid JSON: %v", err)
		}
	}
	for n := 0; ; n++ {
		if array && !dec.More() {
			break
		}
		off := dec.InputOffset()
		var rec record
		err := dec.Decode(&rec)
		if err == io.EOF && !array {
			break
		}
		if err != nil {
			at := dec.InputOffset()
			var se *json.SyntaxError
			if errors.As(err, &se) {
				at = se.Offset
			}
			return history.Errorf(name, lineAt(data, at), "record "+strconv.Itoa(n), "invalid trace record: %v", err)
		}
		if err := b.record(&rec); err != nil {
			return recordErr(err, data, name, off, n)
		}
	}
	if array {
		if _, err := dec.Token(); err != nil {
			return history.Errorf(name, lineAt(data, dec.InputOffset()), "", "invalid JSON: %v", err)
		}
		if dec.More() {
			return history.Errorf(name, lineAt(data, dec.InputOffset()), "", "data after the closing ]")
		}
	}
	return nil
}

// recordErr places an error of record n, which began after offset off.
func recordErr(err *history.InputError, data []byte, name string, off int64, n int) error {
	err.File, err.Line = name, lineAt(data, off)+leadingNewlines(data, off)
	if err.Field == "" {
		err.Field = "record " + strconv.Itoa(n)
	} else {
		err.Field = "record " + strconv.Itoa(n) + "." + err.Field
	}
	return err
}

// leadingNewlines counts the white-space newlines between off and the
// record's first byte (the decoder's offset precedes them).
func leadingNewlines(data []byte, off int64) int {
	n := 0
	for i := off; i < int64(len(data)); i++ {
		switch data[i] {
		case '\n':
			n++
		case ' ', '\t', '\r', ',':
		default:
			return n
		}
	}
	return n
}

func (b *builder) record(rec *record) *history.InputError {
	typ := strings.ToUpper(strings.TrimSpace(rec.OperationTraceType))
	switch typ {
	case "START", "SELECT", "UPDATE", "INSERT", "DELETE", "COMMIT", "ROLLBACK":
	case "SET_SNAPSHOT", "DDL", "DISTRIBUTESCHEDULE", "FAULT":
		b.h.Ignore(strings.ToLower(typ)+" trace", 1)
		return nil
	case "":
		return &history.InputError{Field: "operationTraceType", Msg: "missing"}
	default:
		return &history.InputError{Field: "operationTraceType", Msg: fmt.Sprintf("unknown type %q (want START, SELECT, UPDATE, INSERT, DELETE, COMMIT, ROLLBACK, SET_SNAPSHOT, DDL or FAULT)", rec.OperationTraceType)}
	}
	if !rec.TransactionID.Set {
		return &history.InputError{Field: "transactionID", Msg: "missing"}
	}
	var st, fin int64
	hasTime := rec.StartTimestamp != nil && rec.FinishTimestamp != nil
	if hasTime {
		st, fin = *rec.StartTimestamp, *rec.FinishTimestamp
		if fin < st {
			return &history.InputError{Field: "finishTimestamp", Msg: fmt.Sprintf("%d is before startTimestamp %d", fin, st)}
		}
	}
	if b.h.Header.Level == "" && rec.IsolationLevel != "" {
		b.h.Header.Level = strings.ToLower(strings.ReplaceAll(rec.IsolationLevel, "_", "-"))
	}
	if (rec.TraceLockMode != "" && rec.TraceLockMode != "NON_LOCK") || (rec.ReadMode != "" && rec.ReadMode != "CONSISTENT_READ") {
		b.modes = true
	}
	thread := rec.ThreadID.S
	b.buf = append(append(append(b.buf[:0], thread...), 0), rec.TransactionID.S...)
	i, ok := b.open[string(b.buf)]
	var t *history.Txn
	key := ""
	if ok {
		t = b.pending[i]
	} else {
		key = string(b.buf)
		sess := b.h.Sessions.Str(thread)
		t = &history.Txn{Session: sess, Seq: b.seq[sess], Status: history.Unknown, ID: rec.TransactionID.S,
			HasTime: hasTime, Invoke: st, Complete: fin}
		b.seq[sess]++
		b.open[key] = len(b.pending)
		b.pending = append(b.pending, t)
	}
	if hasTime {
		if !t.HasTime {
			t.HasTime, t.Invoke, t.Complete = true, st, fin
		}
		t.Invoke = min(t.Invoke, st)
		t.Complete = max(t.Complete, fin)
	}
	switch typ {
	case "START":
		return nil
	case "COMMIT", "ROLLBACK":
		t.Status = history.Aborted
		if typ == "COMMIT" {
			t.Status = history.Committed
			if rec.Exception != "" {
				t.Status = history.Unknown
				if abortMessage(rec.Exception) {
					t.Status = history.Aborted
				}
			}
		}
		b.order = append(b.order, t)
		b.pending[b.open[string(b.buf)]] = nil
		delete(b.open, string(b.buf))
		return nil
	}
	if rec.Exception != "" {
		b.h.Ignore("failed statement", 1)
		return nil
	}
	add := func(list []tuple, kind history.Kind) {
		for ti := range list {
			tp := &list[ti]
			if !tp.PrimaryKey.Set || tp.PrimaryKey.S == "" {
				b.h.Ignore("table-level tuple (no primary key)", 1)
				continue
			}
			cols := tp.columns()
			if len(cols) == 0 {
				if kind == history.Write && typ == "DELETE" {
					b.h.Ignore("deleted tuple without columns", 1)
				} else {
					b.h.Ignore("tuple without columns", 1)
				}
				continue
			}
			for _, cv := range cols {
				c, v := cv.c, cv.v
				b.buf = append(append(append(append(append(b.buf[:0], tp.Table.S...), ','), tp.PrimaryKey.S...), '#'), c...)
				op := history.Op{Kind: kind, Key: b.h.Keys.StrBytes(b.buf), Value: history.NoValue}
				switch {
				case kind == history.Write && typ == "DELETE":
					op.Value = b.h.Values.Str("<deleted>")
				case !v.Set:
				case v.hasN:
					op.Value = b.h.Values.Int(v.n)
				case v.IsNum:
					if n, err := strconv.ParseInt(v.S, 10, 64); err == nil {
						op.Value = b.h.Values.Int(n)
					} else {
						op.Value = b.h.Values.Str(v.S)
					}
				default:
					op.Value = b.h.Values.Str(v.S)
				}
				t.Ops = append(t.Ops, op)
				if hasTime {
					t.SetOpTime(len(t.Ops)-1, st, fin)
				}
			}
		}
	}
	if typ == "SELECT" && (rec.ReadMode == "" || rec.ReadMode == "CONSISTENT_READ") {
		add(rec.ReadTupleList, history.Read)
	} else if len(rec.ReadTupleList) > 0 {
		// Locking (current) and uncommitted reads, and the rows a DML
		// statement read, do not follow the consistent-read snapshot and
		// cannot be marked as such in the history model.
		b.h.Ignore("locking or uncommitted read tuple", len(rec.ReadTupleList))
	}
	add(rec.WriteTupleList, history.Write)
	return nil
}

func abortMessage(s string) bool {
	s = strings.ToLower(s)
	for _, w := range []string{"serializ", "deadlock", "rollback", "rolled back", "abort", "could not commit", "conflict"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func (b *builder) finish() *history.History {
	h := b.h
	unfinished := 0
	for _, t := range b.pending {
		if t != nil {
			b.order = append(b.order, t)
			unfinished++
		}
	}
	if unfinished > 0 {
		h.Notes = append(h.Notes, fmt.Sprintf("%d transactions have no COMMIT or ROLLBACK trace; their outcome is unknown", unfinished))
	}
	if b.modes {
		h.Notes = append(h.Notes, "traceLockMode/readMode are not represented in the history: locking and uncommitted reads were left out (counted in ignored), write locks follow from the writes")
	}
	opTime := true
	for _, t := range b.order {
		h.Add(*t)
		if t.Status == history.Committed {
			if !t.HasTime {
				opTime = false
			}
			for i := range t.Ops {
				if !t.Ops[i].HasTime {
					opTime = false
				}
			}
		}
	}
	h.Evidence.Sessions = true
	h.Evidence.ClientTime = len(h.Txns) > 0
	h.Evidence.OpTime = opTime && len(h.Txns) > 0
	return h
}
