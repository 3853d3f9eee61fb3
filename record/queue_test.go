package record

import (
	"strconv"
	"strings"
	"sync"
	"testing"
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
