package edn

import (
	"math"
	"strconv"

	"github.com/txray/txray/history"
	"github.com/txray/txray/internal/edn"
)

// OpType is a Jepsen op's :type.
type OpType uint8

const (
	Invoke OpType = iota
	OK
	Fail
	Info
)

// parseType parses an op's :type name (of the general reader's keyword, or
// of the fast paths' bytes).
func parseType[S string | []byte](s S) (OpType, bool) {
	switch string(s) {
	case "invoke":
		return Invoke, true
	case "ok":
		return OK, true
	case "fail":
		return Fail, true
	case "info":
		return Info, true
	}
	return 0, false
}

// Never is the Complete time given to a transaction whose invocation never
// completed: it may take effect at any time after its invocation.
const Never int64 = math.MaxInt64

// Builder pairs Jepsen operation records (maps with :type, :process, :f,
// :value, :time, :index) into transactions. Both the EDN decoder and the
// elle-cli JSON decoder (package ellejson) feed it one record at a time.
//
// Pairing rules (as in Jepsen's history model, which Elle analyses):
//   - An :invoke by an integer :process opens that process's pending
//     operation; a second :invoke before it completes is an InputError.
//   - The next :ok / :fail / :info by the same process completes it, giving a
//     transaction with status committed / aborted / unknown. When the
//     completion's :value is nil or absent, the invocation's :value is used
//     (Jepsen clients usually complete :info ops with the invocation's value).
//     An :ok completion without a :value is an InputError.
//   - An invocation still pending at the end of the history is a transaction
//     with unknown outcome, using the invocation's value; if it has a :time,
//     its Complete is Never (math.MaxInt64).
//   - Records without :process (or with :process nil) are completion-only
//     client transactions with no session (as in elle-cli's examples that
//     omit :process): each :ok / :fail / :info is one transaction and each
//     such :invoke is counted in History.Ignored.
//   - A completion by an integer process with nothing pending is accepted as
//     a completion-only transaction only if the history contains no
//     :invoke records at all; otherwise it is an InputError.
//   - Records whose :process is not an integer (:nemesis, strings) are not
//     client operations (Elle's h/client-ops) and are counted as "nemesis op".
//   - Elle analyses the :value micro-ops of every client op regardless of
//     :f. txray does the same when :f is absent or :txn, or when a :value is a
//     micro-op list; other client ops (e.g. :f :start with a scalar value)
//     are counted in History.Ignored, never silently dropped.
//
// Micro-ops: [:r k v], [:w k v], [:append k v] (function names as keywords,
// symbols or strings). Keys and values may be integers, keywords (:x is the
// string "x"), symbols or strings; integers beyond int64 are interned as their
// decimal text. A read's value may be nil, a scalar (register read) or a
// vector/list (list read). Finish normalises nil reads: in a history with
// appends (or with DecodeOptions.Workload "list-append") reads are list
// reads; a nil list read in a committed transaction is the empty list (Elle
// treats nil as []), elsewhere it is unknown (Op.ListUnknown). In register
// histories a nil read stays NoValue: the initial state in a committed
// transaction, unknown elsewhere.
//
// Transactions are added in completion order (History ordering contract);
// Txn.ID is the completion's :index (the invocation's for a never-completed
// one). Txn.Invoke/Complete come from :time when both ends carry one.
type Builder struct {
	H        *history.History
	File     string
	Workload string

	pending        map[int64]*pend // pending invocations (processes from maxDenseProc and negative ones)
	pendDense      []*pend         // pending invocations of processes 0 <= p < maxDenseProc
	pendOrder      int
	seqs           map[int32]int32
	lines          []int32 // source line of each txn's completion (or invocation)
	anyInvoke      bool
	stray          int // first line of a completion with no pending invocation
	strayProc      int64
	allTime        bool
	anyTime        bool
	anySession     bool
	ops            []history.Op
	posInv, posCom []int64 // per txn: positions of invocation and completion (only while no txn has a :time)
	// Arenas of the fast path (fast.go): ops and list elements of
	// completions are carved from them; freeOps recycles the op buffers
	// of invocations whose completion carried its own :value; lastList
	// caches per key id the last list read's integers and ids.
	opArena  []history.Op
	arenas   *history.OpArenas // when set, opArena comes from here
	valArena []int32
	lists    *history.Arenas[int32] // when set, valArena comes from here
	// prefault, when set, faults in the transaction table's pages ahead
	// (presize starts it, Decode stops it).
	prefault bool
	faulter  *history.TxnPrefaulter
	freeOps  [][]history.Op
	freePend []*pend // pending-invocation records to reuse
	lastList [][]listElem
	// cacheSlab and cacheFree supply lastList's blocks (growCache).
	cacheSlab []listElem
	cacheFree [maxCacheClass + 1][][]listElem
	// pos counts client records in file order: Elle derives real-time
	// order from the order of invocations and completions in the history,
	// so histories without :time use these positions as their clock.
	pos int64
}

type pend struct {
	pos    int64
	line   int
	order  int
	index  int64
	hasIdx bool
	time   int64
	hasT   bool
	f      string
	isTxn  bool
	noVal  bool
	ops    []history.Op
	lists  []int32
}

// NewBuilder returns a Builder filling a fresh history.
func NewBuilder(file, workload string) *Builder {
	return &Builder{H: history.New(), File: file, Workload: workload, pending: map[int64]*pend{},
		seqs: map[int32]int32{}, allTime: true}
}

func (b *Builder) errf(line int, field, format string, a ...any) error {
	return history.Errorf(b.File, line, field, format, a...)
}

// record is one decoded op map.
type record struct {
	line    int
	typ     OpType
	procSet bool  // :process present and not nil
	procInt bool  // ... and an integer
	proc    int64 //
	f       string
	fSet    bool
	hasT    bool
	time    int64
	hasIdx  bool
	index   int64
	id      string // FormatInt(index) when hasIdx, if the scanner had it ("": format it)
	isMops  bool   // :value is a micro-op list
	noVal   bool   // :value nil or absent
	ops     []history.Op
	lists   []int32 // Txn.Lists of ops
	pos     int64
}

// Add feeds one op record (an EDN/JSON map, possibly a tagged record such as
// #jepsen.history.Op{...}) read at line.
func (b *Builder) Add(v *edn.Value, line int) error {
	m := v.Unwrap()
	if m.Kind != edn.Map {
		return b.errf(line, "", "want an op map, got %s %s", m.Kind, abbrev(m))
	}
	var rec record
	rec.line = line
	tv := m.Get("type")
	if tv == nil {
		return b.errf(line, "type", "missing (want :invoke, :ok, :fail or :info)")
	}
	ts, _ := tv.Name()
	t, ok := parseType(ts)
	if !ok {
		return b.errf(line, "type", "unknown op type %s (want :invoke, :ok, :fail or :info)", abbrev(tv))
	}
	rec.typ = t
	if pv := m.Get("process"); pv != nil && pv.Kind != edn.Nil {
		rec.procSet = true
		switch pv.Kind {
		case edn.Int:
			rec.procInt, rec.proc = true, pv.I
		case edn.BigInt:
			// An integer is a client process (Elle's client-op?), however
			// large; one past 64 bits cannot be told apart from its
			// neighbours here, so it is bad input, never a dropped
			// "nemesis op".
			return b.errf(line, "process", "integer %s does not fit in 64 bits", abbrev(pv))
		}
	}
	if rec.procSet && !rec.procInt {
		b.H.Ignore("nemesis op", 1)
		return nil
	}
	if fv := m.Get("f"); fv != nil && fv.Kind != edn.Nil {
		rec.fSet = true
		if s, ok := fv.Name(); ok {
			rec.f = s
		} else {
			rec.f = fv.String()
		}
	}
	if tm := m.Get("time"); tm != nil && tm.Kind != edn.Nil {
		if tm.Kind != edn.Int {
			return b.errf(line, "time", "want an integer (nanoseconds), got %s", abbrev(tm))
		}
		rec.hasT, rec.time = true, tm.I
	}
	if ix := m.Get("index"); ix != nil && ix.Kind != edn.Nil {
		if ix.Kind != edn.Int {
			return b.errf(line, "index", "want an integer, got %s", abbrev(ix))
		}
		rec.hasIdx, rec.index = true, ix.I
	}
	txnF := !rec.fSet || rec.f == "txn"
	val := m.Get("value")
	switch {
	case val == nil || val.Kind == edn.Nil:
		rec.noVal = true
	case isMopList(val, txnF):
		rec.isMops = true
		ops, lists, err := b.mops(val, &rec)
		if err != nil {
			return err
		}
		rec.ops, rec.lists = ops, lists
	case txnF:
		return b.errf(line, "value", "want a vector of micro-ops like [[:r k v] [:append k v]], got %s", abbrev(val))
	}
	if rec.typ == Invoke {
		b.anyInvoke = true
	}
	b.pos++
	rec.pos = b.pos
	return b.add(&rec)
}

// isMopList reports whether v is a sequence of micro-ops ([f k] or [f k v]
// with f a keyword, symbol or string). An empty sequence counts only for
// :txn ops.
func isMopList(v *edn.Value, txnF bool) bool {
	if !v.IsSeq() {
		return false
	}
	if len(v.Items) == 0 {
		return txnF
	}
	for i := range v.Items {
		m := &v.Items[i]
		if !m.IsSeq() || len(m.Items) < 2 || len(m.Items) > 3 {
			return false
		}
		if _, ok := m.Items[0].Name(); !ok {
			return false
		}
	}
	return true
}

func (b *Builder) mops(v *edn.Value, rec *record) ([]history.Op, []int32, error) {
	ops := make([]history.Op, len(v.Items))
	var lists []int32
	for i := range v.Items {
		m := &v.Items[i]
		f, _ := m.Items[0].Name()
		o := &ops[i]
		o.Value = history.NoValue
		field := fieldName(i)
		kv := &m.Items[1]
		key, err := b.scalar(kv, b.H.Keys)
		if err != nil {
			return nil, nil, b.errf(rec.line, field, "key %s: %v", abbrev(kv), err)
		}
		o.Key = key
		var val *edn.Value
		if len(m.Items) == 3 {
			val = &m.Items[2]
		}
		switch f {
		case "r", "read":
			o.Kind = history.Read
			if val == nil || val.Kind == edn.Nil {
				break
			}
			if val.IsSeq() {
				off := len(lists)
				for j := range val.Items {
					id, err := b.scalar(&val.Items[j], b.H.Values)
					if err != nil {
						return nil, nil, b.errf(rec.line, field, "read of key %s: element %d: %v", abbrev(kv), j, err)
					}
					lists = append(lists, id)
				}
				o.SetListSpan(off, len(val.Items))
				break
			}
			id, err := b.scalar(val, b.H.Values)
			if err != nil {
				return nil, nil, b.errf(rec.line, field, "read of key %s: %v", abbrev(kv), err)
			}
			o.Value = id
		case "w", "write", "append":
			o.Kind = history.Write
			if f == "append" {
				o.Kind = history.Append
			}
			if val == nil || val.Kind == edn.Nil {
				return nil, nil, b.errf(rec.line, field, "[%s %s] needs a value", f, abbrev(kv))
			}
			id, err := b.scalar(val, b.H.Values)
			if err != nil {
				return nil, nil, b.errf(rec.line, field, "%s to key %s: %v", f, abbrev(kv), err)
			}
			o.Value = id
		default:
			return nil, nil, b.errf(rec.line, field, "unsupported micro-op %s on key %s (want :r, :w or :append)", abbrev(&m.Items[0]), abbrev(kv))
		}
	}
	return ops, lists, nil
}

// fieldName names micro-op i for error messages; a lazily built string
// would save little since it is only used on the error path, but building it
// per op costs an allocation, so the common names are precomputed.
func fieldName(i int) string {
	if i < len(fieldNames) {
		return fieldNames[i]
	}
	return "value[" + strconv.Itoa(i) + "]"
}

var fieldNames = func() (t [64]string) {
	for i := range t {
		t[i] = "value[" + strconv.Itoa(i) + "]"
	}
	return t
}()

// scalar interns an EDN key or value.
func (b *Builder) scalar(v *edn.Value, in *history.Interner) (int32, error) {
	switch v.Kind {
	case edn.Int:
		return in.Int(v.I), nil
	case edn.Keyword, edn.String, edn.Symbol, edn.BigInt:
		return in.Str(v.Str), nil
	case edn.Bool:
		if v.I != 0 {
			return in.Str("true"), nil
		}
		return in.Str("false"), nil
	}
	return 0, errorString("want an integer, keyword or string, got " + v.Kind.String() + " " + abbrev(v))
}

type errorString string

func (e errorString) Error() string { return string(e) }

// maxFreeOps bounds Builder.freeOps.
const maxFreeOps = 1024

func (b *Builder) add(rec *record) error {
	if !rec.procSet {
		if rec.typ == Invoke {
			b.H.Ignore("invocation without :process (completion-only history)", 1)
			return nil
		}
		return b.emit(nil, rec, -1)
	}
	p := rec.proc
	if rec.typ == Invoke {
		if old := b.getPend(p); old != nil {
			return b.errf(rec.line, "process", "process %d invokes again while its invocation on line %d is still pending", p, old.line)
		}
		b.pendOrder++
		var pd *pend
		if k := len(b.freePend); k > 0 {
			pd, b.freePend = b.freePend[k-1], b.freePend[:k-1]
		} else {
			pd = new(pend)
		}
		*pd = pend{pos: rec.pos, line: rec.line, order: b.pendOrder, index: rec.index, hasIdx: rec.hasIdx, time: rec.time,
			hasT: rec.hasT, f: rec.f, isTxn: rec.isMops || !rec.fSet || rec.f == "txn", noVal: rec.noVal, ops: rec.ops, lists: rec.lists}
		b.setPend(p, pd)
		return nil
	}
	pd := b.getPend(p)
	if pd == nil {
		if b.stray == 0 {
			b.stray, b.strayProc = rec.line, p
		}
	} else {
		b.setPend(p, nil)
	}
	if err := b.emit(pd, rec, b.H.Sessions.Int(p)); err != nil {
		return err
	}
	if pd != nil && !rec.noVal && cap(pd.ops) > 0 && len(b.freeOps) < maxFreeOps {
		// The completion's own ops were used: the invocation's buffer
		// can hold a later invocation's ops (bounded: only the fast path
		// takes buffers back out).
		b.freeOps = append(b.freeOps, pd.ops[:0])
	}
	if pd != nil && len(b.freePend) < maxFreeOps {
		// emit copied what it needed: the record can hold a later
		// invocation (one allocation per process instead of per txn).
		*pd = pend{}
		b.freePend = append(b.freePend, pd)
	}
	return nil
}

// maxDenseProc bounds the process numbers whose pending invocation is kept
// in Builder.pendDense (a slice lookup) rather than the map.
const maxDenseProc = 1 << 12

func (b *Builder) getPend(p int64) *pend {
	if p >= 0 && p < maxDenseProc {
		if p < int64(len(b.pendDense)) {
			return b.pendDense[p]
		}
		return nil
	}
	return b.pending[p]
}

// setPend records pd as p's pending invocation (nil: none).
func (b *Builder) setPend(p int64, pd *pend) {
	switch {
	case p >= 0 && p < maxDenseProc:
		for p >= int64(len(b.pendDense)) {
			b.pendDense = append(b.pendDense, nil)
		}
		b.pendDense[p] = pd
	case pd == nil:
		delete(b.pending, p)
	default:
		b.pending[p] = pd
	}
}

// emit adds the transaction for completion rec (invocation pd, possibly nil).
func (b *Builder) emit(pd *pend, rec *record, session int32) error {
	isTxn := rec.isMops || !rec.fSet || rec.f == "txn"
	if pd != nil {
		isTxn = isTxn || pd.isTxn
	}
	if !isTxn {
		n := 1
		if pd != nil {
			n = 2
		}
		b.H.Ignore("client op :f "+rec.f+" without micro-ops", n)
		return nil
	}
	ops, lists := rec.ops, rec.lists
	if rec.noVal {
		if rec.typ == OK {
			return b.errf(rec.line, "value", ":ok completion has no :value")
		}
		if pd != nil {
			ops, lists = pd.ops, pd.lists
		}
	}
	t := history.Txn{Session: session, Ops: ops, Lists: lists}
	switch rec.typ {
	case OK:
		t.Status = history.Committed
	case Fail:
		t.Status = history.Aborted
	default:
		t.Status = history.Unknown
	}
	if rec.id != "" {
		t.ID = rec.id
	} else if rec.hasIdx {
		t.ID = strconv.FormatInt(rec.index, 10)
	}
	if pd != nil && pd.hasT && rec.hasT {
		t.HasTime, t.Invoke, t.Complete = true, pd.time, rec.time
		if t.Complete < t.Invoke {
			return b.errf(rec.line, "time", "completion time %d is before its invocation's %d (line %d)", rec.time, pd.time, pd.line)
		}
	}
	if !b.anyTime {
		if pd != nil {
			b.posInv = append(b.posInv, pd.pos)
		} else {
			b.posInv = append(b.posInv, -1)
		}
		b.posCom = append(b.posCom, rec.pos)
	}
	b.addTxn(t, rec.line, rec.hasT)
	return nil
}

func (b *Builder) addTxn(t history.Txn, line int, anyT bool) {
	if t.Session >= 0 {
		t.Seq = b.seqs[t.Session]
		b.seqs[t.Session] = t.Seq + 1
		b.anySession = true
	}
	b.allTime = b.allTime && t.HasTime
	if anyT && !b.anyTime {
		// Positions are the clock only of a history without any :time
		// (Finish); from now on they are not kept.
		b.anyTime = true
		b.posInv, b.posCom = nil, nil
	}
	b.H.Add(t)
	b.lines = append(b.lines, int32(line))
	if b.faulter != nil && len(b.H.Txns)&4095 == 0 {
		b.faulter.Advance(len(b.H.Txns))
	}
}

// Finish closes pending invocations, normalises reads (see Builder) and
// sets History.Evidence. The Builder must not be used afterwards.
func (b *Builder) Finish() (*history.History, error) {
	if b.stray != 0 && b.anyInvoke {
		return nil, b.errf(b.stray, "process", "completion by process %d with no pending invocation", b.strayProc)
	}
	for p, pd := range b.pendDense {
		if pd != nil {
			b.pending[int64(p)] = pd
		}
	}
	b.pendDense = nil
	if len(b.pending) > 0 {
		ps := make([]*pend, 0, len(b.pending))
		procs := make(map[*pend]int64, len(b.pending))
		for p, pd := range b.pending {
			ps = append(ps, pd)
			procs[pd] = p
		}
		sortPend(ps)
		for _, pd := range ps {
			if !pd.isTxn {
				b.H.Ignore("client op :f "+pd.f+" without micro-ops", 1)
				continue
			}
			t := history.Txn{Session: b.H.Sessions.Int(procs[pd]), Status: history.Unknown, Ops: pd.ops, Lists: pd.lists}
			if pd.hasIdx {
				t.ID = strconv.FormatInt(pd.index, 10)
			}
			if pd.hasT {
				t.HasTime, t.Invoke, t.Complete = true, pd.time, Never
			}
			if !b.anyTime {
				b.posInv = append(b.posInv, pd.pos)
				b.posCom = append(b.posCom, Never)
			}
			b.addTxn(t, pd.line, pd.hasT)
		}
		b.H.Notes = append(b.H.Notes, strconv.Itoa(len(ps))+" invocation(s) never completed: outcome unknown")
		b.pending = nil
	}
	if err := b.normalise(); err != nil {
		return nil, err
	}
	ev := &b.H.Evidence
	ev.Sessions = b.anySession
	ev.ClientTime = len(b.H.Txns) > 0 && b.allTime
	if !b.anyTime && b.anyInvoke && len(b.posInv) == len(b.H.Txns) {
		// No :time anywhere: use positions in the history as the clock,
		// as Elle does for its real-time order.
		all := true
		for i := range b.H.Txns {
			if b.posInv[i] < 0 {
				all = false
				break
			}
		}
		if all {
			for i := range b.H.Txns {
				t := &b.H.Txns[i]
				t.HasTime, t.Invoke, t.Complete = true, b.posInv[i], b.posCom[i]
			}
			ev.ClientTime = true
			b.H.Header.Clock = "history-order"
			b.H.Notes = append(b.H.Notes, "no :time in the history: real-time order taken from the order of invocations and completions, as Elle does")
		}
	}
	return b.H, nil
}

func sortPend(ps []*pend) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].order < ps[j-1].order; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// normalise decides list vs register reads (see Builder).
func (b *Builder) normalise() error {
	h := b.H
	list := b.Workload == "list-append"
	if b.Workload == "" {
		for i := range h.Txns {
			for j := range h.Txns[i].Ops {
				if h.Txns[i].Ops[j].Kind == history.Append {
					list = true
					break
				}
			}
			if list {
				break
			}
		}
	}
	if list {
		h.Header.Workload = "list-append"
	} else if b.Workload != "" {
		h.Header.Workload = b.Workload
	} else if len(h.Txns) > 0 {
		h.Header.Workload = "rw-register"
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind != history.Read {
				continue
			}
			if list {
				if !o.IsList {
					if o.Value != history.NoValue {
						return b.errf(int(b.lines[i]), "value["+strconv.Itoa(j)+"]",
							"read of key %s returned the scalar %s in a list-append history (want a list or nil)",
							h.KeyName(o.Key), h.ValueName(o.Value))
					}
					o.SetListSpan(0, 0)
					if t.Status != history.Committed {
						o.ListUnknown = true
					}
				}
			}
		}
	}
	return nil
}

// abbrev renders v for an error message, shortened.
func abbrev(v *edn.Value) string {
	b := v.AppendEDN(nil)
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}
