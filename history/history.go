// Package history is txray's transaction-history model, shared by every
// decoder, checker, recorder and report.
//
// A History is a list of client transactions (Txn), each a list of
// micro-operations (Op) on keys. Keys and scalar values are interned to dense
// int32 ids (see Interner) so checkers can index slices instead of hashing.
// Evidence beyond the plain history (client intervals, database timestamps,
// version orders, predicate read results) is optional and flagged in
// History.Evidence so checkers can tell what they may rely on.
//
// Ordering contract: History.Txns is in the order the source listed
// transaction completions (the recorder's completion order, or the order of
// completion records in a Jepsen history). Txn.Index equals the position in
// History.Txns.
package history

import (
	"fmt"
	"strconv"
)

// Status is a transaction's outcome as far as the client knows it.
type Status uint8

const (
	// Committed: the client saw the commit succeed (Jepsen :ok).
	Committed Status = iota
	// Aborted: the client saw the transaction fail; none of its effects may
	// be visible (Jepsen :fail).
	Aborted
	// Unknown: the outcome was never learnt (Jepsen :info, lost connection at
	// commit). It may or may not have committed.
	Unknown
)

func (s Status) String() string {
	switch s {
	case Committed:
		return "committed"
	case Aborted:
		return "aborted"
	case Unknown:
		return "unknown"
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// ParseStatus parses the names written by String (also ok/fail/info).
func ParseStatus(s string) (Status, error) {
	switch s {
	case "committed", "ok", "commit":
		return Committed, nil
	case "aborted", "fail", "abort":
		return Aborted, nil
	case "unknown", "info":
		return Unknown, nil
	}
	return 0, fmt.Errorf("unknown status %q (want committed, aborted or unknown)", s)
}

// Kind is a micro-operation kind.
type Kind uint8

const (
	// Read of a register (Value) or of a list (List, with IsList set).
	Read Kind = iota
	// Write of a register: Value.
	Write
	// Append of Value to the list at Key (Elle list-append).
	Append
	// PredRead is a predicate read (SQL SELECT ... WHERE); see Txn.PredOf.
	PredRead
	// Increment adds Value to a counter (recorded, not yet checked).
	Increment
	// Delete installs a deleted version of Key (SQL DELETE of the row):
	// a tombstone, named by Value, a value id unique among the key's
	// versions like a written value (the recorder takes a fresh one), so
	// that a version order (History.VersionOrder) can place it and a
	// version set (Predicate.VersionSet) can name it. A deleted version
	// matches no predicate, and an item read observes it as absent: a
	// register Read of NoValue, or of the tombstone's Value where the
	// source knows which deleted version was read (white-box evidence;
	// Evidence.TombstoneReads says it always does, so NoValue is then the
	// initial version). For ordering, intermediate writes and "a transaction's last write
	// of a key" a Delete counts as a write of Key (IsWrite).
	Delete
)

var kindNames = [...]string{"r", "w", "append", "rp", "inc", "d"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind parses a micro-op name: r, w, append (a), rp, inc, d (delete).
func ParseKind(s string) (Kind, bool) {
	switch s {
	case "r", "read":
		return Read, true
	case "w", "write":
		return Write, true
	case "append", "a":
		return Append, true
	case "rp":
		return PredRead, true
	case "inc", "increment":
		return Increment, true
	case "d", "delete":
		return Delete, true
	}
	return 0, false
}

// IsWrite reports whether k installs a register version of its key:
// Write or Delete.
func (k Kind) IsWrite() bool { return k == Write || k == Delete }

// HasDeletes reports whether some op of h is a Delete (checkers that do not
// model deleted versions return an unknown verdict on such a history
// rather than mistake a delete for a write or drop it).
func (h *History) HasDeletes() bool {
	if s, ok := memoShape(h); ok {
		return s.Has(Delete)
	}
	for i := range h.Txns {
		for j := range h.Txns[i].Ops {
			if h.Txns[i].Ops[j].Kind == Delete {
				return true
			}
		}
	}
	return false
}

// DeletesUnsupported is the reason text of an unknown verdict from a
// checker that does not model deleted versions.
func DeletesUnsupported(checker string) string {
	return checker + " does not model deleted versions (the history has delete ops): use emme or enne, which do"
}

// NoValue is the value id meaning "nil": an unknown read result (in an
// invocation or an :info completion) or, for a completed register read, the
// initial state. See Op.
const NoValue int32 = -1

// Op is one micro-operation.
//
// Key is a key id in History.Keys. Value is a value id in History.Values, or
// NoValue. For a Read with IsList set, the elements read (value ids, in
// order) are Txn.ListOf(op) of the transaction holding the op; a completed
// list read of nil is normalised to the empty list by decoders that follow
// Elle (Elle treats a nil list read in an :ok op as []), and ListUnknown
// marks a read whose result the client never saw. A PredRead's payload is
// Txn.PredOf(op).
//
// When HasTime is set, Txn.OpTime gives the op's client interval bounds
// (monotonic nanoseconds on the history's clock).
//
// Layout: an Op is 20 bytes and holds no pointers, so op arrays cost the
// garbage collector nothing to scan; list elements, predicates and per-op
// times live in the transaction's side tables (Txn.Lists, and Txn.Ext's
// Preds and OpTimes), which ref and n index. An Op is therefore meaningful only
// together with its Txn: copy an op to another transaction with
// Txn.AppendOp, not by assignment.
type Op struct {
	Kind        Kind
	IsList      bool
	ListUnknown bool
	HasTime     bool
	Key         int32
	Value       int32
	// ref and n: for a list read, the offset and length of its elements in
	// Txn.Lists; for a PredRead with a payload, n == 1 and ref is the
	// index in Txn.Ext.Preds. Otherwise zero.
	ref, n uint32
}

// OpTime is one op's client interval bounds (see Op.HasTime).
type OpTime struct {
	Invoke, Complete int64
}

// ListLen is the number of elements of a list read (0 for other ops).
func (o *Op) ListLen() int {
	if !o.IsList {
		return 0
	}
	return int(o.n)
}

// SetListSpan makes o a list read (IsList) whose elements are
// Txn.Lists[off:off+n] of its transaction. Decoders that carve a
// transaction's Lists from an arena use it; others use Txn.SetList.
func (o *Op) SetListSpan(off, n int) {
	o.IsList, o.ref, o.n = true, uint32(off), uint32(n)
}

// ListSpan returns the offset and length set by SetListSpan or Txn.SetList
// (0, 0 for an op that is not a list read).
func (o *Op) ListSpan() (off, n int) {
	if !o.IsList {
		return 0, 0
	}
	return int(o.ref), int(o.n)
}

// ClearList makes o a plain register op again: IsList, ListUnknown and the
// list span are reset (the elements stay in Txn.Lists, unreferenced).
func (o *Op) ClearList() {
	o.IsList, o.ListUnknown, o.ref, o.n = false, false, 0, 0
}

// ListOf returns the elements of list read o, an op of t (nil or empty for
// an op that is not a list read, or whose result is unknown). The result
// aliases t.Lists and has no spare capacity: appending to it copies.
func (t *Txn) ListOf(o *Op) []int32 {
	if !o.IsList {
		return nil
	}
	return t.Lists[o.ref : o.ref+o.n : o.ref+o.n]
}

// SetList makes o (an op of t, or one about to be added to t.Ops) a list read
// of the elements l, which are copied to the end of t.Lists.
func (t *Txn) SetList(o *Op, l []int32) {
	off := len(t.Lists)
	t.Lists = append(t.Lists, l...)
	o.SetListSpan(off, len(l))
}

// ExtendList appends v to the elements of list read o (an op of t, or one
// about to be added to t.Ops), making o a list read if it is not one. The
// elements move to the end of t.Lists first if other elements follow them.
func (t *Txn) ExtendList(o *Op, v ...int32) {
	switch {
	case !o.IsList || o.n == 0:
		o.IsList, o.ref, o.n = true, uint32(len(t.Lists)), 0
	case int(o.ref+o.n) != len(t.Lists):
		off := len(t.Lists)
		t.Lists = append(t.Lists, t.Lists[o.ref:o.ref+o.n]...)
		o.ref = uint32(off)
	}
	t.Lists = append(t.Lists, v...)
	o.n += uint32(len(v))
}

// PredOf returns the payload of PredRead o, an op of t, or nil if it has
// none. The pointer aliases t.Ext.Preds: it stays valid until the next
// SetPred on t.
func (t *Txn) PredOf(o *Op) *Predicate {
	if o.Kind != PredRead || o.IsList || o.n != 1 || t.Ext == nil || int(o.ref) >= len(t.Ext.Preds) {
		return nil
	}
	return &t.Ext.Preds[o.ref]
}

// SetPred stores p in t.Ext.Preds as the payload of o (an op of t, or one about
// to be added to t.Ops) and returns the stored copy.
func (t *Txn) SetPred(o *Op, p Predicate) *Predicate {
	x := t.ext()
	o.IsList, o.ListUnknown, o.ref, o.n = false, false, uint32(len(x.Preds)), 1
	x.Preds = append(x.Preds, p)
	return &x.Preds[len(x.Preds)-1]
}

// OpTime returns the client interval of op j of t; ok is false when the op
// has none (HasTime unset).
func (t *Txn) OpTime(j int) (invoke, complete int64, ok bool) {
	if !t.Ops[j].HasTime || t.Ext == nil || j >= len(t.Ext.OpTimes) {
		return 0, 0, false
	}
	return t.Ext.OpTimes[j].Invoke, t.Ext.OpTimes[j].Complete, true
}

// SetOpTime sets op j's client interval (and its HasTime); j < len(t.Ops).
func (t *Txn) SetOpTime(j int, invoke, complete int64) {
	x := t.ext()
	if len(x.OpTimes) < len(t.Ops) {
		x.OpTimes = append(x.OpTimes, make([]OpTime, len(t.Ops)-len(x.OpTimes))...)
	}
	x.OpTimes[j] = OpTime{invoke, complete}
	t.Ops[j].HasTime = true
}

// SetOpTimes sets the client intervals of all ops at once (times is indexed
// like Ops and kept; entries of ops without HasTime are ignored).
func (t *Txn) SetOpTimes(times []OpTime) {
	t.ext().OpTimes = times
}

// FinalWrite reports whether op j of t is t's last write (or delete) of
// its key: no later op of t writes the key (Adya's final version; a read
// of an earlier one is G1b, intermediate read).
func (t *Txn) FinalWrite(j int) bool {
	k := t.Ops[j].Key
	for x := j + 1; x < len(t.Ops); x++ {
		if t.Ops[x].Kind.IsWrite() && t.Ops[x].Key == k {
			return false
		}
	}
	return true
}

// AppendOp appends op j of src to t, copying its list elements, predicate
// and time, and returns the new op's index.
func (t *Txn) AppendOp(src *Txn, j int) int {
	o := src.Ops[j]
	k := len(t.Ops)
	t.Ops = append(t.Ops, o)
	n := &t.Ops[k]
	switch {
	case o.IsList:
		t.SetList(n, src.ListOf(&o))
	case src.PredOf(&o) != nil:
		t.SetPred(n, *src.PredOf(&o))
	default:
		n.ref, n.n = 0, 0
	}
	if inv, com, ok := src.OpTime(j); ok {
		t.SetOpTime(k, inv, com)
	} else {
		n.HasTime = false
	}
	return k
}

// Clone returns a copy of t that shares no memory with t: its ops, list
// elements, predicates (with their rows) and op times are copied, so either
// may be changed without affecting the other.
func (t *Txn) Clone() Txn {
	c := *t
	c.Ops = append([]Op(nil), t.Ops...)
	c.Lists = append([]int32(nil), t.Lists...)
	if t.Ext != nil {
		c.Ext = &TxnExt{OpTimes: append([]OpTime(nil), t.Ext.OpTimes...)}
		if t.Ext.Preds != nil {
			c.Ext.Preds = make([]Predicate, len(t.Ext.Preds))
			for i, p := range t.Ext.Preds {
				p.Result = append([]Row(nil), p.Result...)
				p.VersionSet = append([]Row(nil), p.VersionSet...)
				c.Ext.Preds[i] = p
			}
		}
	}
	return c
}

// Predicate is the payload of a PredRead: the table, the WHERE clause text
// (design.md §4; evaluated by package sqlpred) and the rows returned, each a
// key id and a value id.
type Predicate struct {
	Table  string
	Where  string
	Result []Row
	// VersionSet, when HasVersionSet is set, is the version certificate's
	// version set of this read (see certificate.go): the version of every
	// row of Table the statement evaluated Where on, matching or not.
	VersionSet    []Row
	HasVersionSet bool
}

// Row is one row returned by a predicate read.
type Row struct {
	Key   int32
	Value int32
}

// Timestamp is a database timestamp: a hybrid logical clock pair ordered by
// (P, L); plain integer timestamps have L = 0. Set reports presence.
type Timestamp struct {
	P, L int64
	Set  bool
}

// Less orders timestamps by (P, L).
func (a Timestamp) Less(b Timestamp) bool {
	if a.P != b.P {
		return a.P < b.P
	}
	return a.L < b.L
}

// Compare returns -1, 0 or +1 ordering by (P, L).
func (a Timestamp) Compare(b Timestamp) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}

func (a Timestamp) String() string {
	if !a.Set {
		return "-"
	}
	if a.L == 0 {
		return strconv.FormatInt(a.P, 10)
	}
	return "(" + strconv.FormatInt(a.P, 10) + "," + strconv.FormatInt(a.L, 10) + ")"
}

// Txn is one client transaction.
type Txn struct {
	// Index is the position in History.Txns.
	Index int32
	// Session is a dense session (Jepsen process / client) id; -1 if none.
	// Transactions of one session are in session order by Seq.
	Session int32
	// Seq orders transactions within a session (0-based position).
	Seq int32
	// Status is the outcome.
	Status Status
	// HasTime reports whether Invoke/Complete hold client interval bounds.
	HasTime bool
	// Invoke and Complete bound the transaction in real time (nanoseconds,
	// or the source's own unit, on one clock per history).
	Invoke, Complete int64
	// StartTS and CommitTS are database timestamps when known.
	StartTS, CommitTS Timestamp
	// ID is the source's name for the transaction, for explanations
	// (e.g. "c3-17", or the Jepsen :index of the completion).
	ID string
	// Ops are the micro-ops, in program order.
	Ops []Op
	// Lists holds the elements of the transaction's list reads (see
	// Txn.ListOf); decoders may carve it from a shared arena.
	Lists []int32
	// Ext holds the rarer side tables (predicate payloads, per-op times);
	// nil when the transaction has neither, which keeps Txn small.
	Ext *TxnExt
}

// TxnExt holds a transaction's predicate payloads and per-op times.
type TxnExt struct {
	// Preds holds the payloads of its predicate reads (see Txn.PredOf).
	Preds []Predicate
	// OpTimes holds per-op client intervals, indexed like Ops, when some op
	// has HasTime set (see Txn.OpTime); nil otherwise.
	OpTimes []OpTime
}

func (t *Txn) ext() *TxnExt {
	if t.Ext == nil {
		t.Ext = &TxnExt{}
	}
	return t.Ext
}

// Evidence flags which optional layers a history carries.
type Evidence struct {
	Sessions      bool `json:"sessions"`       // session ids are meaningful
	ClientTime    bool `json:"client_time"`    // txn invoke/complete
	OpTime        bool `json:"op_time"`        // per-op invoke/complete
	Timestamps    bool `json:"timestamps"`     // start_ts / commit_ts
	VersionOrder  bool `json:"version_order"`  // History.VersionOrder present
	CommitOrder   bool `json:"commit_order"`   // CommitTS is an exact commit order
	PredicateRead bool `json:"predicate_read"` // some PredRead ops
	// Certificate evidence (certificate.go).
	VersionSets bool   `json:"version_sets,omitempty"` // some PredRead ops carry a version set
	SerialOrder string `json:"serial_order,omitempty"` // SerialCommit or SerialStart: the expected serialization order
	// TombstoneReads: an item read that observed a deleted version names
	// its tombstone (the source knows which version it read), so a nil
	// item read is the key's initial version exactly. Without it a nil
	// read of a key with deleted versions is the initial version or one
	// of the deleted ones (see Delete).
	TombstoneReads bool `json:"tombstone_reads,omitempty"`
}

// Header holds run metadata from the native format's header line or the
// decoder.
type Header struct {
	Format   string            `json:"format,omitempty"` // decoder that produced it
	DB       string            `json:"db,omitempty"`
	Version  string            `json:"db_version,omitempty"`
	Level    string            `json:"level,omitempty"`
	Workload string            `json:"workload,omitempty"`
	Clock    string            `json:"clock,omitempty"`
	Extra    map[string]string `json:"extra,omitempty"`
	// Tables declares the tables whose WHERE clauses use columns beyond
	// (k, v): key patterns and row columns (schema.go).
	Tables []Table `json:"tables,omitempty"`
}

// History is a decoded transaction history.
type History struct {
	Header   Header
	Txns     []Txn
	Keys     *Interner
	Values   *Interner
	Sessions *Interner
	Evidence Evidence
	// VersionOrder, when non-nil, gives per key id the committed version
	// order as value ids (oldest first), recovered from the database.
	VersionOrder map[int32][]int32
	// RowImages, when non-nil, gives the row image (column values, or
	// deleted) of versions of declared tables' rows, keyed by
	// PackKV(key, value) (schema.go).
	RowImages map[uint64]*RowImage
	// Ignored counts input records that are not client transactions and
	// were deliberately skipped, by reason (e.g. "nemesis op": 12). Nothing
	// is dropped without a count here.
	Ignored map[string]int
	// Notes are human-readable remarks from the decoder.
	Notes []string
	// Notices are remarks a user must see even without asking for detail:
	// input the decoder dropped (a torn last line). Each is also in Notes.
	Notices []string
}

// New returns an empty history with fresh interners.
func New() *History {
	return &History{Keys: NewInterner(), Values: NewInterner(), Sessions: NewInterner(), Ignored: map[string]int{}}
}

// Ignore counts a skipped input record under reason.
func (h *History) Ignore(reason string, n int) {
	if h.Ignored == nil {
		h.Ignored = map[string]int{}
	}
	h.Ignored[reason] += n
}

// Add appends t, setting its Index, and returns a pointer to the stored copy.
func (h *History) Add(t Txn) *Txn {
	t.Index = int32(len(h.Txns))
	h.Txns = append(h.Txns, t)
	return &h.Txns[len(h.Txns)-1]
}

// KeyName renders a key id.
func (h *History) KeyName(k int32) string { return h.Keys.String(k) }

// ValueName renders a value id ("nil" for NoValue).
func (h *History) ValueName(v int32) string {
	if v == NoValue {
		return "nil"
	}
	return h.Values.String(v)
}

// ListString renders a list of value ids as "[1 2 3]" (Elle style).
func (h *History) ListString(l []int32) string {
	b := make([]byte, 0, 2+len(l)*4)
	b = append(b, '[')
	for i, v := range l {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, h.ValueName(v)...)
	}
	return string(append(b, ']'))
}

// TxnName renders a transaction for explanations: "T<index>" plus the source
// id when it differs.
func (h *History) TxnName(i int32) string {
	t := &h.Txns[i]
	s := "T" + strconv.Itoa(int(i))
	if t.ID != "" && t.ID != strconv.Itoa(int(i)) {
		s += " (" + t.ID + ")"
	}
	return s
}

// OpString renders op o of t Elle-style: "append 3 4", "r 3 [1 2]", "w x 5".
func (h *History) OpString(t *Txn, o *Op) string {
	switch o.Kind {
	case Read:
		s := "r " + h.KeyName(o.Key) + " "
		if o.IsList {
			if o.ListUnknown {
				return s + "nil"
			}
			return s + h.ListString(t.ListOf(o))
		}
		return s + h.ValueName(o.Value)
	case PredRead:
		if p := t.PredOf(o); p != nil {
			return "rp " + p.Table + " where " + p.Where
		}
		return "rp"
	case Delete:
		return "delete " + h.KeyName(o.Key) + " " + h.ValueName(o.Value)
	}
	return o.Kind.String() + " " + h.KeyName(o.Key) + " " + h.ValueName(o.Value)
}

// TxnString renders a whole transaction: "T3 [append 1 2, r 1 [2]] committed".
func (h *History) TxnString(i int32) string {
	t := &h.Txns[i]
	b := []byte(h.TxnName(i) + " [")
	for j := range t.Ops {
		if j > 0 {
			b = append(b, ", "...)
		}
		b = append(b, h.OpString(t, &t.Ops[j])...)
	}
	b = append(b, ']')
	if t.Status != Committed {
		b = append(b, ' ')
		b = append(b, t.Status.String()...)
	}
	return string(b)
}

// Stats summarises a history.
type Stats struct {
	Txns      int `json:"txns"`
	Committed int `json:"committed"`
	Aborted   int `json:"aborted"`
	Unknown   int `json:"unknown"`
	Ops       int `json:"ops"`
	Keys      int `json:"keys"`
	Sessions  int `json:"sessions"`
}

// Stats computes summary counts.
func (h *History) Stats() Stats {
	s := Stats{Keys: h.Keys.Len(), Sessions: h.Sessions.Len()}
	for i := range h.Txns {
		s.Count(&h.Txns[i])
	}
	return s
}

// Count adds t to the transaction, status and op counts (for a history
// seen as a stream; Keys and Sessions are left alone).
func (s *Stats) Count(t *Txn) {
	s.Txns++
	s.Ops += len(t.Ops)
	switch t.Status {
	case Committed:
		s.Committed++
	case Aborted:
		s.Aborted++
	default:
		s.Unknown++
	}
}
