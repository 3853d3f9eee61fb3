package record

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// TestAppendUpperHexMatchesLSNNotation protects evidence.jsonl's
// commit_lsn: PostgreSQL writes each LSN half in upper-case hex without
// leading zeros.
func TestAppendUpperHexMatchesLSNNotation(t *testing.T) {
	for _, x := range []uint64{0, 1, 9, 10, 15, 16, 0xABCDEF, 0x1_0000_0000, 0xFFFF_FFFF, 1<<64 - 1} {
		want := strings.ToUpper(strconv.FormatUint(x, 16))
		if got := string(appendUpperHex([]byte("p"), x)); got != "p"+want {
			t.Errorf("appendUpperHex(%#x) = %q, want %q", x, got, "p"+want)
		}
	}
}

// TestTxnQueueKeepsEveryTransactionInPushOrder protects the history's
// completion order and completeness: what clients push reaches the
// recorder once, each client's transactions in the order it pushed them,
// across batches, recycled slices and a queue at its bound; take reports
// the queue closed only after the last push.
func TestTxnQueueKeepsEveryTransactionInPushOrder(t *testing.T) {
	for _, tc := range []struct {
		name             string
		clients, perEach int
	}{
		{"one client, below one batch", 1, 10},
		{"one client, many batches", 1, 5000},
		{"four clients past the bound", 4, 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newTxnQueue(tc.clients)
			var wg sync.WaitGroup
			for c := 0; c < tc.clients; c++ {
				wg.Add(1)
				go func(c int) {
					defer wg.Done()
					for i := 0; i < tc.perEach; i++ {
						q.push(&rawTxn{session: strconv.Itoa(c), seq: i})
					}
				}(c)
			}
			go func() { wg.Wait(); q.close() }()
			next := make([]int, tc.clients)
			total := 0
			for {
				<-q.wake
				b, closed := q.take()
				if len(b) > q.max {
					t.Fatalf("took %d, more than the bound %d", len(b), q.max)
				}
				for _, r := range b {
					c, _ := strconv.Atoi(r.session)
					if r.seq != next[c] {
						t.Fatalf("client %d: got seq %d, want %d", c, r.seq, next[c])
					}
					next[c]++
					total++
				}
				q.recycle(b)
				if closed {
					break
				}
				// the recorder also takes on a timer; here, on demand
				select {
				case q.wake <- struct{}{}:
				default:
				}
			}
			if want := tc.clients * tc.perEach; total != want {
				t.Fatalf("took %d transactions, want %d", total, want)
			}
		})
	}
}

// TestIdleRecorderWakesOnlyEveryQueueTick protects the recording overhead
// of slow runs: with no transaction arriving, the recorder's goroutine
// wakes once per queueTick (100 ms), not every 10 ms as it did (each
// wake-up of an idle thread cost 120–150 µs of CPU on a loaded machine,
// 10–25 µs per transaction at a few hundred transactions per second). A
// loaded machine can only delay ticks, never add any, so the bound holds
// under load.
func TestIdleRecorderWakesOnlyEveryQueueTick(t *testing.T) {
	cfg := Config{}
	r := &recorder{cfg: &cfg, warn: func(string) {}}
	q := newTxnQueue(4)
	done := make(chan error, 1)
	go func() { done <- r.loop(context.Background(), q) }()
	const idle = 500 * time.Millisecond
	time.Sleep(idle)
	q.close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// the ticks during idle, plus the wake by close: at most one per
	// 100 ms (not per queueTick, so that shortening it fails here)
	const every = 100 * time.Millisecond
	if max := int(idle/every) + 2; r.wakes > max {
		t.Fatalf("an idle recorder woke %d times in %v, want at most %d (one per %v)", r.wakes, idle, max, every)
	}
	if r.wakes < 1 {
		t.Fatalf("the recorder never took the closed queue")
	}
}

// TestClientsConnectBeforeTheClockStarts: a run of a Duration counts its
// time from when every client is connected (docs/recorder.md), so slow
// connections do not eat the run. Each client's connection hook here takes
// longer than the whole run: if the clock started before the clients
// connected (as it did), the run would end before any transaction was
// claimed. Also: every session opened is reported closed, and onStart
// comes after the last open.
func TestClientsConnectBeforeTheClockStarts(t *testing.T) {
	const run = 200 * time.Millisecond
	var mu sync.Mutex
	opened, closed := 0, 0
	startedAfter := -1
	cfg := Config{DB: "sqlite", Level: "serializable", Workload: "rw-register", Clients: 4, Duration: run, Seed: 1,
		WL: workload.Config{Keys: 100, Ops: 4, ReadRatio: 0.5}}
	cfg.clientConn = func(c db.Conn, open bool) {
		if open {
			time.Sleep(2 * run) // a slow handshake
		}
		mu.Lock()
		defer mu.Unlock()
		if open {
			opened++
		} else {
			closed++
		}
	}
	cfg.onStart = func() {
		mu.Lock()
		defer mu.Unlock()
		startedAfter = opened
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if startedAfter != cfg.Clients {
		t.Fatalf("onStart came after %d of %d sessions opened", startedAfter, cfg.Clients)
	}
	if opened != cfg.Clients || closed != opened {
		t.Fatalf("%d sessions opened, %d closed; want %d and %d", opened, closed, cfg.Clients, cfg.Clients)
	}
	if res.Stats.Txns == 0 {
		t.Fatalf("a %v run whose clients took %v each to connect completed no transaction: the clock started before they connected", run, 2*run)
	}
	if el := res.Stats.Elapsed; el >= 2*run+run/2 {
		t.Fatalf("Stats.Elapsed = %v for a %v run: it counts the connections", el, run)
	}
}

// TestTxnSlabPiecesAreDisjoint: the recorder carves transactions' ops and
// op times from shared chunks (txnSlab); each piece must be zeroed, have
// capacity equal to its length (so an append reallocates instead of
// overwriting the next transaction's), and not overlap another.
func TestTxnSlabPiecesAreDisjoint(t *testing.T) {
	var s txnSlab
	var ops [][]history.Op
	var exts []*history.TxnExt
	for i := 0; i < 3000; i++ {
		n := i%7 + 1
		if i%500 == 0 {
			n = slabLen // larger than a chunk's share: its own allocation
		}
		o := s.ops(n)
		x := s.ext(n)
		if len(o) != n || cap(o) != n || len(x.OpTimes) != n || cap(x.OpTimes) != n || x.Preds != nil {
			t.Fatalf("piece %d: ops len %d cap %d, times len %d cap %d, want %d", i, len(o), cap(o), len(x.OpTimes), cap(x.OpTimes), n)
		}
		for j := range o {
			if o[j] != (history.Op{}) || x.OpTimes[j] != (history.OpTime{}) {
				t.Fatalf("piece %d is not zeroed", i)
			}
			o[j].Key, x.OpTimes[j].Invoke = int32(i), int64(i)
		}
		ops, exts = append(ops, o), append(exts, x)
	}
	for i, o := range ops {
		for j := range o {
			if o[j].Key != int32(i) || exts[i].OpTimes[j].Invoke != int64(i) {
				t.Fatalf("piece %d was overwritten by another (key %d, time %d)", i, o[j].Key, exts[i].OpTimes[j].Invoke)
			}
		}
	}
	// ids carved from shared chunks keep their text as later ids fill
	// the chunk and new chunks start
	var ids []string
	for i := 0; i < 3000; i++ {
		ids = append(ids, s.id("c"+strconv.Itoa(i%5)+"."+strconv.Itoa(i%3), i*7919))
	}
	ids = append(ids, s.id(strings.Repeat("s", idChunk), 1)) // too long for a chunk: its own
	for i, id := range ids[:3000] {
		if want := "c" + strconv.Itoa(i%5) + "." + strconv.Itoa(i%3) + "-" + strconv.Itoa(i*7919); id != want {
			t.Fatalf("id %d is %q, want %q", i, id, want)
		}
	}
	if want := strings.Repeat("s", idChunk) + "-1"; ids[3000] != want {
		t.Fatalf("long id is %d bytes, want %d", len(ids[3000]), len(want))
	}
	a := append(ops[0][:1:1], history.Op{Key: -1})
	if ops[1][0].Key != 1 || &a[0] == &ops[0][0] {
		t.Fatalf("appending to one piece reached the next")
	}
}

// TestRecorderGrowth: History.Txns grows at least by doubling; a run of
// Txns transactions gets room for all at the first growth, one of a
// Duration for what its rate predicts.
func TestRecorderGrowth(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      Config
		n        int
		now      time.Duration
		min, max int
	}{
		{"first growth", Config{Duration: time.Second}, 0, 0, 256, 256},
		{"txns: all at once", Config{Txns: 10000}, 256, 0, 10000 - 256, 10000 - 256},
		{"txns: at most 1<<20 at a time", Config{Txns: 1 << 30}, 256, 0, 1 << 20, 1 << 20},
		{"txns: doubling past the count", Config{Txns: 1000}, 1000, 0, 1000, 1000},
		{"duration: too early to tell", Config{Duration: time.Second}, 256, 10 * time.Millisecond, 256, 256},
		{"duration: rate", Config{Duration: time.Second}, 512, 100 * time.Millisecond, 5120 + 512 - 512 - 5, 5632 - 512 + 5},
		{"duration: near the end, doubling", Config{Duration: time.Second}, 4096, 990 * time.Millisecond, 4096, 4096},
	} {
		r := &recorder{cfg: &tc.cfg}
		if got := r.grow(tc.n, int64(tc.now)); got < tc.min || got > tc.max {
			t.Errorf("%s: grow(%d, %v) = %d, want %d..%d", tc.name, tc.n, tc.now, got, tc.min, tc.max)
		}
	}
}
