package report

import (
	"io"
	"strconv"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// bigInput: a 100k-transaction history and a result with 2,000 anomalies,
// each an 8-transaction cycle, as a checker with a high cap might return.
func bigInput() *Input {
	var specs []txnSpec
	for i := 0; i < 100_000; i++ {
		k := "k" + strconv.Itoa(i%1000)
		s := txnSpec{id: strconv.Itoa(i), session: "s" + strconv.Itoa(i%50), status: history.Committed,
			invoke: int64(i) * 10, done: int64(i)*10 + 25, ops: []opSpec{ap(k, int64(i)), rl(k, int64(i-1), int64(i))}}
		specs = append(specs, s)
	}
	h := buildHistory("jsonl", specs)
	r := &check.Result{Checker: "elle", Model: "serializable", Verdict: check.Invalid, AnomalyTypes: []string{"G2-item"}}
	for a := 0; a < 2000; a++ {
		an := check.Anomaly{Type: "G2-item", Explanation: "a cycle of eight transactions through keys k0..k7, ending in a contradiction"}
		for j := 0; j < 8; j++ {
			from, to := int32(a*40+j), int32(a*40+(j+1)%8)
			an.Txns = append(an.Txns, from)
			an.Cycle = append(an.Cycle, check.Step{From: from, To: to, Rel: []string{"ww", "wr", "rw"}[j%3], Key: "k" + strconv.Itoa(j), Why: "because"})
		}
		r.Anomalies = append(r.Anomalies, an)
	}
	return &Input{File: "big.jsonl", History: h, Results: []*check.Result{r}}
}

func BenchmarkWriteJSONBig(b *testing.B) {
	in := bigInput()
	b.ResetTimer()
	for b.Loop() {
		if err := WriteJSON(io.Discard, in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteTextBig(b *testing.B) {
	in := bigInput()
	b.ResetTimer()
	for b.Loop() {
		if err := WriteText(io.Discard, in, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteHTMLBig(b *testing.B) {
	in := bigInput()
	dir := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		if _, err := WriteHTML(dir, []*Input{in}); err != nil {
			b.Fatal(err)
		}
	}
}
