package leopard

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sim"
)

// TestKeySlotPointerFree: what the online verifier keeps per settled key
// is one keySlot, a fixed-size record without pointers (so the collector
// never scans the table and nothing hangs off it), of at most 64 bytes.
// docs/benchmarks.md, "Online: txray watch --checker leopard memory",
// measures what the whole verifier keeps per key (BenchmarkOnlineRetainedHeap).
func TestKeySlotPointerFree(t *testing.T) {
	if n := unsafe.Sizeof(keySlot{}); n > 64 {
		t.Errorf("keySlot is %d bytes, want at most 64", n)
	}
	var walk func(reflect.Type) bool
	walk = func(ty reflect.Type) bool {
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.String, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
			return false
		case reflect.Struct:
			for i := range ty.NumField() {
				if !walk(ty.Field(i).Type) {
					return false
				}
			}
		case reflect.Array:
			return walk(ty.Elem())
		}
		return true
	}
	if !walk(reflect.TypeFor[keySlot]()) {
		t.Error("keySlot holds a pointer")
	}
}

// TestOnlineColdKeysMatchOffline is a differential test of the cold key
// path (keys.go): simulator histories, correct and with each kind of
// injected fault, both workloads, verified online with a collection after
// every trace (so keys cool and are warmed again by later accesses all
// through the history) give the offline verdict, anomaly types and counts.
func TestOnlineColdKeysMatchOffline(t *testing.T) {
	cases := []struct{ level, fault, profile string }{
		{sim.SnapshotIsolation, "", "postgres:repeatable-read"},
		{sim.SerializableSI, "", "postgres:serializable"},
		{sim.SnapshotIsolation, sim.FaultStaleRead, "mariadb:snapshot-isolation"},
		{sim.ReadCommitted, sim.FaultStaleRead, "postgres:read-committed"},
		{sim.RepeatableReadMySQL, sim.FaultDirtyWrite, "mysql:repeatable-read"},
		{sim.SnapshotIsolation, sim.FaultLostUpdate, "postgres:repeatable-read"},
		{sim.SerializableSI, sim.FaultWriteSkew, "postgres:serializable"},
		{sim.ReadCommitted, sim.FaultAbortedRead, "postgres:read-committed"},
		{sim.Strict2PL, sim.FaultStaleRead, "mysql:serializable"},
		{sim.SnapshotIsolation, sim.FaultLostCommit, "postgres:repeatable-read"},
	}
	var cooled, warmed, invalid int64
	earlier := 0 // cold keys whose writer wrote them more than once
	for _, c := range cases {
		for _, wl := range []string{sim.RWRegister, sim.ListAppend} {
			for seed := uint64(1); seed <= 3; seed++ {
				cfg := sim.Config{Level: c.level, Workload: wl, Txns: 400, Clients: 6, Seed: seed, MaxOps: 5,
					Keys: 24, ReadRatio: 0.5, AbortRate: 0.1, LockingReads: 0.1, InfoRate: 0.05}
				if c.fault != "" {
					cfg.Faults = []sim.Fault{{Name: c.fault, Prob: 0.2}}
				}
				h, _, err := sim.Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				off := run(t, h, c.profile)
				p, _ := model.LookupProfile(c.profile)
				var res [2]*check.Result
				for i, noCool := range []bool{true, false} {
					on := NewOnline(p, OnlineOptions{Keys: h.Keys, Values: h.Values, Sessions: sessionsOf(h)})
					on.e.gcEvery, on.e.noCool = 1, noCool
					for i := range h.Txns {
						on.Add(&h.Txns[i])
					}
					st := on.Stats()
					earlier += len(on.e.earlier)
					cooled += st["cooled_keys"]
					warmed += st["warmed_keys"]
					res[i] = on.Flush()
				}
				r := res[1]
				// Cooling changes nothing, explanations included. (The
				// counts per type may differ from offline's, which
				// collects every gcEvery traces: collecting after every
				// trace already changes them without cold keys.)
				if !reflect.DeepEqual(res[0].Anomalies, r.Anomalies) || !maps.Equal(res[0].Counts, r.Counts) || res[0].Verdict != r.Verdict {
					t.Fatalf("%s/%s/%s seed %d: with cold keys %s %v, without %s %v", c.level, c.fault, wl, seed,
						r.Verdict, r.Counts, res[0].Verdict, res[0].Counts)
				}
				if r.Verdict != off.Verdict || !slices.Equal(r.AnomalyTypes, off.AnomalyTypes) {
					t.Fatalf("%s/%s/%s seed %d: online %s %v %v, offline %s %v %v", c.level, c.fault, wl, seed,
						r.Verdict, r.AnomalyTypes, r.Counts, off.Verdict, off.AnomalyTypes, off.Counts)
				}
				if r.Verdict == check.Invalid {
					invalid++
				}
			}
		}
	}
	t.Logf("keys cooled %d times, warmed %d times; %d cold keys with earlier values; %d invalid histories", cooled, warmed, earlier, invalid)
	if cooled == 0 || warmed == 0 || invalid == 0 || earlier == 0 {
		t.Fatalf("the cold path was not exercised: cooled %d, warmed %d, with earlier values %d, invalid %d", cooled, warmed, earlier, invalid)
	}
}

// TestSpillRoundTrip: a transaction record read back from the spill log
// is the record that was written (every field explanations use: lists,
// empty and absent ones, predicate reads with and without version sets,
// extreme timestamps).
func TestSpillRoundTrip(t *testing.T) {
	t0 := history.Txn{Index: 7, Session: 2, Seq: 3, Status: history.Committed, HasTime: true, Invoke: 100, Complete: 90, ID: "c2-3",
		Ops: []history.Op{
			{Kind: history.Write, Key: 1, Value: 5},
			{Kind: history.Read, Key: 1},
			{Kind: history.Read, Key: 2},
			{Kind: history.Read, Key: 3, ListUnknown: true, Value: history.NoValue},
			{Kind: history.PredRead},
			{Kind: history.PredRead},
			{Kind: history.Append, Key: 2, Value: 1 << 30},
		}}
	// in the order decodeTxn sets them: per op its time, list, predicate
	t0.SetOpTime(0, 101, 102)
	t0.SetOpTime(1, -1<<63, 1<<63-1)
	t0.SetList(&t0.Ops[1], []int32{1, -2, 3})
	t0.SetList(&t0.Ops[2], []int32{})
	t0.SetList(&t0.Ops[3], nil)
	t0.SetOpTime(4, 0, 0)
	t0.SetPred(&t0.Ops[4], history.Predicate{Table: "t", Where: "k > 3",
		Result: []history.Row{{Key: 4, Value: 9}}, VersionSet: []history.Row{}, HasVersionSet: true})
	t0.SetPred(&t0.Ops[5], history.Predicate{Table: "", Where: "x"})
	txns := []history.Txn{t0, {Index: 0, Session: -1, Status: history.Unknown, Ops: []history.Op{}}}
	var s spillLog
	defer s.close()
	var offs []int64
	for i := range txns {
		off, ok := s.put(&txns[i], uint32(i))
		if !ok {
			t.Fatalf("put: %v", s.err)
		}
		offs = append(offs, off)
	}
	for i := range txns {
		got, ep, err := s.get(offs[i])
		if err != nil {
			t.Fatal(err)
		}
		if ep != uint32(i) {
			t.Errorf("record %d: epoch %d", i, ep)
		}
		if want := &txns[i]; !reflect.DeepEqual(got, want) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	if _, _, err := s.get(s.off + 5); err == nil {
		t.Error("reading a bad offset did not fail")
	}
	if _, err := decodeTxn([]byte{0x80}); err == nil {
		t.Error("decoding a truncated record did not fail")
	}
}

// TestOnlineForgetsKeysBeyondMaxKeys: with a key bound, the state of old
// settled keys is discarded in whole chunks, and a later read of such a
// key is not checked: the verdict is unknown with the reason (whatever
// the read returned: the evidence to judge it was thrown away), never
// valid. Reads of keys still retained are checked as before: a stale one
// is a cr violation, and a stream that never reads a forgotten key is
// valid.
func TestOnlineForgetsKeysBeyondMaxKeys(t *testing.T) {
	const n = 3 * keyChunk
	cases := []struct {
		name, read, want string // read: "key value"
	}{
		{"forgotten key, its last value", "k0 1", "unknown"},
		{"forgotten key, a value never written", "k0 77", "unknown"},
		{"retained key, its last value", fmt.Sprintf("k%d 1", n-1), "valid"},
		{"retained key, a value never written", fmt.Sprintf("k%d 77", n-1), "invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var specs []spec
			at := int64(0)
			for i := 0; i < n; i++ {
				specs = append(specs, tx(1, at, at+10, fmt.Sprintf("w k%d 1 %d %d", i, at+2, at+3)))
				at += 20
			}
			specs = append(specs, tx(1, at+1000, at+1010, fmt.Sprintf("r %s %d %d", c.read, at+1002, at+1003)))
			h := build(t, specs...)
			p, _ := model.LookupProfile("postgres:repeatable-read")
			on := NewOnline(p, OnlineOptions{Keys: h.Keys, Values: h.Values, Window: true, MaxKeys: keyChunk})
			for i := 0; i < n; i++ {
				on.Add(&h.Txns[i])
			}
			on.Advance(at + 500)
			on.Add(&h.Txns[n])
			st := on.Stats()
			if st["forgotten_keys"] < keyChunk {
				t.Fatalf("forgot %d keys, want at least a chunk of %d", st["forgotten_keys"], keyChunk)
			}
			if live := on.e.liveChunks; live > 2 {
				t.Errorf("%d chunks of slots live, want the bound (1) plus the one being written", live)
			}
			r := on.Flush()
			if r.Verdict.String() != c.want {
				t.Fatalf("verdict %s %v (%s), want %s", r.Verdict, r.AnomalyTypes, r.Reason, c.want)
			}
			if c.want == "unknown" && (!strings.Contains(r.Reason, "not checked") || r.Stats["forgotten_reads"] != int64(1)) {
				t.Errorf("reason %q, forgotten reads %v", r.Reason, r.Stats["forgotten_reads"])
			}
			if c.want == "invalid" && !has(r, model.CR) {
				t.Errorf("want cr, got %v", r.AnomalyTypes)
			}
		})
	}
}
