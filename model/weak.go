package model

// Weak isolation levels defined axiomatically over a commit order, after
// Biswas & Enea, "On the Complexity of Checking Transactional Consistency"
// (OOPSLA 2019, §2.2 and Fig. 2), and the minimal anomaly patterns of Plume
// (Liu, Gu, Wei & Basin, "Plume: Efficient and Complete Black-Box Checking of
// Weak Isolation Levels", OOPSLA 2024, §3.2 Table 1). Package check/weak
// decides them.
//
// A history is consistent with level L when some total commit order co on
// its committed transactions extends session order (so) and write-read
// (wr) and satisfies L's axiom, for every read of key x by t3 from t2 and
// every other transaction t1 writing x:
//
//	read committed (Biswas–Enea): an earlier read of t3 (program order) reads from t1  => t1 co t2
//	read atomic (= Cerone et al. RA):  t1 (so ∪ wr) t3                                  => t1 co t2
//	causal (= Cerone et al. CC):       t1 (so ∪ wr)+ t3                                 => t1 co t2
//
// Cerone, Bernardi & Gotsman (CONCUR 2015) define RA and CC over abstract
// executions; Biswas & Enea show their axioms are equivalent, so the
// existing read-atomic and causal-cerone names keep their citation and are
// decided by these axioms (session order included).
//
// Biswas–Enea read committed differs from Adya's PL-2 (read-committed): it
// requires co to extend so ∪ wr (no causality cycle through session order)
// and forbids a transaction from observing a writer's effect on one key and
// then an older version of another key that writer also wrote (non-monotonic
// read), which PL-2 allows. It is stronger than read-committed, and weaker
// than read-atomic.
//
// It does not prohibit Elle's internal: that covers a re-read returning a
// different value, which Biswas–Enea read committed allows (Plume's
// NonRepeatableRead is a read atomic pattern); a read missing the
// transaction's own write is not-my-own-write / not-my-last-write, which
// read-uncommitted and so every model prohibits.

// ReadCommittedBE is Biswas–Enea read committed.
const ReadCommittedBE = "read-committed-be"

// Anomalies in Plume's minimal-pattern vocabulary (Liu et al. OOPSLA 2024
// Table 1). The order-free read patterns (thin-air, aborted, future,
// not-my-own-write, not-my-last-write, intermediate) are reported by package
// check/regread under their own names.
const (
	// CyclicCO: so ∪ wr is cyclic (Plume TAP CyclicCO); no commit order can
	// extend it, so every level of this family is violated.
	CyclicCO = "cyclic-co"
	// NonMonotonicRead: a transaction reads t1's write of one key, then an
	// older write of another key t1 wrote (Plume NonMonoReadCO/CM).
	NonMonotonicRead = "non-monotonic-read"
	// NonRepeatableRead: a transaction reads one key twice from two different
	// writers (Plume NonRepeatableRead; Cerone et al. RA).
	NonRepeatableRead = "non-repeatable-read"
	// FracturedRead: a transaction observes t1 (by reading from it or
	// following it in its session) but reads an older write of a key t1
	// wrote (Plume FracturedReadCO/CM).
	FracturedRead = "fractured-read"
	// CommitOrderConflict: a transaction's causal past contains t1 writing x
	// while it reads x from t2, and t2 is causally after t1 (Plume
	// COConflictCM).
	CommitOrderConflict = "commit-order-conflict"
	// Conflict: as commit-order-conflict but the contradiction closes only
	// through other commit-order edges the causal axiom forces (Plume
	// ConflictCM).
	Conflict = "conflict"
)

// weakTables adds the Biswas–Enea model and the Plume anomalies to the
// shared tables before any init function runs (package-level variables are
// initialised first).
var weakTables = func() bool {
	lattice[ReadAtomic] = append(lattice[ReadAtomic], ReadCommittedBE)
	lattice[ReadCommittedBE] = []string{ReadCommitted}
	directProhibits[ReadCommittedBE] = []string{CyclicCO, NonMonotonicRead, G1a, G1b, FutureRead}
	directProhibits[ReadAtomic] = append(directProhibits[ReadAtomic], NonRepeatableRead, FracturedRead)
	directProhibits[CausalCerone] = append(directProhibits[CausalCerone], CommitOrderConflict, Conflict)
	aliases["rc-be"] = ReadCommittedBE
	aliases["be-rc"] = ReadCommittedBE
	aliases["biswas-enea-read-committed"] = ReadCommittedBE
	// A so ∪ wr cycle with a session edge is Elle's G1c-process; one of wr
	// edges only would be G1c, which the checker reports separately.
	implied[CyclicCO] = []string{G1cProcess}
	descriptions[CyclicCO] = "session order and write-read together are cyclic, so no commit order extends them (Biswas & Enea OOPSLA 2019 §2.2; Plume TAP CyclicCO)"
	descriptions[NonMonotonicRead] = "a transaction read t1's write of one key and later an older version of another key t1 wrote: read committed forces t1 before the later read's writer in commit order, which closes a cycle (Biswas & Enea 2019 Read Committed axiom; Plume NonMonoReadCO/CM)"
	descriptions[NonRepeatableRead] = "a transaction read one key from two different writers (Plume NonRepeatableRead; forbidden by read atomic, Cerone et al. CONCUR 2015, Biswas & Enea 2019)"
	descriptions[FracturedRead] = "a transaction observed t1 (read from it, or follows it in its session) yet read an older version of a key t1 wrote (Biswas & Enea 2019 Read Atomic axiom; Plume FracturedReadCO/CM)"
	descriptions[CommitOrderConflict] = "a transaction read x from t2 although a transaction in its causal past wrote x after t2 causally (Biswas & Enea 2019 Causal axiom; Plume COConflictCM)"
	descriptions[Conflict] = "the commit-order edges forced by the causal axiom form a cycle together with causal order (Biswas & Enea 2019 Causal axiom; Plume ConflictCM)"
	return true
}()
