package elle

import (
	"sort"
	"strconv"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/graph"
	"github.com/txray/txray/history"
)

// opRef names one micro-op: transaction index and op index within it.
type opRef struct{ t, o int32 }

// edgeSink receives inferred dependency edges. *graph.Builder implements it;
// tests use a recording sink.
type edgeSink interface {
	Add(from, to int32, rel graph.Rel, why graph.Why)
}

// bitset is a dense set of small non-negative integers.
type bitset []uint64

func newBitset(n int) bitset       { return make(bitset, (n+63)/64) }
func (b bitset) set(i int32)       { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) has(i int32) bool  { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) clear(i int32)     { b[i>>6] &^= 1 << (uint(i) & 63) }
func (b bitset) reset()            { clear(b) }
func (b bitset) len() int          { return len(b) * 64 }
func (b bitset) grow(n int) bitset { return append(b, make(bitset, (n+63)/64-len(b))...) }
func (b bitset) setBool(i int32, v bool) {
	if v {
		b.set(i)
	} else {
		b.clear(i)
	}
}

// collector gathers anomalies, at most max per type; the rest are counted.
// Anomalies are built lazily so truncated ones cost no string building.
type collector struct {
	h         *history.History // for the "Let:" block of non-cycle anomalies
	max       int
	byType    map[string][]check.Anomaly
	order     []string
	truncated map[string]int
}

func newCollector(h *history.History, max int) *collector {
	return &collector{h: h, max: max, byType: map[string][]check.Anomaly{}, truncated: map[string]int{}}
}

// add records one anomaly of typ; mk is called only if it will be listed
// (a nil mk counts one that is not listed).
func (c *collector) add(typ string, mk func() check.Anomaly) {
	l, seen := c.byType[typ]
	if !seen {
		c.order = append(c.order, typ)
		c.byType[typ] = nil
	}
	if len(l) >= c.max || mk == nil { // nil mk: counted beyond the cap, never built
		c.truncated[typ]++
		return
	}
	a := mk()
	a.Type = typ
	if len(a.Cycle) == 0 && len(a.Txns) > 0 && c.h != nil {
		a.Explanation = letBlock(c.h, a.Txns) + "Then: " + a.Explanation + "."
	}
	c.byType[typ] = append(l, a)
}

// count reports how many anomalies of typ were found (listed or not).
func (c *collector) count(typ string) int { return len(c.byType[typ]) + c.truncated[typ] }

// has reports whether any anomaly of typ was found.
func (c *collector) has(typ string) bool { _, ok := c.byType[typ]; return ok }

// into appends the collected anomalies to r, sorted by type name for a
// stable report, and fills r.Truncated.
func (c *collector) into(r *check.Result) {
	types := append([]string(nil), c.order...)
	sort.Strings(types)
	for _, t := range types {
		r.Anomalies = append(r.Anomalies, c.byType[t]...)
		if n := c.truncated[t]; n > 0 {
			if r.Truncated == nil {
				r.Truncated = map[string]int{}
			}
			r.Truncated[t] += n
		}
	}
}

// uniq returns txns without repeats, in first-seen order.
func uniq(txns ...int32) []int32 {
	out := make([]int32, 0, len(txns))
outer:
	for _, t := range txns {
		for _, u := range out {
			if u == t {
				continue outer
			}
		}
		out = append(out, t)
	}
	return out
}

// maxListShown is the longest list rendered in full in an explanation;
// longer lists are shown as a window with "..." marking the elided part.
const maxListShown = 12

// listWindow renders l, eliding elements far from positions lo..hi (which
// are kept, together with one element of context on each side).
func listWindow(h *history.History, l []int32, lo, hi int) string {
	if len(l) <= maxListShown {
		return h.ListString(l)
	}
	if lo < 0 {
		lo = 0
	}
	if hi >= len(l) {
		hi = len(l) - 1
	}
	if hi < lo {
		hi = lo
	}
	from, to := lo-1, hi+1
	if from < 0 {
		from = 0
	}
	if to > len(l)-1 {
		to = len(l) - 1
	}
	var b strings.Builder
	b.WriteByte('[')
	if from > 0 {
		b.WriteString("... ")
	}
	for i := from; i <= to; i++ {
		if i > from {
			b.WriteByte(' ')
		}
		b.WriteString(h.ValueName(l[i]))
	}
	if to < len(l)-1 {
		b.WriteString(" ...")
	}
	b.WriteByte(']')
	return b.String()
}

// listTail renders l showing its last few elements.
func listTail(h *history.History, l []int32) string {
	return listWindow(h, l, len(l)-3, len(l)-1)
}

func itoa(i int) string { return strconv.Itoa(i) }

// statusWord describes a transaction's outcome for explanations.
func statusWord(s history.Status) string {
	switch s {
	case history.Committed:
		return "committed"
	case history.Aborted:
		return "aborted"
	}
	return "outcome unknown"
}

// letBlock lists transactions the way cycle explanations do.
func letBlock(h *history.History, txns []int32) string {
	var b strings.Builder
	b.WriteString("Let:\n")
	for _, t := range txns {
		if t >= 0 && int(t) < len(h.Txns) {
			b.WriteString("  ")
			b.WriteString(h.TxnString(t))
			b.WriteByte('\n')
		}
	}
	return b.String()
}
