package aion

import "fmt"

// The table of string values and the value budget (Config.MaxValueBytes;
// issue 12).
//
// A string value is interned to an id (Val{N: id, K: 2}) by the Readers,
// which may run in other goroutines (under nmu). Ids are never reused: two
// equal ids always name the same string. With MaxValueBytes > 0, a tick
// that finds the table holding more than MaxValueBytes (each entry counted
// as valEntryBytes plus its length), with at least a quarter of that added
// since the last collection, collects it: the values named by the retained
// state (versions, pending reads, the transactions still kept for
// explanations, the final failures kept for re-opening, the writes of
// unknown-outcome transactions) are kept, the others are dropped, and the
// hash of each dropped string goes into a filter of forgotten values
// (valForgot, no false negatives).
//
// What that can change. A dropped string that arrives again gets a new id,
// different from the old one that a transaction decoded before the
// collection (in flight between a Reader and Add) may still carry: two ids,
// one string. Equal ids still mean equal strings, so a passing comparison
// is never wrong; a failing one may be. Therefore a failing comparison
// whose values are strings one of which is suspect (its name dropped, or
// in the filter of forgotten values, as the newer id of such a pair always
// is) is not a violation: the read is counted in "forgotten_value_reads"
// and the verdict is unknown with the reason, never a false INVALID. A
// false positive of the filter only does the same to a read that could
// have been decided.

// valEntryBytes is about what the table costs per string beyond its bytes
// (two map entries, the string header, the id).
const valEntryBytes = 80

// valTab interns string values (see above).
type valTab struct {
	byStr map[string]int64
	byID  map[int64]string
	next  int64 // the next id (ids are never reused)
	bytes int64 // table bytes (valEntryBytes + len per entry)
	// at the last collection: the bytes kept
	kept int64
	seed uint64 // the filter's hash seed (hash.go)
	// forgotten values (their hashes), and how many were dropped
	forgot  bloom
	dropped int64
}

func newValTab(seed uint64) valTab {
	return valTab{byStr: map[string]int64{}, byID: map[int64]string{}, seed: seed ^ 0x3C6EF372FE94F82B}
}

// hash is the filters' hash of string value s (hash.go).
func (vt *valTab) hash(s string) uint64 { return seededHash(vt.seed, s) }

// intern returns the id of s, entering it (the caller holds nmu).
func (vt *valTab) intern(b []byte) int64 {
	if id, ok := vt.byStr[string(b)]; ok {
		return id
	}
	s := string(b)
	id := vt.next
	vt.next++
	vt.byStr[s] = id
	vt.byID[id] = s
	vt.bytes += valEntryBytes + int64(len(s))
	return id
}

// name returns the string of id, if it is still in the table.
func (vt *valTab) name(id int64) (string, bool) {
	s, ok := vt.byID[id]
	return s, ok
}

// suspect reports whether string value id may share its string with
// another id (see above): its string was dropped, or a string equal to it
// was dropped before it was interned (or the filter says so falsely).
func (c *Checker) suspect(v Val) bool {
	if v.K != 2 {
		return false
	}
	c.nmu.RLock()
	defer c.nmu.RUnlock()
	s, ok := c.vals.name(v.N)
	if !ok {
		return true
	}
	return c.vals.forgot.w != nil && c.vals.forgot.has(c.vals.hash(s))
}

// aliased reports whether a comparison of a and b that failed (a != b) may
// be wrong because one of them is a suspect string (see above); it counts
// such reads and keeps the first description.
func (c *Checker) aliased(a, b Val, what func() string) bool {
	if a.K != 2 && b.K != 2 {
		return false
	}
	if !c.suspect(a) && !c.suspect(b) {
		return false
	}
	c.valReads++
	if c.valFirst == "" {
		c.valFirst = what()
	}
	return true
}

// maybeCollectValues enforces MaxValueBytes (see above); it runs at the
// end of a tick.
func (c *Checker) maybeCollectValues() {
	max := c.cfg.MaxValueBytes
	if max <= 0 {
		return
	}
	c.nmu.RLock()
	over := c.vals.bytes > max && c.vals.bytes-c.vals.kept >= max/4
	c.nmu.RUnlock()
	if !over {
		return
	}
	// mark: the ids named by the retained state (the checker's own
	// state; Readers only add to the table)
	live := map[int64]struct{}{}
	mark := func(v Val) {
		if v.K == 2 {
			live[v.N] = struct{}{}
		}
	}
	markTxn := func(t *Txn) {
		if t == nil {
			return
		}
		for j := range t.Ops {
			mark(t.Ops[j].V)
		}
	}
	for k := 0; k < c.keys.n; k++ {
		ks := c.keys.get(int32(k))
		if ks.nv > 0 {
			mark(ks.lastV())
		}
		for _, v := range c.vers(ks) {
			mark(v.val())
		}
	}
	for rn := c.reads.head; rn < c.reads.tail; rn++ {
		mark(c.reads.get(rn).val())
	}
	for i := range c.ptx.len() {
		markTxn(c.ptx.at(i).t)
	}
	for i := range c.writers.n {
		markTxn(c.writers.at(i).t)
	}
	for i := range c.sess.tab {
		markTxn(c.sess.tab[i].t)
	}
	for _, frs := range c.failed {
		for _, fr := range frs {
			mark(fr.v)
		}
	}
	for r := range c.unkW {
		mark(r.v)
	}
	// sweep, under nmu: a Reader that interned a dropped string before
	// this holds an id that is now suspect
	c.nmu.Lock()
	defer c.nmu.Unlock()
	vt := &c.vals
	if vt.forgot.w == nil {
		vt.forgot = c.newFilter(uint64(max/valEntryBytes) * 16)
	}
	byStr := make(map[string]int64, len(live))
	byID := make(map[int64]string, len(live))
	var kept int64
	for id, s := range vt.byID {
		if _, ok := live[id]; ok {
			byStr[s] = id
			byID[id] = s
			kept += valEntryBytes + int64(len(s))
			continue
		}
		vt.forgot.add(vt.hash(s))
		vt.dropped++
	}
	vt.byStr, vt.byID, vt.bytes, vt.kept = byStr, byID, kept, kept
}

// valString renders v.
func (c *Checker) valString(v Val) string {
	switch v.K {
	case 0:
		return "nil"
	case 2:
		c.nmu.RLock()
		defer c.nmu.RUnlock()
		if s, ok := c.vals.name(v.N); ok {
			return s
		}
		return "(a forgotten string value)"
	}
	return fmt.Sprint(v.N)
}

func (c *Checker) internStr(b []byte) int64 {
	c.nmu.Lock()
	defer c.nmu.Unlock()
	return c.vals.intern(b)
}

// addUnknownWrite remembers that an unknown-outcome transaction wrote v to
// key k (Checker.unkW): the key is not forgotten while it is remembered.
func (c *Checker) addUnknownWrite(k int32, v Val) {
	if c.unkW == nil {
		c.unkW = map[unkRef]struct{}{}
		c.unkKeys = map[int32]int32{}
	}
	ref := unkRef{k, v}
	if _, ok := c.unkW[ref]; ok {
		return
	}
	c.unkW[ref] = struct{}{}
	c.unkQ = append(c.unkQ, ref)
	c.unkKeys[k]++
	c.key(k).flags |= fUnk
}

// unkHash is the filter's hash of a write of v to key k, by the key's
// name and the value's content (ids may be reused or re-interned).
func (c *Checker) unkHash(k int32, v Val) uint64 {
	h := c.keyNameHash(k)
	x := uint64(v.N)
	if v.K == 2 {
		c.nmu.RLock()
		s, _ := c.vals.name(v.N)
		c.nmu.RUnlock()
		x = c.vals.hash(s)
	}
	x ^= uint64(v.K) << 56
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	return (h ^ x ^ x>>31) * 0x9E3779B97F4A7C15
}

// maybeForgetUnknown enforces MaxUnknownWrites: the oldest remembered
// writes of unknown-outcome transactions go into a fixed-size filter
// (unkForgot: 16 bits per entry of the bound), and their keys may be
// forgotten once nothing else holds them. A failing read whose key and
// value the filter holds is then not a violation but undecided
// ("forgotten_unknown_write_reads"): never a false INVALID; a false
// positive only leaves a failing read undecided.
func (c *Checker) maybeForgetUnknown() {
	max := c.cfg.MaxUnknownWrites
	if max <= 0 || len(c.unkW) <= max {
		return
	}
	if c.unkForgot.w == nil {
		c.unkForgot = c.newFilter(uint64(max) * 16)
	}
	target := max - max/8
	for len(c.unkW) > target && c.unkHead < len(c.unkQ) {
		ref := c.unkQ[c.unkHead]
		c.unkQ[c.unkHead] = unkRef{}
		c.unkHead++
		c.unkForgot.add(c.unkHash(ref.k, ref.v))
		delete(c.unkW, ref)
		c.unkDropped++
		if c.unkKeys[ref.k]--; c.unkKeys[ref.k] <= 0 {
			delete(c.unkKeys, ref.k)
			c.keys.get(ref.k).flags &^= fUnk
		}
	}
	if c.unkHead > len(c.unkQ)/2 {
		n := copy(c.unkQ, c.unkQ[c.unkHead:])
		clear(c.unkQ[n:])
		c.unkQ = c.unkQ[:n]
		c.unkHead = 0
	}
	if len(c.unkW) < max/2 {
		// maps do not shrink: rebuild after a large drop
		m := make(map[unkRef]struct{}, len(c.unkW))
		for r := range c.unkW {
			m[r] = struct{}{}
		}
		c.unkW = m
	}
}

// bound enforces the budgets at the end of a tick.
func (c *Checker) bound() {
	c.maybeForgetSessions()
	c.maybeForgetUnknown()
	c.maybeForget()
	c.maybeCollectValues()
}
