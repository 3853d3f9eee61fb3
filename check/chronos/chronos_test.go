package chronos

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

var update = flag.Bool("update", false, "rewrite golden files")

// spec is a compact transaction: session, sts, cts, status and ops such as
// "w x 1", "r x 1", "r x nil", "a l 3", "r l [1 2]".
type spec struct {
	sess     string
	sts, cts int64
	status   history.Status
	ops      []string
}

func T(sess string, sts, cts int64, ops ...string) spec {
	return spec{sess, sts, cts, history.Committed, ops}
}

func build(specs ...spec) *history.History {
	h := history.New()
	seq := map[int32]int32{}
	for i, s := range specs {
		t := history.Txn{Session: h.Sessions.Str(s.sess), Status: s.status, ID: strconv.Itoa(i),
			StartTS: history.Timestamp{P: s.sts, Set: true}, CommitTS: history.Timestamp{P: s.cts, Set: true}}
		if s.status != history.Committed {
			t.StartTS, t.CommitTS = history.Timestamp{}, history.Timestamp{}
		}
		t.Seq = seq[t.Session]
		seq[t.Session]++
		for _, o := range s.ops {
			f := strings.Fields(o)
			k, _ := history.ParseKind(f[0])
			op := history.Op{Kind: k, Key: h.Keys.Str(f[1]), Value: history.NoValue}
			v := strings.Join(f[2:], " ")
			switch {
			case strings.HasPrefix(v, "["):
				var l []int32
				for _, e := range strings.Fields(strings.Trim(v, "[]")) {
					n, _ := strconv.ParseInt(e, 10, 64)
					l = append(l, h.Values.Int(n))
				}
				t.SetList(&op, l)
			case v == "nil":
			default:
				n, _ := strconv.ParseInt(v, 10, 64)
				op.Value = h.Values.Int(n)
			}
			t.Ops = append(t.Ops, op)
		}
		h.Add(t)
	}
	h.Evidence.Timestamps, h.Evidence.Sessions = true, true
	return h
}

// co marks h as coming from a database that serializes in commit-timestamp
// order (CommitOrderSerializes).
func co(h *history.History) *history.History {
	h.Header.Extra = map[string]string{"commit-order-serializes": "true"}
	return h
}

func run1(t *testing.T, h *history.History, model string, params map[string]string) *check.Result {
	t.Helper()
	r, err := Checker{}.Check(context.Background(), h, check.Options{Model: model, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAxioms shows one violation of each axiom of Chronos' SI definition
// (ICDE 2024: Session, Int, Ext, NoConflict), each Ext class, and the
// serializability / strict-serializability replays. Explanations are golden.
func TestAxioms(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model string
		h     *history.History
		want  []string // anomaly types, nil = valid
	}{
		{"valid-si", ModelSI, build(T("a", 1, 2, "w x 1"), T("b", 3, 4, "r x 1", "w x 2"), T("a", 5, 6, "r x 2")), nil},
		{"session", ModelSessionSI, build(T("a", 1, 5, "w x 1"), T("a", 3, 6, "r y nil")), []string{TypeSession}},
		// Plain SI lets a transaction read a snapshot older than its session
		// predecessor's commit (generalized SI; Elle's snapshot-isolation).
		{"si-allows-session-lag", ModelSI, build(T("a", 1, 5, "w x 1"), T("a", 3, 6, "r x nil")), nil},
		{"internal-kv", ModelSI, build(T("a", 1, 2, "w x 1", "r x 2")), []string{TypeInternal}},
		{"internal-read-read", ModelSI, build(T("a", 1, 2, "w x 1"), T("b", 3, 4, "r x 1", "r x 3")), []string{TypeInternal}},
		{"internal-list", ModelSI, build(T("a", 1, 2, "a l 1"), T("b", 3, 4, "a l 2", "r l [1 3]")), []string{TypeInternal}},
		// Fig. 15 of the Chronos paper: sequential by timestamps, T3 reads an
		// overwritten value. Black-box SI checkers accept it (T3 could be
		// ordered between T1 and T2), but the timestamps say otherwise.
		{"ext-before-fig15", ModelSI, build(T("a", 1, 2, "w x 1"), T("b", 3, 4, "w x 2"), T("c", 5, 6, "r x 1")), []string{TypeExt}},
		{"ext-after", ModelSI, build(T("a", 1, 2, "r x 1"), T("b", 3, 4, "w x 1")), []string{TypeExt}},
		{"ext-never", ModelSI, build(T("a", 1, 2, "w x 1"), T("b", 3, 4, "r x 7")), []string{TypeExt}},
		{"ext-aborted", ModelSI, build(spec{"a", 0, 0, history.Aborted, []string{"w x 9"}}, T("b", 3, 4, "r x 9")), []string{TypeExt}},
		{"ext-initial-overwritten", ModelSI, build(T("a", 1, 2, "w x 1"), T("b", 3, 4, "r x nil")), []string{TypeExt}},
		{"ext-list-stale", ModelSI, build(T("a", 1, 2, "a l 1"), T("b", 3, 4, "a l 2"), T("c", 5, 6, "r l [1]")), []string{TypeExt}},
		{"ext-list-future", ModelSI, build(T("a", 1, 2, "a l 1"), T("b", 3, 6, "r l [1 2]"), T("c", 4, 5, "a l 2")), []string{TypeExt}},
		{"noconflict-lost-update", ModelSI, build(T("a", 1, 2, "w x 0"), T("b", 3, 6, "r x 0", "w x 1"), T("c", 4, 7, "r x 0", "w x 2")), []string{TypeNoConflict}},
		{"si-allows-write-skew", ModelSI, build(T("a", 1, 3, "r x nil", "w y 1"), T("b", 2, 4, "r y nil", "w x 1")), nil},
		{"ser-write-skew", ModelSER, co(build(T("a", 1, 3, "r x nil", "w y 1"), T("b", 2, 4, "r y nil", "w x 1"))), []string{TypeExt}},
		// Without commit-order evidence, reads of aborted or never-written
		// values still rule out serializability (Adya G1a; garbage).
		{"ser-aborted-read", ModelSER, build(spec{"a", 0, 0, history.Aborted, []string{"w x 9"}}, T("b", 3, 4, "r x 9")), []string{"G1a"}},
		{"ser-garbage", ModelSER, build(T("a", 1, 2, "w x 1"), T("b", 3, 4, "r x 7")), []string{"garbage-versions"}},
		{"ser-list-aborted-read", ModelSER, build(spec{"a", 0, 0, history.Aborted, []string{"a l 9"}}, T("b", 3, 4, "r l [9]")), []string{"G1a"}},
		{"ser-valid", ModelSER, build(T("a", 1, 3, "w x 1"), T("b", 2, 4, "r x 1")), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run1(t, tc.h, tc.model, nil)
			if strings.Join(r.AnomalyTypes, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("anomaly types %v, want %v\n%v", r.AnomalyTypes, tc.want, r.Anomalies)
			}
			if (len(tc.want) == 0) != (r.Verdict == check.Valid) {
				t.Fatalf("verdict %v with types %v", r.Verdict, r.AnomalyTypes)
			}
			var b strings.Builder
			for _, a := range r.Anomalies {
				b.WriteString(a.Type + ": " + a.Explanation + "\n")
			}
			golden(t, filepath.Join("testdata", tc.name+".golden"), b.String())
			// GC must not change anything.
			r2 := run1(t, tc.h, tc.model, map[string]string{"gc": "false"})
			r3 := run1(t, tc.h, tc.model, map[string]string{"gc-every": "1"})
			for _, x := range []*check.Result{r2, r3} {
				j1, _ := json.Marshal(r.Anomalies)
				j2, _ := json.Marshal(x.Anomalies)
				if string(j1) != string(j2) {
					t.Errorf("gc changed anomalies:\n%s\n%s", j1, j2)
				}
			}
		})
	}
}

// TestUnknownOutcomeWriter: a read of a value written only by a transaction
// whose outcome is unknown and which has no timestamps cannot be judged:
// the verdict is unknown, not invalid.
func TestUnknownOutcomeWriter(t *testing.T) {
	h := build(spec{"a", 0, 0, history.Aborted, []string{"w x 9"}}, T("b", 3, 4, "r x 9"))
	h.Txns[0].Status = history.Unknown
	r := run1(t, h, ModelSI, nil)
	if r.Verdict != check.Unknown || r.Reason == "" || len(r.Anomalies) != 0 {
		t.Fatalf("got %v %q %v", r.Verdict, r.Reason, r.AnomalyTypes)
	}
}

func TestStrictSerializableRealtime(t *testing.T) {
	h := co(build(T("a", 5, 6, "w x 1"), T("b", 1, 2, "w y 1")))
	h.Txns[0].HasTime, h.Txns[0].Invoke, h.Txns[0].Complete = true, 10, 20
	h.Txns[1].HasTime, h.Txns[1].Invoke, h.Txns[1].Complete = true, 30, 40
	h.Evidence.ClientTime = true
	r := run1(t, h, ModelStrictSER, nil)
	if r.Verdict != check.Invalid || len(r.AnomalyTypes) != 1 || r.AnomalyTypes[0] != TypeRealtime {
		t.Fatalf("got %v", r)
	}
	golden(t, "testdata/realtime.golden", r.Anomalies[0].Explanation+"\n")
	if r := run1(t, h, ModelSER, nil); r.Verdict != check.Valid {
		t.Fatalf("serializable: %v", r)
	}
	h.Evidence.ClientTime = false
	for i := range h.Txns {
		h.Txns[i].HasTime = false
	}
	if r := run1(t, h, ModelStrictSER, nil); r.Verdict != check.Unknown {
		t.Fatalf("no client time: %v, want unknown", r)
	}
	// Without commit-order evidence a commit order against real time does
	// not prove a strict-serializability violation.
	h.Evidence.ClientTime = true
	for i := range h.Txns {
		h.Txns[i].HasTime = true
	}
	h.Header.Extra = nil
	if r := run1(t, h, ModelStrictSER, nil); r.Verdict != check.Unknown || len(r.Anomalies) != 0 || !strings.Contains(r.Reason, "commit-order-serializes") {
		t.Fatalf("no commit-order evidence: %v %q", r, r.Reason)
	}
}

func TestCapAndTruncated(t *testing.T) {
	var specs []spec
	specs = append(specs, T("w", 1, 2, "w x 1"))
	for i := 0; i < 20; i++ {
		specs = append(specs, T("r"+strconv.Itoa(i), int64(3+2*i), int64(4+2*i), "r x 5"))
	}
	r, err := Checker{}.Check(context.Background(), build(specs...), check.Options{Model: "si", MaxAnomalies: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Anomalies) != 3 || r.Truncated["ext"] != 17 {
		t.Fatalf("anomalies %d truncated %v", len(r.Anomalies), r.Truncated)
	}
}

func TestApplies(t *testing.T) {
	h := build(T("a", 1, 2, "w x 1"))
	for _, m := range []string{"", "si", "postgres:repeatable-read", "cockroachdb:serializable", "spanner:serializable"} {
		if r, why := (Checker{}).Applies(h, m); r != 90 {
			t.Errorf("%q: %d %s", m, r, why)
		}
	}
	// (strict) serializability: below graph inference (list-append 60,
	// rw-register 50) unless the commit order is known to serialize.
	for _, m := range []string{"serializable", "strict-serializable", "postgres:serializable"} {
		if r, why := (Checker{}).Applies(h, m); r != 40 {
			t.Errorf("%q: %d %s", m, r, why)
		}
		if r, why := (Checker{}).Applies(co(build(T("a", 1, 2, "w x 1"))), m); r != 90 {
			t.Errorf("%q with commit-order evidence: %d %s", m, r, why)
		}
	}
	if r, _ := (Checker{}).Applies(h, "read-committed"); r != 0 {
		t.Errorf("read-committed applies")
	}
	h.Evidence.Timestamps = false
	if r, _ := (Checker{}).Applies(h, "si"); r != 0 {
		t.Errorf("applies without timestamps")
	}
	h.Txns[0].CommitTS = history.Timestamp{}
	if r := run1(t, h, "si", nil); r.Verdict != check.Unknown || r.Reason == "" {
		t.Errorf("missing timestamps: %v %q", r.Verdict, r.Reason)
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs:\n got: %s\nwant: %s", path, got, want)
	}
}

// TestModels: weaker models are not judged (unknown, with a reason);
// strong-session-serializable adds the Session axiom to the commit-order
// replay; commit-order failures rule out serializability, not SI.
func TestModels(t *testing.T) {
	h := build(T("a", 1, 3, "r x nil", "w y 1"), T("b", 2, 4, "r y nil", "w x 1"))
	if r := run1(t, h, "read-committed", nil); r.Verdict != check.Unknown || r.Reason == "" {
		t.Fatalf("read-committed: %v %q", r.Verdict, r.Reason)
	}
	// Write skew fails the commit-order replay. Under SSI (PostgreSQL
	// serializable) the commit order need not be a serialization order, so
	// without evidence that it is, the failure proves nothing.
	r := run1(t, h, "serializable", nil)
	if r.Verdict != check.Unknown || len(r.Anomalies) != 0 || !strings.Contains(r.Reason, "--checker list-append") {
		t.Fatalf("serializable without commit-order evidence: %v %q", r.Verdict, r.Reason)
	}
	for _, ev := range []struct {
		model  string
		params map[string]string
		h      *history.History
	}{
		{"serializable", nil, co(build(T("a", 1, 3, "r x nil", "w y 1"), T("b", 2, 4, "r y nil", "w x 1")))},
		{"serializable", map[string]string{"commit-order-serializes": "true"}, h},
		{"cockroachdb:serializable", nil, h},
	} {
		r := run1(t, ev.h, ev.model, ev.params)
		if r.Verdict != check.Invalid || strings.Join(r.Not, ",") != "serializable" || strings.Join(r.AlsoNot, ",") != "strict-serializable,strong-session-serializable" {
			t.Fatalf("%s %v: %v not=%v also=%v", ev.model, ev.params, r.Verdict, r.Not, r.AlsoNot)
		}
	}
	if r := run1(t, co(h), "serializable", map[string]string{"commit-order-serializes": "false"}); r.Verdict != check.Unknown {
		t.Fatalf("parameter false must win: %v", r.Verdict)
	}
	// strong-session-serializable: the serialization (commit) order must
	// contain each session's order.
	hs := co(build(T("a", 1, 7, "w x 1"), T("a", 3, 6, "r y nil")))
	r = run1(t, hs, "strong-session-serializable", nil)
	if strings.Join(r.AnomalyTypes, ",") != "session" || strings.Join(r.Not, ",") != "strong-session-serializable" || strings.Join(r.AlsoNot, ",") != "strict-serializable" {
		t.Fatalf("strong-session-serializable: %v not=%v also=%v", r.AnomalyTypes, r.Not, r.AlsoNot)
	}
	if r := run1(t, hs, "serializable", nil); r.Verdict != check.Valid {
		t.Fatalf("serializable ignores sessions: %v", r)
	}
	// A session whose next transaction starts before its predecessor
	// commits but commits after it keeps the session order in commit order.
	if r := run1(t, co(build(T("a", 1, 5, "w x 1"), T("a", 3, 6, "r y nil"))), "strong-session-serializable", nil); r.Verdict != check.Valid {
		t.Fatalf("strong-session-serializable, sts overlap: %v", r)
	}
	// Definite anomalies keep their own boundary: an aborted read rules out
	// read-committed and everything above it, including snapshot isolation.
	r = run1(t, build(spec{"a", 0, 0, history.Aborted, []string{"w x 9"}}, T("b", 3, 4, "r x 9")), "serializable", nil)
	if r.Verdict != check.Invalid || strings.Join(r.Not, ",") != "read-committed" || !slices.Contains(r.AlsoNot, "snapshot-isolation") {
		t.Fatalf("aborted read: %v not=%v also=%v", r.Verdict, r.Not, r.AlsoNot)
	}
	// SI results keep model.RulesOut's boundary: ext rules out SI.
	r = run1(t, build(T("a", 1, 2, "w x 1"), T("b", 3, 4, "w x 2"), T("c", 5, 6, "r x 1")), "si", nil)
	if strings.Join(r.Not, ",") != "snapshot-isolation" || !slices.Contains(r.AlsoNot, "serializable") {
		t.Fatalf("si: not=%v also=%v", r.Not, r.AlsoNot)
	}
}

// TestUnknownOutcomeListWriter: a list read containing elements appended by
// an unknown-outcome transaction without timestamps (which may have
// committed) is undecided, not an Ext violation; the other elements must
// still follow Ext.
func TestUnknownOutcomeListWriter(t *testing.T) {
	unk := spec{"u", 0, 0, history.Unknown, []string{"a l 9"}}
	for _, tc := range []struct {
		name  string
		h     *history.History
		model string
		want  check.Verdict
	}{
		// u committed between a and c: c's read is explained.
		{"middle", build(T("a", 1, 2, "a l 1"), unk, T("b", 3, 4, "a l 2"), T("c", 5, 6, "r l [1 9 2]")), ModelSI, check.Unknown},
		{"middle-ser", co(build(T("a", 1, 2, "a l 1"), unk, T("b", 3, 4, "a l 2"), T("c", 5, 6, "r l [1 9 2]"))), ModelSER, check.Unknown},
		// unobserved: u may have aborted.
		{"unobserved", build(T("a", 1, 2, "a l 1"), unk, T("c", 5, 6, "r l [1]")), ModelSI, check.Valid},
		// stale without u's element: b's 2 is missing whatever u did.
		{"stale-rest", build(T("a", 1, 2, "a l 1"), unk, T("b", 3, 4, "a l 2"), T("c", 5, 6, "r l [1 9]")), ModelSI, check.Invalid},
		// reordered known elements.
		{"order-rest", build(T("a", 1, 2, "a l 1"), unk, T("b", 3, 4, "a l 2"), T("c", 5, 6, "r l [2 9 1]")), ModelSI, check.Invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run1(t, tc.h, tc.model, nil)
			if r.Verdict != tc.want {
				t.Fatalf("verdict %v, want %v: %v %q", r.Verdict, tc.want, r.Anomalies, r.Reason)
			}
			if tc.want == check.Invalid && !strings.Contains(r.Anomalies[0].Explanation, "left out") {
				t.Errorf("explanation does not mention the projection: %s", r.Anomalies[0].Explanation)
			}
		})
	}
}
