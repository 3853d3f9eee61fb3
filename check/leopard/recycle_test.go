package leopard

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// streamKeys streams n single-write transactions, each to a new key
// k0..k(n-1), interning as it goes (as txray watch's decoder does), into an
// online verifier with a key bound of one chunk and key recycling, then
// the transactions of tail (times after the stream), and returns the
// result and the history whose interners were used.
func streamKeys(t *testing.T, n int, tail ...spec) (*check.Result, *history.History, *Online) {
	t.Helper()
	h := history.New()
	h.Keys = history.NewRecyclingInterner()
	p, _ := model.LookupProfile("postgres:repeatable-read")
	on := NewOnline(p, OnlineOptions{Keys: h.Keys, Values: h.Values, Window: true, MaxKeys: keyChunk, RecycleKeys: true})
	on.e.gcEvery = 64
	seq := map[int32]int32{}
	at := int64(0)
	maxLen := 0
	for i := 0; i < n; i++ {
		ht := specTxn(t, h, seq, tx(1, at, at+10, fmt.Sprintf("w k%d 1 %d %d", i, at+2, at+3)))
		ht.Index = int32(i)
		on.Add(&ht)
		at += 20
		if i%256 == 255 {
			on.Advance(at - 100)
		}
		maxLen = max(maxLen, h.Keys.Len())
	}
	on.Advance(at + 500)
	base := at + 1000
	for j, s := range tail {
		s.invoke += base
		s.comp += base
		s.ops = slices.Clone(s.ops)
		for k, o := range s.ops {
			f := strings.Fields(o)
			var a, b int64
			fmt.Sscan(f[3], &a)
			fmt.Sscan(f[4], &b)
			s.ops[k] = fmt.Sprintf("%s %s %s %d %d", f[0], f[1], f[2], a+base, b+base)
		}
		ht := specTxn(t, h, seq, s)
		ht.Index = int32(n + j)
		on.Add(&ht)
	}
	if maxLen > 4*keyChunk {
		t.Errorf("the key interner reached %d ids for a bound of %d keys: forgotten ids were not recycled", maxLen, keyChunk)
	}
	return on.Flush(), h, on
}

// TestOnlineRecyclesForgottenKeyIds: with key recycling, the ids of
// forgotten keys go back to the decoder's interner, which stays bounded
// however many keys the stream names (history.Interner.Release), and a
// forgotten key that comes back under a new id is still known to be
// forgotten (the filter of forgotten names): reading it is not checked
// (unknown, with the reason), unless a version written since certainly
// committed before the read, which hides every forgotten version
// (engine.shadowed): then the read is checked, a stale value is a cr
// violation and the new value passes. A violation on a retained key is
// still found.
func TestOnlineRecyclesForgottenKeyIds(t *testing.T) {
	const n = 6 * keyChunk
	cases := []struct {
		name string
		tail []spec
		want string
	}{
		{"returning key, its forgotten value", []spec{tx(1, 0, 10, "r k0 1 2 3")}, "unknown"},
		{"returning key, a value never written", []spec{tx(1, 0, 10, "r k0 77 2 3")}, "unknown"},
		{"returning key rewritten, the new value", []spec{tx(1, 0, 10, "w k0 5 2 3"), tx(1, 100, 110, "r k0 5 102 103")}, "valid"},
		{"returning key rewritten, the forgotten value", []spec{tx(1, 0, 10, "w k0 5 2 3"), tx(1, 100, 110, "r k0 1 102 103")}, "invalid"},
		{"retained key, a value never written", []spec{tx(1, 0, 10, fmt.Sprintf("r k%d 77 2 3", n-1))}, "invalid"},
		{"retained key, its value", []spec{tx(1, 0, 10, fmt.Sprintf("r k%d 1 2 3", n-1))}, "valid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, h, _ := streamKeys(t, n, c.tail...)
			if r.Stats["recycled_key_chunks"] == nil {
				t.Fatalf("no key ids were recycled: %v", r.Stats)
			}
			if r.Verdict.String() != c.want {
				t.Fatalf("verdict %s %v (%s), want %s", r.Verdict, r.AnomalyTypes, r.Reason, c.want)
			}
			if c.want == "unknown" && (!strings.Contains(r.Reason, "not checked") || r.Stats["suspect_keys"] == nil) {
				t.Errorf("reason %q, stats %v", r.Reason, r.Stats)
			}
			if c.want == "invalid" && !has(r, model.CR) {
				t.Errorf("want cr, got %v", r.AnomalyTypes)
			}
			if id, ok := h.Keys.LookupStr("k0"); ok && c.tail[0].ops[0][2] == 'r' && id == 0 {
				t.Errorf("k0 kept its id 0")
			}
		})
	}
}

// TestRecycledKeyIdsRenderAsForgotten: a collected transaction's record
// (spilled, read back for an explanation) names key ids as they were when
// it was added; once such an id is released (and may name another key),
// the explanation renders it as forgotten instead of under the new name.
func TestRecycledKeyIdsRenderAsForgotten(t *testing.T) {
	keys := history.NewRecyclingInterner()
	a, z := keys.Str("a"), keys.Str("z")
	rc := newRecycler(keys, keyChunk)
	rep := newReporter(keys, history.NewIdentityInterner(), nil, 8, false)
	rep.rc = rc
	ref := &history.Txn{Index: 3, Ops: []history.Op{{Kind: history.Write, Key: a, Value: 1}, {Kind: history.Write, Key: z, Value: 2}}}
	tx := &txn{ref: ref, idx: 3, gc: true, epoch: rc.epoch, status: history.Committed}
	if s := rep.txnString(tx); !strings.Contains(s, "w a 1") || !strings.Contains(s, "w z 2") {
		t.Fatalf("before any release: %s", s)
	}
	// Release a's chunk (both keys are in chunk 0 here) and reuse the ids.
	rc.epoch++
	rc.chunkEpoch = []uint32{rc.epoch}
	keys.Release(0, keyChunk)
	keys.Str("other")
	s := rep.txnString(tx)
	if strings.Contains(s, "other") || !strings.Contains(s, "(a key forgotten since)") {
		t.Errorf("after release: %s", s)
	}
	if ref.Ops[0].Key != a {
		t.Error("rendering changed the record")
	}
	// A transaction added after the release names the new keys.
	tx2 := &txn{ref: &history.Txn{Ops: []history.Op{{Kind: history.Write, Key: 0, Value: 1}}}, gc: true, epoch: rc.epoch}
	if s := rep.txnString(tx2); !strings.Contains(s, "w other 1") {
		t.Errorf("a transaction of the new epoch: %s", s)
	}
}

// TestOnlineForgetsIdleSessions: in window mode, sessions idle past the
// window are forgotten (the verifier's per-session state is bounded by
// the sessions active at once, and the caller is told so it can release
// the ids), and the verdicts are those of a verifier that keeps every
// session: a returning session that is not late is verified as before, one
// whose transaction begins behind the frontier is late either way, and a
// violation is still found.
func TestOnlineForgetsIdleSessions(t *testing.T) {
	const sessions = 300
	cases := []struct {
		name string
		tail []spec
	}{
		{"returning session, on time", []spec{tx(3, 100, 110, "r x3 1 102 103")}},
		{"returning session, late", []spec{tx(3, -9000, -8990, "r x3 1 -8998 -8997")}},
		{"returning session, stale read", []spec{tx(3, 100, 110, "w x3 2 102 103"), tx(3, 200, 210, "r x3 1 202 203")}},
		{"new session, violation", []spec{tx(sessions+1, 100, 110, "r x4 9 102 103")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var res [2]*check.Result
			var clients [2]int
			for k, forget := range []bool{false, true} {
				h := history.New()
				p, _ := model.LookupProfile("postgres:repeatable-read")
				var told []int32
				on := NewOnline(p, OnlineOptions{Keys: h.Keys, Values: h.Values, Window: true, ForgetSessions: forget,
					OnForgetSession: func(s int32) { told = append(told, s) }})
				on.e.gcEvery = 16
				seq := map[int32]int32{}
				at := int64(0)
				var specs []spec
				for i := 0; i < sessions; i++ {
					specs = append(specs, tx(int32(i), at, at+10, fmt.Sprintf("w x%d 1 %d %d", i%10, at+2, at+3)))
					at += 20
				}
				end := at
				for _, s := range c.tail {
					s.invoke += end
					s.comp += end
					s.ops = slices.Clone(s.ops)
					for j, o := range s.ops {
						f := strings.Fields(o)
						var a, b int64
						fmt.Sscan(f[3], &a)
						fmt.Sscan(f[4], &b)
						s.ops[j] = fmt.Sprintf("%s %s %s %d %d", f[0], f[1], f[2], a+end, b+end)
					}
					specs = append(specs, s)
				}
				for i, s := range specs {
					ht := specTxn(t, h, seq, s)
					ht.Index = int32(i)
					on.Add(&ht)
					if i < sessions {
						on.Advance(ht.Invoke - 100)
					}
				}
				clients[k] = len(on.e.clients)
				res[k] = on.Flush()
				if forget {
					if n := res[k].Stats["forgotten_sessions"]; n == nil || int(n.(int64)) != len(told) || len(told) < sessions/2 {
						t.Errorf("forgotten sessions %v, told %d", n, len(told))
					}
				}
			}
			if clients[1] > sessions/4 {
				t.Errorf("%d clients kept for %d sessions (without forgetting: %d)", clients[1], sessions, clients[0])
			}
			if res[0].Verdict != res[1].Verdict || !slices.Equal(res[0].AnomalyTypes, res[1].AnomalyTypes) {
				t.Fatalf("forgetting sessions changed the verdict: %s %v (%s) vs kept %s %v (%s)",
					res[1].Verdict, res[1].AnomalyTypes, res[1].Reason, res[0].Verdict, res[0].AnomalyTypes, res[0].Reason)
			}
			t.Logf("%s: %s %v", c.name, res[1].Verdict, res[1].AnomalyTypes)
		})
	}
}

// TestSpillLimitDropsOldestRecords: under a limit the spill log keeps at
// most two files of half the limit each: the disk it uses stays within
// the limit, the newest records read back, the oldest are reported as
// dropped (errSpillDropped), never as another record.
func TestSpillLimitDropsOldestRecords(t *testing.T) {
	const limit = 4096
	s := &spillLog{limit: limit}
	defer s.close()
	var offs []int64
	for i := 0; i < 2000; i++ {
		tx := &history.Txn{Index: int32(i), ID: fmt.Sprintf("t%d", i), Ops: []history.Op{{Kind: history.Write, Key: int32(i), Value: int32(i)}}}
		off, ok := s.put(tx, 0)
		if !ok {
			t.Fatal(s.err)
		}
		offs = append(offs, off)
		if s.size() > limit {
			t.Fatalf("spill holds %d bytes, limit %d", s.size(), limit)
		}
	}
	if s.dropped == 0 || s.peak > limit {
		t.Fatalf("dropped %d, peak %d", s.dropped, s.peak)
	}
	dropped := 0
	for i, off := range offs {
		got, _, err := s.get(off)
		switch {
		case err == errSpillDropped:
			dropped++
			if i >= len(offs)-limit/2/20 {
				t.Errorf("record %d of the newest half dropped", i)
			}
		case err != nil:
			t.Fatalf("record %d: %v", i, err)
		case got.Index != int32(i) || got.ID != fmt.Sprintf("t%d", i):
			t.Fatalf("record %d read back as %d %s", i, got.Index, got.ID)
		}
	}
	if int64(dropped) != s.dropped {
		t.Errorf("%d records unreadable, %d counted dropped", dropped, s.dropped)
	}
}

// TestOnlineSpillLimitKeepsVerdicts: a spill limit small enough to drop
// records changes no verdict; an explanation that names a collected
// transaction whose record was dropped says so.
func TestOnlineSpillLimitKeepsVerdicts(t *testing.T) {
	specs := []spec{tx(2, 0, 20, "w old 1 2 3")}
	at := int64(30)
	for i := 0; i < 3000; i++ {
		specs = append(specs, tx(1, at, at+10, fmt.Sprintf("w k%d 1 %d %d", i%100, at+2, at+3)))
		at += 20
	}
	// Read old's first version although a stale value: cr naming old's
	// writer, collected long ago.
	specs = append(specs, tx(1, at+1000, at+1010, "r old 9 1002 1003"), tx(1, at+2000, at+2010, "r k5 9 2002 2003"))
	h := build(t, specs...)
	var res [2]*check.Result
	var dropped int64
	for k, limit := range []int64{0, 2048} {
		p, _ := model.LookupProfile("postgres:repeatable-read")
		on := NewOnline(p, OnlineOptions{Keys: h.Keys, Values: h.Values, Window: true, SpillLimit: limit})
		on.e.gcEvery = 64
		for i := range h.Txns {
			on.Add(&h.Txns[i])
			on.Advance(h.Txns[i].Invoke - 100)
		}
		dropped = on.Stats()["spill_dropped_records"]
		res[k] = on.Flush()
	}
	if dropped == 0 {
		t.Fatal("the limit dropped nothing")
	}
	if res[0].Verdict != check.Invalid || res[1].Verdict != res[0].Verdict || !slices.Equal(res[0].AnomalyTypes, res[1].AnomalyTypes) {
		t.Fatalf("unbounded %s %v, limited %s %v", res[0].Verdict, res[0].AnomalyTypes, res[1].Verdict, res[1].AnomalyTypes)
	}
	if r := res[1]; r.Stats["spill_bytes_peak"].(int64) > 2048 {
		t.Errorf("spill peak %v over the limit", r.Stats["spill_bytes_peak"])
	}
	found := false
	for _, w := range res[1].Warnings {
		found = found || strings.Contains(w, "--spill-limit")
	}
	if !found {
		t.Errorf("no warning about dropped explanation records: %v", res[1].Warnings)
	}
}
