package aion

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/chronos"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/sim"
)

// TestSimAgreesWithChronosWindowed is a differential test of the online
// checker against the offline one (package chronos) on simulator
// histories, correct and with injected faults, arriving out of order
// across sessions, with a short FinalAfter on a simulated clock so that
// verdicts become final and state below the watermark is discarded while
// the stream runs (TestAgreesWithChronos keeps everything). Whenever no
// arrival was later than the window allows (late_unchecked,
// late_noconflict_partial and ext_reopened_unknown all 0), the verdict and
// the number of violations of each type must be the offline checker's.
func TestSimAgreesWithChronosWindowed(t *testing.T) {
	faults := []string{"", sim.FaultLostUpdate, sim.FaultStaleRead, sim.FaultDirtyWrite, sim.FaultAbortedRead,
		sim.FaultIntermediateRead, sim.FaultNoOwnWrite, sim.FaultTSDisorder, sim.FaultLostCommit}
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	compared, invalid := 0, 0
	for _, fault := range faults {
		for seed := range uint64(seeds) {
			name := fmt.Sprintf("%s/seed%d", fault, seed)
			if fault == "" {
				name = fmt.Sprintf("correct/seed%d", seed)
			}
			cfg := sim.Config{Level: sim.SnapshotIsolation, Workload: sim.RWRegister, Txns: 800, Clients: 5,
				Keys: 40, MinOps: 1, MaxOps: 6, ReadRatio: 0.5, Seed: seed + 1}
			if fault != "" {
				cfg.Faults = []sim.Fault{{Name: fault, Prob: 0.2}}
			}
			h, _, err := sim.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			off, err := chronos.Checker{}.Check(context.Background(), h, check.Options{Model: "si"})
			if err != nil {
				t.Fatal(err)
			}
			h2 := *h
			h2.Txns = shuffleWindow(h, 12, seed)
			var buf bytes.Buffer
			if err := jsonl.Encode(&buf, &h2); err != nil {
				t.Fatal(err)
			}
			// one transaction a millisecond, final after 100 ms, a Tick
			// every 3 ms: arrivals are displaced by at most 12 ms
			clk := time.Unix(0, 0)
			c := New(Config{FinalAfter: 100 * time.Millisecond, Now: func() time.Time { return clk }})
			feedAtMillis(t, c, bytes.NewReader(buf.Bytes()), name, &clk, func(i int) bool { return i%3 == 0 })
			st := c.Status()
			on := c.Close()
			if on.Stats["late_unchecked"] != int64(0) || on.Stats["late_noconflict_partial"] != int64(0) || on.Stats["ext_reopened_unknown"] != int64(0) {
				t.Logf("%s: not compared (late arrivals: %v)", name, on.Stats)
				continue
			}
			compared++
			if off.Verdict == check.Invalid {
				invalid++
			}
			if on.Verdict != off.Verdict {
				t.Errorf("%s: online %v (%s) offline %v (%s)", name, on.Verdict, on.Reason, off.Verdict, off.Reason)
			}
			for _, typ := range []string{TypeExt, TypeSession, TypeNoConflict, TypeInternal} {
				n, _ := off.Stats["violations_"+typ].(int)
				if got := on.Truncated[typ] + countType(on, typ); got != n {
					t.Errorf("%s %s: online %d offline %d", name, typ, got, n)
				}
			}
			if st.Versions > 4*40+400 {
				t.Errorf("%s: %d versions retained: the watermark discarded nothing", name, st.Versions)
			}
		}
	}
	t.Logf("compared %d of %d histories (%d invalid)", compared, len(faults)*seeds, invalid)
	// the comparison must have happened, on invalid histories too
	if compared < len(faults)*seeds*3/4 || invalid < len(faults)*seeds/3 {
		t.Fatalf("compared %d of %d histories (%d invalid)", compared, len(faults)*seeds, invalid)
	}
}

// feedAtMillis reads the stream r (named name in errors) with a Reader into
// c, moving the clock c reads (*clk) one millisecond ahead before each
// transaction and calling c.Tick after transaction i when tick(i). Any
// decode or Add error fails the test.
func feedAtMillis(t testing.TB, c *Checker, r io.Reader, name string, clk *time.Time, tick func(i int) bool) {
	t.Helper()
	rd := NewReader(r, c, name)
	for i := 0; ; i++ {
		x, err := rd.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		*clk = clk.Add(time.Millisecond)
		if err := c.Add(x); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tick(i) {
			c.Tick()
		}
	}
}
