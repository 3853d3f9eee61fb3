package chronos

import (
	"math/rand/v2"
	"testing"

	"github.com/txray/txray/history"
)

// TestScanOpsMatchesSeparatePasses: the one-pass op scan finds what the
// separate passes it replaced found (history.HasDeletes, any append or list
// read, per transaction the ops that are not reads, writes or appends), on
// random mixes of every op kind.
func TestScanOpsMatchesSeparatePasses(t *testing.T) {
	kinds := []history.Kind{history.Read, history.Write, history.Append, history.PredRead, history.Increment, history.Delete}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		h := history.New()
		// mostly reads and writes, sometimes one rarer kind
		rare := kinds[rng.IntN(len(kinds))]
		for range rng.IntN(6) {
			var ops []history.Op
			for range rng.IntN(5) {
				o := history.Op{Kind: history.Read}
				switch r := rng.IntN(10); {
				case r < 4:
					o.Kind = history.Write
				case r == 9:
					o.Kind = rare
				}
				if o.Kind == history.Read && rng.IntN(8) == 0 {
					o.SetListSpan(0, 0)
				}
				ops = append(ops, o)
			}
			h.Add(history.Txn{Ops: ops})
		}
		want := opScan{deletes: h.HasDeletes()}
		for i := range h.Txns {
			for _, o := range h.Txns[i].Ops {
				if o.Kind == history.Append || (o.Kind == history.Read && o.IsList) {
					want.list = true
				}
				if o.Kind != history.Read && o.Kind != history.Write && o.Kind != history.Append {
					if want.other == nil {
						want.other = make([]int, len(h.Txns))
					}
					want.other[i]++
				}
			}
		}
		got := scanOps(h)
		if got.deletes != want.deletes || got.list != want.list || len(got.other) != len(want.other) {
			t.Fatalf("round %d: got %+v, want %+v", round, got, want)
		}
		for i := range want.other {
			if got.other[i] != want.other[i] {
				t.Fatalf("round %d: txn %d: %d other ops, want %d", round, i, got.other[i], want.other[i])
			}
		}
	}
}
