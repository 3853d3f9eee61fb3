package aion

import (
	"hash/maphash"
	"math/bits"
	"strconv"

	"github.com/txray/txray/history"
)

// The key table and the key budget (Config.MaxKeys; issue 12).
//
// Keys are interned by the checker itself, in Add, from the raw key the
// Reader leaves in each op (an integer, or a string of Txn.keyStrs): the
// decoders hold no key ids, so a key's id can be recycled once its state
// is forgotten without any decoder caching a stale one. The table is an
// open-addressing hash table with linear probing over the raw key (an
// integer key is stored in the slot itself, a string key by its hash, the
// string being compared through the id's name), at most 3/4 full, so a
// lookup allocates nothing and usually costs one cache line; deletion
// shifts the following entries back (no tombstones).
//
// Forgetting. With MaxKeys > 0, a tick that finds more than MaxKeys keys
// retained forgets settled keys, coldest first, down to 7/8 of MaxKeys: a
// clock hand walks the key ids and skips a key used since it last passed
// (fRef, a second chance), a key with state still being decided (fActive:
// pending reads, versions above the watermark) and a key a late write may
// still re-open or an unknown-outcome write names (fFailed, fUnk). A
// settled key holds at most its last version, already a ghost, and no
// pending reads. Forgetting it frees its name, its id (reused by the next
// new key), its version and its share of the writer entry. A key that
// never had a version loses nothing (every later read of it is still
// checked against the initial value). For a key that had one, its name
// goes into a Bloom filter (forgotten: Config.MaxFilterBytes, allocated
// when the first key is forgotten) and the largest commit
// timestamp of any forgotten version into forgotMax: when the name comes
// back (a new id created while the filter holds names: fProbe; the filter
// is consulted when it matters, probeForgot, and fForgot set if it holds
// the name), a read of it is
// checked only if the version visible at its snapshot is a retained one
// committed after forgotMax; any other read of it is not checked
// (counted in "forgotten_reads") and makes the verdict unknown with the
// reason, never valid on discarded evidence and never a false INVALID. The
// filter has no false negatives; a false positive (a new key taken for a
// forgotten one) only leaves a read unchecked the same way. A write to such
// a key whose start is at or before forgotMax may overlap a forgotten
// writer: its NoConflict check covers the retained versions only
// ("late_noconflict_partial"), which makes the verdict unknown with the
// reason (an overlap with a forgotten writer may have been missed).
//
// Names in explanations: a transaction names keys by id; once an id is
// recycled, a transaction that arrived before the new key's first use
// (Txn.seq < keyCold.born) names the old key, whose name is gone, so it is
// rendered as forgotten rather than as the new key's name.

// KeyBytes is about what the checker keeps per retained key (for sizing
// MaxKeys): the key line (64 bytes) and its cold part (24), its name (8)
// and hash slot (16–32), its last version (32), a share of its writer's
// entry and of the filter of forgotten names (16–32), and the slack of
// keys written but not yet settled (measured: 276 bytes of live heap per
// retained key on a stream of ever-new keys, window included;
// docs/benchmarks.md, "aion key budget").
const KeyBytes = 256

// raw key kinds of an Op not yet interned (Op.raw)
const (
	rawNone uint8 = iota // Op.Key is an id
	rawInt               // integer key Op.Key (0 ≤ n < 2³¹)
	rawStr               // string key Txn.keyStrs[Op.Key]
	rawBig               // integer key Txn.keyInts[Op.Key]
)

// kslot is a hash table entry: kind 0 empty, rawInt (key is the integer)
// or rawStr (key is the string's hash).
type kslot struct {
	key  uint64
	id   int32
	kind uint8
}

// keyTab maps raw keys to ids and ids back to names.
type keyTab struct {
	// dense: id+1 of integer keys 0 ≤ n < denseMax (0: none), a direct
	// index that stays in cache for the common key spaces; other keys
	// are in slots
	dense []int32
	slots []kslot
	shift uint8 // 64 - log2(len(slots))
	n     int   // live entries
	// names: per id, the integer key or the index of the string in strs
	names   []int64
	isStr   []uint64
	strs    []string
	strFree []int32
	free    []int32 // recycled ids
	dmax    uint64  // bound of the direct index (denseFor)
	seed    maphash.Seed
}

func mix(x uint64) uint64 { return x * 0x9E3779B97F4A7C15 }

func (kt *keyTab) home(s *kslot) int { return int(mix(s.key) >> kt.shift) }

func (kt *keyTab) strHash(b []byte) uint64 { return maphash.Bytes(kt.seed, b) }

func (kt *keyTab) isStrID(id int32) bool { return kt.isStr[id>>6]&(1<<(id&63)) != 0 }

// denseMax bounds the direct index (entries: 16 MiB); under a key budget
// it is scaled to it (keyTab.dmax, denseFor).
const denseMax = 1 << 22

// denseFor is the direct index's bound for a key budget of maxKeys (0 =
// none): at most 8 bytes per key of the budget (a power of two, at least
// 2¹⁶ entries), so that the index, which keeps its size when the keys in
// it are forgotten, stays a small share of the budget.
func denseFor(maxKeys int) uint64 {
	if maxKeys <= 0 {
		return denseMax
	}
	d := uint64(1) << 16
	for d < denseMax && 2*d <= uint64(maxKeys) {
		d <<= 1
	}
	return d
}

// lookupInt returns the id of integer key n, or -1.
func (kt *keyTab) lookupInt(n int64) int32 {
	if uint64(n) < kt.dmax {
		if uint64(n) < uint64(len(kt.dense)) {
			return kt.dense[n] - 1
		}
		return -1
	}
	if kt.slots == nil {
		return -1
	}
	m := len(kt.slots) - 1
	for i := int(mix(uint64(n)) >> kt.shift); ; i = (i + 1) & m {
		s := &kt.slots[i]
		if s.kind == rawInt && s.key == uint64(n) {
			return s.id
		}
		if s.kind == 0 {
			return -1
		}
	}
}

// lookupStr returns the id of string key b (hash h), or -1.
func (kt *keyTab) lookupStr(b []byte, h uint64) int32 {
	if kt.slots == nil {
		return -1
	}
	m := len(kt.slots) - 1
	for i := int(mix(h) >> kt.shift); ; i = (i + 1) & m {
		s := &kt.slots[i]
		if s.kind == rawStr && s.key == h && kt.strs[kt.names[s.id]] == string(b) {
			return s.id
		}
		if s.kind == 0 {
			return -1
		}
	}
}

// insert enters a new name (key, kind) with id; the caller checked it is absent.
func (kt *keyTab) insert(key uint64, kind uint8, id int32) {
	if 4*(kt.n+1) > 3*len(kt.slots) {
		kt.grow()
	}
	m := len(kt.slots) - 1
	i := int(mix(key) >> kt.shift)
	for kt.slots[i].kind != 0 {
		i = (i + 1) & m
	}
	kt.slots[i] = kslot{key: key, id: id, kind: kind}
	kt.n++
}

func (kt *keyTab) grow() {
	old := kt.slots
	n := max(1024, 2*len(old))
	kt.slots = make([]kslot, n)
	kt.shift = uint8(64 - bits.TrailingZeros(uint(n)))
	m := n - 1
	for j := range old {
		if s := &old[j]; s.kind != 0 {
			i := kt.home(s)
			for kt.slots[i].kind != 0 {
				i = (i + 1) & m
			}
			kt.slots[i] = *s
		}
	}
}

// remove deletes id's entry (backward-shift deletion).
func (kt *keyTab) remove(key uint64, id int32) {
	m := len(kt.slots) - 1
	i := int(mix(key) >> kt.shift)
	for kt.slots[i].id != id || kt.slots[i].kind == 0 {
		i = (i + 1) & m
	}
	j := i
	for {
		j = (j + 1) & m
		s := &kt.slots[j]
		if s.kind == 0 {
			break
		}
		h := kt.home(s)
		// s stays if its home lies cyclically in (i, j]
		if i <= j {
			if i < h && h <= j {
				continue
			}
		} else if i < h || h <= j {
			continue
		}
		kt.slots[i] = *s
		i = j
	}
	kt.slots[i] = kslot{}
	kt.n--
}

// setName records id's name (a new or recycled id).
func (kt *keyTab) setName(id int32, n int64, str bool, s string) {
	for int(id) >= len(kt.names) {
		kt.names = append(kt.names, 0)
	}
	for int(id>>6) >= len(kt.isStr) {
		kt.isStr = append(kt.isStr, 0)
	}
	if !str {
		kt.names[id] = n
		kt.isStr[id>>6] &^= 1 << (id & 63)
		return
	}
	var x int32
	if k := len(kt.strFree); k > 0 {
		x = kt.strFree[k-1]
		kt.strFree = kt.strFree[:k-1]
		kt.strs[x] = s
	} else {
		x = int32(len(kt.strs))
		kt.strs = append(kt.strs, s)
	}
	kt.names[id] = int64(x)
	kt.isStr[id>>6] |= 1 << (id & 63)
}

// bloom is a fixed-size Bloom filter (of forgotten key names, see above;
// of forgotten values and unknown-outcome writes, values.go) of any number
// of bits: a probe maps a 64-bit hash onto the bits by multiplication
// (Lemire's reduction), so the filter can take exactly its budget.
type bloom struct {
	w     []uint64
	nbits uint64
}

const bloomProbes = 4

// newBloom returns a filter of about nbits bits (at least 64, a multiple
// of 64).
func newBloom(nbits uint64) bloom {
	nbits = (max(nbits, 64) + 63) &^ 63
	return bloom{w: make([]uint64, nbits/64), nbits: nbits}
}

// newFilter returns one of the checker's filters, of about nbits bits
// (at least 4,096), or of 64 bits under Config.tinyFilters.
func (c *Checker) newFilter(nbits uint64) bloom {
	if c.cfg.tinyFilters {
		return newBloom(64)
	}
	return newBloom(max(nbits, 1<<12))
}

func (f *bloom) empty() bool { return f.w == nil }

func (f *bloom) probes(h uint64, fn func(i uint64) bool) bool {
	h2 := h>>33 | h<<31 | 1
	for p := uint64(0); p < bloomProbes; p++ {
		i, _ := bits.Mul64(h+p*h2, f.nbits)
		if !fn(i) {
			return false
		}
	}
	return true
}

func (f *bloom) add(h uint64) {
	f.probes(h, func(i uint64) bool { f.w[i>>6] |= 1 << (i & 63); return true })
}

func (f *bloom) has(h uint64) bool {
	if f.w == nil {
		return false
	}
	return f.probes(h, func(i uint64) bool { return f.w[i>>6]&(1<<(i&63)) != 0 })
}

// nameHash is the filters' hash of a key name (integers and strings
// apart), under the checker's seed (hash.go).
func (c *Checker) nameHash(str bool, n int64, b []byte) uint64 {
	if str {
		return seededHash(c.seed^0xA5A5A5A5A5A5A5A5, b)
	}
	return fmix64(uint64(n) + 0x9E3779B97F4A7C15 + c.seed)
}

// newKey gives a new name an id (recycled if one is free) and fresh state.
func (c *Checker) newKey(str bool, n int64, b []byte, h uint64, born int64) int32 {
	kt := &c.kt
	var id int32
	if k := len(kt.free); k > 0 {
		id = kt.free[k-1]
		kt.free = kt.free[:k-1]
	} else {
		id = int32(c.keys.n)
	}
	ks := c.key(id)
	*ks = keyState{}
	cold := c.keys.getCold(id)
	*cold = keyCold{born: born}
	if str {
		kt.setName(id, 0, true, string(b))
		kt.insert(h, rawStr, id)
	} else {
		kt.setName(id, n, false, "")
		if uint64(n) < kt.dmax {
			if uint64(n) >= uint64(len(kt.dense)) {
				m := max(1024, len(kt.dense))
				for uint64(m) <= uint64(n) {
					m *= 2
				}
				kt.dense = append(kt.dense, make([]int32, min(m, int(kt.dmax))-len(kt.dense))...)
			}
			kt.dense[n] = id + 1
		} else {
			kt.insert(uint64(n), rawInt, id)
		}
	}
	c.liveKeys++
	if !c.forgotten.empty() {
		ks.flags |= fProbe // consulted when it matters (probeForgot)
	}
	return id
}

// keyNameHash is the filters' hash of key k's name (not its id: ids are
// reused).
func (c *Checker) keyNameHash(k int32) uint64 {
	kt := &c.kt
	if kt.isStrID(k) {
		return c.nameHash(true, 0, []byte(kt.strs[kt.names[k]]))
	}
	return c.nameHash(false, kt.names[k], nil)
}

// probeForgot consults the filter of forgotten names for key k (fProbe),
// once: the key is marked fForgot if the filter holds its name. The filter
// only grows, so consulting it later than when the key was created is at
// least as cautious (no false negatives); doing it only for the reads and
// writes it can affect (a read whose visible version is not newer than
// every forgotten one, a write that may overlap a forgotten writer) spares
// the lookup, and its false positives, for every other new key.
func (c *Checker) probeForgot(k int32, ks *keyState) bool {
	if ks.flags&fProbe != 0 {
		ks.flags &^= fProbe
		h := c.keyNameHash(k)
		c.filterProbes++
		if c.forgotten.has(h) {
			ks.flags |= fForgot
			c.suspectKeys++
		}
	}
	return ks.flags&fForgot != 0
}

// internInt returns the id of integer key n, creating it.
func (c *Checker) internInt(n int64, born int64) int32 {
	if id := c.kt.lookupInt(n); id >= 0 {
		return id
	}
	return c.newKey(false, n, nil, 0, born)
}

// internStr returns the id of string key b, creating it.
func (c *Checker) internStrKey(b []byte, born int64) int32 {
	h := c.kt.strHash(b)
	if id := c.kt.lookupStr(b, h); id >= 0 {
		return id
	}
	return c.newKey(true, 0, b, h, born)
}

// resolve interns the raw keys of t's ops (born: the sequence number of
// the first transaction that may name a new key); prefetch marks them used
// (fRef).
func (c *Checker) resolve(t *Txn, born int64) {
	for j := range t.Ops {
		o := &t.Ops[j]
		switch o.raw {
		case rawInt:
			o.Key = c.internInt(int64(o.Key), born)
		case rawBig:
			o.Key = c.internInt(t.keyInts[o.Key], born)
		case rawStr:
			o.Key = c.internStrKey([]byte(t.keyStrs[o.Key]), born)
		default:
			if o.Key < 0 || int(o.Key) >= c.keys.n {
				continue
			}
		}
		o.raw = rawNone
	}
}

// keyNameIn names key k as transaction t knew it: a key forgotten since
// (its id free, or recycled for a key first used after t arrived) is
// rendered as forgotten.
func (c *Checker) keyNameIn(t *Txn, k int32) string {
	if k < 0 || int(k) >= c.keys.n {
		return c.keyName(k)
	}
	if b := c.keys.getCold(k).born; b == 0 || (t != nil && t.seq != 0 && t.seq < b) {
		return "(a forgotten key)"
	}
	return c.keyName(k)
}

// keyName renders key id k.
func (c *Checker) keyName(k int32) string {
	kt := &c.kt
	if k < 0 || int(k) >= len(kt.names) || int(k) >= c.keys.n || c.keys.getCold(k).born == 0 {
		return "?" + strconv.Itoa(int(k))
	}
	if kt.isStrID(k) {
		return kt.strs[kt.names[k]]
	}
	return strconv.FormatInt(kt.names[k], 10)
}

// settled reports whether key k may be forgotten: no state being decided.
func settled(ks *keyState) bool { return ks.flags&(fActive|fFailed|fUnk) == 0 }

// maybeForget enforces MaxKeys (see above); it runs at the end of a tick.
func (c *Checker) maybeForget() {
	max := c.cfg.MaxKeys
	if max <= 0 || c.liveKeys <= max {
		return
	}
	target := max - max/8
	n := c.keys.n
	for scanned := 0; scanned < 2*n && c.liveKeys > target; scanned++ {
		if c.hand >= n {
			c.hand = 0
		}
		k := int32(c.hand)
		c.hand++
		cold := c.keys.getCold(k)
		if cold.born == 0 {
			continue // free
		}
		ks := c.keys.get(k)
		if !settled(ks) {
			continue
		}
		if ks.flags&fRef != 0 {
			ks.flags &^= fRef
			continue
		}
		c.forgetKey(k, ks, cold)
	}
}

// forgetKey discards settled key k (see above).
func (c *Checker) forgetKey(k int32, ks *keyState, cold *keyCold) {
	kt := &c.kt
	str := kt.isStrID(k)
	var name []byte
	var key uint64
	if str {
		s := kt.strs[kt.names[k]]
		name = []byte(s)
		key = kt.strHash(name)
	} else {
		key = uint64(kt.names[k])
	}
	if ks.nv > 0 {
		// it held a version: later reads of its name are not checkable
		// against what was discarded
		if c.forgotten.empty() {
			// the whole budget at once: at a given size one filter
			// has the lowest false-positive rate (a chain of growing
			// ones, tried, had 5 to 7 times more once full)
			b := c.cfg.MaxFilterBytes
			if b <= 0 {
				b = 32 * int64(c.cfg.MaxKeys)
			}
			c.forgotten = c.newFilter(8 * uint64(b))
		}
		c.forgotten.add(c.nameHash(str, kt.names[k], name))
		if ks.nv > 0 && (!c.forgotMax.Set || c.forgotMax.Less(ks.last())) {
			c.forgotMax = ks.last()
		}
		if ks.flags&fGced != 0 {
			// versions before gcTS were discarded earlier: all commit
			// at or before the retained last one, covered above
			if g := c.gcTS(k); !c.forgotMax.Set || c.forgotMax.Less(g) {
				c.forgotMax = g
			}
		}
		c.forgotKeys++
	}
	if ks.vcls != 0 {
		vs := c.vers(ks)
		for i := range vs {
			c.unref(vs[i].w, vs[i].ghost)
		}
		c.vp.release(ks.vcls, ks.voff)
	}
	if !str && key < c.kt.dmax {
		kt.dense[key] = 0
	} else {
		kt.remove(key, k)
	}
	if str {
		x := int32(kt.names[k])
		kt.strs[x] = ""
		kt.strFree = append(kt.strFree, x)
	}
	*ks = keyState{}
	*cold = keyCold{}
	kt.free = append(kt.free, k)
	c.liveKeys--
}

// forgottenRead reports whether a read at snap of key k (fForgot or fProbe) cannot
// be checked: the version visible there is not a retained one committed
// after every forgotten version.
func (c *Checker) forgottenRead(k int32, ks *keyState, sP, sL int64) bool {
	if !c.forgotMax.Set {
		return false
	}
	i := c.at(ks, history.Timestamp{P: sP, L: sL, Set: true})
	if i >= 0 {
		if v := &c.vers(ks)[i]; less(c.forgotMax.P, c.forgotMax.L, v.ctsP, v.ctsL) {
			return false // newer than every forgotten version
		}
	}
	return c.probeForgot(k, ks)
}
