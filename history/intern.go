package history

import "strconv"

// Scalar is an interned key or value: an integer or a string.
type Scalar struct {
	I     int64
	S     string
	IsStr bool
}

func (s Scalar) String() string {
	if s.IsStr {
		return s.S
	}
	return strconv.FormatInt(s.I, 10)
}

// Interner maps scalars to dense int32 ids (0, 1, 2, ...) and back.
// Integers and strings are distinct: 1 and "1" get different ids.
// It is not safe for concurrent use.
//
// Layout: vals holds 8 bytes per id and no pointers (so the garbage
// collector does not scan it): the integer, or for a string id the index of
// the string in strTab; isStr has one bit per id. (A []Scalar table took 32
// bytes per id, all scanned: 240 MB for the 7.5M values of a 1M-transaction
// history.)
type Interner struct {
	ints   map[int64]int32
	strs   map[string]int32
	vals   []int64
	isStr  []uint64
	strTab []string
	// dense is a direct-index fast path for small non-negative integers
	// (the common case: generated values and keys): dense[v] = id+1, 0 if
	// absent. Every interned integer 0 <= v < len(dense) is in dense, all
	// others in ints. The table grows (to a power of two above v) only
	// while it stays populated (denseGrowOK), so its size follows the
	// number of small integers interned, not the largest one: a single
	// value of 22,222,221 made it 134 MB.
	dense []int32
	// small counts the interned integers 0 <= v < denseLimit (in dense or
	// in ints), smallInInts those of them in ints (moved into dense when it
	// grows over them).
	small, smallInInts int
	// off is the id of the first table entry: 0, or IdentityLimit for an
	// identity interner (NewIdentityInterner), whose small integers are
	// their own ids and are never stored.
	off int32
	// Recycling (NewRecyclingInterner): recycle disables dense (its size
	// follows the largest integer, not the live ids); free holds released
	// id ranges [lo, hi) reused first, oldest first; dead has a bit per
	// released id not reused yet; freeStr the strTab indexes released.
	recycle bool
	free    [][2]int32
	nfree   int // ids in free
	dead    []uint64
	freeStr []int64
}

// IdentityLimit bounds the integers an identity interner maps to
// themselves: 0 <= v < IdentityLimit has id v.
const IdentityLimit = 1 << 30

// denseLimit bounds the direct-index table (entries).
const denseLimit = 1 << 26

// The direct-index table may grow to n entries when n <= denseFree (256
// KiB, whatever the density) or n <= denseFactor × the small integers
// interned (so at most 4·denseFactor = 32 bytes per small integer: about
// what the map costs per entry; the ids table costs 8 more either way).
const (
	denseFree   = 1 << 16
	denseFactor = 8
)

// denseGrowOK reports whether the direct-index table may grow to n
// entries with one more small integer interned.
func (in *Interner) denseGrowOK(n int) bool {
	return n <= denseFree || n <= denseFactor*(in.small+1)
}

// growDense grows the direct-index table to n entries (a power of two,
// at most denseLimit) and moves the integers of ints below n into it.
func (in *Interner) growDense(n int) {
	nd := make([]int32, n)
	copy(nd, in.dense)
	in.dense = nd
	if in.smallInInts == 0 {
		return
	}
	for v, id := range in.ints {
		if v >= 0 && v < int64(n) {
			nd[v] = id + 1
			delete(in.ints, v)
			in.smallInInts--
		}
	}
}

// NewInterner returns an empty interner.
func NewInterner() *Interner {
	return &Interner{ints: map[int64]int32{}, strs: map[string]int32{}}
}

// NewIdentityInterner returns an interner whose ids need no table for the
// common case: an integer 0 <= v < IdentityLimit is its own id and is not
// stored; other integers and strings get ids from IdentityLimit up, stored
// as usual. Its memory is therefore bounded by the distinct strings and
// out-of-range integers, not by the distinct values seen, which suits a
// stream checked online (txray watch), where every write may bring a new
// value. Ids are not dense: Len is an upper bound on ids, not a count, and
// tables indexed by id must not be sized by it.
func NewIdentityInterner() *Interner {
	in := NewInterner()
	in.off = IdentityLimit
	return in
}

// NewRecyclingInterner returns an interner whose ids can be released
// (Release) and are then reused for new scalars, so its memory is bounded
// by the ids live at once rather than by every scalar ever seen (txray watch
// --checker leopard: the key ids of keys whose state the verifier forgot).
// It keeps no direct-index table (whose size follows the largest integer
// seen), only maps sized by the live ids.
func NewRecyclingInterner() *Interner {
	in := NewInterner()
	in.recycle = true
	return in
}

// Recycling reports whether ids can be released (NewRecyclingInterner).
func (in *Interner) Recycling() bool { return in.recycle }

// Release forgets the scalars of ids [lo, hi) (those interned and not
// released yet): looking one of them up again interns it afresh, possibly
// under another id, and the ids are given to new scalars before any id
// never used, lowest first within the oldest released range. A released id
// renders as "?<id>" until reused. It is a no-op unless the interner
// recycles. The caller must hold no use of the ids that outlives this.
func (in *Interner) Release(lo, hi int32) {
	if !in.recycle {
		return
	}
	lo, hi = max(lo, in.off), min(hi, in.off+int32(len(in.vals)))
	if lo >= hi {
		return
	}
	for len(in.dead)*64 < len(in.vals) {
		in.dead = append(in.dead, 0)
	}
	start := int32(-1)
	for id := lo; id < hi; id++ {
		i := id - in.off
		if in.dead[i/64]&(1<<(i%64)) != 0 {
			if start >= 0 {
				in.free = append(in.free, [2]int32{start, id})
				start = -1
			}
			continue
		}
		in.nfree++
		in.dead[i/64] |= 1 << (i % 64)
		v := in.vals[i]
		if in.str(i) {
			delete(in.strs, in.strTab[v])
			in.strTab[v] = ""
			in.freeStr = append(in.freeStr, v)
			in.isStr[i/64] &^= 1 << (i % 64)
		} else if cur, ok := in.ints[v]; ok && cur == id {
			delete(in.ints, v)
		}
		in.vals[i] = 0
		if start < 0 {
			start = id
		}
	}
	if start >= 0 {
		in.free = append(in.free, [2]int32{start, hi})
	}
}

// Live is the number of ids in use (interned and not released).
func (in *Interner) Live() int { return in.Len() - in.nfree }

// released reports whether table entry i (id - off) was released and not
// reused.
func (in *Interner) released(i int32) bool {
	return int(i/64) < len(in.dead) && in.dead[i/64]&(1<<(i%64)) != 0
}

// Int interns an integer.
func (in *Interner) Int(v int64) int32 {
	if in.recycle {
		// no direct-index table (see NewRecyclingInterner)
	} else if in.off != 0 {
		if v >= 0 && v < IdentityLimit {
			return int32(v)
		}
	} else if v >= 0 && v < denseLimit {
		if v < int64(len(in.dense)) {
			if id := in.dense[v]; id != 0 {
				return id - 1
			}
			return in.addDense(v)
		}
		n := max(1024, 2*len(in.dense))
		for int64(n) <= v {
			n *= 2
		}
		if n = min(n, denseLimit); in.denseGrowOK(n) {
			in.growDense(n)
			if id := in.dense[v]; id != 0 {
				return id - 1 // it was in ints
			}
			return in.addDense(v)
		}
		if id, ok := in.ints[v]; ok {
			return id
		}
		in.small++
		in.smallInInts++
		id := in.add(v, false)
		in.ints[v] = id
		return id
	}
	if id, ok := in.ints[v]; ok {
		return id
	}
	id := in.add(v, false)
	in.ints[v] = id
	return id
}

// addDense interns the small integer v < len(dense), which is not
// interned yet.
func (in *Interner) addDense(v int64) int32 {
	in.small++
	id := in.add(v, false)
	in.dense[v] = id + 1
	return id
}

// add appends an id holding v (for a string, its strTab index), or reuses
// a released one.
func (in *Interner) add(v int64, str bool) int32 {
	if len(in.free) > 0 {
		r := &in.free[0]
		id := r[0]
		if r[0]++; r[0] == r[1] {
			in.free[0] = [2]int32{}
			in.free = in.free[1:]
			if len(in.free) == 0 {
				in.free = nil
			}
		}
		i := id - in.off
		in.nfree--
		in.dead[i/64] &^= 1 << (i % 64)
		in.vals[i] = v
		if str {
			in.isStr[i/64] |= 1 << (i % 64)
		}
		return id
	}
	i := int32(len(in.vals))
	in.vals = append(in.vals, v)
	if int(i)/64 >= len(in.isStr) {
		in.isStr = append(in.isStr, 0)
	}
	if str {
		in.isStr[i/64] |= 1 << (i % 64)
	}
	return in.off + i
}

// str reports whether table entry i (id - off) is a string.
func (in *Interner) str(i int32) bool { return in.isStr[i/64]&(1<<(i%64)) != 0 }

// Str interns a string.
func (in *Interner) Str(s string) int32 {
	if id, ok := in.strs[s]; ok {
		return id
	}
	if n := len(in.freeStr); n > 0 {
		x := in.freeStr[n-1]
		in.freeStr = in.freeStr[:n-1]
		in.strTab[x] = s
		id := in.add(x, true)
		in.strs[s] = id
		return id
	}
	id := in.add(int64(len(in.strTab)), true)
	in.strTab = append(in.strTab, s)
	in.strs[s] = id
	return id
}

// Scalar interns s.
func (in *Interner) Scalar(s Scalar) int32 {
	if s.IsStr {
		return in.Str(s.S)
	}
	return in.Int(s.I)
}

// LookupInt returns the id of an integer without interning it (for an
// identity interner, every 0 <= v < IdentityLimit has one: itself).
func (in *Interner) LookupInt(v int64) (int32, bool) {
	if in.recycle {
		// maps only
	} else if in.off != 0 {
		if v >= 0 && v < IdentityLimit {
			return int32(v), true
		}
	} else if v >= 0 && v < int64(len(in.dense)) {
		if in.dense[v] != 0 {
			return in.dense[v] - 1, true
		}
		return 0, false
	}
	id, ok := in.ints[v]
	return id, ok
}

// LookupStr returns the id of a string without interning it.
func (in *Interner) LookupStr(s string) (int32, bool) { id, ok := in.strs[s]; return id, ok }

// Get returns the scalar for id.
func (in *Interner) Get(id int32) Scalar {
	if id < in.off {
		return Scalar{I: int64(id)}
	}
	id -= in.off
	v := in.vals[id]
	if in.str(id) {
		return Scalar{S: in.strTab[v], IsStr: true}
	}
	return Scalar{I: v}
}

// String renders id; out-of-range ids render as "?<id>".
func (in *Interner) String(id int32) string {
	if id < 0 || int(id) >= int(in.off)+len(in.vals) || id >= in.off && in.released(id-in.off) {
		return "?" + strconv.Itoa(int(id))
	}
	return in.Get(id).String()
}

// Len is the number of interned scalars (for an identity interner, an
// upper bound on its ids: IdentityLimit plus the stored scalars).
func (in *Interner) Len() int { return int(in.off) + len(in.vals) }

// Reset empties the interner, keeping its allocated tables for reuse. Cost
// is proportional to the number of interned scalars, not to table sizes.
func (in *Interner) Reset() {
	for i, v := range in.vals {
		if !in.str(int32(i)) && v >= 0 && v < int64(len(in.dense)) {
			in.dense[v] = 0
		}
	}
	clear(in.ints)
	clear(in.strs)
	clear(in.strTab)
	clear(in.isStr)
	in.vals, in.isStr, in.strTab = in.vals[:0], in.isStr[:0], in.strTab[:0]
	in.free, in.dead, in.freeStr, in.nfree = nil, nil, nil, 0
	in.small, in.smallInInts = 0, 0
}

// Append interns s, which must not be interned yet, as the next id (used to
// copy tables).
func (in *Interner) Append(s Scalar) int32 { return in.Scalar(s) }

// Grow makes room for n more scalars without reallocating the id table (a
// capacity hint for decoders that can estimate a history's size; it assigns
// no ids and changes no lookups).
func (in *Interner) Grow(n int) {
	if n > cap(in.vals)-len(in.vals) {
		t := make([]int64, len(in.vals), len(in.vals)+n)
		copy(t, in.vals)
		in.vals = t
		b := make([]uint64, len(in.isStr), (len(in.vals)+n)/64+1)
		copy(b, in.isStr)
		in.isStr = b
	}
}

// StrBytes interns the string with bytes b, as Str(string(b)), without
// allocating when it is already interned.
func (in *Interner) StrBytes(b []byte) int32 {
	if id, ok := in.strs[string(b)]; ok {
		return id
	}
	return in.Str(string(b))
}
