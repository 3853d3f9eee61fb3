package record

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// TestVersionSetsFromSnapshotsMatchSimulation is the regression test of the
// version-set derivation (versionSetsFromSnapshots, restricted to each
// read's key region): over many seeds it simulates a PostgreSQL-like MVCC
// execution — xids assigned at a transaction's first write, row locks held
// to the end, commits and aborts interleaved, snapshots xmin:xmax:xip taken
// per range read (read committed) or at the transaction's first statement
// (repeatable read, serializable) — and requires each committed range
// read's derived version set to be exactly what the simulated database
// showed that read: per key of its region, the reader's own earlier write,
// else the last version committed before its snapshot, else nothing (the
// unborn row). The reference is the database state copied when the
// snapshot was taken, not the snapshot's xids, so it checks the visibility
// rule as well as the region. Clauses whose region is every key (a
// condition on v) must list every key; a key whose name is not an integer
// is in every region.
func TestVersionSetsFromSnapshotsMatchSimulation(t *testing.T) {
	compared := 0
	for _, level := range []string{"read-committed", "repeatable-read", "serializable"} {
		for seed := uint64(1); seed <= 150; seed++ {
			compared += simulateVersionSets(t, level, seed)
		}
	}
	if compared < 1000 {
		t.Fatalf("only %d version sets compared", compared)
	}
	t.Logf("%d version sets compared", compared)
}

// simTxn is a transaction of the simulation.
type simTxn struct {
	plan    []simOp
	next    int
	xid     uint64
	ops     []history.Op
	preds   []history.Predicate
	snap    string            // the transaction's snapshot (RR/SER), "" before its first statement
	state   map[int32]int32   // committed state at that snapshot
	readRef []map[int32]int32 // per range read: the committed state it saw
	snaps   []string          // per range read: its snapshot
	own     map[int32]int32
	abort   bool
}

type simOp struct {
	write  bool
	key    int32
	lo, hi int64
	where  string
}

func simulateVersionSets(t *testing.T, level string, seed uint64) int {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	h := history.New()
	nkeys := 4 + rng.IntN(14)
	var keys []int32
	for k := range nkeys {
		keys = append(keys, h.Keys.Int(int64(k)))
	}
	if rng.IntN(3) == 0 {
		keys = append(keys, h.Keys.Str("s"))
	}
	intOf := func(k int32) (int64, bool) {
		s := h.Keys.Get(k)
		return s.I, !s.IsStr
	}
	committed := map[int32]int32{}  // key -> last committed value
	lockedBy := map[int32]*simTxn{} // row locks
	active := map[uint64]*simTxn{}  // xid -> running writer
	var running []*simTxn           // started, not finished
	nextXID, nextVal := uint64(100), int64(1)
	snapshot := func() (string, map[int32]int32) {
		xmin := nextXID
		var xip []string
		for _, x := range slices.Sorted(maps.Keys(active)) {
			xmin = min(xmin, x)
			xip = append(xip, strconv.FormatUint(x, 10))
		}
		return fmt.Sprintf("%d:%d:%s", xmin, nextXID, strings.Join(xip, ",")), maps.Clone(committed)
	}
	xids := map[int32]uint64{}
	var snaps []predSnap
	type done struct {
		tx  *simTxn
		idx int32
	}
	var finished []done
	finish := func(tx *simTxn) {
		st := history.Committed
		if tx.abort {
			st = history.Aborted
		} else {
			for k, v := range tx.own {
				committed[k] = v
			}
		}
		for k, l := range lockedBy {
			if l == tx {
				delete(lockedBy, k)
			}
		}
		if tx.xid != 0 {
			delete(active, tx.xid)
		}
		ht := history.Txn{Status: st, Ops: tx.ops}
		pi := 0
		for j := range ht.Ops {
			if ht.Ops[j].Kind == history.PredRead {
				ht.SetPred(&ht.Ops[j], tx.preds[pi])
				pi++
			}
		}
		p := h.Add(ht)
		finished = append(finished, done{tx, p.Index})
		if tx.xid != 0 {
			xids[p.Index] = tx.xid
		}
		pi = 0
		for j := range ht.Ops {
			if ht.Ops[j].Kind == history.PredRead {
				snaps = append(snaps, predSnap{txn: p.Index, op: int32(j), snap: tx.snaps[pi]})
				pi++
			}
		}
	}
	ntxn := 20 + rng.IntN(30)
	started := 0
	for started < ntxn || len(running) > 0 {
		if started < ntxn && (len(running) == 0 || len(running) < 4 && rng.IntN(3) == 0) {
			tx := &simTxn{own: map[int32]int32{}, abort: rng.IntN(8) == 0}
			for range 1 + rng.IntN(6) {
				if rng.IntN(2) == 0 {
					tx.plan = append(tx.plan, simOp{write: true, key: keys[rng.IntN(len(keys))]})
					continue
				}
				lo := int64(rng.IntN(nkeys))
				hi := min(int64(nkeys-1), lo+int64(rng.IntN(nkeys/2+1)))
				where := fmt.Sprintf("k >= %d AND k <= %d", lo, hi)
				if rng.IntN(10) == 0 {
					where = "v >= 0" // region: every key
					lo, hi = -1<<62, 1<<62
				}
				tx.plan = append(tx.plan, simOp{lo: lo, hi: hi, where: where})
			}
			running = append(running, tx)
			started++
			continue
		}
		i := rng.IntN(len(running))
		tx := running[i]
		if tx.next == len(tx.plan) {
			finish(tx)
			running = slices.Delete(running, i, i+1)
			continue
		}
		op := tx.plan[tx.next]
		if level != "read-committed" && tx.snap == "" {
			tx.snap, tx.state = snapshot() // the first statement's snapshot is the transaction's
		}
		if op.write {
			if l := lockedBy[op.key]; l != nil && l != tx {
				// the row is locked: leave the write out (waiting could
				// deadlock the simulation)
				tx.next++
				continue
			}
			if tx.xid == 0 {
				tx.xid = nextXID
				nextXID++
				active[tx.xid] = tx
			}
			lockedBy[op.key] = tx
			v := h.Values.Int(nextVal)
			nextVal++
			tx.own[op.key] = v
			tx.ops = append(tx.ops, history.Op{Kind: history.Write, Key: op.key, Value: v})
		} else {
			s, st := tx.snap, tx.state
			if level == "read-committed" {
				s, st = snapshot()
			}
			tx.snaps, tx.readRef = append(tx.snaps, s), append(tx.readRef, st)
			tx.ops = append(tx.ops, history.Op{Kind: history.PredRead})
			tx.preds = append(tx.preds, history.Predicate{Table: "txray_pred", Where: op.where})
		}
		tx.next++
	}
	// version order: committed writers' values in commit order
	h.VersionOrder = map[int32][]int32{}
	for _, d := range finished {
		if d.tx.abort {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(d.tx.own)) {
			h.VersionOrder[k] = append(h.VersionOrder[k], d.tx.own[k])
		}
	}
	r := &recorder{cfg: &Config{}, xids: xids, snaps: snaps}
	if _, skipped, err := r.versionSetsFromSnapshots(h); err != nil || skipped != 0 {
		t.Fatalf("%s seed %d: skipped %d, err %v", level, seed, skipped, err)
	}
	compared := 0
	for _, d := range finished {
		tx := &h.Txns[d.idx]
		ri := 0
		own := map[int32]int32{}
		for j := range tx.Ops {
			o := &tx.Ops[j]
			if o.Kind == history.Write {
				own[o.Key] = o.Value
				continue
			}
			p := tx.PredOf(o)
			var lo, hi int64 = -1 << 62, 1 << 62
			if strings.HasPrefix(p.Where, "k >= ") {
				fmt.Sscanf(p.Where, "k >= %d AND k <= %d", &lo, &hi)
			}
			want := map[int32]int32{}
			for _, k := range keys {
				if x, isInt := intOf(k); isInt && (x < lo || x > hi) {
					continue
				}
				if v, ok := own[k]; ok {
					want[k] = v
				} else if v, ok := d.tx.readRef[ri][k]; ok {
					want[k] = v
				}
			}
			ri++
			if d.tx.abort {
				if p.HasVersionSet {
					t.Fatalf("%s seed %d: an aborted transaction's read got a version set", level, seed)
				}
				continue
			}
			if !p.HasVersionSet {
				t.Fatalf("%s seed %d: %s's read %d (%s) got no version set", level, seed, h.TxnName(d.idx), j, p.Where)
			}
			got := map[int32]int32{}
			for _, row := range p.VersionSet {
				if _, dup := got[row.Key]; dup {
					t.Fatalf("%s seed %d: key %s twice in a version set", level, seed, h.KeyName(row.Key))
				}
				if row.Value != history.NoValue {
					got[row.Key] = row.Value
				}
			}
			if !maps.Equal(got, want) {
				show := func(m map[int32]int32) string {
					var s []string
					for _, k := range slices.Sorted(maps.Keys(m)) {
						s = append(s, h.KeyName(k)+"="+h.ValueName(m[k]))
					}
					return strings.Join(s, " ")
				}
				t.Fatalf("%s seed %d: %s's read %d (%s, snapshot %s): version set %s, the simulated database showed %s",
					level, seed, h.TxnName(d.idx), j, p.Where, d.tx.snaps[ri-1], show(got), show(want))
			}
			compared++
		}
	}
	return compared
}

// TestPostgresChainsEqualCommitOrder: with a logical decoding slot the
// version order comes from the commit order and writes no longer return the
// version they replaced (workload.Config.CommitOrder). The two must agree:
// on the same PostgreSQL runs (predicate at read committed; at repeatable
// read and serializable with deletes, whose re-inserts follow tombstones),
// recorded with the replaced-version capture kept (chainsWithCommitOrder),
// every key's chain of replaced versions equals its committed writes in
// commit-LSN order, and a run without it (at read committed, without
// deletes: the commit order alone; runs with deletes keep the chains)
// derives a version order and version sets.
func TestPostgresChainsEqualCommitOrder(t *testing.T) {
	u := pgURL()
	contended(t, u)
	for _, tc := range []struct {
		level   string
		deletes bool
	}{{db.ReadCommitted, false}, {db.RepeatableRead, true}, {db.Serializable, true}} {
		t.Run(tc.level, func(t *testing.T) {
			cfg := Config{DB: u, Level: tc.level, Workload: "predicate", Clients: 4, Txns: 400,
				WL: workload.Config{Keys: 12, Ops: 4, ReadRatio: 0.5, Deletes: tc.deletes}, chainsWithCommitOrder: true}
			res := runRecorded(t, cfg)
			h := res.History
			if !h.Evidence.CommitOrder {
				t.Skip("no logical decoding slot: no commit order to compare the chains with")
			}
			if !h.Evidence.VersionOrder || len(h.VersionOrder) == 0 {
				t.Fatalf("no version order from the chains (evidence %+v)", h.Evidence)
			}
			byCommit := *h
			byCommit.VersionOrder = nil
			if !versionOrderFromCommits(&byCommit) {
				t.Fatal("some committed writer has no commit position")
			}
			for k, ord := range byCommit.VersionOrder {
				if !slices.Equal(ord, h.VersionOrder[k]) {
					t.Fatalf("key %s: replaced-version chain %s, commit order %s", h.KeyName(k), h.ListString(h.VersionOrder[k]), h.ListString(ord))
				}
			}
			if len(byCommit.VersionOrder) != len(h.VersionOrder) {
				t.Fatalf("%d keys ordered by chains, %d by commit order", len(h.VersionOrder), len(byCommit.VersionOrder))
			}
			// the same run shape without the chains: the commit order alone
			cfg.chainsWithCommitOrder = false
			res = runRecorded(t, cfg)
			if res.Certificate.VersionSets == 0 || !res.History.Evidence.VersionOrder {
				t.Fatalf("from the commit order alone: certificate %+v, evidence %+v", res.Certificate, res.History.Evidence)
			}
			t.Logf("%d keys: chains equal the commit order; without chains %d version sets", len(h.VersionOrder), res.Certificate.VersionSets)
		})
	}
}
