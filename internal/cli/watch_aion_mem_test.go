package cli

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestWatchAionForgetsKeysUnderMemoryLimit (issue 12): under a small
// --memory-limit (2 MiB: a budget of aionMaxKeys(2) = 4,096 keys) a stream
// that keeps creating keys makes watch forget settled keys (counted in the
// JSON stats), and a read of a long-forgotten key at the end makes the
// verdict unknown with the reason; the same stream without that read is
// valid. The input is paced so that ticks run while it arrives.
func TestWatchAionForgetsKeysUnderMemoryLimit(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(math.MaxInt64)
	const ntx = 3000 // 21,000 keys
	line := func(i int) string {
		var ops []string
		if i%100 != 0 {
			// the previous transaction's key, never across a pause
			// of the input (a key may be forgotten during one)
			ops = append(ops, fmt.Sprintf(`{"f":"r","k":%d,"v":%d}`, 7*(i-1), i-1))
		}
		for j := 0; j < 7; j++ {
			ops = append(ops, fmt.Sprintf(`{"f":"w","k":%d,"v":%d}`, 7*i+j, i))
		}
		return fmt.Sprintf(`{"id":"t%d","session":"%d","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[%s]}`+"\n",
			i, i%5, 10*i+10, 10*i+15, strings.Join(ops, ","))
	}
	for _, readOld := range []bool{false, true} {
		pr, pw := io.Pipe()
		go func() {
			for i := 0; i < ntx; i++ {
				pw.Write([]byte(line(i)))
				if i%100 == 99 {
					time.Sleep(15 * time.Millisecond)
				}
			}
			if readOld {
				fmt.Fprintf(pw, `{"id":"old","session":"x","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[{"f":"r","k":3,"v":0}]}`+"\n", 10*ntx+10, 10*ntx+15)
			}
			pw.Close()
		}()
		var out, errb bytes.Buffer
		root := NewRoot(&out, &errb)
		root.SetIn(pr)
		root.SetArgs([]string{"watch", "--json", "--memory-limit", "2", "--tick", "5ms", "--final-after", "20ms"})
		root.Execute()
		r := parseWatch(t, out.String())
		forgot, _ := r.Stats["forgotten_keys"].(float64)
		if forgot < 5000 {
			t.Fatalf("readOld=%v: forgotten_keys %v, want thousands: %s", readOld, r.Stats["forgotten_keys"], out.String())
		}
		if kept, _ := r.Stats["keys_retained"].(float64); kept > 3*4096 {
			t.Errorf("readOld=%v: %v keys retained under a budget of 4,096", readOld, kept)
		}
		switch {
		case readOld && (r.Valid != "unknown" || r.Stats["forgotten_reads"] != float64(1) || !strings.Contains(out.String(), "forgotten")):
			t.Errorf("read of a forgotten key: valid %v, forgotten_reads %v: %s", r.Valid, r.Stats["forgotten_reads"], out.String())
		case !readOld && r.Valid != true:
			t.Errorf("no forgotten key read: valid %v: %s", r.Valid, out.String())
		}
	}
}
