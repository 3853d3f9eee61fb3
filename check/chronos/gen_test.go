package chronos

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/chronos/chronostest"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/timekiller"
)

// TestGeneratedSI: histories from a correct SI executor satisfy SI, and
// every injected fault is found, with identical results with and without GC.
func TestGeneratedSI(t *testing.T) {
	for _, list := range []bool{false, true} {
		h := chronostest.Generate(chronostest.Config{Txns: 5000, Sessions: 20, Keys: 50, Ops: 8, ReadFrac: 0.5, Zipf: 1.2, List: list, Seed: 7, EmitAborted: true})
		r := run1(t, h, ModelSI, nil)
		if r.Verdict != check.Valid {
			t.Fatalf("list=%v: correct SI history judged %v: %v", list, r.Verdict, r.Anomalies)
		}
		// Fault: a stale read. Find a committed external read that saw a
		// non-initial version and make it read the initial value instead.
		injected := 0
		for i := range h.Txns {
			tx := &h.Txns[i]
			if tx.Status != history.Committed || len(tx.Ops) == 0 || i%97 != 0 {
				continue
			}
			o := &tx.Ops[0]
			if o.Kind == history.Read && !o.IsList && o.Value != history.NoValue {
				o.Value = history.NoValue
				injected++
			} else if o.Kind == history.Read && o.IsList && o.ListLen() > 0 {
				off, n := o.ListSpan()
				o.SetListSpan(off, n-1)
				injected++
			}
		}
		if injected == 0 {
			t.Fatal("no fault injected")
		}
		r1 := run1(t, h, ModelSI, nil)
		r2 := run1(t, h, ModelSI, map[string]string{"gc": "false"})
		r3 := run1(t, h, ModelSI, map[string]string{"gc-every": "3"})
		if r1.Verdict != check.Invalid || r1.Stats["violations_ext"] != injected {
			t.Fatalf("list=%v: %v ext=%v, want %d", list, r1.Verdict, r1.Stats["violations_ext"], injected)
		}
		j1, _ := json.Marshal(r1.Anomalies)
		for _, x := range []*check.Result{r2, r3} {
			if j, _ := json.Marshal(x.Anomalies); string(j) != string(j1) || x.Stats["violations_ext"] != injected {
				t.Fatalf("GC changed the result")
			}
		}
	}
}

var benchHist *history.History

func benchHistory(b *testing.B) *history.History {
	if benchHist == nil {
		benchHist = chronostest.Generate(chronostest.Config{Txns: 1_000_000, Sessions: 50, Keys: 1000, Ops: 15, ReadFrac: 0.5, Zipf: 1.1, Seed: 1})
	}
	return benchHist
}

// BenchmarkCheckSI1M: 1,000,000 transactions × 15 ops, 50 sessions, 1,000
// keys, zipfian, 50% reads (the bar: ≤ 3 s, ≤ 2 GB RSS).
func BenchmarkCheckSI1M(b *testing.B) {
	h := benchHistory(b)
	b.ResetTimer()
	for range b.N {
		r, err := Checker{}.Check(context.Background(), h, check.Options{Model: ModelSI})
		if err != nil || r.Verdict != check.Valid {
			b.Fatal(err, r)
		}
	}
}

func BenchmarkCheckSER1M(b *testing.B) {
	h := benchHistory(b)
	b.ResetTimer()
	for range b.N {
		if _, err := (Checker{}).Check(context.Background(), h, check.Options{Model: ModelSER}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWriteBenchFile writes the 1M-transaction benchmark history in
// TimeKiller JSON to $CHRONOS_GEN_FILE (skipped when unset), so decoding and
// checking can be measured in a fresh process (BenchmarkDecodeCheckFile).
func TestWriteBenchFile(t *testing.T) {
	path := os.Getenv("CHRONOS_GEN_FILE")
	if path == "" {
		t.Skip("CHRONOS_GEN_FILE not set")
	}
	h := chronostest.Generate(chronostest.Config{Txns: 1_000_000, Sessions: 50, Keys: 1000, Ops: 15, ReadFrac: 0.5, Zipf: 1.1, Seed: 1})
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := timekiller.Encode(f, h); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkDecodeCheckFile decodes $CHRONOS_BENCH_FILE (TimeKiller JSON) and
// checks SI, reporting decode and check seconds separately.
func BenchmarkDecodeCheckFile(b *testing.B) {
	path := os.Getenv("CHRONOS_BENCH_FILE")
	if path == "" {
		b.Skip("CHRONOS_BENCH_FILE not set")
	}
	for range b.N {
		t0 := time.Now()
		h, err := history.DecodeFile(path, "chronos", history.DecodeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		r, err := Checker{}.Check(context.Background(), h, check.Options{Model: ModelSI})
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		b.ReportMetric(t1.Sub(t0).Seconds(), "decode-s")
		b.ReportMetric(t2.Sub(t1).Seconds(), "check-s")
		b.Logf("%s txns=%d replayed=%v", r, len(h.Txns), r.Stats["replayed"])
	}
}
