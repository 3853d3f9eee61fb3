package model

import (
	"sort"
	"strings"
)

// Anomaly type names. Graph anomalies follow Adya, "Weak Consistency: A
// Generalized Theory and Optimistic Implementations for Distributed
// Transactions" (MIT PhD thesis, 1999) as extended by Elle
// (Kingsbury & Alvaro, "Elle: Inferring Isolation Anomalies from Experimental
// Observations", VLDB 2020) and jepsen-io/elle's consistency-model
// namespace: "-item" variants contain no predicate edges, "-process" variants
// contain at least one session-order edge, "-realtime" variants at least one
// realtime edge.
const (
	G0        = "G0"       // write cycle (Adya)
	G1a       = "G1a"      // aborted read (Adya)
	G1b       = "G1b"      // intermediate read (Adya)
	G1c       = "G1c"      // circular information flow (Adya)
	G1        = "G1"       // G1a ∪ G1b ∪ G1c (Adya)
	G2        = "G2"       // anti-dependency cycle (Adya)
	G2Item    = "G2-item"  // item anti-dependency cycle (Adya)
	GSingle   = "G-single" // single anti-dependency cycle (Adya)
	GCursor   = "G-cursor" // single-item lost update cycle (Adya)
	GMonotone = "G-monotonic"
	GMSR      = "G-MSR"
	GUpdate   = "G-update"
	GSIa      = "G-SIa" // interference (Adya)
	GSIb      = "G-SIb" // missed effects (Adya)
	GSI       = "G-SI"  // G-SIa ∪ G-SIb (Adya)

	GSingleItem      = "G-single-item"
	GNonadjacent     = "G-nonadjacent"
	GNonadjacentItem = "G-nonadjacent-item"

	G0Process                = "G0-process"
	G0Realtime               = "G0-realtime"
	G1Process                = "G1-process"
	G1Realtime               = "G1-realtime"
	G1cProcess               = "G1c-process"
	G1cRealtime              = "G1c-realtime"
	GSingleProcess           = "G-single-process"
	GSingleRealtime          = "G-single-realtime"
	GSingleItemProcess       = "G-single-item-process"
	GSingleItemRealtime      = "G-single-item-realtime"
	GNonadjacentProcess      = "G-nonadjacent-process"
	GNonadjacentRealtime     = "G-nonadjacent-realtime"
	GNonadjacentItemProcess  = "G-nonadjacent-item-process"
	GNonadjacentItemRealtime = "G-nonadjacent-item-realtime"
	G2Process                = "G2-process"
	G2Realtime               = "G2-realtime"
	G2ItemProcess            = "G2-item-process"
	G2ItemRealtime           = "G2-item-realtime"

	// Non-cycle anomalies Elle reports.
	Internal          = "internal"           // a read disagrees with the txn's own earlier ops
	FutureRead        = "future-read"        // a read observes the txn's own later write
	IncompatibleOrder = "incompatible-order" // two reads of one key are not prefixes of one version order
	DuplicateElements = "duplicate-elements" // a list read contains an element twice
	DirtyUpdate       = "dirty-update"       // a committed write builds on an aborted one
	LostUpdate        = "lost-update"        // two txns read the same version and both write the key
	WriteSkew         = "write-skew"
	CyclicVersions    = "cyclic-versions"     // the inferred version order of a key is cyclic
	PredicateReadMiss = "predicate-read-miss" // a predicate read missed a version every candidate matches
	GarbageVersions   = "garbage-versions"    // a read observed a value no operation wrote
	ResultSetMismatch = "result-set-mismatch" // a predicate read's rows differ from its version set

	// Elle's "a cycle exists in this SCC" fallbacks, one per model with a
	// cycle-exists search (names use Adya's canonical model names, as Elle
	// does).
	PL1CycleExists                   = "PL-1-cycle-exists"
	PL2CycleExists                   = "PL-2-cycle-exists"
	PL299CycleExists                 = "PL-2.99-cycle-exists"
	PL3CycleExists                   = "PL-3-cycle-exists"
	PLSICycleExists                  = "PL-SI-cycle-exists"
	PLSSCycleExists                  = "PL-SS-cycle-exists"
	StrongSessionPL1CycleExists      = "strong-session-PL-1-cycle-exists"
	StrongSessionPL2CycleExists      = "strong-session-PL-2-cycle-exists"
	StrongPL1CycleExists             = "strong-PL-1-cycle-exists"
	StrongPL2CycleExists             = "strong-PL-2-cycle-exists"
	StrongSessionSICycleExists       = "strong-session-snapshot-isolation-cycle-exists"
	StrongSICycleExists              = "strong-snapshot-isolation-cycle-exists"
	StrongSessionSerializableCycleEx = "strong-session-serializable-cycle-exists"

	// Timestamp axioms (Cerone, Bernardi & Gotsman, CONCUR 2015, as
	// checked with database timestamps by Chronos/Aion, Ouyang et al.). The
	// INT axiom reuses Internal.
	Session    = "session"
	Ext        = "ext"
	NoConflict = "noconflict"
	// RealtimeOrder: a commit-timestamp order that contradicts real time
	// (T1 completed before T2 was invoked, yet T1 committed at or after T2),
	// as Chronos reports for strict serializability.
	RealtimeOrder = "realtime"

	// Mechanism violations (Leopard, Li et al., ICDE 2023): the
	// database broke one of the four mechanisms its level is built from.
	CR  = "cr"  // consistent read
	ME  = "me"  // mutual exclusion
	FUW = "fuw" // first updater wins
	SC  = "sc"  // serialization certifier

	// Markers of an incomplete check: they make a verdict unknown, never
	// invalid (Elle's unknown-anomaly-types).
	EmptyTransactionGraph = "empty-transaction-graph"
	CycleSearchTimeout    = "cycle-search-timeout"
)

// implied is Elle's anomaly implication DAG (elle.consistency-model/
// implied-anomalies): a -> b means every history exhibiting a also exhibits
// b. Elle spells Adya's SI phenomena both "G-SIb" and "GSIb"; txray uses
// Adya's spelling throughout (CanonicalAnomaly accepts both), which merges
// Elle's two otherwise-disconnected vertices.
var implied = map[string][]string{
	G0:          {G1c, G0Process},
	G0Process:   {G1cProcess, G0Realtime},
	G0Realtime:  {G1cRealtime},
	G1a:         {G1},
	G1b:         {G1},
	G1c:         {G1, G1cProcess},
	G1cProcess:  {G1cRealtime, G1Process},
	G1cRealtime: {G1Realtime},
	G1:          {G1Process},
	G1Process:   {G1Realtime},

	GSingleItem:         {GSingle, GSingleItemProcess, GNonadjacentItem},
	GSingleItemProcess:  {GSingleProcess, GSingleItemRealtime, GNonadjacentItemProcess},
	GSingleItemRealtime: {GSingleRealtime, GNonadjacentItemRealtime},

	GSingle:         {GNonadjacent, GSIb, GSingleProcess},
	GSingleProcess:  {GNonadjacentProcess, GSingleRealtime},
	GSingleRealtime: {GNonadjacentRealtime},

	GNonadjacentItem:         {GNonadjacent, G2Item, GNonadjacentItemProcess},
	GNonadjacentItemProcess:  {GNonadjacentProcess, G2ItemProcess, GNonadjacentItemRealtime},
	GNonadjacentItemRealtime: {G2ItemRealtime, GNonadjacentRealtime},

	GNonadjacent:         {G2, GNonadjacentProcess},
	GNonadjacentProcess:  {G2Process, GNonadjacentRealtime},
	GNonadjacentRealtime: {G2Realtime},

	G2:             {G2Process},
	G2Item:         {G2, G2ItemProcess},
	G2ItemProcess:  {G2Process, G2ItemRealtime},
	G2ItemRealtime: {G2Realtime},
	G2Process:      {G2Realtime},

	GSIa: {GSI},
	GSIb: {GSI},

	IncompatibleOrder: {G1a},
	FutureRead:        {G1c},
	DirtyUpdate:       {G1a},
	LostUpdate:        {WriteSkew, G2Item},
	WriteSkew:         {G2},
}

// anomalyAliases maps other spellings to txray's.
var anomalyAliases = map[string]string{
	"GSIa": GSIa,
	"GSIb": GSIb,
	"GSI":  GSI,
}

// unknownTypes make a verdict unknown rather than invalid.
var unknownTypes = map[string]bool{EmptyTransactionGraph: true, CycleSearchTimeout: true}

// mechanismAnomaly maps each Leopard mechanism to the anomaly its violation
// is reported as.
var mechanismAnomaly = map[Mechanism]string{
	ConsistentRead:         CR,
	MutualExclusion:        ME,
	FirstUpdaterWins:       FUW,
	SerializationCertifier: SC,
}

// descriptions are one-line definitions with their source. Variants
// (-process, -realtime) and cycle-exists anomalies are described by
// Describe from their base.
var descriptions = map[string]string{
	G0:               "write cycle: a dependency cycle of ww edges only (Adya 1999, phenomenon G0)",
	G1a:              "aborted read: a committed transaction read a version written by an aborted one (Adya 1999, G1a)",
	G1b:              "intermediate read: a committed transaction read a version that was not its writer's final modification of the object (Adya 1999, G1b)",
	G1c:              "circular information flow: a cycle of ww and wr edges with at least one wr edge (Adya 1999, G1c)",
	G1:               "any of G1a, G1b or G1c (Adya 1999, G1)",
	G2:               "anti-dependency cycle: a cycle with one or more rw edges, some of them predicate anti-dependencies (Adya 1999, G2)",
	G2Item:           "item anti-dependency cycle: a cycle with one or more item rw edges and no predicate edges (Adya 1999, G2-item; Elle reports two or more adjacent rw edges)",
	GSingle:          "single anti-dependency cycle: a cycle with exactly one rw edge, the rest ww/wr (Adya 1999, G-single; read skew)",
	GSingleItem:      "G-single whose rw edge is an item (not predicate) anti-dependency (Elle, elle.txn cycle specs)",
	GNonadjacent:     "a cycle with two or more rw edges, no two of them adjacent (Elle; Cerone & Gotsman, PODC 2016: forbidden by snapshot isolation)",
	GNonadjacentItem: "G-nonadjacent with only item rw edges (Elle, elle.txn cycle specs)",
	GCursor:          "single-object cycle of a cursor-stability history: a lost update through a cursor (Adya 1999, G-cursor)",
	GMonotone:        "monotonic-view violation: a transaction observes another's effects in a non-monotonic way (Adya 1999, G-monotonic)",
	GMSR:             "monotonic-snapshot-read violation (Adya 1999, G-MSR)",
	GUpdate:          "update-serializability violation: a cycle in the update serialization graph of a read-only transaction (Adya 1999, G-update)",
	GSIa:             "interference: a transaction sees a write of one that did not precede its start (Adya 1999, G-SIa)",
	GSIb:             "missed effects: a start-ordered serialization graph cycle with exactly one anti-dependency edge (Adya 1999, G-SIb)",
	GSI:              "G-SIa or G-SIb (Adya 1999, G-SI)",

	Internal:          "internal inconsistency: a read disagrees with the transaction's own earlier reads or writes of the key (Elle, Kingsbury & Alvaro VLDB 2020; Cerone et al. CONCUR 2015 INT axiom)",
	FutureRead:        "a transaction read a value it writes only later, a trivial wr cycle T -> T (Elle, consistency-model implied-anomalies; implies G1c)",
	IncompatibleOrder: "two committed reads of one list key are not prefixes of a single version order (Elle, Kingsbury & Alvaro VLDB 2020; implies G1a)",
	DuplicateElements: "a list read contains one appended element more than once (Elle, Kingsbury & Alvaro VLDB 2020; not an Adya history)",
	DirtyUpdate:       "a committed transaction's write built on a version written by an aborted one (Elle, Kingsbury & Alvaro VLDB 2020; implies G1a)",
	LostUpdate:        "two committed transactions read the same version of a key and both wrote a new one (Bailis et al. VLDB 2014; Adya 1999; implies G2-item)",
	WriteSkew:         "two transactions read overlapping data and write disjoint parts of it (Berenson et al. SIGMOD 1995, A5B; Hermitage; implies G2)",
	CyclicVersions:    "the version order inferred for a key is cyclic, so no total version order exists (Elle, Kingsbury & Alvaro VLDB 2020; Adya 1999 requires a total order)",
	PredicateReadMiss: "a predicate read failed to observe a version although every version of that object matches the predicate (Elle, consistency-model)",
	GarbageVersions:   "a read observed a value that no operation in the history wrote (Adya 1999: every read returns an installed version; txray)",
	ResultSetMismatch: "a predicate read's result rows differ from the predicate evaluated over the versions it claims to read (Adya 1999 predicate reads; Emme/txray)",

	Session:       "SESSION axiom: a transaction's snapshot excludes an earlier transaction of its own session (start timestamp below the predecessor's commit timestamp) (Cerone et al. CONCUR 2015; Chronos, Ouyang et al. ICDE 2024)",
	Ext:           "EXT axiom: a read returned a value other than the last write committed before the reader's snapshot timestamp (Cerone et al. CONCUR 2015; Chronos)",
	RealtimeOrder: "commit timestamps contradict real time: T1 completed before T2 was invoked, yet T1's commit timestamp is not below T2's (Chronos strict-serializability check; Papadimitriou 1979 strictness)",
	NoConflict:    "NOCONFLICT axiom: two transactions with overlapping [start, commit] timestamp intervals both committed writes to one key (Cerone et al. CONCUR 2015; Chronos)",

	CR:  "consistent-read violation: a read did not return the version visible in its snapshot (Leopard, Li et al. ICDE 2023 mechanism CR)",
	ME:  "mutual-exclusion violation: two transactions held conflicting locks on one item at once (Leopard ICDE 2023 mechanism ME)",
	FUW: "first-updater-wins violation: two concurrent transactions both committed an update of one item (Leopard ICDE 2023 mechanism FUW)",
	SC:  "serialization-certifier violation: a transaction committed although it closes a dependency cycle the certifier must reject (Leopard ICDE 2023 mechanism SC)",

	EmptyTransactionGraph: "no transaction dependencies could be inferred, so nothing could be checked (Elle unknown-anomaly-types)",
	CycleSearchTimeout:    "the cycle search budget ran out in some strongly connected component; weaker anomalies there may be missed (Elle unknown-anomaly-types)",
}

// cycleExistsModel maps each cycle-exists anomaly to the model it rules out
// (Elle elle.txn/cycle-exists-specs).
var cycleExistsModel = map[string]string{
	PL1CycleExists:                   ReadUncommitted,
	PL2CycleExists:                   ReadCommitted,
	PL299CycleExists:                 RepeatableRead,
	PL3CycleExists:                   Serializable,
	PLSICycleExists:                  SnapshotIsolation,
	PLSSCycleExists:                  StrictSerializable,
	StrongSessionPL1CycleExists:      StrongSessionReadUncommitted,
	StrongSessionPL2CycleExists:      StrongSessionReadCommitted,
	StrongPL1CycleExists:             StrongReadUncommitted,
	StrongPL2CycleExists:             StrongReadCommitted,
	StrongSessionSICycleExists:       StrongSessionSnapshotIsolation,
	StrongSICycleExists:              StrongSnapshotIsolation,
	StrongSessionSerializableCycleEx: StrongSessionSerializable,
}

// CanonicalAnomaly returns txray's spelling of an anomaly type name, and
// whether it is known. It accepts Elle's alternative spellings (GSIa, GSIb,
// GSI).
func CanonicalAnomaly(name string) (string, bool) {
	if _, ok := anomalySet[name]; ok {
		return name, true
	}
	if a, ok := anomalyAliases[name]; ok {
		return a, true
	}
	return name, false
}

// IsUnknownType reports whether an anomaly type only marks an incomplete
// check (Elle's unknown-anomaly-types): it makes a verdict unknown, never
// invalid.
func IsUnknownType(anomaly string) bool { return unknownTypes[anomaly] }

// CycleExistsModel returns the model a "-cycle-exists" anomaly rules out.
func CycleExistsModel(anomaly string) (string, bool) {
	m, ok := cycleExistsModel[anomaly]
	return m, ok
}

// CycleExistsAnomaly returns the cycle-exists anomaly type for a model that
// has one (Elle's cycle-exists-specs), e.g. serializable -> PL-3-cycle-exists.
func CycleExistsAnomaly(model string) (string, bool) {
	m, err := Canonical(model)
	if err != nil {
		return "", false
	}
	for a, mm := range cycleExistsModel {
		if mm == m {
			return a, true
		}
	}
	return "", false
}

// Anomalies lists every known anomaly type, sorted.
func Anomalies() []string {
	out := make([]string, 0, len(anomalySet))
	for a := range anomalySet {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Implied returns the given anomalies plus every anomaly they imply under
// Elle's implication relation (e.g. G-single-item-realtime implies
// G-single-realtime, G-nonadjacent-item-realtime, G2-item-realtime,
// G-nonadjacent-realtime and G2-realtime), sorted and de-duplicated. Unknown
// names are kept as given.
func Implied(anomalies []string) []string {
	seen := map[string]bool{}
	var stack []string
	for _, a := range anomalies {
		c, _ := CanonicalAnomaly(a)
		if !seen[c] {
			seen[c] = true
			stack = append(stack, c)
		}
	}
	for len(stack) > 0 {
		a := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, b := range implied[a] {
			if !seen[b] {
				seen[b] = true
				stack = append(stack, b)
			}
		}
	}
	return sortedKeys(seen)
}

// implying returns the anomalies plus every anomaly that implies one of them
// (Elle's all-anomalies-implying).
func implying(anomalies []string) map[string]bool {
	seen := map[string]bool{}
	var stack []string
	for _, a := range anomalies {
		if !seen[a] {
			seen[a] = true
			stack = append(stack, a)
		}
	}
	for len(stack) > 0 {
		a := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, b := range impliedBy[a] {
			if !seen[b] {
				seen[b] = true
				stack = append(stack, b)
			}
		}
	}
	return seen
}

// Describe returns a one-line definition of an anomaly type with its source,
// or "" for an unknown name.
func Describe(anomaly string) string {
	a, ok := CanonicalAnomaly(anomaly)
	if !ok {
		return ""
	}
	if d, ok := descriptions[a]; ok {
		return d
	}
	if m, ok := cycleExistsModel[a]; ok {
		return "some strongly connected component of the dependency graph restricted to the edges " + m +
			" forbids is cyclic, though no specific cycle was extracted (Elle elle.txn/cycle-exists-specs)"
	}
	for _, v := range []struct{ suffix, what string }{
		{"-process", "with at least one process (session-order) edge (Elle, elle.txn cycle-anomaly-spec-variant)"},
		{"-realtime", "with at least one realtime edge: T1 completed before T2 was invoked (Elle, elle.txn cycle-anomaly-spec-variant)"},
	} {
		if base, ok := strings.CutSuffix(a, v.suffix); ok {
			if d, ok := descriptions[base]; ok {
				name := d
				if i := strings.LastIndex(name, " ("); i >= 0 && strings.HasSuffix(name, ")") {
					name = name[:i] // drop the source
				}
				if short, _, ok := strings.Cut(name, ": "); ok {
					name = short // keep the short name
				}
				return base + " " + v.what + "; " + base + " is " + name
			}
		}
	}
	return ""
}

var (
	anomalySet map[string]struct{}
	impliedBy  map[string][]string
)

func init() {
	anomalySet = map[string]struct{}{}
	impliedBy = map[string][]string{}
	add := func(a string) { anomalySet[a] = struct{}{} }
	for a, bs := range implied {
		add(a)
		for _, b := range bs {
			add(b)
			impliedBy[b] = append(impliedBy[b], a)
		}
	}
	for a := range descriptions {
		add(a)
	}
	for a := range cycleExistsModel {
		add(a)
	}
	for _, as := range directProhibits {
		for _, a := range as {
			add(a)
		}
	}
	for _, bs := range impliedBy {
		sort.Strings(bs)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
