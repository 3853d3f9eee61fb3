package model

// Order-free register read anomalies (package check/regread): violations a
// single read exhibits whatever the version, commit or session order is.
// The names follow the transactional anomaly patterns of Plume (Liu et al.,
// "Plume: Efficient and Complete Black-Box Checking of Weak Isolation
// Levels", OOPSLA 2024, Table 1) and AWDIT, which build on Biswas & Enea,
// "On the Complexity of Checking Transactional Consistency" (OOPSLA 2019),
// where every one of them makes a history inconsistent at every level
// (their weakest level, read committed, already requires that a read returns
// the last value written before it by its own transaction, else a value some
// committed transaction wrote as its final write of the key).
//
// Adya's PL-1 (read uncommitted) is weaker: it proscribes only G0, so it
// allows aborted reads (G1a) and intermediate reads (G1b) (Adya 1999,
// §4.1-4.2: "PL-1 ... allows reading of uncommitted/aborted data"). txray
// keeps Adya's lattice: aborted-read implies G1a and intermediate-read
// implies G1b, so both are prohibited from read committed (PL-2, and
// Biswas–Enea RC) up and allowed at read uncommitted. Thin-air,
// not-my-own-write and not-my-last-write reads are prohibited by every
// model, read uncommitted included: Adya's histories assume every read
// returns an installed version and that a transaction reads its own writes
// (Adya 1999, §3.1.1-3.1.2), so no level admits them. A future read keeps
// Elle's placement (model.FutureRead implies G1c, a wr self-loop, so it is
// prohibited from read committed up) for compatibility with Elle's verdicts;
// every model Biswas & Enea and Plume define prohibits it.
const (
	// ThinAirRead: a read returned a value that no transaction in the
	// history wrote to that key and that is not the initial state.
	ThinAirRead = "thin-air-read"
	// AbortedRead: a committed transaction read a value written only by an
	// aborted transaction.
	AbortedRead = "aborted-read"
	// IntermediateRead: a committed transaction read a value another
	// transaction overwrote before committing.
	IntermediateRead = "intermediate-read"
	// NotMyOwnWrite: a transaction wrote a key, then read it and got a value
	// it never wrote.
	NotMyOwnWrite = "not-my-own-write"
	// NotMyLastWrite: a transaction wrote a key several times, then read an
	// earlier one of its own values instead of the last.
	NotMyLastWrite = "not-my-last-write"
	// DuplicateWrite: one value was written to one key by two transactions
	// (or is both the initial value and written), so a read of it does not
	// name its writer. It marks an incomplete check (verdict unknown), like
	// Elle's unknown anomaly types: the history breaks the unique-writes
	// assumption read-from inference relies on, not an isolation guarantee.
	DuplicateWrite = "duplicate-write"
)

// readAnomaliesRegistered adds the read anomalies to the vocabulary. It is a
// package-level initialiser, so it runs before every init function of the
// package (Go spec, "Package initialization"), and model.go's init builds the
// prohibited sets with these entries present.
var readAnomaliesRegistered = registerReadAnomalies()

func registerReadAnomalies() bool {
	descriptions[ThinAirRead] = "thin-air read: a read returned a value no transaction wrote to that key and that is not the initial state (Plume TAP ThinAirRead; Biswas & Enea OOPSLA 2019; Adya 1999 §3.1: reads return installed versions; implies garbage-versions)"
	descriptions[AbortedRead] = "aborted read: a committed transaction read a value written only by an aborted transaction (Plume TAP AbortedRead; implies G1a, Adya 1999)"
	descriptions[IntermediateRead] = "intermediate read: a committed transaction read a value its writer overwrote before committing (Plume TAP IntermediateRead; implies G1b, Adya 1999)"
	descriptions[NotMyOwnWrite] = "not my own write: a transaction read a key after writing it and got a value it did not write (Plume TAP NotMyOwnWrite; Adya 1999 §3.1.2; implies internal)"
	descriptions[NotMyLastWrite] = "not my last write: a transaction read a key after writing it several times and got one of its earlier values, not the last (Plume TAP NotMyLastWrite; implies internal)"
	descriptions[DuplicateWrite] = "duplicate write: one value was written to one key by more than one transaction (or equals the initial value), so reads of it have no unique writer; read-from inference cannot be completed (verdict unknown)"
	implied[ThinAirRead] = []string{GarbageVersions}
	implied[AbortedRead] = []string{G1a}
	implied[IntermediateRead] = []string{G1b}
	implied[NotMyOwnWrite] = []string{Internal}
	implied[NotMyLastWrite] = []string{Internal}
	unknownTypes[DuplicateWrite] = true
	directProhibits[ReadUncommitted] = append(directProhibits[ReadUncommitted],
		ThinAirRead, NotMyOwnWrite, NotMyLastWrite)
	return true
}
