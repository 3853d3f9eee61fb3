package leopard

import (
	"math"

	"github.com/txray/txray/graph"
	"github.com/txray/txray/history"
)

// inf is the unknown upper bound of a release that was never observed
// (a transaction whose outcome the client never learnt).
const inf = math.MaxInt64

// mechs is the set of mechanisms being verified and how reads behave.
type mechs struct {
	cr, me, fuw, sc bool
	// ssi enables the SSI dangerous-structure rule of the certifier
	// (PostgreSQL: two consecutive rw anti-dependencies among concurrent
	// transactions, the outgoing one's target committing first).
	ssi bool
	// to enables the timestamp-ordering rule of the certifier: the
	// serialization order is the commit order (commit timestamps that
	// follow real time: strictly serializable OCC such as FoundationDB's
	// resolvers), so a committed T1 -rw-> T2 where T2 certainly
	// committed before T1's commit began is a violation: T2's write fell
	// between T1's read (snapshot) and T1's commit, which the certifier
	// rejects. Only for an updating T1: a read-only transaction is
	// serialized at its snapshot.
	to bool
	// stmt: each read takes its own snapshot within its interval
	// (statement-level consistent read, or a locking/current read).
	stmt bool
	// reads: reads are checked at all (not under read-uncommitted).
	reads bool
	// initUnknown: the initial value of every key is unknown (the first
	// observation fixes it), as for traces of pre-loaded tables.
	initUnknown bool
	// deduce: use mechanism-forced orders (profiles only).
	deduce bool
	// curRead: a read may be a plain consistent read (transaction
	// snapshot) or an unmarked locking/current read (SELECT ... FOR
	// UPDATE / LOCK IN SHARE MODE: the latest committed version during the
	// read), and the read view is created at the first consistent read,
	// which need not be the transaction's first read (InnoDB repeatable
	// read). Such a read's snapshot lies in [transaction begin, end of the
	// read]. Set for transaction-snapshot engines that lock writes without
	// a first-updater check: there a current read may see versions newer
	// than the snapshot. With FUW a current read that succeeds sees the
	// snapshot's version anyway.
	curRead bool
}

// writeEnt is a transaction's write set entry for one key: the first write
// acquires the lock (Leopard ME: the lock is held from the write's interval
// to the commit's or abort's interval), the last write's value is the
// version installed at commit.
type writeEnt struct {
	key, val   int32
	op         int32
	acqB, acqA int64
	// locked: the first write completed (has an interval), so the lock was
	// certainly acquired; an unfinished write of a transaction with an
	// unknown outcome only contributes a possible version.
	locked bool
	// earlier holds the values of the transaction's earlier writes of the
	// key (nil when it wrote the key once): non-final appends that a list
	// version contains before val.
	earlier []int32
}

// edge is a certain dependency between two transactions, kept for the
// serialization certifier.
type edge struct {
	to  *txn
	rel graph.Rel
	key int32
	// op is the reading op (wr: in to, rw: in the source), or -1.
	op int32
}

// txn is the verifier's state for one transaction. What only a
// transaction not yet collected needs is in *txnLive, dropped at
// collection (engine.gc): a collected transaction stays alive as long as
// the last version of some key names it, one per key in a stream that
// keeps creating keys, so it must be small.
type txn struct {
	*txnLive
	// ref is the transaction's record, for explanations. Online, a
	// collected transaction that wrote has it moved to the spill log
	// (ref nil, spill its offset; reporter.ref reads it back).
	ref    *history.Txn
	spill  int64
	client int32
	idx    int32 // ref.Index, kept when ref is spilled
	// begin is the lower bound of the transaction snapshot; snapA its upper
	// bound (the completion of the first read, or of the first op).
	begin, snapA int64
	// relB, relA bound the commit (or abort) point.
	relB, relA int64
	status     history.Status
	ended      bool
	gc         bool
	pivotDone  bool
	ssiOpen    bool // an open SSI structure with this pivot was counted
	mark       uint32
	// epoch is the key recycling epoch when the transaction was added
	// (recycler.stale).
	epoch uint32
	// floating: the transaction has no client interval (addFloating).
	floating bool
	// readOnly: the transaction has no write (SSI's read-only
	// optimization, see engine.pivot).
	readOnly bool
}

// txnLive is the state of a transaction that is not collected yet: its
// write set, its certain dependencies (for the certifier) and its
// snapshot reads. Collected transactions (gc) have none: nothing reads
// these fields of a collected transaction (addEdge ignores them, the
// cycle and SSI searches visit only sure ones).
type txnLive struct {
	writes []writeEnt
	out    []edge
	in     []edge
	// snapReads: the first snapshot read of each key read before the
	// transaction wrote it (transaction-snapshot engines only; see
	// engine.repeatRead); dropped at the transaction's end.
	snapReads []snapRead
}

// snapRead is a read of key under the transaction snapshot: value val
// returned by op.
type snapRead struct {
	key, val, op int32
}

func (t *txn) write(k int32) *writeEnt {
	for i := range t.writes {
		if t.writes[i].key == k {
			return &t.writes[i]
		}
	}
	return nil
}

// writer is one transaction's hold of a key's write lock and, when it
// committed, the version it installed.
type writer struct {
	t          *txn
	val        int32
	op         int32
	acqA       int64
	relB, relA int64
	snapA      int64
	status     history.Status
	hasVersion bool // committed or unknown (possibly committed)
	locked     bool // the lock was certainly acquired
	sureCommit bool
	// list: the key was written by appends (list-append), so collecting
	// the version records its values in keyState.gone.
	list    bool
	earlier *[]int32 // see writeEnt.earlier; nil if none (keeps writer small)
}

// wrote reports whether the writer's transaction wrote x to the key (its
// final or an earlier value).
func (w *writer) wrote(x int32) bool {
	if w.val == x {
		return true
	}
	if w.earlier != nil {
		for _, y := range *w.earlier {
			if y == x {
				return true
			}
		}
	}
	return false
}

// readRec is a verified read kept for the certifier: which version it
// observed (nil writer = the initial version).
type readRec struct {
	t    *txn
	op   int32
	init bool
	v    writer
}

// version returns the observed version, nil for the initial one.
func (r *readRec) version() *writer {
	if r.init {
		return nil
	}
	return &r.v
}

// keyState is the per-key state: lock holds/versions in release order and
// live reads.
type keyState struct {
	writers []writer
	reads   []readRec
	dropped bool // some version was garbage-collected
	// gone records, for list-append keys, the values appended by
	// collected writers (nil until one is collected): whether some
	// possibly committed version appended the value, and otherwise the
	// aborted transaction that did. A list read may contain every value
	// ever appended, so a collected aborted append is still needed to
	// reject a list that contains it (verifyPrefix); one entry per
	// appended value of the key.
	gone    map[int32]goneVal
	init    int32
	hasInit bool
	dirty   bool
	// forgotten: the key's state was discarded under OnlineOptions.MaxKeys
	// (engine.forget): its reads are not checked.
	forgotten bool
}

// goneVal is what is kept of the collected appends of one value to a
// list key.
type goneVal struct {
	// version: a collected writer that may have committed (committed or
	// unknown outcome) appended the value.
	version bool
	// The first collected aborted writer (used when !version): its
	// transaction index and id (for naming it; the transaction itself is
	// not retained) and its abort bounds.
	idx        int32
	id         string
	relB, relA int64
}

// forget records the values of a collected list writer w in ks.gone.
func (ks *keyState) forget(w *writer) {
	if !w.list {
		return
	}
	if ks.gone == nil {
		ks.gone = map[int32]goneVal{}
	}
	put := func(x int32) {
		g, in := ks.gone[x]
		switch {
		case w.hasVersion:
			g.version = true
		case !in:
			g = goneVal{idx: w.t.ref.Index, id: w.t.ref.ID, relB: w.relB, relA: w.relA}
		}
		ks.gone[x] = g
	}
	put(w.val)
	if w.earlier != nil {
		for _, x := range *w.earlier {
			put(x)
		}
	}
}

// certainBefore reports whether version v's commit certainly precedes
// version u's (v == nil is the initial version, before everything). Besides
// the interval rule (u's commit began after v's finished), it deduces the
// order the mechanisms force (Leopard §IV, dependency deduction): under ME,
// u cannot precede v if u's release began after v's write finished; under FUW, two committed writers are not concurrent, so u cannot
// precede v if u's commit began after v's snapshot was taken.
func (e *engine) certainBefore(v, u *writer) bool {
	if v == nil {
		return true
	}
	if u == nil || v.t == u.t {
		return false
	}
	if u.relB > v.relA {
		return true
	}
	if e.m.deduce && e.m.me && v.locked && u.locked && u.relB > v.acqA {
		return true
	}
	if e.m.deduce && e.m.fuw && v.sureCommit && u.sureCommit && u.relB > v.snapA {
		return true
	}
	return false
}
