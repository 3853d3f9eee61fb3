package sim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/txray/txray/history"
)

// Replicated levels: a geo-replicated key-value store with one replica per
// client session. A transaction executes atomically at its session's
// replica (reads from the replica's state, its own writes locally) and
// commits there with a Lamport timestamp above everything the replica has
// applied; its writes are then broadcast as one message and applied
// atomically at every other replica after a random delay, last writer wins
// by (Lamport timestamp, origin). The abstract execution (Cerone, Bernardi &
// Gotsman, CONCUR 2015) is: a transaction sees exactly the transactions
// applied at its replica before it ran (vis), arbitration is the Lamport
// order (ar ⊇ vis), and a session always sees its own earlier transactions.
// So every history satisfies INT, EXT and SESSION with atomic visibility:
//
//   - ReplicatedReadAtomic applies messages in arrival order: exactly read
//     atomic (Cerone RA); causality is not preserved, so causal consistency
//     fails whenever a message overtakes one it depends on and a reader
//     notices.
//   - ReplicatedCausal delivers causally (a message waits until the replica
//     has applied everything its origin had applied when it committed):
//     vis is transitive, so histories satisfy causal consistency (Cerone CC).
//
// Faults (Config.Faults; only these apply to the replicated levels), each
// counted in Truth.FaultCounts only when a reader makes the violation
// observable by definition, so a checker of the broken level must reject
// every history in which a count is positive:
//
//   - FaultFracturedRead: a remote message is applied in two parts; counted
//     when a transaction reads a key from the applied part and the initial
//     state of a key in the pending part (read atomic forbids it).
//   - FaultNonMonotonicRead: a read of a key returns the initial state
//     although an earlier read of the same transaction returned a write of a
//     transaction that also wrote the key (Biswas–Enea read committed
//     forbids it).
//   - FaultCausalityViolation (ReplicatedCausal): a message is applied
//     before its causal dependencies; counted when a transaction reads from
//     it and reads the initial state of a key written by a transaction that
//     precedes the message's transaction in session order or that it read
//     from (causal consistency forbids it).
//
// Replicated histories carry sessions, per-key version orders (the Lamport
// order of the writes) and client intervals; no database timestamps. The
// workload is rw-register only.
const (
	ReplicatedReadAtomic = "replicated-read-atomic"
	ReplicatedCausal     = "replicated-causal"

	FaultFracturedRead      = "fractured-read"
	FaultNonMonotonicRead   = "non-monotonic-read"
	FaultCausalityViolation = "causality-violation"
)

var replicatedLevels = []LevelInfo{
	{ReplicatedReadAtomic, "read-atomic", "replicated store, atomic visibility, messages applied in arrival order (exactly read atomic)"},
	{ReplicatedCausal, "causal-cerone", "replicated store, atomic visibility, causal delivery (causal consistency)"},
}

var replicatedFaults = []FaultInfo{
	{FaultFracturedRead, "a replica applies a remote transaction in two parts (breaks read atomic)"},
	{FaultNonMonotonicRead, "a read returns the initial state after the transaction observed a writer of the key (breaks Biswas–Enea read committed)"},
	{FaultCausalityViolation, "a replica applies a transaction before its causal dependencies (breaks causal consistency)"},
}

// ReplicatedLevels lists the replicated levels (not in Levels: they run on
// a different store and produce register histories only).
func ReplicatedLevels() []LevelInfo { return append([]LevelInfo(nil), replicatedLevels...) }

// ReplicatedFaults lists the faults of the replicated levels.
func ReplicatedFaults() []FaultInfo { return append([]FaultInfo(nil), replicatedFaults...) }

// IsReplicated reports whether level is a replicated level.
func IsReplicated(level string) bool {
	for _, l := range replicatedLevels {
		if l.Name == level {
			return true
		}
	}
	return false
}

type rwrite struct {
	key, val int64
}

type rtxn struct {
	idx     int32 // history index
	origin  int
	seq     int32 // index among the origin's broadcast (writing) transactions
	lamport int64
	deps    []int32 // origin replica's applied counts per replica at commit
	writes  []rwrite
	preds   []int32 // so predecessor and wr sources (history indices)
	wkeys   map[int64]bool
}

type rversion struct {
	val     int64
	lamport int64
	origin  int
	txn     int32 // writer history index
}

type replica struct {
	state   map[int64]rversion
	clock   int64
	applied []int32 // per origin: messages applied (in origin order for causal)
	pending map[int64]bool
	partial *rtxn // fractured: the txn applied in part
}

type rmsg struct {
	at   int64
	to   int
	t    *rtxn
	part []rwrite // nil = all writes
	rest bool     // second part of a fractured delivery
	id   int64    // tie-break: deterministic order of equal times
}

// msgHeap is a binary min-heap of messages by (at, id).
type msgHeap []rmsg

func (q msgHeap) less(i, j int) bool {
	return q[i].at < q[j].at || (q[i].at == q[j].at && q[i].id < q[j].id)
}

func (q *msgHeap) push(m rmsg) {
	*q = append(*q, m)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *msgHeap) pop() rmsg {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h.less(l, m) {
			m = l
		}
		if r < len(h) && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// generateReplicated runs a replicated level.
func generateReplicated(cfg Config) (*history.History, *Truth, error) {
	if cfg.Workload == "" {
		cfg.Workload = RWRegister
	}
	if cfg.Workload != RWRegister {
		return nil, nil, fmt.Errorf("level %s: workload %q: the replicated store runs %s only", cfg.Level, cfg.Workload, RWRegister)
	}
	faults := cfg.Faults
	cfg.Faults = nil
	lv := cfg.Level
	cfg.Level = StrictSerializable // normalize the shared fields
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, nil, err
	}
	cfg.Level = lv
	prob := map[string]float64{}
	for _, f := range faults {
		known := false
		for _, fi := range replicatedFaults {
			known = known || fi.Name == f.Name
		}
		if !known {
			var ns []string
			for _, fi := range replicatedFaults {
				ns = append(ns, fi.Name)
			}
			return nil, nil, fmt.Errorf("fault %q does not apply to level %s (its faults: %s)", f.Name, lv, strings.Join(ns, ", "))
		}
		if !(f.Prob >= 0 && f.Prob <= 1) {
			return nil, nil, fmt.Errorf("fault %q: probability %v is not in [0,1]", f.Name, f.Prob)
		}
		prob[f.Name] = f.Prob
	}
	causal := lv == ReplicatedCausal
	r := rand.New(rand.NewPCG(cfg.Seed, 0x4e911ca))
	fr := rand.New(rand.NewPCG(cfg.Seed, 0xfa017e9))
	wl := newWorkload(cfg, rand.New(rand.NewPCG(cfg.Seed, 0x10ad0003)), &engine{keys: map[int64]*keyState{}})
	roll := func(name string) bool {
		p := prob[name]
		return p > 0 && (p >= 1 || fr.Float64() < p)
	}

	h := history.New()
	h.Header = history.Header{DB: "txray-sim", Version: "1", Level: replicatedModel(lv), Workload: RWRegister,
		Clock: "simulated-ns", Extra: map[string]string{"sim.level": lv, "sim.seed": strconv.FormatUint(cfg.Seed, 10),
			"sim.txns": strconv.Itoa(cfg.Txns), "sim.clients": strconv.Itoa(cfg.Clients), "sim.keys": strconv.Itoa(cfg.Keys),
			"sim.dist": cfg.Dist}}
	h.Evidence = history.Evidence{Sessions: true, ClientTime: true, VersionOrder: true}
	truth := &Truth{Level: lv, FaultCounts: map[string]int{}, Faults: map[int32][]string{}, TrueStatus: map[int32]history.Status{},
		TrueCommitTS: map[int32]history.Timestamp{}, TrueStartTS: map[int32]history.Timestamp{}, Aborts: map[string]int{}}
	for _, f := range faults {
		truth.FaultCounts[f.Name] += 0
		h.Header.Extra["fault."+f.Name+".prob"] = strconv.FormatFloat(f.Prob, 'g', -1, 64)
	}
	mark := func(t int32, f string) {
		truth.FaultCounts[f]++
		if !slices.Contains(truth.Faults[t], f) {
			truth.Faults[t] = append(truth.Faults[t], f)
			slices.Sort(truth.Faults[t])
		}
	}

	n := cfg.Clients
	reps := make([]*replica, n)
	sess := make([]int32, n)
	seqs := make([]int32, n)
	msgs := make([]int32, n) // broadcast (writing) transactions per origin
	lastOf := make([]int32, n)
	for i := range reps {
		reps[i] = &replica{state: map[int64]rversion{}, applied: make([]int32, n)}
		sess[i] = h.Sessions.Str(strconv.Itoa(i))
		lastOf[i] = -1
	}
	var txns []*rtxn
	var queue msgHeap // by delivery time
	var waiting [][]rmsg
	waiting = make([][]rmsg, n)
	now := int64(0)
	nextID := int64(0)
	lat := func() int64 { return cfg.StepNanos * (1 + r.Int64N(int64(4*n))) }

	apply := func(rp *replica, t *rtxn, ws []rwrite) {
		for _, w := range ws {
			cur, ok := rp.state[w.key]
			if !ok || cmp.Or(cmp.Compare(t.lamport, cur.lamport), cmp.Compare(t.origin, cur.origin)) > 0 {
				rp.state[w.key] = rversion{w.val, t.lamport, t.origin, t.idx}
			}
		}
		rp.clock = max(rp.clock, t.lamport)
	}
	deliverable := func(rp *replica, m rmsg) bool {
		if !causal || m.rest {
			return true
		}
		if rp.applied[m.t.origin] != m.t.seq {
			return false
		}
		for i, d := range m.t.deps {
			if i != m.t.origin && rp.applied[i] < d {
				return false
			}
		}
		return true
	}
	// applyMsg applies m at its replica; it reports whether m was taken.
	var applyMsg func(m rmsg) bool
	applyMsg = func(m rmsg) bool {
		rp := reps[m.to]
		if m.rest {
			apply(rp, m.t, m.part)
			rp.partial = nil
			return true
		}
		if rp.partial != nil { // finish a fractured delivery first
			return false
		}
		ok := deliverable(rp, m)
		if !ok {
			if !roll(FaultCausalityViolation) {
				return false
			}
			// applied out of causal order
		}
		ws := m.t.writes
		if len(ws) >= 2 && roll(FaultFracturedRead) {
			cut := 1 + r.IntN(len(ws)-1)
			apply(rp, m.t, ws[:cut])
			rp.partial = m.t
			rp.pending = map[int64]bool{}
			for _, w := range ws[cut:] {
				rp.pending[w.key] = true
			}
			queue.push(rmsg{at: now + cfg.StepNanos*(1+r.Int64N(int64(2*n))), to: m.to, t: m.t, part: ws[cut:], rest: true})
		} else {
			apply(rp, m.t, ws)
		}
		// Out of causal order (the fault), the skipped messages of the
		// origin are never applied here afterwards.
		rp.applied[m.t.origin] = max(rp.applied[m.t.origin], m.t.seq+1)
		return true
	}

	started := 0
	for started < cfg.Txns || len(queue) > 0 {
		now += cfg.StepNanos + r.Int64N(cfg.Jitter+1)
		// deliver due messages
		for len(queue) > 0 && queue[0].at <= now {
			m := queue.pop()
			if !applyMsg(m) {
				waiting[m.to] = append(waiting[m.to], m)
			}
		}
		for c := range waiting {
			for progress := true; progress; {
				progress = false
				for j := 0; j < len(waiting[c]); j++ {
					if applyMsg(waiting[c][j]) {
						waiting[c] = slices.Delete(waiting[c], j, j+1)
						progress = true
						break
					}
				}
			}
		}
		if started >= cfg.Txns {
			if len(queue) == 0 {
				// flush messages that can never be delivered (only possible
				// after a causality-violation fault skipped a dependency)
				for c := range waiting {
					waiting[c] = nil
				}
			}
			continue
		}
		// run one transaction at a random session's replica
		c := r.IntN(n)
		rp := reps[c]
		started++
		pt := &txn{}
		wl.plan(pt)
		t := &rtxn{idx: int32(len(h.Txns)), origin: c, seq: msgs[c], wkeys: map[int64]bool{}}
		ht := history.Txn{Session: sess[c], Seq: seqs[c], Status: history.Committed, HasTime: true, Invoke: now}
		seqs[c]++
		if lastOf[c] >= 0 {
			t.preds = append(t.preds, lastOf[c])
		}
		own := map[int64]int64{}
		var readFrom []int32 // writers of external reads, in order
		partialReadApplied := false
		partialReadInit := false
		for _, o := range pt.ops {
			k := o.ks.key
			op := history.Op{Key: h.Keys.Int(k), Value: history.NoValue}
			if o.kind == history.Write || o.kind == history.Append {
				op.Kind = history.Write
				op.Value = h.Values.Int(o.val)
				own[k] = o.val
				if !t.wkeys[k] {
					t.wkeys[k] = true
				}
				t.writes = slices.DeleteFunc(t.writes, func(w rwrite) bool { return w.key == k })
				t.writes = append(t.writes, rwrite{k, o.val})
				ht.Ops = append(ht.Ops, op)
				continue
			}
			op.Kind = history.Read
			if v, ok := own[k]; ok {
				op.Value = h.Values.Int(v)
				ht.Ops = append(ht.Ops, op)
				continue
			}
			cur, ok := rp.state[k]
			if ok {
				// non-monotonic-read fault: an earlier read returned a writer
				// of k; return the initial state instead
				for _, w := range readFrom {
					if txns[w].wkeys[k] && roll(FaultNonMonotonicRead) {
						ok = false
						mark(t.idx, FaultNonMonotonicRead)
						break
					}
				}
			}
			if ok {
				op.Value = h.Values.Int(cur.val)
				readFrom = append(readFrom, cur.txn)
				if !slices.Contains(t.preds, cur.txn) {
					t.preds = append(t.preds, cur.txn)
				}
				if rp.partial != nil && cur.txn == rp.partial.idx {
					partialReadApplied = true
				}
			} else if rp.partial != nil && rp.pending[k] {
				partialReadInit = true
			}
			ht.Ops = append(ht.Ops, op)
		}
		if partialReadApplied && partialReadInit {
			mark(t.idx, FaultFracturedRead)
		}
		// causality violation observable: read from m, initial state of a
		// key written by one of m's direct causal predecessors
		if causal && prob[FaultCausalityViolation] > 0 {
			for _, w := range readFrom {
				for _, p := range txns[w].preds {
					for j, o := range ht.Ops {
						k := pt.ops[j].ks.key
						if o.Kind == history.Read && o.Value == history.NoValue && txns[p].wkeys[k] && p != t.idx && !t.wkeys[k] {
							if _, local := own[k]; !local {
								mark(t.idx, FaultCausalityViolation)
								goto counted
							}
						}
					}
				}
			}
		counted:
		}
		rp.clock++
		t.lamport = rp.clock
		if len(t.writes) > 0 {
			apply(rp, t, t.writes)
			msgs[c]++
			rp.applied[c] = msgs[c]
		}
		t.deps = slices.Clone(rp.applied)
		ht.Complete = now + 1
		txns = append(txns, t)
		lastOf[c] = t.idx
		h.Add(ht)
		if len(t.writes) > 0 {
			for o := 0; o < n; o++ {
				if o != c {
					queue.push(rmsg{at: now + lat(), to: o, t: t, id: nextID})
					nextID++
				}
			}
		}
	}
	// version order per key: Lamport order of the writes
	type kv struct {
		lamport int64
		origin  int
		val     int64
	}
	byKey := map[int64][]kv{}
	for _, t := range txns {
		for _, w := range t.writes {
			byKey[w.key] = append(byKey[w.key], kv{t.lamport, t.origin, w.val})
		}
	}
	h.VersionOrder = map[int32][]int32{}
	for k, vs := range byKey {
		slices.SortFunc(vs, func(a, b kv) int { return cmp.Or(cmp.Compare(a.lamport, b.lamport), cmp.Compare(a.origin, b.origin)) })
		order := make([]int32, len(vs))
		for i, v := range vs {
			order[i] = h.Values.Int(v.val)
		}
		h.VersionOrder[h.Keys.Int(k)] = order
	}
	for i := range txns {
		truth.Order = append(truth.Order, int32(i))
	}
	slices.SortStableFunc(truth.Order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(txns[a].lamport, txns[b].lamport), cmp.Compare(txns[a].origin, txns[b].origin))
	})
	for f, c := range truth.FaultCounts {
		h.Header.Extra["fault."+f] = strconv.Itoa(c)
	}
	return h, truth, nil
}

func replicatedModel(level string) string {
	for _, l := range replicatedLevels {
		if l.Name == level {
			return l.Model
		}
	}
	return ""
}

// streamReplicated generates in memory (the replicated store keeps every
// transaction for its causal bookkeeping) and writes the result to sink.
func streamReplicated(cfg Config, sink Sink) (*Truth, error) {
	h, truth, err := generateReplicated(cfg)
	if err != nil {
		return nil, err
	}
	if err := sink.WriteHeader(h.Header, h.Evidence); err != nil {
		return nil, err
	}
	for i := range h.Txns {
		if err := sink.WriteTxn(h, &h.Txns[i]); err != nil {
			return nil, err
		}
	}
	keys := make([]int32, 0, len(h.VersionOrder))
	for k := range h.VersionOrder {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := sink.WriteVersionOrder(h, k, h.VersionOrder[k]); err != nil {
			return nil, err
		}
	}
	return truth, nil
}

func isReplicatedFault(name string) bool {
	for _, f := range replicatedFaults {
		if f.Name == name {
			return true
		}
	}
	return false
}
