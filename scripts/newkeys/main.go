// Command newkeys writes a valid SI register stream whose every transaction
// creates new keys: transaction i writes keys 7i..7i+6 (value i) and reads
// 7 keys, each written by one of the previous 1,000 transactions (their
// values).
// With -old it ends with a read of key 0 (long forgotten under a budget).
// Used for the aion key-budget measurement (docs/benchmarks.md, "aion key
// budget"): go run ./scripts/newkeys -n 1500000 -old | txray watch --json
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
	n := flag.Int("n", 1500000, "transactions")
	old := flag.Bool("old", false, "end with a read of key 0")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	rng := rand.New(rand.NewPCG(1, 1))
	b := make([]byte, 0, 1024)
	for i := 0; i < *n; i++ {
		ts := int64(10*i + 10)
		b = b[:0]
		b = fmt.Appendf(b, `{"id":"t%d","session":"%d","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[`, i, i%50, ts, ts+5)
		first := true
		if i > 0 {
			for j := 0; j < 7; j++ {
				d := 1 + rng.IntN(min(i, 1000))
				k := 7*(i-d) + rng.IntN(7)
				if !first {
					b = append(b, ',')
				}
				first = false
				b = append(b, `{"f":"r","k":`...)
				b = strconv.AppendInt(b, int64(k), 10)
				b = append(b, `,"v":`...)
				b = strconv.AppendInt(b, int64(i-d), 10)
				b = append(b, '}')
			}
		}
		for j := 0; j < 7; j++ {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, `{"f":"w","k":`...)
			b = strconv.AppendInt(b, int64(7*i+j), 10)
			b = append(b, `,"v":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, '}')
		}
		b = append(b, "]}\n"...)
		w.Write(b)
	}
	if *old {
		ts := int64(10**n + 10)
		fmt.Fprintf(w, `{"id":"old","session":"x","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[{"f":"r","k":0,"v":0}]}`+"\n", ts, ts+5)
	}
}
