package leopard

import (
	"bufio"
	"os"
	"runtime"
	"testing"

	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/model"
)

// BenchmarkOnlineRetainedHeap measures what the online verifier keeps
// from a long stream, as txray watch --checker leopard feeds it (line
// decoder, integer values as their own ids, Advance as the arrival window)
// but without the CLI's arrival window in wall time: the watermark trails
// the stream by a fixed 5,000 transactions. It reports the live heap after
// a collection at the end of the stream (before Flush), the keys and
// versions retained, the live heap per key, and the size of the spill
// file per transaction record (on disk, for explanations only). The stream is a native
// JSON Lines file named by TXRAY_STREAM (docs/benchmarks.md, "Online: txray
// watch --checker leopard memory"):
//
//	txray gen -q -w rw-register -l snapshot-isolation --clients 20 -n 900000 -o /tmp/rw900000.jsonl
//	TXRAY_STREAM=/tmp/rw900000.jsonl go test ./check/leopard -run '^$' -bench OnlineRetainedHeap -benchtime 1x
func BenchmarkOnlineRetainedHeap(b *testing.B) {
	name := os.Getenv("TXRAY_STREAM")
	if name == "" {
		b.Skip("TXRAY_STREAM names no stream file")
	}
	for b.Loop() {
		f, err := os.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		dec := jsonl.NewLineDecoder(name)
		h := dec.History()
		h.Values = history.NewIdentityInterner()
		p, _ := model.LookupProfile("postgres:repeatable-read")
		on := NewOnline(p, OnlineOptions{Keys: h.Keys, Values: h.Values, Window: true})
		const lag = 5000
		var ring [lag]int64
		n, bound := 0, int64(-1<<62)
		br := bufio.NewReaderSize(f, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				t, derr := dec.Decode(line)
				if derr != nil {
					b.Fatal(derr)
				}
				h.VersionOrder = nil
				if t != nil {
					on.Add(t)
					if n >= lag {
						bound = max(bound, ring[n%lag])
					}
					ring[n%lag] = t.Invoke
					if n++; n%1000 == 0 {
						on.Advance(bound)
					}
				}
			}
			if err != nil {
				break
			}
		}
		f.Close()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		keys, versions := 0, 0
		for k := range int32(len(on.e.slots) * keyChunk) {
			if nw, _ := on.e.keyVersions(k); nw > 0 {
				keys++
				versions += nw
			}
		}
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MiB")
		b.ReportMetric(float64(keys), "keys")
		b.ReportMetric(float64(versions), "versions")
		b.ReportMetric(float64(ms.HeapAlloc)/float64(max(keys, 1)), "live-B/key")
		// The spill file (explanations only, on disk): its size per
		// record, one record per collected committed writing transaction.
		b.ReportMetric(float64(on.e.spill.off)/float64(max(on.e.spill.records, 1)), "spill-B/txn")
		if r := on.Flush(); r.Verdict.String() == "" {
			b.Fatal("no verdict")
		}
	}
}
