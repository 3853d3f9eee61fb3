package sim

import (
	"fmt"
	"strings"

	"github.com/txray/txray/history"
)

// Workload mixes (Config.Mix) used to evaluate the polygraph checker, after
// the workloads of Cobra (Tan et al., OSDI 2020, §6: BlindW-RW, BlindW-W)
// and King Cobra (read-modify-write heavy, 50/50 read/write, 80% writes).
// A mix fixes what each micro-op does and overrides ReadRatio; keys,
// distribution, ops per transaction and everything else come from Config.
// Mixes need the rw-register workload (register reads of single values).
const (
	// MixRMW: every micro-op is a read-modify-write: a read of a key
	// followed by a write of the same key.
	MixRMW = "rmw"
	// MixRW50: each micro-op is a read or a blind write, 50/50.
	MixRW50 = "rw-50"
	// MixW80: each micro-op is a blind write with probability 0.8, else a
	// read.
	MixW80 = "w-80"
	// MixBlindWRW: half the transactions only read, half only blind-write
	// (Cobra's BlindW-RW).
	MixBlindWRW = "blindw-rw"
	// MixBlindWW: 10% of the transactions only read, 90% only blind-write
	// (write-heavy BlindW).
	MixBlindWW = "blindw-w"
)

// MixNames lists the mixes.
func MixNames() []string { return []string{MixRMW, MixRW50, MixW80, MixBlindWRW, MixBlindWW} }

func checkMix(c Config) error {
	if c.Mix == "" {
		return nil
	}
	for _, m := range MixNames() {
		if m == c.Mix {
			if c.Workload != RWRegister {
				return fmt.Errorf("mix %q needs the %s workload", c.Mix, RWRegister)
			}
			if c.PredicateReads > 0 {
				return fmt.Errorf("mix %q does not combine with predicate reads", c.Mix)
			}
			return nil
		}
	}
	return fmt.Errorf("mix %q: want one of %s", c.Mix, strings.Join(MixNames(), ", "))
}

// planMix is plan for Config.Mix.
func (w *workload) planMix(t *txn) {
	c := w.cfg
	n := c.MinOps
	if c.MaxOps > c.MinOps {
		n += w.r.IntN(c.MaxOps - c.MinOps + 1)
	}
	readOnly, writeOnly := false, false
	switch c.Mix {
	case MixBlindWRW:
		readOnly = w.r.Float64() < 0.5
		writeOnly = !readOnly
	case MixBlindWW:
		readOnly = w.r.Float64() < 0.1
		writeOnly = !readOnly
	}
	t.ops = make([]pop, 0, 2*n)
	for i := 0; i < n; i++ {
		s := w.slot()
		ks := w.keyState(w.slots[s])
		read := false
		switch c.Mix {
		case MixRMW:
			ks.refs++
			t.ops = append(t.ops, pop{kind: history.Read, ks: ks})
		case MixRW50:
			read = w.r.Float64() < 0.5
		case MixW80:
			read = w.r.Float64() < 0.2
		default:
			read = readOnly && !writeOnly
		}
		ks.refs++
		if read {
			t.ops = append(t.ops, pop{kind: history.Read, ks: ks})
			continue
		}
		w.nextVal++
		t.ops = append(t.ops, pop{kind: history.Write, ks: ks, val: w.nextVal})
		w.planWrite(t, s, ks)
	}
	w.finishPlan(t)
}
