// Command manysessions writes a valid strong-session SI register stream over
// many sessions: transaction i belongs to a session drawn at random among
// -sessions, starts at 10i+10 and commits 5 later (so every session's
// transactions follow each other), reads -ops/2 keys among -keys (the value
// last written to each) and writes -ops/2 (value i). With -late it ends
// with a transaction of the session idle the longest that starts before its
// predecessor committed: a Session violation that only the forgotten state
// of that session shows.
// Used for the aion session-budget measurement (docs/benchmarks.md, "aion:
// sessions bounded"): go run ./scripts/manysessions -n 1000000 -sessions
// 200000 | txray watch --json --model strong-session-snapshot-isolation
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
)

func main() {
	n := flag.Int("n", 1000000, "transactions")
	nsess := flag.Int("sessions", 200000, "sessions")
	nkeys := flag.Int("keys", 100000, "keys")
	nops := flag.Int("ops", 8, "ops per transaction (half reads, half writes)")
	late := flag.Bool("late", false, "end with a Session violation in the session idle the longest")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	rng := rand.New(rand.NewPCG(1, 2))
	last := make([]int64, *nkeys) // value last written, -1: none
	for i := range last {
		last[i] = -1
	}
	lastTxn := make([]int, *nsess) // last transaction + 1 per session
	b := make([]byte, 0, 1024)
	for i := 0; i < *n; i++ {
		s := rng.IntN(*nsess)
		lastTxn[s] = i + 1
		ts := int64(10*i + 10)
		b = b[:0]
		b = fmt.Appendf(b, `{"id":"t%d","session":"%d","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[`, i, s, ts, ts+5)
		for j := 0; j < *nops; j++ {
			if j > 0 {
				b = append(b, ',')
			}
			k := rng.IntN(*nkeys)
			if j < *nops/2 {
				b = append(b, `{"f":"r","k":`...)
				b = strconv.AppendInt(b, int64(k), 10)
				b = append(b, `,"v":`...)
				if last[k] < 0 {
					b = append(b, "null"...)
				} else {
					b = strconv.AppendInt(b, last[k], 10)
				}
			} else {
				b = append(b, `{"f":"w","k":`...)
				b = strconv.AppendInt(b, int64(k), 10)
				b = append(b, `,"v":`...)
				b = strconv.AppendInt(b, int64(i), 10)
				last[k] = int64(i)
			}
			b = append(b, '}')
		}
		b = append(b, "]}\n"...)
		w.Write(b)
	}
	if *late {
		idle := -1
		for s, t := range lastTxn {
			if t > 0 && (idle < 0 || t < lastTxn[idle]) {
				idle = s
			}
		}
		if idle >= 0 {
			p := int64(lastTxn[idle] - 1)
			cts := int64(10**n + 10)
			// starts 1 before its predecessor committed (at 10p+15)
			fmt.Fprintf(w, `{"id":"late","session":"%d","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[]}`+"\n", idle, 10*p+14, cts)
		}
	}
}
