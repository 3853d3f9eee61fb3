package aion

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// TestKeyTabAgreesWithMap: the key table (direct index and open-addressing
// hash table: insert, lookup, backward-shift removal, id recycling) maps names exactly as a Go map
// does, over a random mix of integer and string keys.
func TestKeyTabAgreesWithMap(t *testing.T) {
	c := New(Config{})
	ref := map[string]int32{}
	rng := rand.New(rand.NewPCG(1, 2))
	name := func(str bool, n int64) string {
		if str {
			return fmt.Sprintf("s%d", n)
		}
		return fmt.Sprint(n)
	}
	for step := 0; step < 200_000; step++ {
		str := rng.IntN(3) == 0
		n := rng.Int64N(5000) - 100
		if !str && rng.IntN(2) == 0 {
			n += 1 << 40 // beyond the direct index: the hash table
		}
		nm := name(str, n)
		if rng.IntN(3) == 0 {
			id, ok := ref[nm]
			if !ok {
				continue
			}
			ks, cold := c.keys.get(id), c.keys.getCold(id)
			c.forgetKey(id, ks, cold)
			delete(ref, nm)
			continue
		}
		var id int32
		if str {
			id = c.internStrKey([]byte(nm), 1)
		} else {
			id = c.internInt(n, 1)
		}
		if want, ok := ref[nm]; ok && want != id {
			t.Fatalf("step %d: %s has id %d, want %d", step, nm, id, want)
		}
		ref[nm] = id
		if got := c.keyName(id); got != nm {
			t.Fatalf("step %d: id %d named %q, want %q", step, id, got, nm)
		}
	}
	if c.liveKeys != len(ref) {
		t.Fatalf("%d keys live, want %d", c.liveKeys, len(ref))
	}
	for nm, id := range ref {
		var got int32
		if strings.HasPrefix(nm, "s") {
			got = c.kt.lookupStr([]byte(nm), c.kt.strHash([]byte(nm)))
		} else {
			var n int64
			fmt.Sscan(nm, &n)
			got = c.kt.lookupInt(n)
		}
		if got != id {
			t.Fatalf("%s: lookup %d, want %d", nm, got, id)
		}
	}
	if c.keys.n > 15000 {
		t.Errorf("%d ids handed out for at most %d live keys: ids are not recycled", c.keys.n, 15000)
	}
}

// forgetStream feeds a stream that creates keys without end: transaction
// i writes keys 4i..4i+3 (value i) and reads key 4(i-1) (written by the
// previous transaction, its latest value), on a simulated clock (1 ms per
// transaction, a Tick every 20 ms, FinalAfter 50 ms).
func forgetStream(t *testing.T, c *Checker, ck *clock, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		ck.t = ck.t.Add(time.Millisecond)
		ts := int64(10 * i)
		x := &Txn{ID: fmt.Sprint(i), Session: fmt.Sprint(i % 7), Status: history.Committed,
			StartTS: history.Timestamp{P: ts, Set: true}, CommitTS: history.Timestamp{P: ts + 5, Set: true}}
		if i > 0 {
			x.Ops = append(x.Ops, Op{Kind: history.Read, raw: rawInt, Key: int32(int64(4 * (i - 1))), V: Val{N: int64(i - 1), K: 1}})
		}
		for j := 0; j < 4; j++ {
			x.Ops = append(x.Ops, Op{Kind: history.Write, raw: rawInt, Key: int32(int64(4*i + j)), V: Val{N: int64(i), K: 1}})
		}
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
		if i%20 == 0 {
			c.Tick()
		}
	}
}

// TestForgetKeysBoundsStateAndReadsUnknown (issue 12): under MaxKeys a
// stream that keeps creating keys retains at most about MaxKeys keys (the
// key table, the per-key lines and the version pool stop growing), the
// verdict stays valid while no forgotten key is read, and a later read of
// a forgotten key is not checked: the verdict is unknown with the reason,
// whether the read returns the key's last value or another one (never
// valid, never a false INVALID). A forgotten key written again is checked
// again against its new versions, including a true violation.
func TestForgetKeysBoundsStateAndReadsUnknown(t *testing.T) {
	const maxKeys = 2000
	ck := &clock{t: time.Unix(1000, 0)}
	c := New(Config{FinalAfter: 50 * time.Millisecond, Now: ck.now, MaxKeys: maxKeys})
	// 80,000 keys: past the direct index (denseFor(2000) = 65,536
	// entries), so the hash table holds keys too
	forgetStream(t, c, ck, 0, 20000)
	ids, slots := c.keys.n, len(c.kt.slots)
	forgetStream(t, c, ck, 20000, 45000) // 100,000 more keys
	if c.liveKeys > maxKeys+200 {
		t.Errorf("%d keys retained, budget %d", c.liveKeys, maxKeys)
	}
	if c.keys.n != ids || len(c.kt.slots) != slots {
		t.Errorf("key ids %d → %d, hash slots %d → %d after 100,000 more keys: state grows", ids, c.keys.n, slots, len(c.kt.slots))
	}
	if c.forgotKeys < 100_000 {
		t.Errorf("forgotten %d keys, want ≥ 100,000", c.forgotKeys)
	}
	st := c.Status()
	if st.ForgottenKeys != c.forgotKeys || st.Keys != c.liveKeys {
		t.Errorf("status %+v", st)
	}
	base := 10 * int64(45000)
	add := func(id string, sts int64, ops ...Op) {
		ck.t = ck.t.Add(time.Millisecond)
		x := &Txn{ID: id, Session: "z", Status: history.Committed, StartTS: history.Timestamp{P: sts, Set: true},
			CommitTS: history.Timestamp{P: sts + 5, Set: true}, Ops: ops}
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	rd := func(k, v int64) Op { return Op{Kind: history.Read, raw: rawInt, Key: int32(k), V: Val{N: v, K: 1}} }
	wr := func(k, v int64) Op { return Op{Kind: history.Write, raw: rawInt, Key: int32(k), V: Val{N: v, K: 1}} }

	// Key 4 (written by transaction 1 with value 1) is long forgotten:
	// reading its true value or a wrong one is unchecked.
	add("r-true", base+100, rd(4, 1))
	add("r-wrong", base+200, rd(8, 777))
	// Key 12 is written again, then read: checked against the new version.
	add("w-again", base+300, wr(12, 4242))
	add("r-new", base+400, rd(12, 4242))
	add("r-stale", base+500, rd(12, 3)) // a true violation: 4242 is visible
	r := c.Close()
	if r.Verdict != check.Invalid {
		t.Fatalf("verdict %v (%s), want invalid (the stale read of a re-written key)", r.Verdict, r.Reason)
	}
	if got := r.Stats["forgotten_reads"]; got != int64(2) {
		t.Errorf("forgotten_reads %v, want 2", got)
	}
	if r.Counts["ext"] != 1 {
		t.Errorf("ext violations %v, want 1: %v", r.Counts, r.Anomalies)
	}
}

// TestForgottenReadMakesValidUnknown: a history that is valid except that
// it reads a forgotten key gets unknown with a reason naming the budget,
// not valid; without reads of forgotten keys it is valid.
func TestForgottenReadMakesValidUnknown(t *testing.T) {
	for _, readOld := range []bool{false, true} {
		ck := &clock{t: time.Unix(1000, 0)}
		c := New(Config{FinalAfter: 50 * time.Millisecond, Now: ck.now, MaxKeys: 1000})
		forgetStream(t, c, ck, 0, 3000)
		if readOld {
			ck.t = ck.t.Add(time.Millisecond)
			x := &Txn{ID: "old", Session: "z", Status: history.Committed, StartTS: history.Timestamp{P: 10 * 3000, Set: true},
				CommitTS: history.Timestamp{P: 10*3000 + 5, Set: true},
				Ops:      []Op{{Kind: history.Read, raw: rawInt, Key: int32(4), V: Val{N: 1, K: 1}}}}
			if err := c.Add(x); err != nil {
				t.Fatal(err)
			}
		}
		r := c.Close()
		switch {
		case readOld && (r.Verdict != check.Unknown || !strings.Contains(r.Reason, "forgotten")):
			t.Errorf("read of a forgotten key: %v (%s), want unknown naming the forgotten keys", r.Verdict, r.Reason)
		case !readOld && r.Verdict != check.Valid:
			t.Errorf("no forgotten key read: %v (%s), want valid", r.Verdict, r.Reason)
		}
		if r.Stats["forgotten_keys"].(int64) == 0 {
			t.Errorf("nothing forgotten")
		}
	}
}

// TestForgetNeverWrittenKeyIsLossless: a key that was only read (initial
// value) and is forgotten loses nothing: a later read of it is still
// checked (a read of a value nobody wrote is a violation).
func TestForgetNeverWrittenKeyIsLossless(t *testing.T) {
	// The filter of forgotten names hashes with the checker's seed
	// (hash.go), and a key it happens to hold (a false positive, about 1
	// in 100 here: 11,000 names in a filter sized for 1,000 keys) is
	// treated as forgotten: unknown, by design. This test is about a key
	// the filter does not hold, so a run where it does is retried with the
	// next seed (fixed seeds: every run replays).
	for attempt := 0; ; attempt++ {
		if attempt == 20 {
			t.Fatal("the filter held the read-only key in 20 checkers: not a false positive")
		}
		ck := &clock{t: time.Unix(1000, 0)}
		c := New(withSeed(Config{FinalAfter: 50 * time.Millisecond, Now: ck.now, MaxKeys: 1000}, uint64(attempt)+1))
		x := &Txn{ID: "r0", Session: "z", Status: history.Committed, StartTS: history.Timestamp{P: 1, Set: true},
			CommitTS: history.Timestamp{P: 2, Set: true}, Ops: []Op{{Kind: history.Read, raw: rawStr, Key: 0}}, keyStrs: []string{"ro"}}
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
		forgetStream(t, c, ck, 1, 3000)
		if _, ok := c.kt.lookupStrName("ro"); ok {
			t.Fatal("the read-only key was not forgotten")
		}
		if c.forgotten.has(c.nameHash(true, 0, []byte("ro"))) {
			continue // a filter false positive: a read of "ro" would rightly be unknown
		}
		ck.t = ck.t.Add(time.Millisecond)
		x = &Txn{ID: "r1", Session: "z", Status: history.Committed, StartTS: history.Timestamp{P: 40000, Set: true},
			CommitTS: history.Timestamp{P: 40005, Set: true}, Ops: []Op{{Kind: history.Read, raw: rawStr, Key: 0, V: Val{N: 5, K: 1}}}, keyStrs: []string{"ro"}}
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
		r := c.Close()
		if r.Verdict != check.Invalid || r.Stats["forgotten_reads"] != int64(0) {
			t.Fatalf("verdict %v (%s), forgotten_reads %v: want invalid, 0", r.Verdict, r.Reason, r.Stats["forgotten_reads"])
		}
		return
	}
}

// lookupStrName looks string key s up without interning it.
func (kt *keyTab) lookupStrName(s string) (int32, bool) {
	id := kt.lookupStr([]byte(s), kt.strHash([]byte(s)))
	return id, id >= 0
}

// TestNewKeysSkipForgottenFilter (issue 12): on a stream of ever-new keys,
// whose reads see versions newer than every forgotten one, the filter of
// forgotten names is never consulted (forgotten_filter_probes 0), so none
// of its false positives can mark a new key as forgotten (suspect_keys 0);
// a read of a long-forgotten key still consults it and is not checked.
// Consulting the filter for every new key (before) marked some new keys
// suspect once the forgotten names far outnumbered its size.
func TestNewKeysSkipForgottenFilter(t *testing.T) {
	ck := &clock{t: time.Unix(1000, 0)}
	c := New(Config{FinalAfter: 50 * time.Millisecond, Now: ck.now, MaxKeys: 500})
	forgetStream(t, c, ck, 0, 40000) // 160,000 keys, about 159,000 forgotten into a 65,536-bit filter
	if c.filterProbes != 0 || c.suspectKeys != 0 {
		t.Fatalf("filter consulted %d times (%d suspect) on reads of new versions only", c.filterProbes, c.suspectKeys)
	}
	ck.t = ck.t.Add(time.Millisecond)
	x := &Txn{ID: "old", Session: "z", Status: history.Committed, StartTS: history.Timestamp{P: 10 * 40000, Set: true},
		CommitTS: history.Timestamp{P: 10*40000 + 5, Set: true},
		Ops:      []Op{{Kind: history.Read, raw: rawInt, Key: int32(4), V: Val{N: 1, K: 1}}}}
	if err := c.Add(x); err != nil {
		t.Fatal(err)
	}
	r := c.Close()
	if r.Verdict != check.Unknown || r.Stats["forgotten_reads"] != int64(1) || r.Stats["forgotten_filter_probes"] != int64(1) {
		t.Fatalf("verdict %v (%s), stats %v; want unknown, the old key's read probing the filter", r.Verdict, r.Reason, r.Stats)
	}
}

// TestForgottenFilterTakesItsBudget (issue 12): the filter of forgotten
// names takes exactly its budget (not the power of two below it), has no
// false negatives, and its false-positive rate is that of a Bloom filter of
// that size with four probes (within a factor 2): under 1/1,000 for 200,000
// names in 2 MiB; for 1,000,000 names in 1.5 MiB (12.6 bits per name) about
// 0.55 %, where the power-of-two filter it replaces (1 MiB) has about 2 %.
func TestForgottenFilterTakesItsBudget(t *testing.T) {
	seed := maphash.MakeSeed()
	h := func(i int) uint64 { return maphash.Comparable(seed, i) }
	for _, tc := range []struct {
		budget int64
		names  int
		maxFP  float64
	}{
		{2 << 20, 200_000, 1.0 / 1000},
		{3 << 19, 1_000_000, 0.011},
	} {
		f := newBloom(8 * uint64(tc.budget))
		if got := int64(len(f.w) * 8); got != tc.budget {
			t.Errorf("budget %d: %d bytes allocated", tc.budget, got)
		}
		for i := 0; i < tc.names; i++ {
			f.add(h(i))
		}
		for i := 0; i < tc.names; i += 97 {
			if !f.has(h(i)) {
				t.Fatalf("budget %d: name %d added but not found (a false negative)", tc.budget, i)
			}
		}
		fp := 0
		const probes = 200_000
		for i := tc.names; i < tc.names+probes; i++ {
			if f.has(h(i)) {
				fp++
			}
		}
		rate := float64(fp) / probes
		t.Logf("budget %d bytes, %d names: false positives %.2e", tc.budget, tc.names, rate)
		if rate > tc.maxFP {
			t.Errorf("budget %d: false-positive rate %.2e, want ≤ %.2e", tc.budget, rate, tc.maxFP)
		}
	}
}
