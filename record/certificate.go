package record

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/workload"
)

// Certificates (issue 14; the seed paper's version certificate and expected
// serialization order) from what the recorder already captures.
//
// Version order from commit order: PostgreSQL (every level), InnoDB
// (MariaDB/MySQL, every level) and SQLite hold a row's write lock until the
// writing transaction commits (PostgreSQL: tuple lock and xmax wait; InnoDB:
// exclusive record locks; SQLite: the database write lock), so two
// committed writers of one key commit in the order they installed their
// versions. With an exact commit order on every committed writer
// (Evidence.CommitOrder: the PostgreSQL commit LSN from logical decoding,
// the MariaDB binlog GTID), the version order of every key is therefore its
// committed final writes sorted by commit position.
//
// Expected serialization order: MariaDB/MySQL serializable is strict
// two-phase locking (InnoDB turns plain SELECTs into locking reads,
// MariaDB KB "SET TRANSACTION"), a commitment-ordering protocol: commit
// order is a serialization order, so Evidence.SerialOrder = "commit".
// PostgreSQL serializable (SSI) is not: a transaction may precede, in every
// serial order, one that committed before it.

// serialOrderFor returns the expected serialization order a database and
// level promise, given an exact commit order ("" when none).
func serialOrderFor(db, level string, commitOrder bool) string {
	if !commitOrder {
		return ""
	}
	switch db {
	case "mariadb", "mysql":
		if level == "serializable" {
			return history.SerialCommit
		}
	}
	return ""
}

// versionOrderFromCommits builds h.VersionOrder from the commit positions
// of committed writers (see above). It returns false, leaving h unchanged,
// when some committed writer has no commit position (the order would be
// incomplete).
func versionOrderFromCommits(h *history.History) bool {
	type ver struct {
		ts  history.Timestamp
		val int32
	}
	per := map[int32][]ver{}
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Status != history.Committed {
			continue
		}
		for j := len(t.Ops) - 1; j >= 0; j-- {
			o := &t.Ops[j]
			if o.Kind != history.Write || o.Value == history.NoValue {
				continue
			}
			if !t.CommitTS.Set {
				return false
			}
			vs := per[o.Key]
			if n := len(vs); n > 0 && vs[n-1].ts == t.CommitTS {
				continue // an earlier write of the key by the same txn
			}
			per[o.Key] = append(vs, ver{t.CommitTS, o.Value})
		}
	}
	vo := make(map[int32][]int32, len(per))
	for k, vs := range per {
		slices.SortStableFunc(vs, func(a, b ver) int { return a.ts.Compare(b.ts) })
		ord := make([]int32, len(vs))
		for i, v := range vs {
			ord[i] = v.val
		}
		vo[k] = ord
	}
	h.VersionOrder = vo
	h.Evidence.VersionOrder = true
	return true
}

// certify writes the version order at the end of a run (version_order
// records after the transactions): from the chains of replaced versions
// when the workload reported them, else from the commit order.
func (r *recorder) certify() error {
	h := r.h
	if h == nil || h.VersionOrder != nil {
		return nil
	}
	switch {
	case r.chains.n > 0:
		// the replaced versions are exact even without a commit log
		r.versionOrderFromChains(h)
	case !h.Evidence.CommitOrder:
		return nil
	case !versionOrderFromCommits(h):
		r.warn("some committed writers have no commit position: no version order derived")
		return nil
	}
	if r.w == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(h.VersionOrder)) {
		if err := r.w.WriteVersionOrder(h, k, h.VersionOrder[k]); err != nil {
			return err
		}
	}
	return nil
}

// chains collects, per key, the version each installed write replaced
// (workload.Op.Prev, reported by the write statement under the row lock):
// succ[(key, prev)] lists the values written over prev by transactions
// that did not abort (committed ones first).
type chains struct {
	succ  map[uint64][]link
	final map[uint64]bool // (key, value) final writes of committed txns
	n     int
}

type link struct {
	val       int32
	committed bool
}

func packKV(k, v int32) uint64 { return uint64(uint32(k))<<32 | uint64(uint32(v)) }

// chainVersions records the replaced versions of a transaction's final
// writes (the first write of a key in the transaction replaced the version
// before it; later ones replaced its own).
func (r *recorder) chainVersions(st history.Status, raw []workload.Op, ops []history.Op) {
	if st == history.Aborted {
		return
	}
	c := &r.chains
	for i := range raw {
		o := &raw[i]
		if o.Kind != history.Write || !o.HasValue {
			continue
		}
		k := ops[i].Key
		first, last := true, true
		for j := range raw {
			if j != i && raw[j].Kind == history.Write && ops[j].Key == k {
				if j < i {
					first = false
				} else {
					last = false
				}
			}
		}
		if !last {
			continue
		}
		// the replaced version is what the transaction's first write of k
		// replaced
		src := o
		if !first {
			for j := range raw {
				if raw[j].Kind == history.Write && ops[j].Key == k {
					src = &raw[j]
					break
				}
			}
		}
		if !src.PrevKnown || !o.Done {
			continue
		}
		prev := history.NoValue
		if !src.PrevNone {
			prev = r.h.Values.Int(src.Prev)
		}
		if c.succ == nil {
			c.succ, c.final = map[uint64][]link{}, map[uint64]bool{}
		}
		c.succ[packKV(k, prev)] = append(c.succ[packKV(k, prev)], link{ops[i].Value, st == history.Committed})
		if st == history.Committed {
			c.final[packKV(k, ops[i].Value)] = true
		}
		c.n++
	}
}

// versionOrderFromChains follows, per key, the chain of replaced versions
// from the unborn row. A key is left out (a warning names it) when two
// committed writes replaced the same version (a lost update the row lock
// should have prevented) or when some committed final write is not on the
// chain; the checker then says the certificate is incomplete for it.
func (r *recorder) versionOrderFromChains(h *history.History) bool {
	c := &r.chains
	if c.n == 0 {
		return false
	}
	keys := map[int32]bool{}
	for kv := range c.final {
		keys[int32(kv>>32)] = true
	}
	vo := map[int32][]int32{}
	var bad []string
	for k := range keys {
		var ord []int32
		cur := history.NoValue
		ok := true
		for len(ord) <= len(c.final) {
			next := c.succ[packKV(k, cur)]
			var pick []int32
			for _, l := range next {
				if l.committed {
					pick = append(pick, l.val)
				}
			}
			if len(pick) == 0 {
				// an unknown-outcome write is on the chain only if a later
				// committed write replaced it (it then committed)
				for _, l := range next {
					if len(c.succ[packKV(k, l.val)]) > 0 {
						pick = append(pick, l.val)
					}
				}
			}
			if len(pick) == 0 {
				break
			}
			if len(pick) > 1 {
				bad = append(bad, fmt.Sprintf("key %s: %s and %s both replaced version %s", h.KeyName(k), h.ValueName(pick[0]), h.ValueName(pick[1]), h.ValueName(cur)))
				ok = false
				break
			}
			cur = pick[0]
			ord = append(ord, cur)
		}
		if !ok {
			continue
		}
		on := map[int32]bool{}
		for _, v := range ord {
			on[v] = true
		}
		for kv := range c.final {
			if int32(kv>>32) == k && !on[int32(uint32(kv))] {
				bad = append(bad, fmt.Sprintf("key %s: committed version %s is not on the chain of replaced versions", h.KeyName(k), h.ValueName(int32(uint32(kv)))))
				ok = false
				break
			}
		}
		if ok {
			vo[k] = ord
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		if len(bad) > 5 {
			bad = append(bad[:5], fmt.Sprintf("... %d keys in all", len(bad)))
		}
		r.warn("version order: " + strings.Join(bad, "; "))
	}
	h.VersionOrder = vo
	h.Evidence.VersionOrder = true
	return true
}
