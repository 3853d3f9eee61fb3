package aion

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/sim"
)

// feedBatches reads the stream r with a Reader into c in batches added
// with AddAll (batch(i) is the size of batch i, at least 1), moving the
// clock one millisecond ahead per transaction and calling c.Tick after
// each batch when tick(i). With rc, the Reader decodes into the memory rc
// recycles (the checker must have rc too). Decode errors fail the test;
// refused transactions are counted in the returned string.
func feedBatches(t testing.TB, c *Checker, rc *Recycler, r io.Reader, clk *time.Time, batch func(i int) int, tick func(i int) bool) string {
	t.Helper()
	rd := NewReader(r, c, "recycle")
	if rc != nil {
		rd.Recycle(rc)
	}
	var refused []string
	var txns []*Txn
	for i, eof := 0, false; !eof; i++ {
		txns = txns[:0]
		for n := max(1, batch(i)); len(txns) < n; {
			x, err := rd.Next()
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			txns = append(txns, x)
		}
		*clk = clk.Add(time.Duration(len(txns)) * time.Millisecond)
		c.AddAll(txns, func(x *Txn, err error) { refused = append(refused, err.Error()) })
		clear(txns) // the caller must not keep them (see Recycler)
		if tick(i) {
			c.Tick()
		}
	}
	return strings.Join(refused, "\n")
}

// resultJSON renders everything a result says (anomalies with their
// explanations, counts, statistics) for comparison.
func resultJSON(t testing.TB, r *check.Result, refused string) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\nrefused: " + refused
}

// bigTxns is a stream of transactions of 70 ops (lastAccess indexes them
// by pointer, Checker.accT): each writes two fresh keys and reads them
// back many times (internal reads) in one of two layouts, so an index
// left from another transaction at the same address would pair reads with
// the wrong writes (a false Int anomaly).
func bigTxns(n, from int) string {
	var b strings.Builder
	for i := range n {
		ka, kb := 1000000+2*(from+i), 1000001+2*(from+i)
		var ops []string
		if i%2 == 0 {
			ops = append(ops, fmt.Sprintf(`{"f":"w","k":%d,"v":%d}`, ka, 10*i), fmt.Sprintf(`{"f":"w","k":%d,"v":%d}`, kb, 10*i+1))
		} else {
			ops = append(ops, fmt.Sprintf(`{"f":"w","k":%d,"v":%d}`, ka, 10*i), fmt.Sprintf(`{"f":"r","k":%d,"v":%d}`, ka, 10*i),
				fmt.Sprintf(`{"f":"w","k":%d,"v":%d}`, kb, 10*i+1))
		}
		for len(ops) < 70 {
			if len(ops)%(2+i%3) == 0 {
				ops = append(ops, fmt.Sprintf(`{"f":"r","k":%d,"v":%d}`, ka, 10*i))
			} else {
				ops = append(ops, fmt.Sprintf(`{"f":"r","k":%d,"v":%d}`, kb, 10*i+1))
			}
		}
		ts := 10_000_000 + 100*(from+i)
		// before it: a big transaction reading fresh keys only (its
		// index says no read follows an access of its key; released
		// once its reads are final) and small ones, so that the big
		// one may be decoded into its memory
		var ro []string
		for j := range 70 {
			ro = append(ro, fmt.Sprintf(`{"f":"r","k":%d,"v":null}`, 5000000+70*(from+i)+j))
		}
		fmt.Fprintf(&b, `{"id":"ro%d","session":"r","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[%s]}`+"\n",
			from+i, ts, ts+1, strings.Join(ro, ","))
		for j := range 8 {
			fmt.Fprintf(&b, `{"id":"f%d.%d","session":"f","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[{"f":"r","k":%d,"v":null}]}`+"\n",
				from+i, j, ts+2+j, ts+2+j, 6000000+8*(from+i)+j)
		}
		fmt.Fprintf(&b, `{"id":"big%d","session":"b%d","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[%s]}`+"\n",
			from+i, i%2, ts+20, ts+25, strings.Join(ops, ","))
	}
	return b.String()
}

// TestRecyclingKeepsResults: a checker and Reader recycling transactions
// (Recycler, poisoned: every recycled transaction and op slab is
// overwritten, so a use after release would name "recycled" or key -7)
// give the same result, explanations and statistics included, as without
// recycling, on correct and faulty simulator histories (Ext, NoConflict,
// Int, Session violations), under every model, with state discarded and
// verdicts made final while the stream runs (short FinalAfter, Ticks
// between batches), with transactions the checker refuses, and with big
// transactions (lastAccess's index). Recycling must actually happen.
func TestRecyclingKeepsResults(t *testing.T) {
	faults := []string{"", sim.FaultLostUpdate, sim.FaultStaleRead, sim.FaultDirtyWrite, sim.FaultTSDisorder, sim.FaultIntermediateRead}
	models := []string{"snapshot-isolation", sessionSI, "serializable"}
	invalid, recycled := 0, int64(0)
	for _, fault := range faults {
		cfg := sim.Config{Level: sim.SnapshotIsolation, Workload: sim.RWRegister, Txns: 700, Clients: 5,
			Keys: 30, MinOps: 1, MaxOps: 8, ReadRatio: 0.5, Seed: 7}
		if fault != "" {
			cfg.Faults = []sim.Fault{{Name: fault, Prob: 0.2}}
		}
		h, _, err := sim.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		h2 := *h
		h2.Txns = shuffleWindow(h, 10, 3)
		var buf bytes.Buffer
		if err := jsonl.Encode(&buf, &h2); err != nil {
			t.Fatal(err)
		}
		buf.WriteString(`{"id":"bad","status":"committed","ops":[{"f":"r","k":1,"v":null}]}` + "\n")
		buf.WriteString(bigTxns(40, 0))
		for _, model := range models {
			for _, final := range []time.Duration{5 * time.Millisecond, 40 * time.Millisecond, time.Hour} {
				run := func(rc *Recycler) string {
					clk := time.Unix(0, 0)
					c := New(Config{Model: model, CommitOrderSerializes: true, FinalAfter: final, MaxPerType: 10000,
						Now: func() time.Time { return clk }, Recycler: rc})
					refused := feedBatches(t, c, rc, bytes.NewReader(buf.Bytes()), &clk,
						func(i int) int { return 1 + i*7%13 }, func(i int) bool { return i%3 != 1 })
					return resultJSON(t, c.Close(), refused)
				}
				want := run(nil)
				rc := NewRecycler()
				rc.Poison()
				rc.slabOps = 16
				got := run(rc)
				name := fmt.Sprintf("%s/%s/%v", fault, model, final)
				if got != want {
					t.Errorf("%s: with recycling\n%s\nwithout\n%s", name, got, want)
				}
				if strings.Contains(want, `"valid":false`) {
					invalid++
				}
				if strings.Contains(got, "recycled") || strings.Contains(got, "?-7") {
					t.Errorf("%s: a recycled transaction is named: %s", name, got)
				}
				recycled += rc.recycled
			}
		}
	}
	if invalid < len(faults) || recycled < 10000 {
		t.Fatalf("%d invalid runs, %d transactions recycled: the test exercised too little", invalid, recycled)
	}
}

// TestRecyclerSlabsAreReused: op slabs come back once every transaction
// with ops in them was released and the Reader moved on, and a stream much
// longer than the window decodes into a bounded number of slabs.
func TestRecyclerSlabsAreReused(t *testing.T) {
	rc := NewRecycler()
	rc.slabOps = 64
	clk := time.Unix(0, 0)
	c := New(Config{FinalAfter: 10 * time.Millisecond, Now: func() time.Time { return clk }, Recycler: rc})
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, `{"id":"t%d","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[{"f":"r","k":%d,"v":null},{"f":"w","k":%d,"v":%d}]}`+"\n",
			i, 10*i+1, 10*i+5, 100000+i, i%50, i)
	}
	slabs := map[*opSlab]bool{}
	rd := NewReader(strings.NewReader(b.String()), c, "slabs")
	rd.Recycle(rc)
	for {
		x, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		slabs[x.slab] = true
		clk = clk.Add(time.Millisecond)
		c.AddAll([]*Txn{x}, func(_ *Txn, err error) { t.Fatal(err) })
		c.Tick()
	}
	if r := c.Close(); r.Verdict != check.Valid {
		t.Fatalf("%v: %s", r.Verdict, r.Reason)
	}
	// 5,000 transactions of 2 ops fill 157 slabs of 64; the window (10
	// ms: about 10 transactions, plus the sweep's lag) needs a few
	if len(slabs) > 20 || rc.recycled < 4000 {
		t.Fatalf("%d distinct slabs, %d transactions recycled", len(slabs), rc.recycled)
	}
}

// FuzzRecyclingAgrees: on any small register history (fuzzHistory, with
// string values and unknown-outcome transactions as in
// FuzzBudgetsNeverFalseVerdict), arriving in batches and ticks chosen by
// the input, a checker recycling transactions (poisoned, slabs of 4 ops)
// gives exactly the result of one that does not: under snapshot isolation,
// under strong-session snapshot isolation with every budget at its
// smallest (keys, values, sessions and unknown-outcome writes forgotten
// while transactions are retained) and under serializability, each with a
// short and a long FinalAfter.
func FuzzRecyclingAgrees(f *testing.F) {
	f.Add([]byte{5, 1, 3, 2, 0, 1, 1, 2, 0, 7, 9, 4, 4, 4, 1, 0, 2})
	f.Add([]byte("write skew lost update stale read \x00\x01\x02\x03\xff\xfe"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, arrival := fuzzHistory(b)
		var in []string
		for i, x := range arrival {
			in = append(in, strVal.ReplaceAllString(x.line, `"v":"s$1"`))
			if len(b) > 0 && int(b[i%len(b)])%5 == 0 {
				in = append(in, fmt.Sprintf(`{"id":"u%d","session":"u","status":"unknown","ops":[{"f":"w","k":%d,"v":"u%d"}]}`, i, i%3, i))
			}
		}
		stream := strings.Join(in, "\n")
		at := func(i int) int {
			if len(b) == 0 {
				return 0
			}
			return int(b[i%len(b)])
		}
		for _, model := range []string{"snapshot-isolation", sessionSI, "serializable"} {
			for _, final := range []time.Duration{3 * time.Millisecond, time.Hour} {
				run := func(rc *Recycler) string {
					clk := time.Unix(0, 0)
					cfg := Config{Model: model, CommitOrderSerializes: true, FinalAfter: final, MaxPerType: 1000,
						Now: func() time.Time { return clk }, Recycler: rc}
					if model == sessionSI {
						cfg.MaxKeys, cfg.MaxFilterBytes, cfg.MaxValueBytes, cfg.MaxUnknownWrites, cfg.MaxWindowBytes, cfg.MaxSessions = 2, 64, 1, 1, 1, 1
					}
					c := New(withSeed(cfg, 1))
					refused := feedBatches(t, c, rc, strings.NewReader(stream), &clk,
						func(i int) int { return 1 + at(i)%4 }, func(i int) bool { return at(i+1)%3 != 0 })
					return resultJSON(t, c.Close(), refused)
				}
				want := run(nil)
				rc := NewRecycler()
				rc.Poison()
				rc.slabOps = 4
				if got := run(rc); got != want {
					t.Fatalf("%s, final after %v: with recycling\n%s\nwithout\n%s\n%s", model, final, got, want, stream)
				}
			}
		}
	})
}

// TestRecycledBigTxnGetsItsOwnIndex: lastAccess indexes a big
// transaction's ops by the transaction's address (Checker.accT); a
// transaction decoded into the memory of a released big one must not be
// checked with the released one's index. A (70 external reads) is
// released once its reads are final; B, at A's address, writes two keys
// and reads them back: with A's index its reads would be external reads of
// values not yet visible at its snapshot (false Ext failures).
func TestRecycledBigTxnGetsItsOwnIndex(t *testing.T) {
	rc := NewRecycler()
	c, clk := newTest("snapshot-isolation")
	c.rc = rc
	var ro []string
	for j := range 70 {
		ro = append(ro, fmt.Sprintf("r k%d nil", j))
	}
	a := tx(c, "A", "s", 1, 2, ro...)
	c.AddAll([]*Txn{a}, func(_ *Txn, err error) { t.Fatal(err) })
	clk.t = clk.t.Add(time.Hour)
	c.Tick() // A's reads final: A released
	free := rc.take(nil)
	if len(free) != 1 || free[0] != a {
		t.Fatalf("recycled %v, want A", free)
	}
	ops := []string{"w x 1", "w y 2"}
	for len(ops) < 70 {
		ops = append(ops, "r x 1", "r y 2")
	}
	*a = *tx(c, "B", "s", 10, 11, ops[:70]...) // decoded into A's memory
	c.AddAll([]*Txn{a}, func(_ *Txn, err error) { t.Fatal(err) })
	if r := c.Close(); r.Verdict != check.Valid {
		t.Fatalf("%v: %d anomalies, the first: %.300s", r.Verdict, len(r.Anomalies), r.Anomalies[0].Explanation)
	}
}

// BenchmarkDecodeAddStream measures decoding and checking together in one
// goroutine, with and without a Recycler (sub-benchmarks recycle and
// fresh), on the first $TXRAY_AION_STREAM_MB MiB (default 400) of the
// stream named by $TXRAY_AION_STREAM (see BenchmarkAddAllStream; skipped
// without it): batches of 256 KiB of
// lines decoded by a Reader and added with AddAll, the clock simulated at
// 200,000 transactions/s with a Tick every 250 ms and FinalAfter 1 s, so
// that the window, and with it the memory, does not depend on machine
// load. Reported: process CPU per transaction (the collector included)
// and minor page faults per transaction (getrusage), as watch's runtime
// settings (GOGC 300 and a soft limit) apply. Run each sub-benchmark in
// its own process (-test.bench 'DecodeAddStream/recycle$'): the heap one
// leaves behind is already faulted in for the next. The window fills
// during the first 200,000 transactions (1 s simulated): only the stream
// after that can be decoded into recycled memory.
func BenchmarkDecodeAddStream(b *testing.B) {
	path := os.Getenv("TXRAY_AION_STREAM")
	if path == "" {
		b.Skip("TXRAY_AION_STREAM not set")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	mb := 400
	if s := os.Getenv("TXRAY_AION_STREAM_MB"); s != "" {
		var err error
		if mb, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	data := make([]byte, mb<<20)
	n, _ := io.ReadFull(f, data)
	f.Close()
	data = data[:bytes.LastIndexByte(data[:n], '\n')+1]
	defer debug.SetGCPercent(debug.SetGCPercent(300))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(828 << 20))
	for _, recycle := range []bool{true, false} {
		name := "fresh"
		if recycle {
			name = "recycle"
		}
		b.Run(name, func(b *testing.B) {
			var cpu time.Duration
			var faults int64
			txns := 0
			for range b.N {
				runtime.GC()
				var rc *Recycler
				if recycle {
					rc = NewRecycler()
				}
				now := time.Unix(0, 0)
				c := New(Config{FinalAfter: time.Second, Now: func() time.Time { return now }, Recycler: rc})
				rd := NewBytesReader(nil, c, path)
				if rc != nil {
					rd.Recycle(rc)
				}
				cpu0, f0 := cpuTime(), minFaults()
				var batch []*Txn
				next := time.Duration(0)
				for rest := data; len(rest) > 0; {
					cut := min(len(rest), 256<<10)
					cut = bytes.LastIndexByte(rest[:cut], '\n') + 1
					rd.Reset(rest[:cut], 0)
					rest = rest[cut:]
					batch = batch[:0]
					for {
						x, err := rd.Next()
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						batch = append(batch, x)
					}
					now = now.Add(time.Duration(len(batch)) * 5 * time.Microsecond)
					txns += c.AddAll(batch, func(_ *Txn, err error) { b.Fatal(err) })
					clear(batch)
					if d := now.Sub(time.Unix(0, 0)); d >= next {
						c.Tick()
						next = d + 250*time.Millisecond
					}
				}
				if r := c.Close(); r.Verdict != check.Valid {
					b.Fatalf("%v %v", r.Verdict, r.Reason)
				}
				cpu += cpuTime() - cpu0
				faults += minFaults() - f0
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(txns), "cpu-ns/txn")
			b.ReportMetric(float64(faults)/float64(txns)*1000, "faults/1000txn")
		})
	}
}

// minFaults is the process's minor page faults so far.
func minFaults() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Minflt
}
