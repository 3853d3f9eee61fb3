package aion

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/chronos"
	"github.com/txray/txray/check/chronos/chronostest"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
)

// feed decodes native JSON Lines into c, ticking every 4096 transactions.
func feed(t testing.TB, c *Checker, data []byte) {
	rd := NewReader(bytes.NewReader(data), c, "bench")
	for i := 0; ; i++ {
		x, err := rd.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
		if i&4095 == 0 {
			c.Tick()
		}
	}
}

// shuffleWindow reorders transactions of different sessions within windows
// of w, keeping session order, to simulate out-of-order arrival.
func shuffleWindow(h *history.History, w int, seed uint64) []history.Txn {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]history.Txn, 0, len(h.Txns))
	for lo := 0; lo < len(h.Txns); lo += w {
		hi := min(lo+w, len(h.Txns))
		bySess := map[int32][]history.Txn{}
		var order []int32
		for _, t := range h.Txns[lo:hi] {
			if _, ok := bySess[t.Session]; !ok {
				order = append(order, t.Session)
			}
			bySess[t.Session] = append(bySess[t.Session], t)
		}
		for len(order) > 0 {
			i := rng.IntN(len(order))
			s := order[i]
			out = append(out, bySess[s][0])
			bySess[s] = bySess[s][1:]
			if len(bySess[s]) == 0 {
				order = append(order[:i], order[i+1:]...)
			}
		}
	}
	return out
}

// TestAgreesWithChronos: on out-of-order arrivals of generated SI histories,
// with and without injected faults, aion's verdict and per-type violation
// counts match the offline checker's.
func TestAgreesWithChronos(t *testing.T) {
	h := chronostest.Generate(chronostest.Config{Txns: 4000, Sessions: 10, Keys: 30, Ops: 6, ReadFrac: 0.5, Zipf: 1.3, Seed: 11})
	for inject := 0; inject < 2; inject++ {
		if inject == 1 {
			for i := range h.Txns {
				o := &h.Txns[i].Ops[0]
				if i%50 == 0 && h.Txns[i].Status == history.Committed && o.Kind == history.Read && o.Value != history.NoValue {
					o.Value = history.NoValue
				}
			}
		}
		off, err := chronos.Checker{}.Check(context.Background(), h, check.Options{Model: "si"})
		if err != nil {
			t.Fatal(err)
		}
		arr := shuffleWindow(h, 40, 3)
		h2 := *h
		h2.Txns = arr
		var buf bytes.Buffer
		if err := jsonl.Encode(&buf, &h2); err != nil {
			t.Fatal(err)
		}
		c := New(Config{FinalAfter: time.Hour})
		feed(t, c, buf.Bytes())
		on := c.Close()
		if on.Verdict != off.Verdict {
			t.Fatalf("inject=%d: online %v offline %v", inject, on.Verdict, off.Verdict)
		}
		for _, typ := range []string{"ext", "session", "noconflict", "internal"} {
			n := 0
			if v, ok := off.Stats["violations_"+typ].(int); ok {
				n = v
			}
			if got := on.Truncated[typ] + countType(on, typ); got != n {
				t.Errorf("inject=%d %s: online %d offline %d", inject, typ, got, n)
			}
		}
		t.Logf("inject=%d verdict %v flips %v rechecks %v", inject, on.Verdict, on.Stats["flips"], on.Stats["rechecks"])
	}
}

func countType(r *check.Result, typ string) int {
	n := 0
	for _, a := range r.Anomalies {
		if a.Type == typ {
			n++
		}
	}
	return n
}

var benchLines []byte

// BenchmarkOnline measures sustained decode+check throughput of native
// JSON Lines (1,000,000 transactions × 15 ops, 50 sessions, 1,000 keys,
// zipfian, 50% reads; arrival shuffled across sessions in windows of 200).
func BenchmarkOnline(b *testing.B) {
	if benchLines == nil {
		h := chronostest.Generate(chronostest.Config{Txns: 1_000_000, Sessions: 50, Keys: 1000, Ops: 15, ReadFrac: 0.5, Zipf: 1.1, Seed: 1})
		h.Txns = shuffleWindow(h, 200, 5)
		var buf bytes.Buffer
		if err := jsonl.Encode(&buf, h); err != nil {
			b.Fatal(err)
		}
		benchLines = buf.Bytes()
	}
	b.SetBytes(int64(len(benchLines)))
	b.ResetTimer()
	var n int64
	for range b.N {
		c := New(Config{FinalAfter: 100 * time.Millisecond})
		feed(b, c, benchLines)
		r := c.Close()
		if r.Verdict != check.Valid {
			b.Fatalf("%v %v", r.Verdict, r.Anomalies)
		}
		n += r.Stats["txns"].(int64)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "txns/s")
}

var heavyTxns []*Txn

// BenchmarkAddCommittedHeavy measures the checker goroutine of txray watch
// alone (Add and Tick, decoding excluded) on the committed-heavy stream of
// issue 17: 50 sessions, 100,000 keys, uniform, 15 ops, 50 % reads, mostly
// committed. The clock is simulated at 200,000 transactions/s (5 µs per
// transaction) with a Tick every 250 ms of it and FinalAfter 1 s, as txray
// watch runs it, so the result does not depend on machine load: ns/txn is
// the checker's cost per transaction; 200,000 txns/s needs ≤ 5,000 ns/txn
// on one core (the decoder runs on the other).
func BenchmarkAddCommittedHeavy(b *testing.B) {
	if heavyTxns == nil {
		h := chronostest.Generate(chronostest.Config{Txns: 300_000, Sessions: 50, Keys: 100_000, Ops: 15, ReadFrac: 0.5, Seed: 1})
		var buf bytes.Buffer
		if err := jsonl.Encode(&buf, h); err != nil {
			b.Fatal(err)
		}
		tmp := New(Config{})
		rd := NewReader(bytes.NewReader(buf.Bytes()), tmp, "bench")
		for {
			x, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			heavyTxns = append(heavyTxns, x)
		}
	}
	committed := 0
	for _, t := range heavyTxns {
		if t.Status == history.Committed {
			committed++
		}
	}
	b.ResetTimer()
	var n int64
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		txns := make([]*Txn, len(heavyTxns))
		for i, t := range heavyTxns {
			x := *t // Add annotates the transaction; feed fresh copies
			txns[i] = &x
		}
		now := time.Unix(0, 0)
		c := New(Config{FinalAfter: time.Second, Now: func() time.Time { return now }})
		b.StartTimer()
		cpu0 := cpuTime()
		for i, t := range txns {
			now = now.Add(5 * time.Microsecond)
			if err := c.Add(t); err != nil {
				b.Fatal(err)
			}
			if i%50_000 == 49_999 {
				c.Tick()
			}
		}
		r := c.Close()
		cpu += cpuTime() - cpu0
		if r.Verdict != check.Valid {
			b.Fatalf("%v %v", r.Verdict, r.Anomalies)
		}
		n += r.Stats["txns"].(int64)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(heavyTxns)*b.N), "ns/txn")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(len(heavyTxns)*b.N), "cpu-ns/txn")
	b.ReportMetric(float64(committed)/float64(len(heavyTxns)), "committed-frac")
}

// cpuTime is the process's user+system CPU time: on a loaded machine it
// is what the work costs on an idle core (wall time is not). It includes
// the garbage collector's workers.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var streamTxns []*Txn

// BenchmarkAddAllStream measures the checker goroutine of txray watch as
// watch runs it (AddAll on batches of 256 decoded transactions, a Tick
// every 250 ms, FinalAfter 1 s) on a recorded stream, with the clock
// simulated at 200,000 transactions/s so that the result does not depend
// on machine load: cpu-ns/txn is the process CPU (the collector included)
// per transaction, thread-cpu-ns/txn (Linux) the CPU of the checking
// goroutine alone (locked to its thread: the serial stage, page faults it
// takes included, without the collector's workers and helper goroutines).
// The stream is the file named by $TXRAY_AION_STREAM
// (native JSON Lines, e.g. the issue 17 committed-heavy stream: txray gen
// -w rw-register -l snapshot-isolation --clients 50 --keys 100000 --dist
// uniform --ops 15 --read-ratio 0.5 -n 1000000), its first
// $TXRAY_AION_STREAM_TXNS transactions (default 500,000); skipped
// without it. Unlike BenchmarkAddCommittedHeavy it runs long enough for
// the sweeps to discard versions as watch's do.
func BenchmarkAddAllStream(b *testing.B) {
	path := os.Getenv("TXRAY_AION_STREAM")
	if path == "" {
		b.Skip("TXRAY_AION_STREAM not set")
	}
	if streamTxns == nil {
		limit := 500_000
		if s := os.Getenv("TXRAY_AION_STREAM_TXNS"); s != "" {
			var err error
			if limit, err = strconv.Atoi(s); err != nil {
				b.Fatal(err)
			}
		}
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		rd := NewReader(f, New(Config{}), path)
		for len(streamTxns) < limit {
			x, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			streamTxns = append(streamTxns, x)
		}
	}
	runtime.LockOSThread() // threadCPU: this goroutine's CPU alone
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	var cpu, tcpu time.Duration
	tok := true
	for range b.N {
		b.StopTimer()
		// fresh copies: Add annotates transactions and interns their keys
		txns := make([]*Txn, len(streamTxns))
		arena := make([]Txn, len(streamTxns))
		nops := 0
		for _, t := range streamTxns {
			nops += len(t.Ops)
		}
		ops := make([]Op, 0, nops)
		for i, t := range streamTxns {
			arena[i] = *t
			ops = append(ops, t.Ops...)
			arena[i].Ops = ops[len(ops)-len(t.Ops) : len(ops) : len(ops)]
			txns[i] = &arena[i]
		}
		now := time.Unix(0, 0)
		c := New(Config{FinalAfter: time.Second, Now: func() time.Time { return now }})
		runtime.GC()
		b.StartTimer()
		cpu0 := cpuTime()
		t0, ok0 := threadCPU()
		const batch, perTick = 256, 50_000
		for i := 0; i < len(txns); i += batch {
			j := min(i+batch, len(txns))
			now = now.Add(time.Duration(j-i) * 5 * time.Microsecond)
			c.AddAll(txns[i:j], func(_ *Txn, err error) { b.Fatal(err) })
			if i/perTick != j/perTick {
				c.Tick()
			}
		}
		r := c.Close()
		cpu += cpuTime() - cpu0
		t1, ok1 := threadCPU()
		tcpu += t1 - t0
		tok = tok && ok0 && ok1
		if r.Verdict != check.Valid {
			b.Fatalf("%v %v", r.Verdict, r.Reason)
		}
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(len(streamTxns)*b.N), "cpu-ns/txn")
	if tok {
		b.ReportMetric(float64(tcpu.Nanoseconds())/float64(len(streamTxns)*b.N), "thread-cpu-ns/txn")
	}
}

// BenchmarkReaderStream measures decoding alone (what one of watch's
// decoder goroutines does) on the first 256 MiB of the stream named by
// $TXRAY_AION_STREAM (see BenchmarkAddAllStream), in batches of 256 KiB
// of complete lines; skipped without it.
func BenchmarkReaderStream(b *testing.B) {
	path := os.Getenv("TXRAY_AION_STREAM")
	if path == "" {
		b.Skip("TXRAY_AION_STREAM not set")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 256<<20)
	n, _ := io.ReadFull(f, data)
	f.Close()
	data = data[:bytes.LastIndexByte(data[:n], '\n')+1]
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	cpu0 := cpuTime()
	txns := 0
	for range b.N {
		rd := NewBytesReader(nil, New(Config{}), path)
		for rest := data; len(rest) > 0; {
			cut := min(len(rest), 256<<10)
			cut = bytes.LastIndexByte(rest[:cut], '\n') + 1
			rd.Reset(rest[:cut], 0)
			rest = rest[cut:]
			for {
				_, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				txns++
			}
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(txns), "cpu-ns/txn")
}
