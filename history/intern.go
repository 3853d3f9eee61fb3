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
type Interner struct {
	ints map[int64]int32
	strs map[string]int32
	tab  []Scalar
	// dense is a direct-index fast path for small non-negative integers
	// (the common case: generated values and keys): dense[v] = id+1, 0 if
	// absent.
	dense []int32
}

// denseLimit bounds the direct-index table (entries).
const denseLimit = 1 << 26

// NewInterner returns an empty interner.
func NewInterner() *Interner {
	return &Interner{ints: map[int64]int32{}, strs: map[string]int32{}}
}

// Int interns an integer.
func (in *Interner) Int(v int64) int32 {
	if v >= 0 && v < denseLimit {
		if v < int64(len(in.dense)) {
			if id := in.dense[v]; id != 0 {
				return id - 1
			}
		} else {
			n := max(1024, 2*len(in.dense))
			for int64(n) <= v {
				n *= 2
			}
			nd := make([]int32, min(n, denseLimit))
			copy(nd, in.dense)
			in.dense = nd
		}
		id := int32(len(in.tab))
		in.dense[v] = id + 1
		in.tab = append(in.tab, Scalar{I: v})
		return id
	}
	if id, ok := in.ints[v]; ok {
		return id
	}
	id := int32(len(in.tab))
	in.ints[v] = id
	in.tab = append(in.tab, Scalar{I: v})
	return id
}

// Str interns a string.
func (in *Interner) Str(s string) int32 {
	if id, ok := in.strs[s]; ok {
		return id
	}
	id := int32(len(in.tab))
	in.strs[s] = id
	in.tab = append(in.tab, Scalar{S: s, IsStr: true})
	return id
}

// Scalar interns s.
func (in *Interner) Scalar(s Scalar) int32 {
	if s.IsStr {
		return in.Str(s.S)
	}
	return in.Int(s.I)
}

// LookupInt returns the id of an integer without interning it.
func (in *Interner) LookupInt(v int64) (int32, bool) {
	if v >= 0 && v < denseLimit {
		if v < int64(len(in.dense)) && in.dense[v] != 0 {
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
func (in *Interner) Get(id int32) Scalar { return in.tab[id] }

// String renders id; out-of-range ids render as "?<id>".
func (in *Interner) String(id int32) string {
	if id < 0 || int(id) >= len(in.tab) {
		return "?" + strconv.Itoa(int(id))
	}
	return in.tab[id].String()
}

// Len is the number of interned scalars.
func (in *Interner) Len() int { return len(in.tab) }

// Reset empties the interner, keeping its allocated tables for reuse. Cost
// is proportional to the number of interned scalars, not to table sizes.
func (in *Interner) Reset() {
	for _, s := range in.tab {
		if !s.IsStr && s.I >= 0 && s.I < int64(len(in.dense)) {
			in.dense[s.I] = 0
		}
	}
	clear(in.ints)
	clear(in.strs)
	in.tab = in.tab[:0]
}

// Append interns s, which must not be interned yet, as the next id (used to
// copy tables).
func (in *Interner) Append(s Scalar) int32 { return in.Scalar(s) }
