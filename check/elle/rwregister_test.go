package elle

import (
	"testing"

	"github.com/txray/txray/check"
)

var (
	seqKeys = map[string]string{"sequential-keys": "true"}
	linKeys = map[string]string{"linearizable-keys": "true"}
	wfrKeys = map[string]string{"wfr-keys": "true"}
	// initZero: 0 is the initial value (reads of 0 nobody wrote are not
	// thin-air reads; regread.Options.InitialValue).
	initZero = map[string]string{"initial-value": "0"}
)

// Histories mostly follow jepsen-io/elle's rw_register_test.clj cases.
var rwRegisterCases = []caseT{
	{
		name: "valid", def: "a serial history", model: "strict-serializable",
		txns: []spec{
			ok("a", "w x 1").at(1, 2),
			ok("b", "r x 1", "w x 2").at(3, 4),
			ok("a", "r x 2", "r y nil").at(5, 6),
		},
		verdict: check.Valid, types: []string{},
	},
	{
		name: "thin-air-read", def: "a read of a value nobody wrote (elle-cli rw-register.edn, which Elle accepts; txray reports it: regread)", model: "strict-serializable",
		txns: []spec{
			ok("0", "w x 2").at(1, 2),
			ok("0", "r x 3").at(3, 4),
			ok("0", "r x 2").at(5, 6),
		},
		verdict: check.Invalid, types: []string{"thin-air-read"}, not: []string{"read-uncommitted"},
	},
	{
		name: "thin-air-read/under-read-uncommitted", def: "no model admits a value nobody wrote", model: "read-uncommitted",
		txns: []spec{
			ok("0", "w x 2"),
			ok("1", "r x 3", "r y nil"),
		},
		verdict: check.Invalid, types: []string{"empty-transaction-graph", "thin-air-read"}, not: []string{"read-uncommitted"},
	},
	{
		name: "G2-item/explicit-initial-transaction", def: "a first transaction writing one value to every key is the initial state (regread); as an ordinary writer it would hide this write skew", model: "serializable",
		txns: []spec{
			ok("0", "w x 0", "w y 0"),
			ok("1", "r x 0", "r y 0", "w x 1"),
			ok("2", "r x 0", "r y 0", "w y 2"),
		},
		verdict: check.Invalid, types: []string{"G2-item"}, not: []string{"repeatable-read"},
	},
	{
		name: "future-read", def: "a read of the transaction's own later write (Elle future-read; regread)", model: "read-committed",
		txns: []spec{
			ok("0", "r x 1", "w x 1"),
			ok("1", "r x 1"),
		},
		verdict: check.Invalid, types: []string{"future-read"}, not: []string{"read-committed"},
	},
	{
		name: "valid/initial-value-param", def: "with initial-value=0 a read of 0 nobody wrote is the initial state", model: "serializable",
		params: initZero,
		txns: []spec{
			ok("0", "w x 2"),
			ok("1", "r x 0"),
			ok("2", "r x 2"),
		},
		verdict: check.Valid, types: []string{},
	},
	{
		name: "G0", def: "Adya G0, version order from sequential keys (Elle rw-register G0 test)", model: "serializable", params: seqKeys,
		txns: []spec{
			ok("0", "w x 1", "w y 2"),
			ok("1", "w x 2", "w y 1"),
			ok("0", "r x 2"),
			ok("1", "r y 2"),
		},
		verdict: check.Invalid, types: []string{"G0"}, not: []string{"read-uncommitted"},
	},
	{
		name: "G1a", def: "Adya G1a: a committed read of an aborted write", model: "read-committed",
		txns: []spec{
			ok("", "r x 1"),
			fail("", "w x 1"),
		},
		verdict: check.Invalid, types: []string{"G1a", "empty-transaction-graph"}, not: []string{"read-committed"},
	},
	{
		name: "G1b", def: "Adya G1b: a committed read of a non-final write", model: "repeatable-read",
		txns: []spec{
			ok("", "w x 1", "w x 2"),
			ok("", "r x 1"),
		},
		verdict: check.Invalid, types: []string{"G1b", "empty-transaction-graph"}, not: []string{"read-committed"},
	},
	{
		name: "G1c", def: "Adya G1c: two transactions read each other's writes", model: "serializable",
		txns: []spec{
			ok("", "w x 1", "r y 1"),
			ok("", "w y 1", "r x 1"),
		},
		verdict: check.Invalid, types: []string{"G1c"}, not: []string{"read-committed"},
	},
	{
		name: "G-single-item", def: "Elle 'initial state': nil precedes every value", model: "serializable",
		txns: []spec{
			ok("0", "r x nil", "r y 1"),
			ok("0", "w y 1", "w x 2"),
		},
		verdict: check.Invalid, types: []string{"G-single-item"}, not: []string{"consistent-view", "repeatable-read"},
	},
	{
		name: "G-single-item/wfr-keys", def: "Elle 'wfr': writes follow reads orders y 1 < 2", model: "serializable", params: wfrKeys,
		txns: []spec{
			ok("9", "w y 1"), // y = 1 must be written by someone (else a thin-air read)
			ok("0", "r y 1", "w x 1", "w y 2"),
			ok("0", "r x 1", "r y 1"),
		},
		verdict: check.Invalid, types: []string{"G-single-item"}, not: []string{"consistent-view", "repeatable-read"},
	},
	{
		name: "G-single-item/no-wfr-keys", def: "without writes-follow-reads Elle calls the same history valid, but every order of y has a cycle (1 < 2: this G-single; 2 < 1: G1c through T1's read of y = 1), so it is unknown (issue 12)", model: "serializable",
		txns: []spec{
			ok("9", "w y 1"),
			ok("0", "r y 1", "w x 1", "w y 2"),
			ok("0", "r x 1", "r y 1"),
		},
		verdict: check.Unknown, types: []string{}, reason: "have versions the evidence does not order",
	},
	{
		name: "G2-item", def: "Elle rw-register G2-item, linearizable keys", model: "serializable", params: linKeys,
		txns: []spec{
			ok("9", "w x 1", "w y 1").at(1, 2), // the values read must be written by someone
			ok("0", "r x 1", "r y 1").at(11, 12),
			ok("2", "r y 1", "w x 2").at(14, 15),
			ok("1", "r x 1", "w y 2").at(13, 16),
		},
		verdict: check.Invalid, types: []string{"G2-item"}, not: []string{"repeatable-read"},
	},
	{
		name: "G-single-item-process", def: "Elle: G-single closed by session order", model: "strict-serializable",
		txns: []spec{
			ok("a", "w x 1"),
			ok("a", "r x nil"),
		},
		verdict: check.Invalid, types: []string{"G-single-item-process"}, not: []string{"strong-session-snapshot-isolation"},
	},
	{
		name: "G-single-item-realtime", def: "Elle: G-single closed by real-time order", model: "strict-serializable",
		txns: []spec{
			ok("", "w x 1").at(1, 2),
			ok("", "r x nil").at(3, 4),
		},
		verdict: check.Invalid, types: []string{"G-single-item-realtime"}, not: []string{"strong-snapshot-isolation"},
	},
	{
		name: "G1c-realtime", def: "Elle: G1c closed by real-time order", model: "strict-serializable",
		txns: []spec{
			ok("", "r x 1").at(1, 2),
			ok("", "w x 1").at(3, 4),
		},
		verdict: check.Invalid, types: []string{"G1c-realtime"}, not: []string{"strong-read-committed"},
	},
	{
		name: "internal", def: "Cerone et al. INT: a second read disagrees with the first", model: "serializable",
		txns: []spec{
			ok("a", "w x 1"),
			ok("b", "w x 2"),
			ok("", "r x 1", "r x 2"),
		},
		// A non-repeatable read: Biswas-Enea read committed allows it, read
		// atomic does not (Plume NonRepeatableRead), nor does Adya's
		// repeatable-read (T -rw-> b -wr-> T is a G2-item cycle).
		verdict: check.Invalid, types: []string{"internal"}, not: []string{"read-atomic", "repeatable-read"},
	},
	{
		name: "internal/read-own-write", def: "a read after the txn's own write returns another value", model: "serializable",
		txns: []spec{
			ok("", "w x 1", "r x 2"),
		},
		verdict: check.Invalid, types: []string{"empty-transaction-graph", "internal", "not-my-own-write"}, not: []string{"read-uncommitted"},
	},
	{
		name: "lost-update", def: "Elle: two committed txns read the same value and both write", model: "strict-serializable",
		params: initZero,
		txns: []spec{
			ok("0", "r x 0", "w x 1").at(1, 2),
			ok("1", "r x 0", "w x 2").at(3, 4),
		},
		// With 0 the initial value both reads are of the initial state, so
		// each writer follows the other's read (rw both ways): G2-item too.
		verdict: check.Invalid, types: []string{"G-single-item-realtime", "G2-item", "lost-update"}, not: []string{"cursor-stability", "update-atomic"},
	},
	{
		name: "lost-update/concurrent", def: "the same, overlapping in time: only the initial-state rw edges remain", model: "strict-serializable",
		params: initZero,
		txns: []spec{
			ok("0", "r x 0", "w x 1").at(1, 4),
			ok("1", "r x 0", "w x 2").at(2, 3),
		},
		verdict: check.Invalid, types: []string{"G2-item", "lost-update"}, not: []string{"cursor-stability", "update-atomic"},
	},
	{
		name: "cyclic-versions", def: "Elle 'cyclic version order': sequential keys contradict the initial state", model: "strict-serializable", params: seqKeys,
		txns: []spec{
			ok("0", "w x 1"),
			ok("0", "w x 2"),
			ok("0", "r x 1"),
		},
		verdict: check.Invalid, types: []string{"cyclic-versions"}, not: []string{"read-uncommitted"},
	},
	{
		name: "cyclic-versions/linearizable-keys", def: "Elle 'Read read returns what was just written'", model: "strict-serializable", params: linKeys,
		txns: []spec{
			info("1", "w x 2"), // x = 2 must be written by someone (else a thin-air read)
			ok("0", "w x 1").at(1, 2),
			ok("0", "r x 2").at(3, 4),
			ok("0", "r x 1").at(5, 6),
		},
		verdict: check.Invalid, types: []string{"cyclic-versions"}, not: []string{"read-uncommitted"},
	},
	{
		name: "duplicate-writes", def: "Elle's unique-writes assumption: unknown", model: "strict-serializable",
		txns: []spec{
			ok("", "w x 1"),
			ok("", "w x 1"),
		},
		verdict: check.Unknown, types: []string{}, reason: "value 1 written to key x by two transactions",
	},
	{
		name: "unsupported-ops", def: "list reads are not registers", model: "strict-serializable",
		txns: []spec{
			ok("", "w x 1"),
			ok("", "r y [1]"),
		},
		verdict: check.Unknown, types: []string{}, reason: "operations other than register reads and writes",
	},
}

func TestRWRegisterAnomalies(t *testing.T) { runCases(t, RWRegister{}, rwRegisterCases) }
