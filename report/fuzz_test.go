package report

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// FuzzReport builds results from arbitrary bytes — transaction indices in
// and out of range, self-loops, parallel edges, empty and hostile strings,
// timestamps in any order — and renders them every way. Reports must never
// panic, JSON must stay valid, and text must stay free of raw escapes.
func FuzzReport(f *testing.F) {
	f.Add([]byte{0, 1, 1, 0, 2, 2}, "x", "why <b>", int64(5))
	f.Add([]byte{3, 3, 0, 9, 200, 1, 255, 255}, "\x1b[31m", "", int64(-7))
	f.Add([]byte{}, "", "", int64(0))
	f.Fuzz(func(t *testing.T, steps []byte, key, why string, ts int64) {
		specs := []txnSpec{
			txn("a", "s1", ap(key, 1), rl(key, 1)),
			{id: why, session: key, status: history.Unknown, invoke: ts, done: -ts, ops: []opSpec{wr(key, 2)}},
			{id: "c", status: history.Aborted, start: ts, commit: ts / 2, ops: []opSpec{rr("k", -1)}},
		}
		h := buildHistory("fuzz", specs)
		a := check.Anomaly{Type: key, Explanation: why, Key: key, Ops: map[int32]string{int32(len(steps)) - 3: why}}
		for i := 0; i+1 < len(steps) && len(a.Cycle) < 40; i += 2 {
			from, to := int32(int8(steps[i]))%5, int32(int8(steps[i+1]))%5
			rel := []string{"ww", "wr", "rw", "process", "realtime", key}[int(steps[i]^steps[i+1])%6]
			a.Cycle = append(a.Cycle, check.Step{From: from, To: to, Rel: rel, Key: key, Why: why})
			a.Txns = append(a.Txns, from)
		}
		if len(steps) >= 4 {
			a.Txns = append(a.Txns, int32(binary.LittleEndian.Uint32(steps)))
		}
		r := &check.Result{Checker: key, Model: why, Verdict: check.Verdict(len(steps) % 3), Anomalies: []check.Anomaly{a, {}},
			Truncated: map[string]int{key: len(steps)}, Stats: map[string]any{key: ts}}
		for _, in := range []*Input{
			{File: key, History: h, Results: []*check.Result{r, nil}},
			{File: why, Results: []*check.Result{r}},
			{File: why, History: &history.History{Txns: h.Txns}, Results: []*check.Result{r}},
		} {
			var sb strings.Builder
			if err := WriteText(&sb, in, true); err != nil {
				t.Fatal(err)
			}
			if strings.ContainsRune(sb.String(), 0x1b) {
				t.Fatal("raw ESC in text output")
			}
			sb.Reset()
			if err := WriteJSON(&sb, in); err != nil {
				t.Fatal(err)
			}
			if !json.Valid([]byte(sb.String())) {
				t.Fatalf("invalid JSON: %s", sb.String())
			}
			if err := pageTemplate.Execute(io.Discard, buildPage([]*Input{in})); err != nil {
				t.Fatal(err)
			}
		}
	})
}
