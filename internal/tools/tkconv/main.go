// Command tkconv rewrites a TimeKiller JSON history (stdin) in the layout
// TimeKiller's own generator writes: object fields sorted by name (cts, ops,
// sid, sts, tid; in ops k, t, v), compact, one transaction per line inside
// the array (stdout). Numbers keep their text. It is a benchmark helper
// (docs/benchmarks.md, "Issue 17"): txray's encoder writes t, k, v, and the
// decoders' fast paths must be measured on the peer's layout too.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tkconv:", err)
		os.Exit(1)
	}
}

func run() error {
	dec := json.NewDecoder(bufio.NewReaderSize(os.Stdin, 1<<20))
	dec.UseNumber()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if _, err := dec.Token(); err != nil {
		return err
	}
	w.WriteString("[")
	for first := true; dec.More(); first = false {
		var m map[string]any // encoding/json writes map keys sorted
		if err := dec.Decode(&m); err != nil {
			return err
		}
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if !first {
			w.WriteString(",")
		}
		w.WriteString("\n")
		w.Write(b)
	}
	w.WriteString("\n]\n")
	return w.Flush()
}
