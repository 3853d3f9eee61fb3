package report

import (
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// Hand-built fixtures: small histories and the results a checker would
// return for them, so report tests do not depend on any checker.

type txnSpec struct {
	id      string
	session string
	status  history.Status
	invoke  int64 // 0 = no client interval
	done    int64
	start   int64 // 0 = no DB timestamps
	commit  int64
	ops     []opSpec
}

type opSpec struct {
	kind history.Kind
	key  string
	val  int64   // for w / append / register read (-1 = nil)
	list []int64 // for list reads
}

func ap(k string, v int64) opSpec { return opSpec{kind: history.Append, key: k, val: v} }
func rl(k string, l ...int64) opSpec {
	return opSpec{kind: history.Read, key: k, list: append([]int64{}, l...)}
}
func wr(k string, v int64) opSpec { return opSpec{kind: history.Write, key: k, val: v} }
func rr(k string, v int64) opSpec { return opSpec{kind: history.Read, key: k, val: v} }
func txn(id, sess string, ops ...opSpec) txnSpec {
	return txnSpec{id: id, session: sess, status: history.Committed, ops: ops}
}

func buildHistory(format string, specs []txnSpec) *history.History {
	h := history.New()
	h.Header.Format = format
	seq := map[string]int32{}
	for _, s := range specs {
		t := history.Txn{ID: s.id, Status: s.status, Session: -1}
		if s.session != "" {
			t.Session = h.Sessions.Str(s.session)
			t.Seq = seq[s.session]
			seq[s.session]++
			h.Evidence.Sessions = true
		}
		if s.invoke != 0 || s.done != 0 {
			t.HasTime, t.Invoke, t.Complete = true, s.invoke, s.done
			h.Evidence.ClientTime = true
		}
		if s.start != 0 {
			t.StartTS = history.Timestamp{P: s.start, Set: true}
			h.Evidence.Timestamps = true
		}
		if s.commit != 0 {
			t.CommitTS = history.Timestamp{P: s.commit, Set: true}
			h.Evidence.Timestamps = true
		}
		for _, o := range s.ops {
			op := history.Op{Kind: o.kind, Key: h.Keys.Str(o.key), Value: history.NoValue}
			switch {
			case o.list != nil:
				off := len(t.Lists)
				for _, v := range o.list {
					t.Lists = append(t.Lists, h.Values.Int(v))
				}
				op.SetListSpan(off, len(o.list))
			case o.val >= 0:
				op.Value = h.Values.Int(o.val)
			}
			t.Ops = append(t.Ops, op)
		}
		h.Add(t)
	}
	return h
}

// invalidInput: a list-append history with a G1c cycle (Adya 1999 §4.4.2:
// a cycle of ww/wr edges), a G-single (Adya §4.4.3: exactly one rw edge), a
// G1a aborted read (Adya §4.4.1, no cycle), per-type truncation, a second
// checker's result, and a checker that did not apply.
func invalidInput() *Input {
	specs := []txnSpec{
		txn("c1-0", "c1", ap("x", 1), rl("y", 1)),
		txn("c2-0", "c2", ap("y", 1), rl("x", 1)),
		txn("c3-0", "c3", rl("x", 1), ap("y", 2)),
		txn("c1-1", "c1", rl("y", 1, 2), ap("x", 2)),
		{id: "c4-0", session: "c4", status: history.Aborted, ops: []opSpec{ap("z", 9)}},
		txn("c2-1", "c2", rl("z", 9)),
	}
	times := [][2]int64{{100, 400}, {150, 350}, {420, 600}, {500, 700}, {80, 120}, {610, 800}}
	for i := range specs {
		specs[i].invoke, specs[i].done = times[i][0], times[i][1]
	}
	h := buildHistory("jsonl", specs)
	h.Header.DB, h.Header.Level, h.Header.Workload = "sqlite", "serializable", "list-append"
	h.Ignore("nemesis op", 4)
	h.Ignore("invocation without completion", 1)
	h.Notes = []string{"2 unknown-status reads were normalised to []"}
	primary := &check.Result{
		Checker: "elle", Model: "serializable", Verdict: check.Invalid,
		AnomalyTypes: []string{"G-single-item", "G1a", "G1c"},
		Not:          []string{"read-committed"},
		AlsoNot:      []string{"serializable", "snapshot-isolation", "strict-serializable"},
		Truncated:    map[string]int{"G1c": 3},
		Stats:        map[string]any{"edges": 7, "sccs": 1},
		Anomalies: []check.Anomaly{
			{
				Type: "G1c", Txns: []int32{0, 1},
				Cycle: []check.Step{
					{From: 0, To: 1, Rel: "wr", Key: "x", Why: "T1 (c2-0) read x = [1], which includes T0 (c1-0)'s append of 1, so T0 < T1."},
					{From: 1, To: 0, Rel: "wr", Key: "y", Why: "T0 (c1-0) read y = [1], which includes T1 (c2-0)'s append of 1, so T1 < T0."},
				},
				Explanation: "Let T0 = (c1-0) and T1 = (c2-0). Then:\n  - T0 < T1, because T1 read x = [1], which includes T0's append of 1.\n  - T1 < T0, because T0 read y = [1], which includes T1's append of 1.\nHowever, T0 < T1 < T0: a cycle of write-read dependencies (G1c, Adya §4.4.2).",
			},
			{
				Type: "G-single-item", Txns: []int32{2, 3, 1},
				Cycle: []check.Step{
					{From: 2, To: 3, Rel: "ww", Key: "y", Why: "T3 (c1-1) read y = [1 2]: T2 (c3-0)'s append of 2 directly follows T1 (c2-0)'s append of 1, and T2 appended 2, so T2's version of y precedes nothing but is read by T3."},
					{From: 3, To: 1, Rel: "rw", Key: "x", Why: "T1 (c2-0) read x = [1], which does not include T3 (c1-1)'s later append of 2, so T1 < T3 as an anti-dependency."},
					{From: 1, To: 2, Rel: "process", Why: "T1 (c2-0) and T2 (c3-0) ... process order is used here only for the test."},
				},
				Explanation: "A cycle with exactly one anti-dependency edge (G-single, Adya §4.4.3): T2 -ww y-> T3 -rw x-> T1 -process-> T2.",
			},
			{
				Type: "G1a", Txns: []int32{4, 5}, Key: "z",
				Cycle:       []check.Step{{From: 4, To: 5, Rel: "wr", Key: "z", Why: "T5 (c2-1) read z = [9], written only by T4 (c4-0), which aborted."}},
				Explanation: "Aborted read (G1a, Adya §4.4.1): T5 (c2-1) read z = [9], but the only append of 9 to z was by T4 (c4-0), which aborted.",
			},
		},
	}
	second := &check.Result{
		Checker: "weak", Model: "read-committed", Verdict: check.Unknown,
		Reason:       "search budget of 1000 steps exhausted before every cycle was examined",
		AnomalyTypes: []string{},
		Warnings:     []string{"session order not used: sessions interleave"},
	}
	return &Input{
		File: "testdata/example.jsonl", History: h,
		Results:       []*check.Result{primary, second},
		NotApplicable: map[string]string{"chronos": "history has no database timestamps"},
		Elapsed:       1234 * time.Millisecond,
	}
}

// validInput: a register history with DB timestamps that a checker accepted.
func validInput() *Input {
	specs := []txnSpec{
		{id: "1", session: "a", status: history.Committed, start: 10, commit: 20, ops: []opSpec{wr("k", 1)}},
		{id: "2", session: "b", status: history.Committed, start: 25, commit: 30, ops: []opSpec{rr("k", 1), wr("k", 2)}},
		{id: "3", session: "a", status: history.Unknown, start: 31, ops: []opSpec{rr("k", -1)}},
	}
	h := buildHistory("chronos", specs)
	return &Input{
		File: "-", History: h,
		Results: []*check.Result{{Checker: "chronos", Model: "snapshot-isolation", Verdict: check.Valid, Stats: map[string]any{"txns_checked": 3}}},
		Elapsed: 2 * time.Millisecond,
	}
}

// brokenInput: decoding failed; there is no history and no result.
func brokenInput() *Input {
	return &Input{File: "bad.edn", Error: "bad.edn:3: :value: expected a vector, got \"x\""}
}

// hostileInput: keys, ids and explanations containing markup and terminal
// escapes, and a cycle step naming a transaction outside the history.
func hostileInput() *Input {
	evil := `<script>alert("k")</script>`
	specs := []txnSpec{
		txn(`</svg><img src=x onerror=alert(1)>`, "s\x1b[31m", wr(evil, 1), rr("a&b", 2)),
		txn("t2", "s2", wr("a&b", 2), rr(evil, 1)),
	}
	specs[0].invoke, specs[0].done = 1, 5
	specs[1].invoke, specs[1].done = 2, 6
	h := buildHistory("jsonl", specs)
	r := &check.Result{
		Checker: "elle", Model: "serializable", Verdict: check.Invalid,
		AnomalyTypes: []string{"G2-item"},
		Anomalies: []check.Anomaly{{
			Type: "G2-item", Txns: []int32{0, 1, 7},
			Cycle: []check.Step{
				{From: 0, To: 1, Rel: "rw", Key: evil, Why: "rw on " + evil + " \x1b[2J"},
				{From: 1, To: 0, Rel: "rw", Key: "a&b", Why: "rw on a&b"},
				{From: 1, To: 7, Rel: "ts", Key: "", Why: "points outside the history"},
			},
			Explanation: "cycle through " + evil + " and ]]> and \x1b[2J",
		}},
	}
	return &Input{File: evil + ".jsonl", History: h, Results: []*check.Result{r}}
}

func allInputs() map[string]*Input {
	return map[string]*Input{
		"invalid": invalidInput(),
		"valid":   validInput(),
		"broken":  brokenInput(),
		"hostile": hostileInput(),
	}
}
