package weak

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// A brute-force oracle straight from Biswas & Enea's definitions (OOPSLA
// 2019 §2.2): enumerate every total order of the committed transactions and
// accept if one contains so ∪ wr and satisfies the level's axiom. Only for
// tiny histories; it shares no code with the checker.

type otxn struct {
	sess int
	ops  []oop
}

type oop struct {
	write bool
	key   int
	val   int // 0 = initial
	from  int // for external reads: writer txn index, -1 = initial, -2 = local
}

func oracle(txns []otxn, lv level) bool {
	n := len(txns)
	so := func(a, b int) bool { return txns[a].sess == txns[b].sess && a < b }
	writes := func(t, k int) bool {
		for _, o := range txns[t].ops {
			if o.write && o.key == k {
				return true
			}
		}
		return false
	}
	wr := make([][]bool, n)
	for i := range wr {
		wr[i] = make([]bool, n)
	}
	for t3, tx := range txns {
		for _, o := range tx.ops {
			if !o.write && o.from >= 0 {
				wr[o.from][t3] = true
			}
		}
	}
	hb := make([][]bool, n)
	for i := range hb {
		hb[i] = make([]bool, n)
		for j := range hb[i] {
			hb[i][j] = so(i, j) || wr[i][j]
		}
	}
	for m := 0; m < n; m++ {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if hb[i][m] && hb[m][j] {
					hb[i][j] = true
				}
			}
		}
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	posOf := make([]int, n)
	var try func(int) bool
	ok := func() bool {
		for i, t := range perm {
			posOf[t] = i
		}
		co := func(a, b int) bool { // b == -1: initial state, first
			if b == -1 {
				return false
			}
			if a == -1 {
				return true
			}
			return posOf[a] < posOf[b]
		}
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				if (so(a, b) || wr[a][b]) && !co(a, b) {
					return false
				}
			}
		}
		for t3, tx := range txns {
			for i, o := range tx.ops {
				if o.write || o.from == -2 {
					continue
				}
				t2 := o.from
				for t1 := 0; t1 < n; t1++ {
					if t1 == t2 || t1 == t3 || !writes(t1, o.key) {
						continue
					}
					var prem bool
					switch lv {
					case levelRC:
						for j := 0; j < i; j++ {
							if p := tx.ops[j]; !p.write && p.from == t1 {
								prem = true
							}
						}
					case levelRA:
						prem = so(t1, t3) || wr[t1][t3]
					default:
						prem = hb[t1][t3]
					}
					if prem && !co(t1, t2) {
						return false
					}
				}
			}
		}
		return true
	}
	try = func(i int) bool {
		if i == n {
			return ok()
		}
		for j := i; j < n; j++ {
			perm[i], perm[j] = perm[j], perm[i]
			if try(i + 1) {
				perm[i], perm[j] = perm[j], perm[i]
				return true
			}
			perm[i], perm[j] = perm[j], perm[i]
		}
		return false
	}
	return try(0)
}

// randomHistory builds a well-formed register history (every read returns
// the initial value, its own last write, or some other transaction's final
// write of the key) of n transactions.
func randomHistory(r *rand.Rand, n, sessions, keys int) []otxn {
	txns := make([]otxn, n)
	val := 0
	for t := range txns {
		txns[t].sess = r.IntN(sessions)
		for range 1 + r.IntN(3) {
			k := r.IntN(keys)
			if r.IntN(2) == 0 {
				val++
				txns[t].ops = append(txns[t].ops, oop{write: true, key: k, val: val})
			} else {
				txns[t].ops = append(txns[t].ops, oop{key: k})
			}
		}
	}
	final := func(t, k int) (int, bool) {
		v, ok := 0, false
		for _, o := range txns[t].ops {
			if o.write && o.key == k {
				v, ok = o.val, true
			}
		}
		return v, ok
	}
	for t := range txns {
		own := map[int]int{}
		for i := range txns[t].ops {
			o := &txns[t].ops[i]
			if o.write {
				own[o.key] = o.val
				continue
			}
			if v, ok := own[o.key]; ok {
				o.val, o.from = v, -2
				continue
			}
			var cands []int
			for w := range txns {
				if _, ok := final(w, o.key); ok && w != t {
					cands = append(cands, w)
				}
			}
			c := r.IntN(len(cands) + 1)
			if c == len(cands) {
				o.val, o.from = 0, -1
			} else {
				o.from = cands[c]
				o.val, _ = final(cands[c], o.key)
			}
		}
	}
	return txns
}

func toHistory(txns []otxn) *history.History {
	h := history.New()
	seq := map[int]int32{}
	for _, tx := range txns {
		t := history.Txn{Session: h.Sessions.Int(int64(tx.sess)), Seq: seq[tx.sess], Status: history.Committed}
		seq[tx.sess]++
		for _, o := range tx.ops {
			op := history.Op{Key: h.Keys.Int(int64(o.key)), Value: history.NoValue}
			if o.write {
				op.Kind = history.Write
			}
			if o.val != 0 {
				op.Value = h.Values.Int(int64(o.val))
			}
			t.Ops = append(t.Ops, op)
		}
		h.Add(t)
	}
	h.Evidence.Sessions = true
	return h
}

// TestDifferentialOracle compares the checker with the brute-force oracle
// on thousands of random tiny histories at every level.
func TestDifferentialOracle(t *testing.T) {
	iters := 3000
	if testing.Short() {
		iters = 300
	}
	r := rand.New(rand.NewPCG(1, 2))
	counts := map[string]int{}
	for it := 0; it < iters; it++ {
		n := 2 + r.IntN(5)
		txns := randomHistory(r, n, 1+r.IntN(3), 1+r.IntN(3))
		h := toHistory(txns)
		for _, c := range []struct {
			lv level
			m  string
		}{{levelRC, model.ReadCommittedBE}, {levelRA, model.ReadAtomic}, {levelCC, model.CausalCerone}} {
			want := oracle(txns, c.lv)
			res, err := Checker{}.Check(context.Background(), h, check.Options{Model: c.m})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Verdict == check.Valid
			if res.Verdict == check.Unknown || got != want {
				t.Fatalf("iteration %d, %s: checker %v %v, oracle valid=%v\n%s", it, c.m, res.Verdict, res.AnomalyTypes, want, dump(h))
			}
			if want {
				counts[c.m+" valid"]++
			} else {
				counts[c.m+" invalid"]++
			}
		}
	}
	t.Log(counts)
	for _, m := range []string{model.ReadCommittedBE, model.ReadAtomic, model.CausalCerone} {
		if counts[m+" valid"] == 0 || counts[m+" invalid"] == 0 {
			t.Errorf("%s: the random histories did not exercise both verdicts: %v", m, counts)
		}
	}
}

func dump(h *history.History) string {
	s := ""
	for i := range h.Txns {
		s += h.Sessions.String(h.Txns[i].Session) + ": " + h.TxnString(int32(i)) + "\n"
	}
	return s
}

// TestCausalSweepsAgree: the key-major table and the per-session-pair sweep
// decide causal consistency identically (oracle histories, list patterns).
func TestCausalSweepsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for it := 0; it < 1500; it++ {
		txns := randomHistory(r, 2+r.IntN(6), 1+r.IntN(3), 1+r.IntN(3))
		h := toHistory(txns)
		a := run(t, h, model.CausalCerone)
		saved := ccTableLimit
		ccTableLimit = 0
		b := run(t, h, model.CausalCerone)
		ccTableLimit = saved
		if a.Verdict != b.Verdict || len(a.Anomalies) != len(b.Anomalies) {
			t.Fatalf("iteration %d: table %v %v, sweep %v %v\n%s", it, a.Verdict, a.AnomalyTypes, b.Verdict, b.AnomalyTypes, dump(h))
		}
		if want := oracle(txns, levelCC); (b.Verdict == check.Valid) != want {
			t.Fatalf("iteration %d: sweep %v, oracle valid=%v\n%s", it, b.Verdict, want, dump(h))
		}
	}
	saved := ccTableLimit
	defer func() { ccTableLimit = saved }()
	ccTableLimit = 0
	h := listHistory(t, "0: a 1 1", "1: r 1 1, a 2 1", "2: r 2 1, r 1")
	if r := run(t, h, model.CausalCerone); r.Verdict != check.Invalid {
		t.Errorf("list commit-order-conflict with the sweep: %v", r.Verdict)
	}
}
