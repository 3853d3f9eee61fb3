// Package chronostest generates histories with database timestamps for
// tests and benchmarks of the timestamp checkers (chronos, aion): a small
// in-memory multi-version store executing transactions under snapshot
// isolation (reads at the start timestamp, first-committer-wins on write
// conflicts) and recording start and commit timestamps. It does not depend
// on the project simulator.
package chronostest

import (
	"math/rand/v2"

	"github.com/txray/txray/history"
)

// Config shapes a generated history.
type Config struct {
	Txns     int     // committed + aborted transactions to emit
	Sessions int     // concurrent sessions (one open transaction each)
	Keys     int     // key space
	Ops      int     // ops per transaction
	ReadFrac float64 // fraction of reads
	Zipf     float64 // zipfian exponent (> 1); 0 = uniform
	List     bool    // list-append instead of read/write registers
	Seed     uint64
	// Concurrency is how many transactions are open at once (default 4):
	// each step starts a transaction in a random idle session and, when
	// more than Concurrency are open, commits (or aborts) the oldest.
	Concurrency int
	// EmitAborted keeps transactions aborted by first-committer-wins in
	// the history (status aborted, no timestamps); by default they are
	// dropped, so Txns counts committed transactions.
	EmitAborted bool
}

type ver struct {
	cts int64
	val int32 // kv: value id; list: length of the list after this version
}

type open struct {
	t      history.Txn
	writes map[int32]bool
}

// Generate runs the executor. Every value written is unique per key.
func Generate(cfg Config) *history.History {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	var zipf *rand.Zipf
	if cfg.Zipf > 1 {
		zipf = rand.NewZipf(rng, cfg.Zipf, 1, uint64(cfg.Keys-1))
	}
	pick := func() int32 {
		if zipf != nil {
			return int32(zipf.Uint64())
		}
		return int32(rng.IntN(cfg.Keys))
	}
	h := history.New()
	h.Txns = make([]history.Txn, 0, cfg.Txns)
	for k := 0; k < cfg.Keys; k++ {
		h.Keys.Int(int64(k))
	}
	vers := make([][]ver, cfg.Keys)
	lists := make([][]int32, cfg.Keys)
	lastCommit := make([]int64, cfg.Keys)
	next := int64(1)
	clock := int64(1)
	sess := make([]*open, cfg.Sessions)
	seq := make([]int32, cfg.Sessions)
	for s := range cfg.Sessions {
		h.Sessions.Str("s" + itoa(s))
	}
	readAt := func(k int32, ts int64) (ver, bool) {
		vs := vers[k]
		for i := len(vs) - 1; i >= 0; i-- {
			if vs[i].cts <= ts {
				return vs[i], true
			}
		}
		return ver{}, false
	}
	conc := cfg.Concurrency
	if conc <= 0 {
		conc = 4
	}
	conc = min(conc, cfg.Sessions)
	var openQ []int // sessions with an open transaction, oldest first
	for len(h.Txns) < cfg.Txns {
		var s int
		var o *open
		if len(openQ) < conc {
			s = rng.IntN(cfg.Sessions)
			for sess[s] != nil {
				s = (s + 1) % cfg.Sessions
			}
			openQ = append(openQ, s)
		} else {
			s = openQ[0]
			openQ = openQ[1:]
			o = sess[s]
		}
		if o == nil {
			clock++
			t := history.Txn{Session: int32(s), Seq: seq[s], StartTS: history.Timestamp{P: clock, Set: true}}
			seq[s]++
			o = &open{t: t, writes: map[int32]bool{}}
			t.Ops = make([]history.Op, 0, cfg.Ops)
			local := map[int32]int32{}
			var localList map[int32][]int32
			if cfg.List {
				localList = map[int32][]int32{}
			}
			for range cfg.Ops {
				k := pick()
				if rng.Float64() < cfg.ReadFrac {
					op := history.Op{Kind: history.Read, Key: k, Value: history.NoValue}
					if cfg.List {
						if l, ok := localList[k]; ok {
							t.SetList(&op, l)
						} else {
							v, _ := readAt(k, clock)
							t.SetList(&op, lists[k][:v.val])
						}
					} else if v, ok := local[k]; ok {
						op.Value = v
					} else if v, ok := readAt(k, clock); ok {
						op.Value = v.val
					}
					t.Ops = append(t.Ops, op)
				} else {
					v := h.Values.Int(next)
					next++
					kind := history.Write
					if cfg.List {
						kind = history.Append
						l, ok := localList[k]
						if !ok {
							pv, _ := readAt(k, clock)
							l = append([]int32{}, lists[k][:pv.val]...)
						}
						localList[k] = append(l, v)
					}
					t.Ops = append(t.Ops, history.Op{Kind: kind, Key: k, Value: v})
					local[k] = v
					o.writes[k] = true
				}
			}
			o.t = t
			sess[s] = o
			continue
		}
		// commit or abort (first committer wins)
		sess[s] = nil
		t := o.t
		conflict := false
		for k := range o.writes {
			if lastCommit[k] > t.StartTS.P {
				conflict = true
				break
			}
		}
		if conflict {
			if !cfg.EmitAborted {
				continue
			}
			t.Status = history.Aborted
			t.StartTS = history.Timestamp{}
			h.Add(t)
			continue
		}
		clock++
		t.CommitTS = history.Timestamp{P: clock, Set: true}
		t.Status = history.Committed
		for j := range t.Ops {
			op := &t.Ops[j]
			switch op.Kind {
			case history.Write:
				vers[op.Key] = append(vers[op.Key], ver{clock, op.Value})
			case history.Append:
				lists[op.Key] = append(lists[op.Key], op.Value)
				vers[op.Key] = append(vers[op.Key], ver{clock, int32(len(lists[op.Key]))})
			default:
				continue
			}
			lastCommit[op.Key] = clock
		}
		h.Add(t)
	}
	h.Evidence.Timestamps = true
	h.Evidence.Sessions = true
	if cfg.List {
		h.Header.Workload = "list-append"
	} else {
		h.Header.Workload = "rw-register"
	}
	return h
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}
