package enne

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/internal/serial"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sqlpred"
)

// Replay executes a history serially in an expected serialization order
// and collects the reads that disagree with the state (see the package
// comment). It is exported so that other order-based checkers can reuse it.
type Replay struct {
	h  *history.History
	by string // history.SerialCommit or SerialStart

	// Anomalies, in replay order (the first breaking transaction first).
	Anomalies []check.Anomaly
	// Reasons make the verdict unknown when no anomaly is found.
	Reasons []string
	Stats   struct{ Placed, Floating, ItemReads, PredReads, PredKeys int }

	order   []int32        // placed transactions in serial order
	pos     []int32        // txn -> position in order, -1 if not placed
	st      *serial.State  // key -> installed versions, in replay order
	writes  map[uint64]ref // (key, value) -> its write; dups counts the others
	dups    map[uint64]int
	dead    map[uint64]struct{} // (key, value) of Delete tombstones; nil: none
	cmpBuf  []history.Row
	intKeys []intKey
	strKeys []int32
	preds   map[[2]string]*pred
	schema  *sqlpred.Schema
	overlay []kv // the running transaction's own writes
	rowsBuf []history.Row
}

type ref struct{ txn, op int32 }

type kv struct{ k, v int32 }

type intKey struct {
	k  int64
	id int32
}

type pred struct {
	tp  *sqlpred.TablePred
	err error
	rs  sqlpred.Ranges
}

func pack(k, v int32) uint64 { return uint64(uint32(k))<<32 | uint64(uint32(v)) }

// NewReplay prepares a replay of h in the order of the timestamp named by
// by (history.SerialCommit or history.SerialStart).
func NewReplay(h *history.History, by string) *Replay {
	nk := h.Keys.Len()
	return &Replay{h: h, by: by, pos: make([]int32, len(h.Txns)), st: serial.NewState(nk),
		writes: map[uint64]ref{}, dups: map[uint64]int{}, preds: map[[2]string]*pred{}, schema: sqlpred.NewSchema(h)}
}

func (s *Replay) ts(t *history.Txn) (history.Timestamp, bool) {
	if s.by == history.SerialStart {
		return t.StartTS, t.StartTS.Set
	}
	return t.CommitTS, t.CommitTS.Set
}

func (s *Replay) reason(f string, a ...any) {
	if len(s.Reasons) < 32 {
		s.Reasons = append(s.Reasons, fmt.Sprintf(f, a...))
	}
}

// Run replays every placed transaction, then checks floating ones.
func (s *Replay) Run(ctx context.Context) error {
	h := s.h
	keySeen := make([]bool, h.Keys.Len())
	var floating []int32
	place := make([]bool, len(h.Txns))
	for i := range h.Txns {
		t := &h.Txns[i]
		s.pos[i] = -1
		writes := false
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind.IsWrite() && o.Value != history.NoValue {
				if _, dup := s.writes[pack(o.Key, o.Value)]; dup {
					s.dups[pack(o.Key, o.Value)]++
				} else {
					s.writes[pack(o.Key, o.Value)] = ref{int32(i), int32(j)}
				}
				if o.Kind == history.Delete {
					if s.dead == nil {
						s.dead = map[uint64]struct{}{}
					}
					s.dead[pack(o.Key, o.Value)] = struct{}{}
				}
				writes = true
				if !keySeen[o.Key] {
					keySeen[o.Key] = true
					sc := h.Keys.Get(o.Key)
					if sc.IsStr {
						s.strKeys = append(s.strKeys, o.Key)
					} else {
						s.intKeys = append(s.intKeys, intKey{sc.I, o.Key})
					}
				}
			}
		}
		_, has := s.ts(t)
		switch {
		case t.Status == history.Aborted:
		case has:
			place[i] = true
		case t.Status == history.Committed && writes:
			s.reason("committed %s writes but has no %s timestamp: it cannot be placed in the expected serialization order", h.TxnName(int32(i)), s.by)
		case t.Status == history.Committed:
			floating = append(floating, int32(i))
		}
	}
	if len(s.Reasons) > 0 {
		return nil
	}
	slices.SortFunc(s.intKeys, func(a, b intKey) int { return cmp.Compare(a.k, b.k) })
	slices.Sort(s.strKeys)
	s.order = serial.Order(h, func(i int32, _ *history.Txn) bool { return place[i] },
		func(t *history.Txn) history.Timestamp { ts, _ := s.ts(t); return ts })
	for x, t := range s.order {
		s.pos[t] = int32(x)
	}
	s.Stats.Placed, s.Stats.Floating = len(s.order), len(floating)
	if err := serial.Replay(ctx, s.order, nil, func(x, t int32) { s.placed(t, x) }); err != nil {
		return err
	}
	for _, t := range floating {
		s.floating(t)
	}
	return nil
}

// isDead reports whether (k, v) is a deleted version (a Delete's tombstone).
func (s *Replay) isDead(k, v int32) bool {
	if s.dead == nil || v == history.NoValue {
		return false
	}
	_, ok := s.dead[pack(k, v)]
	return ok
}

// absent reports whether version v of k is absent to a reader: the
// initial version or a deleted one.
func (s *Replay) absent(k, v int32) bool { return v == history.NoValue || s.isDead(k, v) }

// sees reports whether a read that returned v agrees with state e: the
// same version, or nil for an absent (deleted) one, unless reads name the
// deleted versions they saw (Evidence.TombstoneReads).
func (s *Replay) sees(k, v, e int32) bool {
	return v == e || (v == history.NoValue && !s.h.Evidence.TombstoneReads && s.isDead(k, e))
}

func (s *Replay) own(k int32) (int32, bool) {
	for i := len(s.overlay) - 1; i >= 0; i-- {
		if s.overlay[i].k == k {
			return s.overlay[i].v, true
		}
	}
	return 0, false
}

func (s *Replay) value(k int32) int32 {
	if v, ok := s.own(k); ok {
		return v
	}
	return s.st.Value(k)
}

// placed checks transaction t at position x against the current state and
// installs its final writes.
func (s *Replay) placed(t, x int32) {
	h := s.h
	tx := &h.Txns[t]
	s.overlay = s.overlay[:0]
	check := tx.Status == history.Committed // unknown outcome: reads are not known
	for j := range tx.Ops {
		o := &tx.Ops[j]
		switch o.Kind {
		case history.Write, history.Delete:
			s.overlay = append(s.overlay, kv{o.Key, o.Value})
		case history.Read:
			if !check || o.IsList {
				continue
			}
			s.Stats.ItemReads++
			if e := s.value(o.Key); !s.sees(o.Key, o.Value, e) {
				s.badRead(t, x, j, o.Key, o.Value, e)
			}
		case history.PredRead:
			pr := tx.PredOf(o)
			if !check || pr == nil {
				continue
			}
			s.Stats.PredReads++
			exp, ok := s.expectedRows(t, j, pr, func(k int32) int32 { return s.value(k) })
			if ok {
				s.comparePred(t, x, j, pr, exp)
			}
		}
	}
	ts, _ := s.ts(tx)
	for i := len(s.overlay) - 1; i >= 0; i-- {
		w := s.overlay[i]
		if f, ok := s.st.Frontier(w.k); ok && f.Writer == t {
			continue // a later write of the same key is already installed
		}
		s.st.Install(w.k, serial.Version{TS: ts, Writer: t, Val: w.v})
	}
}

// badRead reports a read of k = v where the state at t's place gives e.
func (s *Replay) badRead(t, x int32, j int, k, v, e int32) {
	h := s.h
	what := fmt.Sprintf("%s read %s = %s (op %d)", h.TxnName(t), h.KeyName(k), h.ValueName(v), j)
	if ownV, ok := s.own(k); ok {
		s.add(model.Internal, []int32{t}, k, fmt.Sprintf("%s, but it wrote %s = %s earlier: a transaction must see its own last write", what, h.KeyName(k), h.ValueName(ownV)))
		return
	}
	if typ, expl, other, ok := s.impossible(k, v); ok {
		if typ == "" {
			s.reason("%s, %s", what, expl)
			return
		}
		s.add(typ, append([]int32{t}, other...), k, what+", "+expl)
		return
	}
	s.add(model.Ext, s.involved(t, k, v, e), k, fmt.Sprintf("%s at position %d of the expected serialization order (%s order); the state there is %s = %s (%s), "+
		"but the value it read is %s: the expected order is not a serialization order, so the history is not serializable under the promised protocol",
		what, x, s.by, h.KeyName(k), h.ValueName(e), s.versionText(k, e), s.versionText(k, v)))
}

// involved lists t, the writer of what it read and of what it should have.
func (s *Replay) involved(t, k, v, e int32) []int32 {
	out := []int32{t}
	for _, val := range []int32{v, e} {
		if w := s.installer(k, val); w >= 0 && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// installer is the placed transaction whose final write of k is v, or -1.
func (s *Replay) installer(k, v int32) int32 {
	if v == history.NoValue {
		return -1
	}
	r, ok := s.writes[pack(k, v)]
	if ok && s.dups[pack(k, v)] == 0 && s.pos[r.txn] >= 0 && s.h.Txns[r.txn].FinalWrite(int(r.op)) {
		return r.txn
	}
	return -1
}

func (s *Replay) versionText(k, v int32) string {
	h := s.h
	if v == history.NoValue {
		return "the initial state"
	}
	w := s.installer(k, v)
	if w < 0 {
		return "written by no placed transaction"
	}
	if s.isDead(k, v) {
		return fmt.Sprintf("deleted by %s at position %d", h.TxnName(w), s.pos[w])
	}
	return fmt.Sprintf("written by %s at position %d", h.TxnName(w), s.pos[w])
}

// impossible classifies a read value no serial order can explain: typ ""
// with ok means undecided (the writer's outcome is unknown).
func (s *Replay) impossible(k, v int32) (typ, expl string, other []int32, ok bool) {
	h := s.h
	if v == history.NoValue {
		return "", "", nil, false
	}
	w, ok := s.writes[pack(k, v)]
	if !ok {
		return model.GarbageVersions, "a value no transaction wrote", nil, true
	}
	if n := s.dups[pack(k, v)]; n > 0 {
		return "", fmt.Sprintf("a value %d writes wrote (duplicate write): its writer is ambiguous", n+1), nil, true
	}
	wt := &h.Txns[w.txn]
	switch {
	case wt.Status == history.Aborted:
		return model.G1a, fmt.Sprintf("written by %s, which aborted (aborted read, Adya G1a)", h.TxnName(w.txn)), []int32{w.txn}, true
	case !wt.FinalWrite(int(w.op)):
		return model.G1b, fmt.Sprintf("an intermediate write of %s, which wrote %s again later (intermediate read, Adya G1b)", h.TxnName(w.txn), h.KeyName(k)), []int32{w.txn}, true
	case s.pos[w.txn] < 0:
		return "", fmt.Sprintf("written by %s, whose outcome is unknown and which has no %s timestamp", h.TxnName(w.txn), s.by), nil, true
	}
	return "", "", nil, false
}

func (s *Replay) add(typ string, txns []int32, k int32, expl string) {
	a := check.Anomaly{Type: typ, Txns: txns, Explanation: expl, Ops: check.TxnOps(s.h, txns...)}
	if k >= 0 {
		a.Key = s.h.KeyName(k)
	}
	s.Anomalies = append(s.Anomalies, a)
}

// compile compiles a predicate read's WHERE clause for its table
// (sqlpred.Schema: a declared table's columns, else (k, v)).
func (s *Replay) compile(table, where string) *pred {
	ck := [2]string{table, where}
	if p, ok := s.preds[ck]; ok {
		return p
	}
	p := &pred{tp: s.schema.Compile(table, where)}
	p.err = p.tp.Err
	if p.err == nil {
		p.rs, _ = p.tp.KeyRanges()
	}
	s.preds[ck] = p
	return p
}

// regionKeys calls f for every written key in the predicate's region: the
// integer keys in its range on k and every string key, or for a declared
// table its rows.
func (s *Replay) regionKeys(p *pred, f func(k int32) bool) {
	if p.tp.Declared() {
		for _, ik := range s.intKeys {
			if p.tp.Member(ik.id) && !f(ik.id) {
				return
			}
		}
		for _, k := range s.strKeys {
			if p.tp.Member(k) && !f(k) {
				return
			}
		}
		return
	}
	for _, iv := range p.rs {
		lo, _ := slices.BinarySearchFunc(s.intKeys, iv.Lo, func(a intKey, x int64) int { return cmp.Compare(a.k, x) })
		for x := lo; x < len(s.intKeys) && s.intKeys[x].k <= iv.Hi; x++ {
			if !f(s.intKeys[x].id) {
				return
			}
		}
	}
	for _, k := range s.strKeys {
		if !f(k) {
			return
		}
	}
}

// expectedRows evaluates a predicate read over the state value(k): the
// rows (sorted by key id) a serial execution returns. ok is false when the
// predicate cannot be evaluated (a reason is recorded).
func (s *Replay) expectedRows(t int32, j int, pr *history.Predicate, value func(k int32) int32) ([]history.Row, bool) {
	p := s.compile(pr.Table, pr.Where)
	if p.err != nil {
		s.reason("%s's predicate read (op %d) %q cannot be evaluated: %v", s.h.TxnName(t), j, pr.Where, p.err)
		return nil, false
	}
	rows := s.rowsBuf[:0]
	ok := true
	s.regionKeys(p, func(k int32) bool {
		s.Stats.PredKeys++
		v := value(k)
		if s.absent(k, v) {
			return true // no row (unborn or deleted): matches nothing
		}
		m, err := p.tp.Matches(k, v)
		if err != nil {
			s.reason("%s's predicate read (op %d) %q cannot be evaluated on row (%s, %s): %v", s.h.TxnName(t), j, pr.Where, s.h.KeyName(k), s.h.ValueName(v), err)
			ok = false
			return false
		}
		if m {
			rows = append(rows, history.Row{Key: k, Value: v})
		}
		return true
	})
	slices.SortFunc(rows, func(a, b history.Row) int { return cmp.Compare(a.Key, b.Key) })
	s.rowsBuf = rows
	return rows, ok
}

// sameRows compares a result with the expected rows (sorted by key id).
func (s *Replay) sameRows(got, exp []history.Row) bool {
	if len(got) != len(exp) {
		return false
	}
	g := append(s.cmpBuf[:0], got...)
	slices.SortFunc(g, func(a, b history.Row) int { return cmp.Compare(a.Key, b.Key) })
	s.cmpBuf = g
	return slices.Equal(g, exp)
}

func (s *Replay) rowsText(rows []history.Row) string {
	if len(rows) == 0 {
		return "no rows"
	}
	var b strings.Builder
	for i, r := range rows {
		if i == 20 {
			fmt.Fprintf(&b, " ... (%d rows)", len(rows))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%s, %s)", s.h.KeyName(r.Key), s.h.ValueName(r.Value))
	}
	return b.String()
}

// comparePred reports a predicate read whose rows differ from the state's.
func (s *Replay) comparePred(t, x int32, j int, pr *history.Predicate, exp []history.Row) {
	if s.sameRows(pr.Result, exp) {
		return
	}
	h := s.h
	what := fmt.Sprintf("%s's predicate read (op %d) %q", h.TxnName(t), j, pr.Where)
	// A returned row no serial order can explain is named as such.
	for _, r := range pr.Result {
		if s.isDead(r.Key, r.Value) {
			s.add(model.ResultSetMismatch, []int32{t}, r.Key, fmt.Sprintf("%s returned row (%s, %s), a deleted version, which no predicate matches", what, h.KeyName(r.Key), h.ValueName(r.Value)))
			return
		}
		if ownV, ok := s.own(r.Key); ok && ownV != r.Value {
			s.add(model.Internal, []int32{t}, r.Key, fmt.Sprintf("%s returned row (%s, %s), but the transaction wrote %s = %s earlier", what, h.KeyName(r.Key), h.ValueName(r.Value), h.KeyName(r.Key), h.ValueName(ownV)))
			return
		}
		if typ, expl, other, ok := s.impossible(r.Key, r.Value); ok {
			if typ == "" {
				s.reason("%s returned row (%s, %s), %s", what, h.KeyName(r.Key), h.ValueName(r.Value), expl)
			} else {
				s.add(typ, append([]int32{t}, other...), r.Key, fmt.Sprintf("%s returned row (%s, %s), %s", what, h.KeyName(r.Key), h.ValueName(r.Value), expl))
			}
			return
		}
	}
	txns := []int32{t}
	for _, rs := range [][]history.Row{pr.Result, exp} {
		for _, r := range rs {
			if w := s.installer(r.Key, r.Value); w >= 0 && !slices.Contains(txns, w) {
				txns = append(txns, w)
			}
		}
	}
	s.add(model.Ext, txns, -1, fmt.Sprintf("%s at position %d of the expected serialization order (%s order) returned %s; the state there gives %s: "+
		"the expected order is not a serialization order, so the history is not serializable under the promised protocol",
		what, x, s.by, s.rowsText(pr.Result), s.rowsText(exp)))
}

// at returns key k's value after the first x placed transactions.
func (s *Replay) at(k, x int32) int32 {
	vs := s.st.Versions(k)
	i := sort.Search(len(vs), func(i int) bool { return s.pos[vs[i].Writer] >= x })
	if i == 0 {
		return history.NoValue
	}
	return vs[i-1].Val
}

// bounds returns the interval of points x (state after x placed
// transactions) at which k = v.
func (s *Replay) bounds(k, v int32) (lo, hi int32, ok bool) {
	n := int32(len(s.order))
	vs := s.st.Versions(k)
	if v == history.NoValue && s.dead != nil && !s.h.Evidence.TombstoneReads {
		for _, x := range vs {
			if s.isDead(k, x.Val) {
				// absent: the initial version or a deleted one, which
				// is not one interval
				return 0, 0, false
			}
		}
	}
	if v == history.NoValue {
		if len(vs) == 0 {
			return 0, n, true
		}
		return 0, s.pos[vs[0].Writer], true
	}
	for i, x := range vs {
		if x.Val == v {
			hi := n
			if i+1 < len(vs) {
				hi = s.pos[vs[i+1].Writer]
			}
			return s.pos[x.Writer] + 1, hi, true
		}
	}
	return 0, 0, false
}

// maxCandidates bounds the points tried for a floating transaction's
// predicate reads.
const maxCandidates = 4096

// floating checks a committed read-only transaction without the ordering
// timestamp: some point of the order must explain all its reads.
func (s *Replay) floating(t int32) {
	h := s.h
	tx := &h.Txns[t]
	lo, hi := int32(0), int32(len(s.order))
	loWhy, hiWhy := "", ""
	var preds []int
	narrow := func(j int, k, v int32, what string) bool {
		a, b, ok := s.bounds(k, v)
		if !ok && v == history.NoValue {
			s.reason("%s %s (op %d) of %s = nil, which has deleted versions: which absent version it read (initial or deleted) is not given, so its place in the order is not one interval",
				h.TxnName(t), what, j, h.KeyName(k))
			return false
		}
		if !ok {
			if typ, expl, other, ok2 := s.impossible(k, v); ok2 {
				if typ == "" {
					s.reason("%s %s (op %d) of %s = %s, %s", h.TxnName(t), what, j, h.KeyName(k), h.ValueName(v), expl)
				} else {
					s.add(typ, append([]int32{t}, other...), k, fmt.Sprintf("%s %s (op %d) of %s = %s, %s", h.TxnName(t), what, j, h.KeyName(k), h.ValueName(v), expl))
				}
			} else {
				s.reason("%s %s (op %d) of %s = %s, a version the replay did not install", h.TxnName(t), what, j, h.KeyName(k), h.ValueName(v))
			}
			return false
		}
		desc := fmt.Sprintf("its %s (op %d) of %s = %s holds only between positions %d and %d", what, j, h.KeyName(k), h.ValueName(v), a, b)
		if a > lo {
			lo, loWhy = a, desc
		}
		if b < hi {
			hi, hiWhy = b, desc
		}
		return true
	}
	for j := range tx.Ops {
		o := &tx.Ops[j]
		switch o.Kind {
		case history.Read:
			if o.IsList {
				continue
			}
			s.Stats.ItemReads++
			if !narrow(j, o.Key, o.Value, "read") {
				return
			}
		case history.PredRead:
			pr := tx.PredOf(o)
			if pr == nil {
				continue
			}
			s.Stats.PredReads++
			for _, r := range pr.Result {
				if !narrow(j, r.Key, r.Value, "predicate read's row") {
					return
				}
			}
			preds = append(preds, j)
		}
	}
	if lo > hi {
		s.add(model.Ext, []int32{t}, -1, fmt.Sprintf("%s has no commit position; no point of the expected serialization order (%s order) explains its reads: %s, but %s",
			h.TxnName(t), s.by, loWhy, hiWhy))
		return
	}
	if len(preds) == 0 {
		return
	}
	// Candidate points: lo and every point in (lo, hi] where a key in a
	// region changes.
	cands := []int32{lo}
	for _, j := range preds {
		p := s.compile(tx.PredOf(&tx.Ops[j]).Table, tx.PredOf(&tx.Ops[j]).Where)
		if p.err != nil {
			s.reason("%s's predicate read (op %d) %q cannot be evaluated: %v", h.TxnName(t), j, tx.PredOf(&tx.Ops[j]).Where, p.err)
			return
		}
		s.regionKeys(p, func(k int32) bool {
			for _, v := range s.st.Versions(k) {
				if p := s.pos[v.Writer]; p >= lo && p < hi {
					cands = append(cands, p+1)
				}
			}
			return len(cands) <= maxCandidates
		})
	}
	if len(cands) > maxCandidates {
		s.reason("%s has no commit position and its predicate reads span more than %d candidate points", h.TxnName(t), maxCandidates)
		return
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	var firstFail string
	for _, x := range cands {
		okAll := true
		for _, j := range preds {
			pr := tx.PredOf(&tx.Ops[j])
			exp, ok := s.expectedRows(t, j, pr, func(k int32) int32 { return s.at(k, x) })
			if !ok {
				return
			}
			if !s.sameRows(pr.Result, exp) {
				if firstFail == "" {
					firstFail = fmt.Sprintf("at position %d its predicate read (op %d) %q would return %s, but it returned %s", x, j, pr.Where, s.rowsText(exp), s.rowsText(pr.Result))
				}
				okAll = false
				break
			}
		}
		if okAll {
			return
		}
	}
	s.add(model.Ext, []int32{t}, -1, fmt.Sprintf("%s has no commit position; no point of the expected serialization order (%s order) between positions %d and %d (where its item reads hold) explains its predicate reads: %s",
		h.TxnName(t), s.by, lo, hi, firstFail))
}
