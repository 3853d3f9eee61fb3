package polygraph

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// randListHistory builds a tiny list-append history: n transactions of 1-3
// ops on keys 0..1, unique appended values, reads of a list that is mostly
// a prefix of the key's appends in creation order (sometimes with an
// element dropped or two swapped), statuses mostly committed.
func randListHistory(r *rand.Rand, n int) *history.History {
	h := history.New()
	h.Evidence.Sessions = true
	keys := []int32{h.Keys.Int(0), h.Keys.Int(1)}
	type op struct {
		app  bool
		key  int
		val  int64
		list []int64
	}
	plans := make([][]op, n)
	var created [2][]int64
	val := int64(0)
	for i := range plans {
		for j := 0; j < 1+r.IntN(3); j++ {
			o := op{app: r.IntN(2) == 0, key: r.IntN(2)}
			if o.app {
				val++
				o.val = val
				created[o.key] = append(created[o.key], val)
			}
			plans[i] = append(plans[i], o)
		}
	}
	sess := []int32{h.Sessions.Int(0), h.Sessions.Int(1)}
	seq := [2]int32{}
	for i := range plans {
		c := r.IntN(2)
		t := history.Txn{Session: sess[c], Seq: seq[c]}
		seq[c]++
		switch r.IntN(10) {
		case 0:
			t.Status = history.Aborted
		case 1:
			t.Status = history.Unknown
		}
		for _, p := range plans[i] {
			o := history.Op{Key: keys[p.key], Value: history.NoValue}
			if p.app {
				o.Kind, o.Value = history.Append, h.Values.Int(p.val)
			} else {
				cs := created[p.key]
				l := slices.Clone(cs[:r.IntN(len(cs)+1)])
				switch r.IntN(8) {
				case 0:
					if len(l) > 1 {
						k := r.IntN(len(l))
						l = append(l[:k], l[k+1:]...)
					}
				case 1:
					if len(l) > 1 {
						k := r.IntN(len(l) - 1)
						l[k], l[k+1] = l[k+1], l[k]
					}
				}
				o.Kind = history.Read
				t.SetList(&o, nil)
				for _, v := range l {
					t.ExtendList(&o, h.Values.Int(v))
				}
			}
			t.Ops = append(t.Ops, o)
		}
		h.Add(t)
	}
	return h
}

// listReadsOK: txn t's list reads, seeing state st plus its own appends.
func listReadsOK(t *history.Txn, st map[int32][]int32) bool {
	own := map[int32][]int32{}
	for j := range t.Ops {
		o := &t.Ops[j]
		if o.Kind == history.Append {
			own[o.Key] = append(own[o.Key], o.Value)
			continue
		}
		want := append(slices.Clone(st[o.Key]), own[o.Key]...)
		if !slices.Equal(t.ListOf(o), want) {
			return false
		}
	}
	return true
}

func applyList(t *history.Txn, st map[int32][]int32) {
	for _, o := range t.Ops {
		if o.Kind == history.Append {
			st[o.Key] = append(slices.Clone(st[o.Key]), o.Value)
		}
	}
}

// TestListBruteForce: on many tiny random list-append histories, the
// polygraph's verdict (on its register view of the lists) for serializable,
// strong-session serializable and snapshot isolation equals exhaustive
// search over serial orders / commit orders with snapshots, over every
// subset of the unknown-outcome transactions.
func TestListBruteForce(t *testing.T) {
	seeds := 1500
	if testing.Short() {
		seeds = 400
	}
	if *probe {
		seeds = 30000
	}
	counts := map[string][2]int{}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 1234))
		h := randListHistory(r, 2+r.IntN(4))
		for _, m := range []string{model.Serializable, model.StrongSessionSerializable, model.SnapshotIsolation} {
			want := possible(h, oracle(lists, m))
			res, err := Checker{}.Check(context.Background(), h, check.Options{Model: m})
			if err != nil {
				t.Fatal(err)
			}
			if (res.Verdict == check.Valid) != want || res.Verdict == check.Unknown {
				var txns []string
				for i := range h.Txns {
					txns = append(txns, h.Txns[i].Status.String()+" "+h.TxnString(int32(i)))
				}
				t.Fatalf("seed %d %s: polygraph %s %v, exhaustive search valid=%v\n%q\n%s", seed, m, res.Verdict, res.AnomalyTypes, want, txns, dump(res))
			}
			c := counts[m]
			if want {
				c[0]++
			} else {
				c[1]++
			}
			counts[m] = c
		}
	}
	t.Logf("valid/invalid: %v", counts)
}

// TestElleListAppendBruteForce: the list-append inference checker
// (check/elle) against the same exhaustive search. Serializability: equal
// wherever elle is definite. Snapshot isolation: elle never rejects what
// the search accepts; it may accept what only a search over the order of
// unobserved appends rejects (inference orders only what reads show), which
// is counted, not failed. This found elle judging the reads of
// unknown-outcome transactions nobody observed (false rejects) and not
// judging those that others observed (false accepts).
func TestElleListAppendBruteForce(t *testing.T) {
	la, ok := check.Lookup("list-append")
	if !ok {
		t.Fatal("list-append checker not registered")
	}
	seeds := 1500
	if testing.Short() {
		seeds = 400
	}
	if *probe {
		seeds = 30000
	}
	missed := 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 1234))
		h := randListHistory(r, 2+r.IntN(4))
		for _, m := range []string{model.Serializable, model.SnapshotIsolation} {
			want := possible(h, oracle(lists, m))
			res, err := la.Check(context.Background(), h, check.Options{Model: m})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict == check.Unknown || (res.Verdict == check.Valid) == want {
				continue
			}
			if m == model.SnapshotIsolation && res.Verdict == check.Valid {
				missed++
				continue
			}
			var txns []string
			for i := range h.Txns {
				txns = append(txns, h.Txns[i].Status.String()+" "+h.TxnString(int32(i)))
			}
			t.Errorf("seed %d %s: list-append says %s %v, exhaustive search valid=%v\n%q", seed, m, res.Verdict, res.AnomalyTypes, want, txns)
		}
	}
	t.Logf("SI histories only the search over unobserved appends rejects: %d", missed)
}

// FuzzListCheck: arbitrary tiny list-append histories never make the
// checker fail or panic, and its serializability verdict is the exhaustive
// search's.
func FuzzListCheck(f *testing.F) {
	for _, s := range []uint64{1, 2, 127, 243, 1289} {
		f.Add(s, uint8(4))
	}
	f.Fuzz(func(t *testing.T, seed uint64, n uint8) {
		r := rand.New(rand.NewPCG(seed, 1234))
		h := randListHistory(r, 1+int(n%5))
		res, err := Checker{}.Check(context.Background(), h, check.Options{Model: model.Serializable})
		if err != nil {
			t.Fatal(err)
		}
		if (res.Verdict == check.Valid) != possible(h, oracle(lists, model.Serializable)) {
			t.Fatalf("verdict %s disagrees with exhaustive search\n%s", res.Verdict, dump(res))
		}
	})
}
