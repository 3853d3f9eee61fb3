package leopard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/model"
)

// lateWriterHistory: T1 (session 1) reads x = 1, written by T0 of session
// 2, whose transaction began and committed before T1's read but reaches
// the verifier after T1 (its session is first seen late). The history is
// valid.
func lateWriterHistory(t *testing.T) (*Online, *Online, func() *check.Result) {
	h := build(t,
		tx(1, 20, 30, "r x 1 20 21", "r y nil 22 23"),
		tx(2, 0, 10, "w x 1 5 6"),
	)
	p, _ := model.LookupProfile("postgres:repeatable-read")
	undeclared := NewOnline(p, OnlineOptions{Keys: h.Keys, Values: h.Values})
	declared := NewOnline(p, OnlineOptions{Keys: h.Keys, Values: h.Values, Sessions: sessionsOf(h)})
	for _, on := range []*Online{undeclared, declared} {
		for i := range h.Txns {
			on.Add(&h.Txns[i])
		}
	}
	return undeclared, declared, func() *check.Result { return run(t, h, "postgres:repeatable-read") }
}

// TestOnlineLateSessionNoFalseCR: a writer from a session first seen after
// its reader was verified never yields a cr the offline check does not
// report: undeclared, the verdict is unknown with the reason; with the
// sessions declared up front (or offline, whatever the file order), valid.
func TestOnlineLateSessionNoFalseCR(t *testing.T) {
	undeclared, declared, offline := lateWriterHistory(t)
	if r := offline(); r.Verdict != check.Valid {
		t.Fatalf("offline: want valid, got %s %v", r.Verdict, r.Anomalies)
	}
	r := undeclared.Flush()
	if r.Verdict != check.Unknown || r.Stats["late_txns"] != int64(1) || r.Reason == "" {
		t.Fatalf("undeclared session: want unknown with late_txns 1, got %s %v %q", r.Verdict, r.Stats["late_txns"], r.Reason)
	}
	if r := declared.Flush(); r.Verdict != check.Valid {
		t.Fatalf("declared sessions: want valid, got %s %v", r.Verdict, r.Anomalies)
	}
}

// TestOnlineWindowLateSession: in window mode (txray watch) the sessions
// do not move the watermark, Advance does: a session first seen late but
// within the caller's bound is verified exactly; one behind an Advance
// bound is late (unknown, never a false cr).
func TestOnlineWindowLateSession(t *testing.T) {
	h := build(t,
		tx(1, 20, 30, "r x 1 20 21", "r y nil 22 23"),
		tx(2, 0, 10, "w x 1 5 6"),
	)
	p, _ := model.LookupProfile("postgres:repeatable-read")
	on := NewOnline(p, OnlineOptions{Keys: h.Keys, Values: h.Values, Window: true})
	on.Add(&h.Txns[0])
	on.Add(&h.Txns[1])
	if r := on.Flush(); r.Verdict != check.Valid {
		t.Fatalf("within the window: want valid, got %s %v %s", r.Verdict, r.Anomalies, r.Reason)
	}
	on = NewOnline(p, OnlineOptions{Keys: h.Keys, Values: h.Values, Window: true})
	on.Add(&h.Txns[0])
	on.Advance(25)
	on.Add(&h.Txns[1])
	if r := on.Flush(); r.Verdict != check.Unknown || r.Stats["late_txns"] != int64(1) {
		t.Fatalf("behind the bound: want unknown (late), got %s %v", r.Verdict, r.Stats["late_txns"])
	}
}

// TestSSIOpenStructureWarned: a committed dangerous structure that closes
// no cycle is not an anomaly (the history is serializable), but it is
// counted and warned about as a lapse of PostgreSQL's certifier rule.
func TestSSIOpenStructureWarned(t *testing.T) {
	h := build(t,
		tx(3, 0, 15, "w z 1 12 13"),
		tx(2, 0, 30, "r z nil 10 11", "w y 1 20 21"),
		tx(1, 0, 31, "r y nil 10 11", "w q 1 22 23"),
	)
	r := run(t, h, "postgres:serializable")
	if r.Verdict != check.Valid || r.Stats["ssi_open_structures"] != int64(1) || len(r.Warnings) == 0 {
		t.Fatalf("got %s %v %v", r.Verdict, r.Stats["ssi_open_structures"], r.Warnings)
	}
}

// TestOnlineQuietKeyKeepsOnlyItsLastVersion: once a key's older versions
// are collected and nothing reads it, its state holds exactly its last
// version, with no spare capacity (a stream that keeps creating keys keeps
// one such state per key ever written, so the capacity a key had while
// busy was most of the online verifier's memory), and the verdict is
// unchanged: a later read of the old value is still a cr violation.
func TestOnlineQuietKeyKeepsOnlyItsLastVersion(t *testing.T) {
	var specs []spec
	at := int64(0)
	for i := 1; i <= 6; i++ {
		specs = append(specs, tx(1, at, at+10, fmt.Sprintf("w x %d %d %d", i, at+2, at+3)))
		at += 20
	}
	// Traffic on another key, enough for a collection pass (gcEvery traces).
	for i := 0; i < gcEvery/3+10; i++ {
		specs = append(specs, tx(2, at, at+10, fmt.Sprintf("w f %d %d %d", 100+i, at+2, at+3)))
		at += 20
	}
	specs = append(specs, tx(1, at+1000, at+1010, fmt.Sprintf("r x 5 %d %d", at+1002, at+1003)))
	h := build(t, specs...)
	p, _ := model.LookupProfile("postgres:repeatable-read")
	on := NewOnline(p, OnlineOptions{Keys: h.Keys, Values: h.Values, Window: true})
	last := len(h.Txns) - 1
	for i := 0; i < last; i++ {
		on.Add(&h.Txns[i])
	}
	on.Advance(at + 500)
	x, _ := h.Keys.LookupStr("x")
	if n, cold := on.e.keyVersions(x); n != 1 || !cold || on.e.slot(x).val != h.Txns[5].Ops[0].Value {
		t.Fatalf("quiet key keeps %d versions (cold %v), want its last one, cold", n, cold)
	}
	on.Add(&h.Txns[last])
	r := on.Flush()
	if off := run(t, h, "postgres:repeatable-read"); r.Verdict != check.Invalid || !has(r, model.CR) || off.Verdict != r.Verdict {
		t.Fatalf("online %s %v, offline %s %v: want cr on both", r.Verdict, r.AnomalyTypes, off.Verdict, off.AnomalyTypes)
	}
	// The explanation names the cold version's writer, read back from the
	// spill log.
	if ex := r.Anomalies[0].Explanation; !strings.Contains(ex, "6 by T5") {
		t.Errorf("explanation does not name the last version's writer: %s", ex)
	}
}
