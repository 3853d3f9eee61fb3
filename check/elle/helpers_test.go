package elle

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

// hb builds small histories for tests from Elle-like op strings:
// "append x 1", "r x [1 2]", "r x nil", "w x 3", "r x 3".
type hb struct {
	t   testing.TB
	h   *history.History
	seq map[int32]int32
}

func newHB(t testing.TB) *hb {
	return &hb{t: t, h: history.New(), seq: map[int32]int32{}}
}

// spec is one transaction for hb.add.
type spec struct {
	st        history.Status
	sess      string // "" = no session
	inv, comp int64  // client interval; both 0 = no time
	ops       []string
}

func ok(sess string, ops ...string) spec   { return spec{st: history.Committed, sess: sess, ops: ops} }
func fail(sess string, ops ...string) spec { return spec{st: history.Aborted, sess: sess, ops: ops} }
func info(sess string, ops ...string) spec { return spec{st: history.Unknown, sess: sess, ops: ops} }

// at gives a spec client times.
func (s spec) at(inv, comp int64) spec { s.inv, s.comp = inv, comp; return s }

func (b *hb) scalar(in *history.Interner, s string) int32 {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return in.Int(i)
	}
	return in.Str(s)
}

func (b *hb) add(specs ...spec) *hb {
	for _, s := range specs {
		t := history.Txn{Status: s.st, Session: -1}
		if s.sess != "" {
			t.Session = b.h.Sessions.Str(s.sess)
			t.Seq = b.seq[t.Session]
			b.seq[t.Session]++
			b.h.Evidence.Sessions = true
		}
		if s.inv != 0 || s.comp != 0 {
			t.HasTime, t.Invoke, t.Complete = true, s.inv, s.comp
			b.h.Evidence.ClientTime = true
		}
		for _, os := range s.ops {
			t.Ops = append(t.Ops, b.op(&t, os))
		}
		b.h.Add(t)
	}
	return b
}

func (b *hb) op(t *history.Txn, s string) history.Op {
	f := strings.Fields(s)
	if len(f) < 3 {
		b.t.Fatalf("bad op %q", s)
	}
	kind, okk := history.ParseKind(f[0])
	if !okk {
		b.t.Fatalf("bad op kind %q", s)
	}
	o := history.Op{Kind: kind, Key: b.scalar(b.h.Keys, f[1]), Value: history.NoValue}
	rest := strings.Join(f[2:], " ")
	switch {
	case rest == "nil":
	case strings.HasPrefix(rest, "["):
		t.SetList(&o, nil)
		for _, e := range strings.Fields(strings.Trim(rest, "[]")) {
			t.ExtendList(&o, b.scalar(b.h.Values, e))
		}
	default:
		o.Value = b.scalar(b.h.Values, rest)
	}
	return o
}

// genCfg configures genHistory, a strictly serial executor: transactions
// take effect atomically at increasing serialization points inside their
// client intervals, so the history is strict-serializable unless mutated.
type genCfg struct {
	txns, ops, clients, keys int
	readFrac                 float64 // fraction of micro-ops that are reads
	abortFrac, infoFrac      float64
	register                 bool // rw-register instead of list-append
	globalValues             bool // values unique across keys (else per key 1, 2, ...)
	seed                     uint64
}

func genHistory(c genCfg) *history.History {
	rng := rand.New(rand.NewPCG(c.seed, c.seed^0x9e3779b97f4a7c15))
	h := history.New()
	for k := 0; k < c.keys; k++ {
		h.Keys.Int(int64(k))
	}
	for s := 0; s < c.clients; s++ {
		h.Sessions.Int(int64(s))
	}
	lists := make([][]int32, c.keys)
	regs := make([]int32, c.keys)
	for i := range regs {
		regs[i] = history.NoValue
	}
	counter := make([]int64, c.keys)
	var global int64
	ready := make([]int64, c.clients)
	seq := make([]int32, c.clients)
	type rec struct {
		t    history.Txn
		comp int64
	}
	recs := make([]rec, 0, c.txns)
	point := int64(0)
	for i := 0; i < c.txns; i++ {
		cl := rng.IntN(c.clients)
		inv := ready[cl]
		point = max(point+1+int64(rng.IntN(3)), inv)
		comp := point + int64(rng.IntN(40))
		ready[cl] = comp + 1 + int64(rng.IntN(5))
		st := history.Committed
		if x := rng.Float64(); x < c.abortFrac {
			st = history.Aborted
		} else if x < c.abortFrac+c.infoFrac {
			st = history.Unknown
		}
		apply := st == history.Committed || (st == history.Unknown && rng.IntN(2) == 0)
		t := history.Txn{Session: int32(cl), Seq: seq[cl], Status: st, HasTime: true, Invoke: inv, Complete: comp}
		seq[cl]++
		// Effects are staged and applied at the end if the txn commits.
		type stage struct {
			k int32
			v int32
		}
		var staged []stage
		for j := 0; j < c.ops; j++ {
			k := int32(rng.IntN(c.keys))
			if rng.Float64() < c.readFrac {
				o := history.Op{Kind: history.Read, Key: k, Value: history.NoValue}
				if !c.register {
					cur := lists[k]
					for _, s := range staged {
						if s.k == k {
							cur = append(cur[:len(cur):len(cur)], s.v)
						}
					}
					if st == history.Unknown {
						o.SetListSpan(0, 0)
						o.ListUnknown = true
					} else {
						t.SetList(&o, cur)
					}
				} else {
					o.Value = regs[k]
					for _, s := range staged {
						if s.k == k {
							o.Value = s.v
						}
					}
					if st == history.Unknown {
						o.Value = history.NoValue
					}
				}
				t.Ops = append(t.Ops, o)
				continue
			}
			var v int64
			if c.globalValues {
				global++
				v = global
			} else {
				counter[k]++
				v = counter[k]
			}
			vid := h.Values.Int(v)
			kind := history.Append
			if c.register {
				kind = history.Write
			}
			t.Ops = append(t.Ops, history.Op{Kind: kind, Key: k, Value: vid})
			staged = append(staged, stage{k, vid})
		}
		if apply {
			for _, s := range staged {
				if c.register {
					regs[s.k] = s.v
				} else {
					lists[s.k] = append(lists[s.k], s.v)
				}
			}
		}
		recs = append(recs, rec{t, comp})
	}
	slices.SortStableFunc(recs, func(a, b rec) int { return cmp.Compare(a.comp, b.comp) })
	for _, r := range recs {
		h.Add(r.t)
	}
	h.Evidence.Sessions, h.Evidence.ClientTime = true, true
	return h
}

func typesOf(as []string) string { return fmt.Sprint(as) }
