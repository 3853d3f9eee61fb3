// Package jsonl is txray's native history format: JSON Lines, a header line
// then one transaction per line, as specified in docs/history-format.md and
// docs/history.schema.json.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/txray/txray/history"
)

func init() {
	history.RegisterFormat(history.Format{
		Name:   "jsonl",
		Doc:    "txray native JSON Lines (header line, one transaction per line)",
		Sniff:  sniff,
		Decode: Decode,
	})
}

func sniff(p []byte) int {
	p = history.TrimBOMAndSpace(p)
	if len(p) == 0 || p[0] != '{' {
		return 0
	}
	line := p
	if i := bytes.IndexByte(p, '\n'); i >= 0 {
		line = p[:i]
	}
	if bytes.Contains(line, []byte(`"txray"`)) {
		return 100
	}
	if bytes.Contains(line, []byte(`"ops"`)) && bytes.Contains(line, []byte(`"status"`)) {
		return 80
	}
	return 0
}

// HeaderLine is the first line of a native history.
type HeaderLine struct {
	Txray    int               `json:"txray"`
	DB       string            `json:"db,omitempty"`
	Version  string            `json:"db_version,omitempty"`
	Level    string            `json:"level,omitempty"`
	Workload string            `json:"workload,omitempty"`
	Clock    string            `json:"clock,omitempty"`
	Evidence *history.Evidence `json:"evidence,omitempty"`
	Extra    map[string]string `json:"extra,omitempty"`
	Tables   []history.Table   `json:"tables,omitempty"`
}

type txnLine struct {
	Txray        *int              `json:"txray"`
	Type         string            `json:"type"`
	ID           json.RawMessage   `json:"id"`
	Session      json.RawMessage   `json:"session"`
	Seq          *int64            `json:"seq"`
	Status       string            `json:"status"`
	Invoke       *int64            `json:"invoke"`
	Complete     *int64            `json:"complete"`
	StartTS      json.RawMessage   `json:"start_ts"`
	CommitTS     json.RawMessage   `json:"commit_ts"`
	Ops          []opLine          `json:"ops"`
	K            json.RawMessage   `json:"k"`
	Order        []json.RawMessage `json:"order"`
	Txn          json.RawMessage   `json:"txn"`
	Op           *int              `json:"op"`
	VS           []json.RawMessage `json:"vs"`
	DB           string            `json:"db"`
	Version      string            `json:"db_version"`
	Level        string            `json:"level"`
	Workload     string            `json:"workload"`
	Clock        string            `json:"clock"`
	Evidence     *history.Evidence `json:"evidence"`
	Extra        map[string]string `json:"extra"`
	Tables       []history.Table   `json:"tables"`
	RawOpsAbsent bool              `json:"-"`
}

type opLine struct {
	F        string            `json:"f"`
	K        json.RawMessage   `json:"k"`
	V        json.RawMessage   `json:"v"`
	Invoke   *int64            `json:"invoke"`
	Complete *int64            `json:"complete"`
	Table    string            `json:"table"`
	Where    string            `json:"where"`
	Result   []json.RawMessage `json:"result"`
	VS       []json.RawMessage `json:"vs"`
	Row      json.RawMessage   `json:"row"`
}

// Decode reads a native history. Lines are: an optional header
// ({"txray":1,...}), transactions ({"ops":[...],...}), and evidence records
// ({"type":"version_order","k":K,"order":[v1,v2,...]}). Blank lines are
// skipped. Errors name the line and field.
func Decode(r io.Reader, opts history.DecodeOptions) (*history.History, error) {
	if opts.SizeHint >= parallelMin {
		return decodeParallel(r, opts)
	}
	return decode(r, opts, false)
}

func decode(r io.Reader, opts history.DecodeOptions, slowOnly bool) (*history.History, error) {
	h := history.New()
	d := &decoder{h: h, file: opts.Name, seqs: map[int32]int32{}}
	d.fast.off = slowOnly
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var split lastLineSplit
	sc.Split(split.scan)
	line := 0
	var seen int64
	for sc.Scan() {
		line++
		seen += int64(len(sc.Bytes())) + 1
		if line == 1000 && opts.SizeHint > seen {
			// presize from the average line length so far
			want := int(int64(len(h.Txns)) * opts.SizeHint / seen * 11 / 10)
			if want > cap(h.Txns) {
				h.Txns = append(make([]history.Txn, 0, want), h.Txns...)
			}
		}
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, bom)
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		if err := d.line(b, line); err != nil {
			if split.unterminated && d.any && incompleteJSON(b) {
				d.torn(line, err)
				break
			}
			return nil, err
		}
		d.any = true
	}
	if err := sc.Err(); err != nil {
		return nil, history.Errorf(opts.Name, line+1, "", "read error: %v", err)
	}
	if err := d.resolveVersionSets(); err != nil {
		return nil, err
	}
	d.finish()
	return h, nil
}

type decoder struct {
	h      *history.History
	file   string
	seqs   map[int32]int32
	anyTS  bool
	allTS  bool
	anyCT  bool
	allCT  bool
	anyOT  bool
	anySes bool
	n      int
	fast   fast
	// any: a line decoded before (a torn last line needs a complete one
	// before it; a lone cut-off line is an error).
	any bool
	// vsets are version_set records, attached to their predicate reads
	// once every transaction is read (resolveVersionSets).
	vsets []vsetRecord
	// voLine is the line of each key's version_order record: a second,
	// different one is an input error, never a silent replacement.
	voLine map[int32]int
}

// bom is the UTF-8 byte order mark, accepted (and skipped) at the start of
// the input as the format sniffer accepts it.
var bom = []byte("\xEF\xBB\xBF")

// lastLineSplit is bufio.ScanLines that remembers whether the token it
// returned last had no line end: the input's last line, cut off.
type lastLineSplit struct{ unterminated bool }

func (s *lastLineSplit) scan(data []byte, atEOF bool) (int, []byte, error) {
	adv, tok, err := bufio.ScanLines(data, atEOF)
	if tok != nil && atEOF && adv == len(data) && (len(data) == 0 || data[len(data)-1] != '\n') {
		s.unterminated = true
	}
	return adv, tok, err
}

// incompleteJSON reports whether b is a proper prefix of a JSON text: it is
// not valid, and the only fault is that it ends too early (inside a string,
// number, literal, array or object). A complete value with bad content, or
// a syntax error before the end, is not a prefix.
func incompleteJSON(b []byte) bool {
	if json.Valid(b) {
		return false
	}
	for _, c := range []string{"", "0", "rue", "ue", "e", "alse", "lse", "se", "ull", "ll", "l"} {
		var v json.RawMessage
		err := json.Unmarshal(append(b[:len(b):len(b)], c...), &v)
		var se *json.SyntaxError
		if errors.As(err, &se) && se.Error() == "unexpected end of JSON input" {
			return true
		}
	}
	return false
}

// TornReason is the History.Ignored reason for a torn last line.
const TornReason = "torn last line (input ends mid-record, as after a crash or a full disk)"

// torn drops the input's last line, which has no line end and does not
// decode (err): a writer that crashed or hit a full disk leaves such a
// line, and the history is read up to the line before it, as
// docs/history-format.md promises. It is counted in Ignored and named in
// Notes. A bad line with a line end, or before the last, stays an error.
func (d *decoder) torn(line int, err error) {
	d.h.Ignore(TornReason, 1)
	_ = err // the decode error only repeats that the record ends early
	n := fmt.Sprintf("%s: line %d is torn (the input ends mid-record, without a line end, as after a crash or a full disk); it was dropped and the history read up to line %d",
		displayName(d.file), line, line-1)
	d.h.Notes = append(d.h.Notes, n)
	d.h.Notices = append(d.h.Notices, n)
}

func displayName(f string) string {
	if f == "" {
		return "input"
	}
	return f
}

func (d *decoder) err(line int, field, f string, a ...any) error {
	return history.Errorf(d.file, line, field, f, a...)
}

func (d *decoder) line(b []byte, line int) error {
	if b[0] == '{' && len(b) > 9 && b[2] == 't' && d.fast.versionOrder(b, d, line) {
		return nil
	}
	var ft history.Txn
	if d.fast.line(b, d, &ft) {
		if ft.Session >= 0 && !d.fast.haveSeq {
			ft.Seq = d.seqs[ft.Session]
		}
		d.addTxn(ft)
		return nil
	}
	var tl txnLine
	if err := json.Unmarshal(b, &tl); err != nil {
		return d.err(line, jsonField(err), "malformed JSON: %v", err)
	}
	if tl.Txray != nil {
		hd := &d.h.Header
		hd.DB, hd.Version, hd.Level, hd.Workload, hd.Clock, hd.Extra = tl.DB, tl.Version, tl.Level, tl.Workload, tl.Clock, tl.Extra
		if tl.Evidence != nil {
			d.h.Evidence = *tl.Evidence
		}
		for i := range tl.Tables {
			if err := tl.Tables[i].Validate(); err != nil {
				return d.err(line, fmt.Sprintf("tables[%d]", i), "%v", err)
			}
		}
		if d.h.RowImages != nil && !reflect.DeepEqual(hd.Tables, tl.Tables) {
			return d.err(line, "tables", "a second header declares other tables after row images were read under the first")
		}
		hd.Tables = tl.Tables
		return nil
	}
	switch tl.Type {
	case "", "txn":
	case "version_order":
		k, err := d.scalar(tl.K, line, "k", d.h.Keys)
		if err != nil {
			return err
		}
		if d.h.VersionOrder == nil {
			d.h.VersionOrder = map[int32][]int32{}
		}
		var ord []int32
		for i, raw := range tl.Order {
			v, err := d.scalar(raw, line, fmt.Sprintf("order[%d]", i), d.h.Values)
			if err != nil {
				return err
			}
			ord = append(ord, v)
		}
		if first, dup := d.voLine[k]; dup {
			if slices.Equal(d.h.VersionOrder[k], ord) {
				return nil // the same record again
			}
			return d.err(line, "order", "a second, different version order of key %s (the first is on line %d): one version_order record per key",
				d.h.KeyName(k), first)
		}
		if d.voLine == nil {
			d.voLine = map[int32]int{}
		}
		d.voLine[k] = line
		d.h.VersionOrder[k] = ord
		d.h.Evidence.VersionOrder = true
		return nil
	case "version_set":
		return d.versionSetRecord(&tl, line)
	default:
		d.h.Ignore("unknown record type "+strconv.Quote(tl.Type), 1)
		return nil
	}
	if tl.Ops == nil {
		return d.err(line, "ops", "missing (a transaction line needs an \"ops\" array)")
	}
	var t history.Txn
	t.Session = -1
	if len(tl.ID) > 0 {
		s, err := rawString(tl.ID)
		if err != nil {
			return d.err(line, "id", "%v", err)
		}
		t.ID = s
	}
	if len(tl.Session) > 0 && string(tl.Session) != "null" {
		s, err := rawString(tl.Session)
		if err != nil {
			return d.err(line, "session", "%v", err)
		}
		t.Session = d.h.Sessions.Str(s)
		d.anySes = true
	}
	if tl.Status == "" {
		return d.err(line, "status", "missing (committed, aborted or unknown)")
	}
	st, err := history.ParseStatus(tl.Status)
	if err != nil {
		return d.err(line, "status", "%v", err)
	}
	t.Status = st
	if tl.Invoke != nil && tl.Complete != nil {
		t.HasTime, t.Invoke, t.Complete = true, *tl.Invoke, *tl.Complete
		if t.Complete < t.Invoke {
			return d.err(line, "complete", "%d is before invoke %d", t.Complete, t.Invoke)
		}
		d.anyCT = true
	} else if tl.Invoke != nil || tl.Complete != nil {
		return d.err(line, "invoke", "invoke and complete must be given together")
	}
	if t.StartTS, err = ParseTimestamp(tl.StartTS); err != nil {
		return d.err(line, "start_ts", "%v", err)
	}
	if t.CommitTS, err = ParseTimestamp(tl.CommitTS); err != nil {
		return d.err(line, "commit_ts", "%v", err)
	}
	if t.StartTS.Set && t.CommitTS.Set && t.CommitTS.Less(t.StartTS) {
		// No database commits a transaction before it starts; a checker
		// replaying these timestamps would judge an impossible schedule.
		return d.err(line, "commit_ts", "%s is before start_ts %s", t.CommitTS, t.StartTS)
	}
	if t.CommitTS.Set {
		d.anyTS = true
	}
	t.Ops = make([]history.Op, len(tl.Ops))
	for i := range tl.Ops {
		if err := d.op(&tl.Ops[i], &t, line, i); err != nil {
			return err
		}
	}
	if t.Session >= 0 {
		if tl.Seq != nil {
			t.Seq = int32(*tl.Seq)
		} else {
			t.Seq = d.seqs[t.Session]
		}
	}
	d.addTxn(t)
	return nil
}

// addTxn records evidence flags and appends t.
func (d *decoder) addTxn(t history.Txn) {
	if t.Session >= 0 {
		d.seqs[t.Session] = t.Seq + 1
		d.anySes = true
	}
	if t.HasTime {
		d.anyCT = true
	}
	if t.CommitTS.Set {
		d.anyTS = true
	}
	if d.n == 0 {
		d.allTS, d.allCT = true, true
	}
	d.allTS = d.allTS && ((t.CommitTS.Set && t.StartTS.Set) || t.Status != history.Committed)
	d.allCT = d.allCT && t.HasTime
	d.n++
	d.h.Add(t)
}

func (d *decoder) op(ol *opLine, t *history.Txn, line, i int) error {
	o := &t.Ops[i]
	field := fmt.Sprintf("ops[%d]", i)
	k, ok := history.ParseKind(ol.F)
	if !ok {
		return d.err(line, field+".f", "unsupported micro-op %q (want r, w, append, rp, inc or d)", ol.F)
	}
	o.Kind = k
	o.Value = history.NoValue
	if ol.Invoke != nil && ol.Complete != nil {
		inv, com := *ol.Invoke, *ol.Complete
		if com < inv {
			return d.err(line, field+".complete", "%d is before invoke %d", com, inv)
		}
		// An operation runs while its transaction does: Leopard orders
		// transactions by these intervals, so one outside would be judged
		// on an impossible schedule.
		if t.HasTime && (inv < t.Invoke || com > t.Complete) {
			return d.err(line, field+".invoke", "the operation's interval [%d, %d] is not within its transaction's [%d, %d]", inv, com, t.Invoke, t.Complete)
		}
		t.SetOpTime(i, inv, com)
		d.anyOT = true
	} else if ol.Invoke != nil || ol.Complete != nil {
		return d.err(line, field+".invoke", "invoke and complete must be given together")
	}
	if k == history.PredRead {
		p := history.Predicate{Table: ol.Table, Where: ol.Where}
		for j, raw := range ol.Result {
			var row []json.RawMessage
			if err := json.Unmarshal(raw, &row); err != nil || len(row) != 2 {
				return d.err(line, fmt.Sprintf("%s.result[%d]", field, j), "want [key, value]")
			}
			kk, err := d.scalar(row[0], line, fmt.Sprintf("%s.result[%d][0]", field, j), d.h.Keys)
			if err != nil {
				return err
			}
			vv, err := d.scalar(row[1], line, fmt.Sprintf("%s.result[%d][1]", field, j), d.h.Values)
			if err != nil {
				return err
			}
			p.Result = append(p.Result, history.Row{Key: kk, Value: vv})
		}
		if ol.VS != nil {
			vs, err := d.versionSet(ol.VS, line, field+".vs")
			if err != nil {
				return err
			}
			p.VersionSet, p.HasVersionSet = vs, true
			d.h.Evidence.VersionSets = true
		}
		t.SetPred(o, p)
		d.h.Evidence.PredicateRead = true
		return nil
	}
	if len(ol.K) == 0 {
		return d.err(line, field+".k", "missing key")
	}
	kid, err := d.scalar(ol.K, line, field+".k", d.h.Keys)
	if err != nil {
		return err
	}
	o.Key = kid
	v := bytes.TrimSpace(ol.V)
	if len(v) == 0 || string(v) == "null" {
		if k != history.Read {
			return d.err(line, field+".v", "%s needs a value", ol.F)
		}
		return nil
	}
	if v[0] == '[' {
		if k != history.Read {
			return d.err(line, field+".v", "%s takes a scalar, not a list", ol.F)
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return d.err(line, field+".v", "bad list: %v", err)
		}
		off := len(t.Lists)
		for j, e := range elems {
			id, err := d.scalar(e, line, fmt.Sprintf("%s.v[%d]", field, j), d.h.Values)
			if err != nil {
				return err
			}
			t.Lists = append(t.Lists, id)
		}
		o.SetListSpan(off, len(elems))
		return nil
	}
	id, err := d.scalar(v, line, field+".v", d.h.Values)
	if err != nil {
		return err
	}
	o.Value = id
	if len(ol.Row) > 0 {
		if k != history.Write {
			return d.err(line, field+".row", "only a write (w) carries a row image, not %s", ol.F)
		}
		return d.rowImage(ol.Row, kid, id, line, field+".row")
	}
	return nil
}

// rowImage decodes the row image of version (k, v) (docs/history-format.md,
// "Row schemas"): null (a deleted row) or an object of the key's table's
// row columns.
func (d *decoder) rowImage(raw json.RawMessage, k, v int32, line int, field string) error {
	h := d.h
	ti := h.TableOf(k)
	if ti < 0 {
		return d.err(line, field, "key %s is no row of a declared table (the header's \"tables\")", h.KeyName(k))
	}
	tb := &h.Header.Tables[ti]
	img := &history.RowImage{Cols: make([]history.Cell, len(tb.Columns)), Has: make([]bool, len(tb.Columns))}
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		img.Deleted = true
	} else {
		cols, ok := objectFields(raw)
		if !ok {
			return d.err(line, field, "want an object of column values or null (a deleted row)")
		}
		for _, f := range cols {
			name, cv := f.name, f.value
			ci := -1
			for i, c := range tb.Columns {
				if strings.EqualFold(c, name) {
					ci = i
					break
				}
			}
			if ci < 0 {
				return d.err(line, field+"."+name, "table %s has no row column %s (columns: %s)", tb.Name, name, strings.Join(tb.Columns, ", "))
			}
			if img.Has[ci] {
				return d.err(line, field+"."+name, "column given twice")
			}
			c, err := cell(cv)
			if err != nil {
				return d.err(line, field+"."+name, "%v", err)
			}
			img.Cols[ci], img.Has[ci] = c, true
		}
	}
	if err := h.SetRowImage(k, v, img); err != nil {
		return d.err(line, field, "%v", err)
	}
	return nil
}

// objField is one member of a JSON object.
type objField struct {
	name  string
	value json.RawMessage
}

// objectFields returns the members of the JSON object raw in input order,
// duplicates included (decoding into a map would keep only the last of a
// repeated name and, ranging over the map, report the first bad column
// nondeterministically); ok is false if raw is not one valid JSON object.
func objectFields(raw []byte) (fields []objField, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, isStr := t.(string)
		if !isStr {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		fields = append(fields, objField{name, v})
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // trailing data
	}
	return fields, true
}

// cell decodes a column value: an integer, a string or null.
func cell(raw json.RawMessage) (history.Cell, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return history.Cell{}, fmt.Errorf("missing value")
	case string(raw) == "null":
		return history.Cell{Null: true}, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return history.Cell{}, fmt.Errorf("bad string: %v", err)
		}
		return history.Cell{V: history.Scalar{S: s, IsStr: true}}, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return history.Cell{}, fmt.Errorf("want an integer, a string or null, got %s", raw)
	}
	return history.Cell{V: history.Scalar{I: n}}, nil
}

func (d *decoder) scalar(raw json.RawMessage, line int, field string, in *history.Interner) (int32, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0, d.err(line, field, "missing")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, d.err(line, field, "bad string: %v", err)
		}
		return in.Str(s), nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, d.err(line, field, "want an integer or a string, got %s", raw)
	}
	return in.Int(n), nil
}

func (d *decoder) finish() {
	ev := &d.h.Evidence
	ev.Sessions = ev.Sessions || d.anySes
	ev.ClientTime = ev.ClientTime || (d.anyCT && d.allCT)
	ev.OpTime = ev.OpTime || d.anyOT
	ev.Timestamps = ev.Timestamps || (d.anyTS && d.allTS)
	if d.h.Header.Format == "" {
		d.h.Header.Format = "jsonl"
	}
}

func rawString(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
		return "", fmt.Errorf("want a string or an integer, got %s", raw)
	}
	return string(raw), nil
}

// ParseTimestamp accepts null/absent, an integer, a numeric string, or an
// HLC object {"p":P,"l":L} (P may be a numeric string).
func ParseTimestamp(raw json.RawMessage) (history.Timestamp, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return history.Timestamp{}, nil
	}
	switch raw[0] {
	case '{':
		var o struct {
			P json.RawMessage `json:"p"`
			L json.RawMessage `json:"l"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			return history.Timestamp{}, err
		}
		p, err := numOrString(o.P)
		if err != nil {
			return history.Timestamp{}, fmt.Errorf("p: %v", err)
		}
		var l int64
		if len(o.L) > 0 && string(o.L) != "null" {
			if l, err = numOrString(o.L); err != nil {
				return history.Timestamp{}, fmt.Errorf("l: %v", err)
			}
		}
		return history.Timestamp{P: p, L: l, Set: true}, nil
	default:
		p, err := numOrString(raw)
		if err != nil {
			return history.Timestamp{}, err
		}
		return history.Timestamp{P: p, Set: true}, nil
	}
}

func numOrString(raw json.RawMessage) (int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		raw = raw[1 : len(raw)-1]
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want an integer timestamp, got %s", raw)
	}
	return n, nil
}

func jsonField(err error) string {
	if ue, ok := err.(*json.UnmarshalTypeError); ok {
		return ue.Field
	}
	return ""
}
