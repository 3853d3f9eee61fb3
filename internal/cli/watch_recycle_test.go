package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/sim"
)

// TestWatchRecyclingNamesNoRecycledTransaction: watch's decoders recycle
// the memory of transactions the checker released (aion.Recycler) while
// the checker explains violations naming transactions it still holds. On
// a faulty stream (stale reads, dirty writes: Ext and NoConflict
// explanations list the transactions' ops) paced so that ticks make
// verdicts final and release transactions while decoding goes on, with the
// recycler poisoned (every recycled transaction is overwritten to name
// "recycled"), no explanation names a recycled transaction, and the
// verdict and anomaly types are those of a watch without recycling. Run it
// under -race too: the decoders take recycled memory concurrently with the
// checker.
func TestWatchRecyclingNamesNoRecycledTransaction(t *testing.T) {
	cfg := sim.Config{Level: sim.SnapshotIsolation, Workload: sim.RWRegister, Txns: 12000, Clients: 8,
		Keys: 200, MinOps: 2, MaxOps: 10, ReadRatio: 0.5, Seed: 11,
		Faults: []sim.Fault{{Name: sim.FaultStaleRead, Prob: 0.01}, {Name: sim.FaultDirtyWrite, Prob: 0.01}}}
	h, _, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := jsonl.Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	stream := buf.Bytes()
	run := func(poison bool) (watchResult, string) {
		watchPoison, watchNoRecycle = poison, !poison
		defer func() { watchPoison, watchNoRecycle = false, false }()
		pr, pw := io.Pipe()
		go func() {
			// 40 pieces, 3 ms apart: the ticks (every 2 ms, final after
			// 5 ms) release transactions while later ones are decoded
			rest := stream
			for len(rest) > 0 {
				n := min(len(rest), len(stream)/40+1)
				pw.Write(rest[:n])
				rest = rest[n:]
				time.Sleep(3 * time.Millisecond)
			}
			pw.Close()
		}()
		var out, errb bytes.Buffer
		root := NewRoot(&out, &errb)
		root.SetIn(pr)
		root.SetArgs([]string{"watch", "--json", "--max-anomalies", "0", "--tick", "2ms", "--final-after", "5ms"})
		root.Execute()
		return parseWatch(t, out.String()), out.String()
	}
	want, _ := run(false)
	got, out := run(true)
	if strings.Contains(out, "recycled") || strings.Contains(out, "?-7") {
		t.Fatalf("an explanation names a recycled transaction: %s", out)
	}
	if got.Valid != false || !strings.Contains(out, `"explanation":"T(`) {
		t.Fatalf("want an invalid verdict with explanations: %s", out)
	}
	if got.Valid != want.Valid || strings.Join(got.AnomalyTypes, ",") != strings.Join(want.AnomalyTypes, ",") {
		t.Fatalf("with recycling %v %v, without %v %v", got.Valid, got.AnomalyTypes, want.Valid, want.AnomalyTypes)
	}
	if n := watchPoisoned.Recycled(); n < int64(len(h.Txns))/4 {
		t.Fatalf("%d transactions recycled: the test exercised too little", n)
	}
	if got.Stats["txns_accepted"] != float64(len(h.Txns)) {
		t.Fatalf("accepted %v of %d", got.Stats["txns_accepted"], len(h.Txns))
	}
}
