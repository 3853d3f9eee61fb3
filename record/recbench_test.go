package record

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// fakeStream is a commit stream that returns what the benchmark added.
type fakeStream struct {
	mu   sync.Mutex
	recs []db.CommitRecord
}

func (s *fakeStream) add(r db.CommitRecord) {
	s.mu.Lock()
	s.recs = append(s.recs, r)
	s.mu.Unlock()
}

func (s *fakeStream) Poll(context.Context) ([]db.CommitRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs
	s.recs = nil
	return r, nil
}

func (s *fakeStream) Close(context.Context) error { return nil }

// BenchmarkRecorderPerTxn is the client-side cost of recording one
// transaction on the PostgreSQL path, without a database (issue 17 item
// 5: the part of BenchmarkRecordingOverhead's client-process CPU that is
// the recorder's): rw-register transactions of 4 ops (2 reads, 2 writes,
// 1000 keys) handed over by 4 goroutines as clients do, interned,
// matched with their commit records (read every 100 ms from a stand-in
// for the slot), and written to history.jsonl and evidence.jsonl, then
// the end of the run (version order, fsync). ns/op is per transaction
// (wall time, producers and recorder in parallel); cpu-ns/txn is this
// process's CPU time per transaction, producers' share included.
func BenchmarkRecorderPerTxn(b *testing.B) {
	cfg := Config{CommitPoll: 100 * time.Millisecond, StatementTimeout: time.Second}
	stream := &fakeStream{}
	r := newFileRecorder(b, &cfg, stream, func(string) {})
	h := r.h
	const clients = 4
	q := newTxnQueue(clients)
	done := make(chan error, 1)
	b.ReportAllocs()
	b.ResetTimer()
	c0 := processCPU()
	go func() { done <- r.loop(context.Background(), q) }()
	var wg sync.WaitGroup
	per := (b.N + clients - 1) / clients
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			session := "c" + string(rune('0'+c))
			ops := make([]workload.Op, 0, 4)
			for i := 0; i < per; i++ {
				n := int64(c*per + i)
				ops = rwTxnOps(ops[:0], n, n*10, 2, 1)
				xid := uint64(1000 + n)
				raw := rawPool.Get().(*rawTxn)
				*raw = rawTxn{session: session, seq: i, status: history.Committed, inv: n * 10, cmp: n*10 + 9,
					ops: append(raw.ops[:0], ops...), ev: db.TxnEvidence{XID: xid}}
				stream.add(db.CommitRecord{XID: xid, LSN: uint64(n) * 200, Time: "2026-11-24 17:00:00.123456+00"})
				q.push(raw)
			}
		}(c)
	}
	wg.Wait()
	q.close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(1e9*(processCPU()-c0)/float64(per*clients), "cpu-ns/txn")
	if got := len(h.Txns); got != per*clients {
		b.Fatalf("recorded %d transactions, want %d", got, per*clients)
	}
}

// newFileRecorder is a recorder of a PostgreSQL rw-register run under
// cfg, without a database: it writes history.jsonl and evidence.jsonl in a
// temporary directory (closed at the end of tb) and takes its commit
// records from stream.
func newFileRecorder(tb testing.TB, cfg *Config, stream db.CommitStream, warn func(string)) *recorder {
	dir := tb.TempDir()
	h := history.New()
	h.Header = history.Header{Format: "jsonl", DB: "postgres", Level: db.ReadCommitted, Workload: "rw-register"}
	h.Evidence = history.Evidence{Sessions: true, ClientTime: true, OpTime: true, CommitOrder: true}
	f, err := os.Create(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	ef, err := os.Create(filepath.Join(dir, "evidence.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ef.Close() })
	r := &recorder{cfg: cfg, warn: warn, h: h, f: f, w: jsonl.NewWriter(f), ef: ef, stream: stream}
	if err := r.w.WriteHeader(h.Header, h.Evidence); err != nil {
		tb.Fatal(err)
	}
	return r
}

// rwTxnOps appends to dst the 4 ops of rw-register transaction n of the
// recorder benchmarks (1000 keys; reads of n-1 and writes of n*4+j,
// alternating), op j invoked at start+j*step and completed dur later.
func rwTxnOps(dst []workload.Op, n, start, step, dur int64) []workload.Op {
	for j := int64(0); j < 4; j++ {
		k := (n*7 + j*131) % 1000
		t := start + j*step
		if j%2 == 0 {
			dst = append(dst, workload.Op{Kind: history.Read, Key: k, Value: n - 1, HasValue: n > 0, Invoke: t, Complete: t + dur, Done: true})
		} else {
			dst = append(dst, workload.Op{Kind: history.Write, Key: k, Value: n*4 + j, HasValue: true, Invoke: t, Complete: t + dur, Done: true})
		}
	}
	return dst
}
