package aion

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/txray/txray/check"
)

// lateSessions is internal/cli's validSessions: a valid SI history of ntx
// transactions round-robin over nsess sessions, 3 ops each on 3 keys, every
// read returning the latest write; it is returned session by session.
func lateSessions(nsess, ntx int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 1))
	val := map[string]int{}
	bodies := make([]string, nsess)
	next := 1
	for i := 0; i < ntx; i++ {
		s := i % nsess
		ts := int64(10 * (i + 1))
		var ops []string
		for j := 0; j < 3; j++ {
			k := fmt.Sprintf("k%d", rng.IntN(3))
			if rng.IntN(2) == 0 {
				v := "null"
				if x, ok := val[k]; ok {
					v = fmt.Sprint(x)
				}
				ops = append(ops, fmt.Sprintf(`{"f":"r","k":%q,"v":%s}`, k, v))
			} else {
				val[k] = next
				ops = append(ops, fmt.Sprintf(`{"f":"w","k":%q,"v":%d}`, k, next))
				next++
			}
		}
		bodies[s] += fmt.Sprintf(`{"id":"t%d","session":"s%d","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[%s]}`+"\n",
			i, s, ts, ts+8, strings.Join(ops, ","))
	}
	return bodies
}

// TestLateSessionsAnyTickScheduleNeverInvalid (issue 12, the flake of
// internal/cli TestWatchLateSessionsNeverInvalid/aion): a valid history
// arriving session by session, each later than FinalAfter, with any
// schedule of ticks in between (a ticker starved under load runs few and
// late), is never INVALID. It was, when a sweep under a watermark held back
// by pending reads lowered gcTS below an earlier cut: a read between the
// two cuts was then checked against a version list with holes.
func TestLateSessionsAnyTickScheduleNeverInvalid(t *testing.T) {
	bodies := lateSessions(4, 60, 7)
	for seed := uint64(0); seed < 600; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		ck := &clock{t: time.Unix(1000, 0)}
		c := New(Config{FinalAfter: 30 * time.Millisecond, Now: ck.now})
		var log []string
		for _, b := range bodies {
			rd := NewBytesReader([]byte(b), c, "x")
			for {
				x, err := rd.Next()
				if err != nil {
					break
				}
				if err := c.Add(x); err != nil {
					t.Fatal(err)
				}
			}
			log = append(log, "add")
			n := rng.IntN(12)
			for range n {
				d := time.Duration(rng.IntN(40)) * time.Millisecond
				ck.t = ck.t.Add(d)
				c.Tick()
				log = append(log, fmt.Sprint(d))
			}
			ck.t = ck.t.Add(time.Duration(rng.IntN(130)) * time.Millisecond)
		}
		r := c.Close()
		if r.Verdict == check.Invalid {
			t.Fatalf("schedule %d (add, then tick after each delay): %v\n%s\n%v", seed, log, r.Reason, r.Anomalies)
		}
	}
}

// TestReopenBelowCutIsUnknown: a failure final at snapshot 35 (V at 30
// was visible; the read returned 7) is re-opened into unknown by a late
// write below the cut that discarded V (A at 10), and is not withdrawn as
// passing when a second late write (W at 20) brings the value read: V,
// which decided the failure, is gone, so withdrawing it would be a false
// valid.
func TestReopenBelowCutIsUnknown(t *testing.T) {
	c, ck := newTest("snapshot-isolation")
	add := func(x *Txn) {
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	add(tx(c, "V", "a", 25, 30, "w x 3"))
	add(tx(c, "R", "b", 35, 36, "r x 7")) // fails: V's 3 is visible
	add(tx(c, "X", "a", 45, 50, "w x 5"))
	add(tx(c, "Y", "c", 60, 61, "r y nil")) // a later snapshot for the watermark
	ck.t = ck.t.Add(2 * time.Second)
	c.Tick() // R final as failing; versions below the watermark (61) discarded: V
	ck.t = ck.t.Add(2 * time.Second)
	for range sweepEvery {
		c.Tick()
	}
	if k := c.Keys.Str("x"); c.keys.get(k).nv != 1 {
		t.Fatalf("x keeps %d versions, want only X's", c.keys.get(k).nv)
	}
	add(tx(c, "A", "d", 5, 10, "w x 1"))
	add(tx(c, "W", "e", 15, 20, "w x 7"))
	r := c.Close()
	if r.Verdict != check.Unknown || r.Stats["ext_withdrawn"] != int64(0) {
		t.Fatalf("verdict %v (%s), ext_withdrawn %v: want unknown, nothing withdrawn as passing", r.Verdict, r.Reason, r.Stats["ext_withdrawn"])
	}
}
