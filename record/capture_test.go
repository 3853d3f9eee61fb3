package record

import (
	"fmt"
	"slices"
	"testing"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// TestPostgresXIDCaptureMatchesLegacy is the differential test of
// PostgreSQL's evidence capture: the xid read from each transaction's first
// write (RETURNING pg_current_xact_id()) and the transaction snapshot read
// only where version sets use it, against the earlier capture (SELECT
// pg_current_xact_id(), pg_current_snapshot() with every BEGIN), both taken
// in the same run (Config.legacyEvidence). It protects:
//   - every transaction that wrote and did not abort has an xid, the same
//     one the earlier capture returned;
//   - the transaction snapshot, where captured, is the earlier capture's,
//     and is captured for every transaction where version sets use it;
//   - the version sets derived with the earlier capture's xids and
//     snapshots are the ones the run derived (same reads, same rows).
func TestPostgresXIDCaptureMatchesLegacy(t *testing.T) {
	u := pgURL()
	reachable(t, u)
	for _, tc := range []struct {
		workload string
		level    string
		sets     bool // version sets expected
	}{
		{"predicate", db.ReadCommitted, true},
		{"predicate", db.RepeatableRead, true},
		{"predicate", db.Serializable, true},
		{"tpcc", db.RepeatableRead, true},
		{"tpcc", db.ReadCommitted, false},
		{"list-append", db.ReadCommitted, false},
		{"rw-register", db.Serializable, false},
		{"blindw-rw+", db.RepeatableRead, false},
		{"smallbank", db.ReadCommitted, false},
	} {
		t.Run(tc.workload+"/"+tc.level, func(t *testing.T) {
			var checked bool
			cfg := Config{DB: u, Level: tc.level, Workload: tc.workload, Clients: 4, Txns: 300,
				WL:             workload.Config{Keys: 20, Ops: 4, ReadRatio: 0.5},
				legacyEvidence: true,
				afterFinish: func(r *recorder) {
					checked = true
					compareLegacyCapture(t, r, tc.sets)
				}}
			if tc.workload == "tpcc" {
				cfg.WL.Keys = 1
			}
			res := runRecorded(t, cfg)
			if !checked {
				t.Fatal("the run did not reach the comparison")
			}
			if tc.sets && res.Certificate.VersionSets == 0 {
				t.Fatalf("no version sets derived: %+v", res.Certificate)
			}
		})
	}
}

// compareLegacyCapture runs on the recorder's goroutine (Config.afterFinish):
// it reports with t.Errorf and returns, never t.Fatal.
func compareLegacyCapture(t *testing.T, r *recorder, wantSets bool) {
	t.Helper()
	h := r.h
	if len(r.legacyEv) != len(h.Txns) {
		t.Errorf("legacy evidence for %d of %d transactions", len(r.legacyEv), len(h.Txns))
		return
	}
	writers := 0
	for i := range h.Txns {
		tx := &h.Txns[i]
		ev := r.legacyEv[int32(i)]
		if ev.LegacyXID == 0 {
			t.Errorf("%s: the earlier capture returned no xid", h.TxnName(int32(i)))
			return
		}
		if ev.XID != 0 && ev.XID != ev.LegacyXID {
			t.Errorf("%s: xid %d from its first write, %d from the earlier capture", h.TxnName(int32(i)), ev.XID, ev.LegacyXID)
		}
		if tx.Status != history.Aborted && slices.ContainsFunc(tx.Ops, func(o history.Op) bool { return o.Kind.IsWrite() || o.Kind == history.Append }) {
			writers++
			if ev.XID == 0 {
				t.Errorf("%s (%v) wrote but has no xid", h.TxnName(int32(i)), tx.Status)
			}
		}
		if r.txnSnap && ev.Snapshot == "" {
			t.Errorf("%s: no transaction snapshot, but version sets use it", h.TxnName(int32(i)))
		}
		if !r.txnSnap && ev.Snapshot != "" {
			t.Errorf("%s: a transaction snapshot nothing uses", h.TxnName(int32(i)))
		}
		if ev.Snapshot != "" && ev.Snapshot != ev.LegacySnapshot {
			t.Errorf("%s: snapshot %s, the earlier capture's %s", h.TxnName(int32(i)), ev.Snapshot, ev.LegacySnapshot)
		}
	}
	if writers == 0 {
		t.Error("no writers: nothing compared")
		return
	}
	type opRef struct{ txn, op int32 }
	// sets takes the version sets derived for snaps' reads off h.
	sets := func(snaps []predSnap) map[opRef][]history.Row {
		m := map[opRef][]history.Row{}
		for _, ps := range snaps {
			tx := &h.Txns[ps.txn]
			if p := tx.PredOf(&tx.Ops[ps.op]); p != nil && p.HasVersionSet {
				m[opRef{ps.txn, ps.op}] = slices.Clone(p.VersionSet)
				p.VersionSet, p.HasVersionSet = nil, false
			}
		}
		return m
	}
	got := sets(r.snaps)
	if wantSets && len(got) == 0 {
		t.Error("no version sets to compare")
		return
	}
	// Derive again from the earlier capture's evidence.
	xids, snaps := r.xids, r.snaps
	r.xids, r.snaps, r.shadow = r.legacy.xids, r.legacy.snaps, shadowStats{}
	_, _, err := r.versionSetsFromSnapshots(h)
	r.xids, r.snaps = xids, snaps
	if err != nil {
		t.Errorf("version sets from the earlier capture: %v", err)
		return
	}
	old := sets(r.legacy.snaps)
	if len(old) != len(got) {
		t.Errorf("%d version sets from this capture, %d from the earlier one", len(got), len(old))
	}
	for k, g := range got {
		if o, ok := old[k]; !ok || fmt.Sprint(g) != fmt.Sprint(o) {
			t.Errorf("%s op %d: version set %v from this capture, %v (%v) from the earlier one", h.TxnName(k.txn), k.op, g, o, ok)
		}
	}
	for k, o := range old {
		if _, ok := got[k]; !ok {
			t.Errorf("%s op %d: no version set from this capture, %v from the earlier one", h.TxnName(k.txn), k.op, o)
		}
	}
	// Put the run's own sets back.
	for k, g := range got {
		tx := &h.Txns[k.txn]
		p := tx.PredOf(&tx.Ops[k.op])
		p.VersionSet, p.HasVersionSet = g, true
	}
	n := len(got)
	t.Logf("%d writers' xids and %d predicate reads' version sets agree with the earlier capture", writers, n)
}
