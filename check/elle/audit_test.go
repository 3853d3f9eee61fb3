package elle

import (
	"testing"

	"github.com/txray/txray/check"
)

// auditCases pin corners of Elle's list-append rules (jepsen-io/elle
// src/elle/list_append.clj and txn.clj) that the main table does not:
// which transactions' reads and writes count for G1a, G1b and lost-update,
// and adversarial inputs.
var auditCases = []caseT{
	{
		name: "G1a/unknown-outcome-writer-is-not-aborted", def: "Elle g1a-cases: only :fail writers count; an observed :info append committed", model: "read-committed",
		txns: []spec{
			info("", "append x 1"),
			ok("", "r x [1]"),
		},
		verdict: check.Valid, types: []string{},
	},
	{
		name: "G1a/unknown-outcome-reader-not-reported", def: "Elle g1a-cases: only :ok readers are checked", model: "read-committed",
		txns: []spec{
			fail("", "append x 1"),
			info("", "r x [1]"),
		},
		// No edges at all: Elle's :empty-transaction-graph, unknown.
		verdict: check.Unknown, types: []string{"empty-transaction-graph"}, reason: "empty-transaction-graph",
	},
	{
		name: "G1a/every-aborted-element", def: "Elle g1a-cases: any element of the read, not only the last", model: "read-committed",
		txns: []spec{
			fail("", "append x 1"),
			ok("", "append x 2"),
			ok("", "r x [1 2]"),
		},
		verdict: check.Invalid, types: []string{"G1a", "dirty-update"}, not: []string{"read-committed"},
	},
	{
		name: "G1b/unknown-outcome-reader-not-reported", def: "Elle g1b-cases: only :ok readers are checked", model: "read-committed",
		txns: []spec{
			ok("", "append x 1", "append x 2"),
			info("", "r x [1]"),
		},
		// Nobody observed the reader, so it may have aborted: its read is no evidence
		// (no edge either), leaving nothing to check, as in the G1a case above.
		verdict: check.Unknown, types: []string{"empty-transaction-graph"}, reason: "empty-transaction-graph",
	},
	{
		name: "G1a/observed-unknown-outcome-reader-reported", def: "an :info transaction whose append a committed read shows committed, so its own reads are judged (Adya G1a)", model: "read-committed",
		txns: []spec{
			fail("", "append x 1"),
			info("", "r x [1]", "append y 2"),
			ok("", "r y [2]"),
		},
		verdict: check.Invalid, types: []string{"G1a"}, not: []string{"read-committed"},
	},
	{
		name: "internal/unobserved-unknown-outcome-reader-ignored", def: "an :info transaction nobody observed may have aborted: its reads give no edge and no anomaly", model: "serializable",
		txns: []spec{
			ok("", "append x 1"),
			ok("", "append x 2"),
			info("", "r x [1]", "r x []"),
			ok("", "r x [1 2]"),
		},
		verdict: check.Valid, types: []string{},
	},
	{
		name: "incompatible-order/one-transaction's-appends-reordered", def: "a list shows a transaction's appends in the order it made them (found by exhaustive search in check/polygraph)", model: "serializable",
		txns: []spec{
			ok("", "append x 1", "append x 2"),
			ok("", "r x [2 1]"),
		},
		// [2 1] also ends in 1, which its writer overwrote: G1b
		verdict: check.Invalid, types: []string{"G1b", "incompatible-order"}, not: []string{"read-committed"},
	},
	{
		name: "incompatible-order/first-append-missing", def: "a list that shows a transaction's second append shows its first right before it", model: "serializable",
		txns: []spec{
			ok("", "append x 1", "append x 2"),
			ok("", "r x [2]"),
		},
		// and the unread 1 comes after 2: rw back to its own writer (G-single-item)
		verdict: check.Invalid, types: []string{"G-single-item", "incompatible-order"}, not: []string{"read-committed"},
	},
	{
		name: "G1b/own-intermediate-read-is-fine", def: "Elle g1b-cases: internal reads are OK", model: "strict-serializable",
		txns: []spec{
			ok("", "append x 1", "r x [1]", "append x 2"),
			ok("", "r x [1 2]"),
		},
		verdict: check.Valid, types: []string{},
	},
	{
		name: "G1b/aborted-writer-also-G1a", def: "Elle runs g1a-cases and g1b-cases independently over all completions", model: "read-committed",
		txns: []spec{
			fail("", "append x 1", "append x 2"),
			ok("", "r x [1]"),
		},
		verdict: check.Invalid, types: []string{"G1a", "G1b", "empty-transaction-graph"}, not: []string{"read-committed"},
	},
	{
		name: "lost-update/write-before-read-not-counted", def: "Elle lost-update-cases: only a txn's first write of k after a read of k counts", model: "read-committed",
		txns: []spec{
			ok("", "append x 1", "r x [1]", "append x 2"),
			ok("", "r x [1]", "append x 3"),
			ok("", "r x [1 2 3]"),
		},
		// T2 read T1's intermediate state (G1b); T1 appended to x before
		// reading it, so the pair is no lost update.
		verdict: check.Invalid, types: []string{"G1b"}, not: []string{"read-committed"},
	},
	{
		name: "lost-update/unknown-outcome-not-counted", def: "Elle lost-update-cases: only :ok txns", model: "read-committed",
		txns: []spec{
			ok("", "append x 0"),
			ok("", "r x [0]", "append x 1"),
			info("", "r x [0]", "append x 2"),
		},
		verdict: check.Valid, types: []string{},
	},
	{
		name: "garbage/read-of-key-never-written", def: "a read of an element nobody appended, on a key nobody writes", model: "read-committed",
		txns: []spec{
			ok("", "r y [7]"),
		},
		verdict: check.Invalid, types: []string{"empty-transaction-graph", "garbage-versions"}, not: []string{"read-uncommitted"},
	},
	{
		name: "empty-read/key-never-written", def: "Elle: reading the initial (empty) state of an untouched key is fine", model: "strict-serializable",
		txns: []spec{
			ok("", "r y []", "r z nil", "r x []"),
			ok("", "append x 1"),
		},
		verdict: check.Valid, types: []string{},
	},
	{
		name: "unknown-outcome-observed/orders-like-committed", def: "Elle h/possible: an :info txn whose append is read is a graph node with ww/wr/rw edges", model: "serializable",
		txns: []spec{
			info("", "append x 1", "r y []"),
			ok("", "append y 1", "r x []"),
			ok("", "r x [1]", "r y [1]"),
		},
		verdict: check.Invalid, types: []string{"G2-item"}, not: []string{"repeatable-read"},
	},
	{
		name: "duplicate-appends/same-txn", def: "Elle verify-unique-appends: one txn appending a value twice to a key", model: "strict-serializable",
		txns: []spec{
			ok("", "append x 1", "append x 1"),
		},
		verdict: check.Unknown, types: []string{}, reason: "value 1 appended to key x more than once",
	},
	{
		name: "duplicate-appends/aborted-too", def: "Elle verify-unique-appends looks at every invocation, failed ones included", model: "strict-serializable",
		txns: []spec{
			fail("", "append x 1"),
			ok("", "append x 1"),
		},
		verdict: check.Unknown, types: []string{}, reason: "value 1 appended to key x more than once",
	},
}

func TestListAppendAudit(t *testing.T) { runCases(t, ListAppend{}, auditCases) }

// rwAuditCases: the same corners for rw-register.
var rwAuditCases = []caseT{
	{
		name: "lost-update/write-before-read-not-counted", def: "Elle lost-update-cases: only a txn's first write of k after a read of k counts", model: "read-committed",
		txns: []spec{
			ok("0", "w x 1", "r x 1", "w x 2").at(1, 4),
			ok("1", "r x 1", "w x 3").at(2, 3),
		},
		// T2 read T1's intermediate write (G1b); T1 wrote x before reading
		// it, so the pair is no lost update.
		verdict: check.Invalid, types: []string{"G1b", "empty-transaction-graph"}, not: []string{"read-committed"},
	},
	{
		name: "G1a/unknown-outcome-writer-is-not-aborted", def: "Elle g1a-cases: only :fail writers count", model: "read-committed",
		txns: []spec{
			info("0", "w x 1"),
			ok("1", "r x 1", "w y 1"),
			ok("2", "r y 1"),
		},
		verdict: check.Valid, types: []string{},
	},
}

func TestRWRegisterAudit(t *testing.T) { runCases(t, RWRegister{}, rwAuditCases) }
