package model

// readChecksDoc is the docs/models.md section on the order-free register
// read checks (package check/regread), rendered by TestModelsDoc.
const readChecksDoc = "## Order-free register read checks\n\n" +
	"Package `check/regread` finds, for every register read, the write it read (or the initial state), and reports\n" +
	"the reads no isolation level admits whatever the version, commit or session order is. Every register checker\n" +
	"runs it (the elle `rw-register` checker reports `thin-air-read` and `future-read` from it; `G1a`, `G1b` and\n" +
	"`internal` it reports in Elle's own terms). Names follow Plume's transactional anomaly patterns (Liu et al.,\n" +
	"OOPSLA 2024) after Biswas & Enea (OOPSLA 2019):\n\n" +
	"| anomaly | what | implies | prohibited by |\n|---|---|---|---|\n" +
	"| `thin-air-read` | a read of a value no transaction wrote to that key, not the initial state | garbage-versions | every model (Adya 1999 §3.1: reads return installed versions) |\n" +
	"| `aborted-read` | a committed read of a value only an aborted transaction wrote | G1a | read-committed and up (Adya PL-1 allows G1a; Biswas–Enea RC forbids it) |\n" +
	"| `intermediate-read` | a committed read of a value its writer overwrote before committing | G1b | read-committed and up (Adya PL-2; Biswas–Enea RC) |\n" +
	"| `future-read` | a read of a value the transaction itself writes only later | G1c | read-committed and up (Elle's placement; every Biswas–Enea level forbids it) |\n" +
	"| `not-my-own-write` | after writing a key, a read of it returns a value the transaction never wrote | internal | every model (Adya 1999 §3.1.2: a transaction reads its own writes) |\n" +
	"| `not-my-last-write` | after writing a key several times, a read returns an earlier own value | internal | every model |\n" +
	"| `duplicate-write` | a value read is written to its key by two transactions, or is also an initial value | — | none: it makes the verdict unknown (the read has no unique writer) |\n\n" +
	"The initial state: a read of nil; a read of the source's initial value (`regread.Options.InitialValue`, e.g.\n" +
	"`0` for dbcop, PolySI and Cobra-style sources; the `rw-register` checker's `initial-value` parameter) when no\n" +
	"transaction writes that value to that key; and a read of a value written by the **explicit initial\n" +
	"transaction**. That is the history's first transaction when it is committed, only writes (one value, to every\n" +
	"key any other transaction uses, each once), that value is the initial value (the source's, else 0), no\n" +
	"other transaction writes that value to those keys, nobody committed reads the state before it, and it is first in\n" +
	"its session. Treated as an ordinary transaction it would be one more concurrent writer and hide anomalies (a\n" +
	"write skew between two readers of the initial state); the PolySI decoder removes it (`regread.DropInitialTxn`).\n" +
	"Only committed readers are reported; an unknown-outcome writer is a usable writer (it may have committed).\n" +
	"Cost is linear (counting sorts and value-indexed scratch): 1M transactions / 4M ops in about 1.2 s.\n\n" +
	"The timestamp and mechanism checkers see a thin-air read their own way: `chronos` reports it as\n" +
	"`garbage-versions`; `leopard` as `cr` (no committed transaction wrote the value); `aion` (`txray watch`) as\n" +
	"`ext` under snapshot isolation, and under serializable, when the commit order is not declared to be the\n" +
	"serialization order, as an unknown verdict naming the read (it keeps only recent versions, so it cannot\n" +
	"prove the value was never written).\n\n"
