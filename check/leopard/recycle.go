package leopard

import (
	"math"
	"math/bits"

	"github.com/txray/txray/history"
)

// Key id recycling (OnlineOptions.RecycleKeys): under a key bound the
// verifier forgets whole chunks of settled keys (keys.go, engine.forget);
// recycling also gives their ids back to the decoder's key interner
// (history.Interner.Release), so the interner, the slot table and the
// per-chunk bookkeeping are bounded by the keys live at once instead of
// every key the stream ever named.
//
// Two things must stay true when a key's id can name another key later:
//
//  1. No state the verifier still uses names a released id. A chunk's ids
//     are released only once every transaction added that names one of
//     its keys (an operation's key, or a row a predicate read returned)
//     has been collected (refs counts them per chunk), and only while the
//     chunk is still forgotten (no access brought it back). Records of
//     collected transactions, which explanations read back (the spill log,
//     or the record kept in memory), may still name a released id: every
//     transaction remembers the recycling epoch it was added in, each
//     released chunk the epoch of its release, and an explanation renders
//     such a key as forgotten instead of under the name now behind the id
//     (reporter.ref). Explanations degrade; verdicts do not.
//
//  2. A forgotten key that comes back is still known to be forgotten: its
//     versions are unknown, so reading it must not be checked against the
//     initial version. Its new id cannot tell, so the names of forgotten
//     keys go into a fixed-size Bloom filter (three bits per key) when
//     their ids are released (not before: until the key table needs its
//     ids back, recycler.budget, forgotten keys keep them and engine.forgot
//     marks them exactly): a key
//     first seen (a fresh slot) whose name the filter holds is treated as
//     forgotten (keyState.forgotten; stats suspect_keys). The filter has
//     no false negatives, so no returning key is missed; its false
//     positives only treat a new key as forgotten, which costs checks
//     (such a read is unknown unless a version certainly committed since
//     shadows the forgotten ones, engine.shadowed), never a false verdict.
//     As the filter fills, more new keys are suspected: the verdict
//     degrades towards unknown, with the reason, instead of memory growing.
type recycler struct {
	keys *history.Interner
	// refs counts, per chunk, the operations of transactions not yet
	// collected that name a key of the chunk.
	refs []int32
	// waiting lists forgotten chunks whose ids wait for refs to reach 0.
	waiting []int
	// epoch counts releases; chunkEpoch[c] is the epoch of chunk c's last
	// release (0: never released).
	epoch      uint32
	chunkEpoch []uint32
	filter     []uint64
	mask       uint64
	released   int64 // chunks released
	// budget: forgotten chunks are released only while the interner
	// holds more live ids than this (until then forgotten keys keep their
	// ids and engine.forgot marks them exactly, without the filter's
	// false positives).
	budget int
}

// filterBits sizes the Bloom filter of forgotten keys for a key bound of
// maxKeys: 64 bits per retained key (8 bytes, against KeySlotBytes for the
// key's slot), a power of two of at least 2^16.
func filterBits(maxKeys int) uint64 {
	n := uint64(1) << 16
	for n < uint64(maxKeys)*64 && n < 1<<36 {
		n <<= 1
	}
	return n
}

// KeyTableIds is how many live ids the key interner may hold per key of
// the bound (OnlineOptions.MaxKeys) before forgotten keys' ids are
// recycled: the retained keys and as many forgotten ones, which keep
// exact marks until then.
const KeyTableIds = 2

func newRecycler(keys *history.Interner, maxKeys int) *recycler {
	n := filterBits(maxKeys)
	return &recycler{keys: keys, mask: n - 1, budget: KeyTableIds * maxKeys}
}

// hash is the filter hash of a key's name (integers and strings distinct).
// (Deterministic, so runs are reproducible.)
func (rc *recycler) hash(s history.Scalar) uint64 {
	x := uint64(s.I)
	if s.IsStr {
		x = 0xcbf29ce484222325 // FNV-1a
		for i := 0; i < len(s.S); i++ {
			x = (x ^ uint64(s.S[i])) * 0x100000001b3
		}
		x ^= 0x5bd1e9955bd1e995
	}
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// bits returns the filter's three bit positions for s.
func (rc *recycler) bits(s history.Scalar) [3]uint64 {
	h := rc.hash(s)
	g := bits.RotateLeft64(h, 32) * 0xff51afd7ed558ccd
	return [3]uint64{h & rc.mask, g & rc.mask, (h ^ g>>17) * 0xc4ceb9fe1a85ec53 & rc.mask}
}

// mark adds key id k's name to the filter of forgotten keys.
func (rc *recycler) mark(k int32) {
	if rc.filter == nil {
		rc.filter = make([]uint64, (rc.mask+1)/64) // at the first release
	}
	for _, a := range rc.bits(rc.keys.Get(k)) {
		rc.filter[a/64] |= 1 << (a % 64)
	}
}

// has reports whether s may be the name of a forgotten key.
func (rc *recycler) has(s history.Scalar) bool {
	if rc.filter == nil {
		return false
	}
	for _, a := range rc.bits(s) {
		if rc.filter[a/64]&(1<<(a%64)) == 0 {
			return false
		}
	}
	return true
}

// add counts the keys t names (d = +1 when added, -1 when collected).
func (rc *recycler) add(t *history.Txn, d int32) {
	for i := range t.Ops {
		o := &t.Ops[i]
		if o.Key >= 0 {
			rc.ref(o.Key, d)
		}
		if o.Kind == history.PredRead {
			if p := t.PredOf(o); p != nil {
				for _, r := range p.Result {
					if r.Key >= 0 {
						rc.ref(r.Key, d)
					}
				}
			}
		}
	}
}

func (rc *recycler) ref(k int32, d int32) {
	c := int(k) / keyChunk
	for c >= len(rc.refs) {
		rc.refs = append(rc.refs, 0)
	}
	rc.refs[c] += d
}

// stale reports whether key id k may name another key than it did when a
// transaction added in epoch ep named it.
func (rc *recycler) stale(k int32, ep uint32) bool {
	c := int(k) / keyChunk
	return k >= 0 && c < len(rc.chunkEpoch) && rc.chunkEpoch[c] > ep
}

// release gives the ids of the waiting chunks that nothing names any more
// back to the interner (engine.forget queued them).
func (e *engine) release() {
	rc := e.rc
	keep := rc.waiting[:0]
	for _, c := range rc.waiting {
		if c < len(e.slots) && e.slots[c] != nil {
			continue // brought back by an access: live again (forget re-queues it)
		}
		if c < len(rc.refs) && rc.refs[c] > 0 || rc.keys.Live() <= rc.budget {
			keep = append(keep, c)
			continue
		}
		if rc.epoch == math.MaxUint32 {
			// Out of epochs (4 billion releases): stop recycling rather
			// than mislabel keys in explanations.
			keep = append(keep, c)
			continue
		}
		rc.epoch++
		for c >= len(rc.chunkEpoch) {
			rc.chunkEpoch = append(rc.chunkEpoch, 0)
		}
		rc.chunkEpoch[c] = rc.epoch
		// The filter holds the chunk's forgotten keys from now on.
		if c < len(e.forgot) {
			for i, b := range e.forgot[c] {
				for ; b != 0; b &= b - 1 {
					rc.mark(int32(c*keyChunk + i*64 + bits.TrailingZeros64(b)))
				}
			}
			e.forgot[c] = nil
		}
		rc.keys.Release(int32(c*keyChunk), int32((c+1)*keyChunk))
		rc.released++
	}
	rc.waiting = keep
}

// suspect reports whether key k, seen for the first time in its slot, may
// be a forgotten key that came back under a new id.
func (e *engine) suspect(k int32) bool {
	if e.rc == nil || e.rc.released == 0 {
		// Before any release every forgotten key keeps its id (and
		// engine.forgot marks it).
		return false
	}
	return e.rc.has(e.rc.keys.Get(k))
}

// shadowed reports whether the forgotten versions of key ks (keyState
// forgotten) cannot be what op i of t observed: a version written since
// the key was forgotten certainly committed before the read's snapshot
// (u.relA < sb). Every forgotten version was settled below the watermark
// when it was discarded, and every transaction added since (not late)
// began after that, so each such u certainly follows every forgotten
// version, which is therefore garbage for the read (Leopard §IV-A): the
// read is checked against the versions known. A list read is not (the
// values collected appends left, keyState.gone, went with the key).
func (e *engine) shadowed(ks *keyState, t *txn, i int32, sb int64) bool {
	if o := &t.ref.Ops[i]; o.IsList {
		return false
	}
	for iu := range ks.writers {
		u := &ks.writers[iu]
		if u.sureCommit && u.relA < sb && u.t != t {
			return true
		}
	}
	return false
}

// staleKey renders a key id that names another key now (recycler.stale).
const staleKey = math.MinInt32

// fresh returns t's record for rendering: when some key it names was
// released since t was added, a copy naming that key as staleKey.
func (rc *recycler) fresh(t *txn, ref *history.Txn) *history.Txn {
	var c *history.Txn
	for i := range ref.Ops {
		if !rc.stale(ref.Ops[i].Key, t.epoch) {
			continue
		}
		if c == nil {
			x := *ref
			x.Ops = append([]history.Op(nil), ref.Ops...)
			c = &x
		}
		c.Ops[i].Key = staleKey
	}
	if c == nil {
		return ref
	}
	return c
}
