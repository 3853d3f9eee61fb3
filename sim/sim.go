// Package sim is txray's reference transactional simulator: a deterministic
// in-memory multi-version key-value store with a scheduler that runs
// concurrent client transactions from a workload generator under a chosen
// isolation level, optionally with injected faults, and records every
// evidence layer a checker may use. Its output is the ground truth every
// checker is tested against (design.md §7): a checker must accept what a
// correct level produces and catch what an injected fault breaks.
//
// Two entry points:
//
//   - Generate(cfg) runs a simulation in memory and returns the whole
//     history plus the Truth (what really happened). Use it for small and
//     medium histories and for property tests of checkers:
//
//     h, truth, err := sim.Generate(sim.Config{Level: sim.SnapshotIsolation, Txns: 500, Seed: 7})
//     // every checker for snapshot-isolation must accept h;
//     // with Faults: []sim.Fault{{Name: sim.FaultLostUpdate, Prob: 1}} and
//     // truth.FaultCounts[sim.FaultLostUpdate] > 0 it must reject it.
//
//   - Stream(cfg, sink) runs the same simulation and hands each transaction
//     to sink as it completes, without keeping the history (memory is bounded
//     by the number of live keys and in-flight transactions, not by Txns).
//     *jsonl.Writer is a Sink. Use it for large histories (`txray gen`).
//
// Property testing a checker (what every checker package should do):
//
//	for seed := range uint64(50) {
//		cfg := sim.Config{Level: sim.SnapshotIsolation, Workload: sim.ListAppend, Txns: 300, Seed: seed}
//		h, _, _ := sim.Generate(cfg)
//		// check h against model h.Header.Level ("snapshot-isolation"): must be valid
//		cfg.Faults = []sim.Fault{{Name: sim.FaultLostUpdate, Prob: 0.5}}
//		h, truth, _ = sim.Generate(cfg)
//		// if truth.FaultCounts[sim.FaultLostUpdate] > 0: must be invalid, and the
//		// anomalies should involve transactions in truth.Affected(sim.FaultLostUpdate)
//	}
//
// A correct level's history satisfies LevelInfo.Model (the header's level).
// A fault that fired changed the execution, but not every firing makes a
// history invalid under every model (a stale read at a serializable level
// may still fit some serial order); assert detection under the models the
// fault breaks by definition (see each Fault* constant), or compare with the
// Truth (Order replays the real execution).
//
// Both are deterministic: the same Config (including Seed) gives the same
// history, byte for byte once encoded. Generate and Stream with the same
// Config produce the same transactions in the same order.
//
// Recorded evidence: sessions (one per client, Seq in session order), client
// invoke/complete per transaction and per micro-op on a simulated nanosecond
// clock, database start/commit timestamps (StartTS is the begin timestamp,
// which is the read snapshot at snapshot levels; CommitTS the commit
// timestamp; both from one unique logical counter), the version order of
// every key (History.VersionOrder, or version_order records when streaming),
// and, with Config.PredicateReads, predicate reads with the version set each
// returned (history.PredRead rows).
package sim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/txray/txray/history"
)

// Isolation levels the simulator implements (Config.Level).
const (
	// StrictSerializable executes transactions serially, in the real-time
	// order in which they acquire a global lock (each transaction's
	// serialization point lies inside its client interval). The default.
	StrictSerializable = "strict-serializable"
	// Serializable executes update transactions serially (global lock) but
	// lets read-only transactions read a consistent snapshot up to
	// Config.Lag commits old without waiting: serializable, not strict.
	Serializable = "serializable"
	// Strict2PL is rigorous two-phase locking: shared locks for reads,
	// exclusive locks for writes, all held to commit; deadlocks are
	// detected on wait and the requester aborts. Strictly serializable.
	Strict2PL = "strict-2pl"
	// SnapshotIsolation is SI with first-updater-wins (PostgreSQL
	// repeatable read): reads from the transaction's start snapshot; a write
	// takes a row lock, waits for a concurrent holder, and aborts if a
	// version newer than its snapshot was committed.
	SnapshotIsolation = "snapshot-isolation"
	// SnapshotIsolationFCW is SI with first-committer-wins: writes are
	// buffered; commit aborts if a written key has a version committed
	// after the snapshot.
	SnapshotIsolationFCW = "snapshot-isolation-fcw"
	// SerializableSI is serializable snapshot isolation (Cahill et al.,
	// SIGMOD 2008; PostgreSQL serializable): SI with first-updater-wins plus
	// a certifier that aborts when a transaction would get both an incoming
	// and an outgoing rw anti-dependency with concurrent transactions.
	SerializableSI = "serializable-snapshot-isolation"
	// RepeatableReadMySQL is InnoDB repeatable read: plain reads from the
	// transaction snapshot, writes and locking reads on the latest committed
	// version under exclusive locks held to commit; no version check, so
	// lost updates are possible.
	RepeatableReadMySQL = "repeatable-read-mysql"
	// ReadCommitted reads the latest committed version at each statement;
	// write locks are held to commit.
	ReadCommitted = "read-committed"
	// ReadUncommitted reads the latest version, committed or not; write
	// locks are held to commit (no dirty writes, Adya PL-1).
	ReadUncommitted = "read-uncommitted"
)

// LevelInfo describes a level: its name, the consistency model (or DBMS
// profile) a correct execution satisfies, as written in the history header's
// level field, and a one-line description.
type LevelInfo struct {
	Name  string
	Model string
	Doc   string
}

var levels = []LevelInfo{
	{StrictSerializable, "strict-serializable", "serial execution in real-time order (global lock)"},
	{Serializable, "serializable", "serial updates; read-only transactions may read a lagging snapshot"},
	{Strict2PL, "strict-serializable", "rigorous two-phase locking with deadlock detection"},
	{SnapshotIsolation, "snapshot-isolation", "snapshot reads, row locks, first-updater-wins"},
	{SnapshotIsolationFCW, "snapshot-isolation", "snapshot reads, buffered writes, first-committer-wins"},
	{SerializableSI, "serializable", "snapshot isolation plus the SSI dangerous-structure certifier"},
	{RepeatableReadMySQL, "mysql:repeatable-read", "InnoDB: snapshot plain reads, locking writes on latest; lost update possible"},
	{ReadCommitted, "read-committed", "per-statement snapshot, write locks held to commit"},
	{ReadUncommitted, "read-uncommitted", "reads see uncommitted writes, write locks held to commit"},
}

// Levels lists the implemented levels.
func Levels() []LevelInfo { return append([]LevelInfo(nil), levels...) }

// LevelNames lists the level names.
func LevelNames() []string {
	var ns []string
	for _, l := range levels {
		ns = append(ns, l.Name)
	}
	return ns
}

func lookupLevel(name string) (LevelInfo, bool) {
	for _, l := range levels {
		if l.Name == name {
			return l, true
		}
	}
	return LevelInfo{}, false
}

// Fault names (Config.Faults). Each fires with its probability at each
// opportunity listed; an opportunity that cannot change the outcome is not
// counted. Truth.FaultCounts counts firings that changed the execution, and
// Truth.Faults lists per transaction the faults that affected it.
const (
	// FaultDirtyWrite (Adya G0): a write request that conflicts with another
	// transaction's exclusive lock proceeds without it. At the serial levels
	// a transaction that would wait for the global lock runs without it
	// (counted then: it reads its start snapshot, concurrently with the
	// holder). Counted (again) whenever a write is installed over another
	// transaction's uncommitted version; both are marked affected.
	// Inapplicable to snapshot-isolation-fcw (no write locks).
	FaultDirtyWrite = "dirty-write"
	// FaultAbortedRead (G1a): a read returns a version written by a
	// transaction that aborted, or by one still running, which is then
	// forced to abort. Needs aborted transactions or concurrent writers
	// (see Config.AbortRate); applies at every level.
	FaultAbortedRead = "aborted-read"
	// FaultIntermediateRead (G1b): a read returns a committed transaction's
	// non-final version of a key (it wrote the key more than once).
	FaultIntermediateRead = "intermediate-read"
	// FaultStaleRead: a read returns an older committed version than the
	// level allows (an older snapshot).
	FaultStaleRead = "stale-read"
	// FaultLostUpdate: the ww-conflict check is skipped. At the SI levels
	// the first-updater/committer check lets the transaction commit; at
	// strict-2pl a read of a key the transaction later writes takes no
	// shared lock (counted when a concurrent writer gets the key); at the
	// serial levels such a read sees the snapshot from the transaction's
	// invocation (counted when that differs). RC, RU and MySQL RR allow
	// lost updates anyway: never counted there.
	FaultLostUpdate = "lost-update"
	// FaultWriteSkew: the certifier is skipped. At SSI a dangerous structure
	// is let through; at strict-2pl a read of a key the transaction does not
	// write takes no shared lock; at the serial levels such a read sees the
	// invocation snapshot. SI, RC, RU and MySQL RR allow write skew anyway.
	FaultWriteSkew = "write-skew"
	// FaultTSDisorder: the recorded commit timestamp of a committing
	// transaction is set just below the previous commit's (its recorded
	// start too, if needed to stay before its commit); the true order is
	// unchanged.
	FaultTSDisorder = "ts-disorder"
	// FaultLostCommit: an acknowledged commit vanishes: the client sees
	// committed, but no later read or version order ever contains its
	// writes.
	FaultLostCommit = "lost-commit"
	// FaultNoOwnWrite: a read of a key the transaction already wrote returns
	// what it would have read without its own write.
	FaultNoOwnWrite = "no-own-write"
)

// FaultInfo describes a fault.
type FaultInfo struct {
	Name string
	Doc  string
}

var faultList = []FaultInfo{
	{FaultDirtyWrite, "a write ignores another transaction's write lock (G0)"},
	{FaultAbortedRead, "a read sees an aborted (or doomed) transaction's write (G1a)"},
	{FaultIntermediateRead, "a read sees a non-final write of a committed transaction (G1b)"},
	{FaultStaleRead, "a read returns a version from an older snapshot"},
	{FaultLostUpdate, "the ww-conflict check (first-updater/committer wins, shared lock) is skipped"},
	{FaultWriteSkew, "the serialization certifier (SSI, shared locks) is skipped"},
	{FaultTSDisorder, "a recorded commit timestamp is out of order"},
	{FaultLostCommit, "an acknowledged commit vanishes"},
	{FaultNoOwnWrite, "a transaction does not see its own write"},
}

// faultIdx numbers faults for bit masks.
func faultIdx(name string) int {
	for i, f := range faultList {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// FaultInfos lists the injectable faults.
func FaultInfos() []FaultInfo { return append([]FaultInfo(nil), faultList...) }

// FaultNames lists the fault names.
func FaultNames() []string {
	var ns []string
	for _, f := range faultList {
		ns = append(ns, f.Name)
	}
	return ns
}

// Fault is an injected fault and the probability with which it fires at
// each opportunity.
type Fault struct {
	Name string
	Prob float64
}

// DefaultFaultProb is the probability ParseFault uses when none is given.
const DefaultFaultProb = 0.1

// ParseFault parses NAME or NAME:PROB (PROB in [0,1]).
func ParseFault(s string) (Fault, error) {
	name, p, hasP := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if faultIdx(name) < 0 && !isReplicatedFault(name) {
		return Fault{}, fmt.Errorf("unknown fault %q (known: %s)", name, strings.Join(FaultNames(), ", "))
	}
	f := Fault{Name: name, Prob: DefaultFaultProb}
	if hasP {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v >= 0 && v <= 1) {
			return Fault{}, fmt.Errorf("fault %q: probability %q is not a number in [0,1]", name, p)
		}
		f.Prob = v
	}
	return f, nil
}

// Workloads.
const (
	// ListAppend is Elle's list-append: appends of unique values to keys
	// holding lists; reads return the whole list.
	ListAppend = "list-append"
	// RWRegister is Elle's rw-register: writes of unique values, reads of
	// single values (nil for the initial state).
	RWRegister = "rw-register"
)

// Key distributions.
const (
	Uniform = "uniform"
	Zipfian = "zipfian"
	Hotspot = "hotspot"
)

// Config selects a simulation. Zero numeric fields take the defaults listed;
// ReadRatio, LockingReads, AbortRate and InfoRate are taken as given (use
// DefaultConfig for the usual values).
type Config struct {
	// Workload: ListAppend (default) or RWRegister.
	Workload string
	// Level: one of LevelNames (default StrictSerializable).
	Level string
	// Txns is the number of transactions (default 1000).
	Txns int
	// Clients is the number of client sessions (default 10).
	Clients int
	// Concurrency bounds how many transactions are in flight at once
	// (default and maximum Clients).
	Concurrency int
	// Keys is the number of keys in use at a time (default 8).
	Keys int
	// MaxWritesPerKey retires a key after this many planned writes and
	// replaces it with a fresh one, as Elle's generators do, so lists stay
	// short (default 32; negative = never retire).
	MaxWritesPerKey int
	// Dist picks keys: Uniform (default), Zipfian (s = 1.1) or Hotspot
	// (80% of picks on the first 20% of the keys).
	Dist string
	// MinOps and MaxOps bound the micro-ops per transaction, inclusive
	// (defaults 1 and 4; MaxOps < MinOps is raised to MinOps).
	MinOps, MaxOps int
	// ReadRatio is the probability that a micro-op is a read.
	ReadRatio float64
	// LockingReads is the probability that a read is a locking read
	// (SELECT ... FOR UPDATE): an exclusive lock and the latest committed
	// version at the locking levels, a first-updater check at SI/SSI.
	// Plain reads at snapshot-isolation-fcw and the serial levels.
	LockingReads float64
	// PredicateReads (rw-register only) is the probability that a read is a
	// predicate read instead: one statement SELECT k, v ... WHERE k IN
	// (k1, ..., kn) over 2–4 distinct keys (fewer if Keys is smaller),
	// recorded as a history.PredRead whose Result is the version set it
	// returned — a row (key, value) for each key that had a visible
	// version, none for a key still in its initial state. Each key is read
	// as a plain read at the level (locks, snapshot, faults); all of them
	// in one scheduler step, so no other transaction acts between the rows
	// of one statement (at read-committed they come from one statement
	// snapshot) — unless a row waits for a lock (the shared-lock levels,
	// where the rows already read stay locked, so their versions stand). A predicate read of a transaction recorded unknown, or one
	// that did not complete, is left out (its result is not known), as the
	// recorder does. Default 0; EDN and chronos output cannot carry them.
	PredicateReads float64
	// Deletes (rw-register only) is the probability that a write is a
	// delete instead: it installs a deleted version of the key (its
	// tombstone is a fresh unique value, recorded as a history.Delete),
	// scheduled, locked and faulted like any write. A later write
	// re-inserts the row. An item read of a deleted version is recorded
	// naming its tombstone (the simulator knows which version it read); a
	// predicate read does not return the row, and its version set names
	// the tombstone. Default 0.
	Deletes float64
	// AbortRate is the probability that a client rolls a transaction back
	// itself at the end (these aborts happen at every level).
	AbortRate float64
	// InfoRate is the probability that a finished transaction's outcome is
	// recorded as unknown (its reads then unknown too, as Jepsen :info).
	InfoRate float64
	// Faults to inject.
	Faults []Fault
	// Seed seeds the PCG generators.
	Seed uint64
	// StepNanos is the mean simulated time between scheduler steps
	// (default 1000); Jitter adds up to this much at random (default
	// StepNanos/2).
	StepNanos, Jitter int64
	// Mix selects a workload mix (MixNames; rw-register only): what each
	// micro-op does, overriding ReadRatio. Default "" (ReadRatio decides).
	Mix string
	// Lag bounds how many commits behind a read-only transaction's snapshot
	// may be at Serializable (default 8).
	Lag int
}

// DefaultConfig returns the defaults `txray gen` uses.
func DefaultConfig() Config {
	return Config{Workload: ListAppend, Level: StrictSerializable, Txns: 1000, Clients: 10, Keys: 8,
		Dist: Uniform, MinOps: 1, MaxOps: 4, ReadRatio: 0.5, Seed: 1}
}

// normalize fills defaults and validates.
func (c Config) normalize() (Config, error) {
	if c.Workload == "" {
		c.Workload = ListAppend
	}
	if c.Workload != ListAppend && c.Workload != RWRegister {
		return c, fmt.Errorf("workload %q: want %s or %s", c.Workload, ListAppend, RWRegister)
	}
	if c.Level == "" {
		c.Level = StrictSerializable
	}
	if _, ok := lookupLevel(c.Level); !ok {
		return c, fmt.Errorf("level %q: want one of %s", c.Level, strings.Join(LevelNames(), ", "))
	}
	if c.Txns < 0 || c.Clients < 0 || c.Keys < 0 || c.Concurrency < 0 || c.MinOps < 0 || c.MaxOps < 0 || c.Lag < 0 || c.StepNanos < 0 || c.Jitter < 0 {
		return c, fmt.Errorf("negative count in configuration")
	}
	if c.Txns == 0 {
		c.Txns = 1000
	}
	if c.Clients == 0 {
		c.Clients = 10
	}
	if c.Concurrency == 0 || c.Concurrency > c.Clients {
		c.Concurrency = c.Clients
	}
	if c.Keys == 0 {
		c.Keys = 8
	}
	if c.MaxWritesPerKey == 0 {
		c.MaxWritesPerKey = 32
	}
	switch c.Dist {
	case "":
		c.Dist = Uniform
	case Uniform, Zipfian, Hotspot:
	default:
		return c, fmt.Errorf("distribution %q: want uniform, zipfian or hotspot", c.Dist)
	}
	if c.MinOps == 0 {
		c.MinOps = 1
	}
	if c.MaxOps == 0 {
		c.MaxOps = 4
	}
	if c.MaxOps < c.MinOps {
		c.MaxOps = c.MinOps
	}
	for _, p := range []struct {
		n string
		v float64
	}{{"read ratio", c.ReadRatio}, {"locking-read ratio", c.LockingReads}, {"abort rate", c.AbortRate}, {"info rate", c.InfoRate}, {"predicate-read ratio", c.PredicateReads}, {"delete ratio", c.Deletes}} {
		if !(p.v >= 0 && p.v <= 1) {
			return c, fmt.Errorf("%s %v is not in [0,1]", p.n, p.v)
		}
	}
	if err := checkMix(c); err != nil {
		return c, err
	}
	if c.PredicateReads > 0 && c.Workload != RWRegister {
		return c, fmt.Errorf("predicate reads need the %s workload (rows are key/value pairs)", RWRegister)
	}
	if c.Deletes > 0 && (c.Workload != RWRegister || c.Mix != "" || IsReplicated(c.Level)) {
		return c, fmt.Errorf("deletes need the %s workload without a mix, at a non-replicated level", RWRegister)
	}
	for _, f := range c.Faults {
		if faultIdx(f.Name) < 0 {
			return c, fmt.Errorf("unknown fault %q (known: %s)", f.Name, strings.Join(FaultNames(), ", "))
		}
		if !(f.Prob >= 0 && f.Prob <= 1) {
			return c, fmt.Errorf("fault %q: probability %v is not in [0,1]", f.Name, f.Prob)
		}
	}
	if c.StepNanos == 0 {
		c.StepNanos = 1000
	}
	if c.Jitter == 0 {
		c.Jitter = c.StepNanos / 2
	}
	if c.Lag == 0 {
		c.Lag = 8
	}
	return c, nil
}

// Truth is what really happened in a simulation, beyond the recorded
// history. Transaction references are History.Txns indices (completion
// order, as emitted).
type Truth struct {
	// Level is the simulated level.
	Level string
	// FaultCounts counts, per configured fault, how many times it fired
	// (changed the execution). A fault with count 0 did not manifest.
	FaultCounts map[string]int
	// Faults lists, per affected transaction, the faults that affected it
	// (sorted names). Transactions absent were executed correctly.
	Faults map[int32][]string
	// TrueStatus gives the real outcome of every transaction recorded with
	// status unknown (committed or aborted).
	TrueStatus map[int32]history.Status
	// TrueCommitTS gives the real commit timestamp of transactions whose
	// recorded one was disordered by FaultTSDisorder.
	TrueCommitTS map[int32]history.Timestamp
	// TrueStartTS gives the real start timestamp where FaultTSDisorder had
	// to move the recorded one too (to keep start before commit).
	TrueStartTS map[int32]history.Timestamp
	// Order lists the transactions that really committed (including those
	// recorded unknown, excluding lost commits) by their serialization
	// timestamp: the commit timestamp, or for a read-only transaction at
	// Serializable the snapshot it read. Without faults, at
	// strict-serializable, serializable and strict-2pl this is a serial
	// order that explains every read; at the other levels it is the commit
	// order.
	Order []int32
	// Aborts counts aborts by cause ("client rollback", "deadlock",
	// "first-updater-wins", "first-committer-wins", "ssi",
	// "aborted-read victim").
	Aborts map[string]int
}

// Affected lists, in index order, the transactions that fault affected.
func (t *Truth) Affected(fault string) []int32 {
	var out []int32
	for i, fs := range t.Faults {
		for _, f := range fs {
			if f == fault {
				out = append(out, i)
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

func (t *Truth) addFault(txn int32, names []string) {
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	t.Faults[txn] = names
}

// Sink receives a streamed history. *jsonl.Writer implements it. The
// History passed to WriteTxn and WriteVersionOrder carries the header,
// evidence and the interners that resolve the ids in t and order; it holds
// no transactions, and in Stream its interners may be replaced between
// calls (ids are valid during the call only).
type Sink interface {
	WriteHeader(hd history.Header, ev history.Evidence) error
	WriteTxn(h *history.History, t *history.Txn) error
	WriteVersionOrder(h *history.History, key int32, order []int32) error
}

// Generate runs the simulation in memory and returns the history (with
// VersionOrder filled) and the ground truth.
func Generate(cfg Config) (*history.History, *Truth, error) {
	if IsReplicated(cfg.Level) {
		return generateReplicated(cfg)
	}
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, nil, err
	}
	e := newEngine(cfg, nil, false)
	h := e.h
	h.VersionOrder = map[int32][]int32{}
	ms := &memSink{h: h}
	e.sink = ms
	if err := e.run(); err != nil {
		return nil, nil, err
	}
	e.setHeaderCounts()
	if err := ms.err; err != nil {
		return nil, nil, err
	}
	return h, e.truth, nil
}

// Stream runs the simulation and writes the history to sink as it is
// produced: the header first, each transaction when it completes, and each
// key's version order once the key is retired (and the rest at the end).
// When faults are configured Stream simulates twice (the first time without
// output) so that the header, written first, already carries the fault
// counts (Extra "fault.<name>"). The returned Truth is the run's.
func Stream(cfg Config, sink Sink) (*Truth, error) { return stream(cfg, sink, true) }

func stream(cfg Config, sink Sink, prepass bool) (*Truth, error) {
	if IsReplicated(cfg.Level) {
		return streamReplicated(cfg, sink)
	}
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	var counts map[string]int
	if prepass && len(cfg.Faults) > 0 {
		e := newEngine(cfg, nil, true)
		if err := e.run(); err != nil {
			return nil, err
		}
		counts = e.truth.FaultCounts
	}
	e := newEngine(cfg, sink, true)
	e.stream = true
	if counts != nil {
		e.presetCounts(counts)
	}
	if err := sink.WriteHeader(e.h.Header, e.h.Evidence); err != nil {
		return nil, err
	}
	if err := e.run(); err != nil {
		return nil, err
	}
	return e.truth, nil
}

// Each is Stream with a callback per transaction (no header, no version
// orders): for property tests that scan large histories. h resolves t's ids
// during the call only.
func Each(cfg Config, fn func(h *history.History, t *history.Txn) error) (*Truth, error) {
	return stream(cfg, funcSink(fn), false)
}

type funcSink func(h *history.History, t *history.Txn) error

func (f funcSink) WriteHeader(history.Header, history.Evidence) error                   { return nil }
func (f funcSink) WriteTxn(h *history.History, t *history.Txn) error                    { return f(h, t) }
func (f funcSink) WriteVersionOrder(h *history.History, key int32, order []int32) error { return nil }

// memSink accumulates into the engine's own history.
type memSink struct {
	h   *history.History
	err error
}

func (m *memSink) WriteHeader(history.Header, history.Evidence) error { return nil }
func (m *memSink) WriteTxn(h *history.History, t *history.Txn) error {
	m.h.Add(*t)
	return nil
}
func (m *memSink) WriteVersionOrder(h *history.History, key int32, order []int32) error {
	m.h.VersionOrder[key] = order
	return nil
}
