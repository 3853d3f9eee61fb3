package model

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

func set(xs ...string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	if out == nil {
		out = []string{}
	}
	return out
}

func eq(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func TestCanonicalAliases(t *testing.T) {
	cases := map[string]string{
		"ser": Serializable, "SR": Serializable, "PL-3": Serializable, "conflict-serializable": Serializable,
		"si": SnapshotIsolation, "PL-SI": SnapshotIsolation, "snapshot_isolation": SnapshotIsolation,
		"rr": RepeatableRead, "REPEATABLE READ": RepeatableRead, "PL-2.99": RepeatableRead,
		"rc": ReadCommitted, "read_committed": ReadCommitted, "PL-2": ReadCommitted,
		"ru": ReadUncommitted, "PL-1": ReadUncommitted,
		"strong-serializable": StrictSerializable, "strict-serializable": StrictSerializable, "PL-SS": StrictSerializable,
		"PL-2+": ConsistentView, "PL-FCV": ForwardConsistentView, "PL-CS": CursorStability, "PL-2L": MonotonicView,
		"PL-MSR": MonotonicSnapshotRead, "PL-3U": UpdateSerializable,
		"strong-session-PL-2": StrongSessionReadCommitted, "strong-PL-1": StrongReadUncommitted,
		"ROLA": UpdateAtomic, "psi": ParallelSnapshotIsolation, "mav": MonotonicAtomicView, "ra": ReadAtomic,
		"pram": PRAM, "1sr": OneCopySerializable, "causal-cerone": CausalCerone, "linearizable": Linearizable,
		"strong-session-snapshot-isolation": StrongSessionSnapshotIsolation,
	}
	for in, want := range cases {
		got, err := Canonical(in)
		if err != nil || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := Canonical("stricct-snappshot-isolation")
	if err == nil || !strings.Contains(err.Error(), "known models") || !strings.Contains(err.Error(), SnapshotIsolation) {
		t.Errorf("unknown model error = %v; want a list of known models", err)
	}
}

// TestNamesIncludeElleModels: every model of Elle's lattice, by friendly name.
func TestNamesIncludeElleModels(t *testing.T) {
	want := []string{"1SR", "PRAM", "causal", "causal-cerone", "consistent-view", "cursor-stability",
		"forward-consistent-view", "linearizable", "monotonic-atomic-view", "monotonic-reads",
		"monotonic-snapshot-read", "monotonic-view", "monotonic-writes", "parallel-snapshot-isolation", "prefix",
		"read-atomic", "read-committed", "read-committed-be", "read-uncommitted", "read-your-writes", "repeatable-read", "sequential",
		"serializable", "session-serializable", "snapshot-isolation", "strict-serializable", "strong-read-committed",
		"strong-read-uncommitted", "strong-session-read-committed", "strong-session-read-uncommitted",
		"strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation",
		"update-atomic", "update-serializable", "view-serializable", "writes-follow-reads"}
	if got := Names(); !eq(got, set(want...)) {
		t.Errorf("Names() = %v\nwant %v", got, set(want...))
	}
}

// TestTablesReferenceKnownNames guards the static tables against typos.
func TestTablesReferenceKnownNames(t *testing.T) {
	known := map[string]bool{}
	for _, m := range Names() {
		known[m] = true
	}
	for m := range directProhibits {
		if !known[m] {
			t.Errorf("directProhibits has unknown model %q", m)
		}
	}
	for a, m := range aliases {
		if !known[m] {
			t.Errorf("alias %q -> unknown model %q", a, m)
		}
		if a != normalize(a) {
			t.Errorf("alias %q is not normalized", a)
		}
	}
	for a := range anomalySet {
		if Describe(a) == "" {
			t.Errorf("anomaly %q has no description", a)
		}
	}
	for _, p := range profiles {
		if !known[p.Model] {
			t.Errorf("profile %s: unknown model %q", p.Name, p.Model)
		}
		for _, m := range p.Mechanisms {
			if m.Anomaly() == "" {
				t.Errorf("profile %s: unknown mechanism %q", p.Name, m)
			}
		}
		if p.Doc == "" {
			t.Errorf("profile %s: no doc", p.Name)
		}
		if p.SnapshotPerStatement && !hasMech(p.Mechanisms, ConsistentRead) {
			t.Errorf("profile %s: statement snapshots without consistent-read", p.Name)
		}
	}
	for from, to := range levelAliases {
		if _, ok := profileIndex[to]; !ok {
			t.Errorf("level alias %s -> unknown profile %s", from, to)
		}
	}
	// The lattice and the anomaly relation must be acyclic.
	for _, m := range Names() {
		for _, n := range lattice[m] {
			if downward(n)[m] {
				t.Errorf("model lattice cycle through %s and %s", m, n)
			}
		}
	}
	for a, bs := range implied {
		for _, b := range bs {
			for _, c := range Implied([]string{b}) {
				if c == a {
					t.Errorf("anomaly implication cycle through %s and %s", a, b)
				}
			}
		}
	}
}

func hasMech(ms []Mechanism, m Mechanism) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

func TestStrongerAndImplies(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"strict-serializable", "serializable", true},
		{"strong-serializable", "ser", true},
		{"serializable", "snapshot-isolation", true}, // Elle: Bailis, Cerone
		{"serializable", "repeatable-read", true},
		{"snapshot-isolation", "repeatable-read", false}, // incomparable (write skew vs phantoms)
		{"repeatable-read", "snapshot-isolation", false},
		{"snapshot-isolation", "read-committed", true},
		{"snapshot-isolation", "parallel-snapshot-isolation", true},
		{"parallel-snapshot-isolation", "read-atomic", true},
		{"read-atomic", "read-committed", true},
		{"read-committed", "read-uncommitted", true},
		{"strict-serializable", "linearizable", true},
		{"linearizable", "read-your-writes", true},
		{"strong-snapshot-isolation", "strong-read-committed", true},
		{"strong-session-serializable", "strong-session-snapshot-isolation", true},
		{"serializable", "serializable", false},
		{"read-committed", "serializable", false},
		{"nonsense", "serializable", false},
	}
	for _, c := range cases {
		if got := Stronger(c.a, c.b); got != c.want {
			t.Errorf("Stronger(%s, %s) = %v; want %v", c.a, c.b, got, c.want)
		}
	}
	if !Implies("si", "snapshot-isolation") || Implies("rc", "si") {
		t.Error("Implies is not reflexive-and-directed")
	}
}

// TestImplied follows Elle's implied-anomalies graph.
func TestImplied(t *testing.T) {
	cases := []struct {
		in   []string
		want []string
	}{
		{[]string{GSI}, []string{GSI}}, // elle consistency_model_test all-implied-anomalies-test
		{[]string{"GSIb"}, []string{GSI, GSIb}},
		{[]string{GSingleItemRealtime}, []string{GSingleItemRealtime, GSingleRealtime, GNonadjacentItemRealtime,
			G2ItemRealtime, GNonadjacentRealtime, G2Realtime}},
		{[]string{G1a}, []string{G1a, G1, G1Process, G1Realtime}},
		{[]string{Internal}, []string{Internal}},
		{[]string{LostUpdate}, []string{LostUpdate, WriteSkew, G2Item, G2, G2ItemProcess, G2ItemRealtime,
			G2Process, G2Realtime}},
		{[]string{G0}, []string{G0, G0Process, G0Realtime, G1c, G1cProcess, G1cRealtime, G1, G1Process, G1Realtime}},
		{[]string{FutureRead}, []string{FutureRead, G1c, G1cProcess, G1cRealtime, G1, G1Process, G1Realtime}},
		{nil, nil},
	}
	for _, c := range cases {
		if got := Implied(c.in); !eq(got, set(c.want...)) {
			t.Errorf("Implied(%v) = %v\nwant %v", c.in, got, set(c.want...))
		}
	}
}

// TestProhibits: per-model prohibitions, each case citing its source.
func TestProhibits(t *testing.T) {
	cases := []struct {
		model, anomaly string
		want           bool
	}{
		// Adya PL-SI prohibits G-single (Adya); Elle adds G-nonadjacent
		// (Cerone & Gotsman PODC 2016). It allows write skew (G2-item).
		{"snapshot-isolation", GSingleItem, true},
		{"snapshot-isolation", GSingle, true},
		{"snapshot-isolation", GNonadjacentItem, true},
		{"snapshot-isolation", G2Item, false},
		{"snapshot-isolation", G2, false},
		{"snapshot-isolation", LostUpdate, true}, // via parallel-snapshot-isolation -> update-atomic (Elle; Cerone)
		{"snapshot-isolation", GSingleRealtime, false},
		{"snapshot-isolation", Internal, true},
		{"snapshot-isolation", Ext, true},
		{"snapshot-isolation", NoConflict, true},
		// Elle's/Adya's SI has no session guarantee; Chronos/Cerone SI (with
		// SESSION) is strong-session-snapshot-isolation.
		{"snapshot-isolation", Session, false},
		{"serializable", Session, false},
		{"strong-session-snapshot-isolation", Session, true},
		{"strong-session-serializable", Session, true},
		{"read-committed", Session, false},
		{"strict-serializable", RealtimeOrder, true},
		{"serializable", RealtimeOrder, false},
		// Adya PL-2.99 prohibits G2-item (Adya) and, since every
		// G-single-item is a G-nonadjacent-item and thus G2-item, G-single-item;
		// predicate G-single is allowed (phantoms).
		{"repeatable-read", G2Item, true},
		{"repeatable-read", GSingleItem, true},
		{"repeatable-read", GSingle, false},
		{"repeatable-read", G2, false},
		{"repeatable-read", LostUpdate, true},
		// Elle's repeatable-read does not list internal; txray's does: under
		// Adya's PL-2.99 a re-read returning another writer's committed
		// value closes a G2-item cycle (model.go, directProhibits).
		{"repeatable-read", Internal, true},
		// PL-2 prohibits G1 (Adya), not G-single.
		{"read-committed", G1a, true},
		{"read-committed", G1b, true},
		{"read-committed", G1c, true},
		{"read-committed", G0, true},
		{"read-committed", DirtyUpdate, true},
		{"read-committed", IncompatibleOrder, true},
		{"read-committed", FutureRead, true},
		{"read-committed", GSingle, false},
		{"read-committed", LostUpdate, false},
		{"read-committed", G1cProcess, false},
		{"read-uncommitted", G0, true},
		{"read-uncommitted", G1a, false},
		{"read-uncommitted", CyclicVersions, true},
		{"read-uncommitted", DuplicateElements, true},
		// PL-3 prohibits G2 and everything below (Adya).
		{"serializable", G2, true},
		{"serializable", G2Item, true},
		{"serializable", PredicateReadMiss, true},
		{"serializable", G2Realtime, false},
		{"serializable", G2Process, false},
		{"serializable", GSingleRealtime, false},
		{"serializable", G0Process, false},
		// PL-SS adds realtime cycles (Adya).
		{"strict-serializable", G2Realtime, true},
		{"strict-serializable", GSingleItemRealtime, true},
		{"strict-serializable", G0Realtime, true},
		{"strict-serializable", G1cRealtime, true},
		{"strong-serializable", GSingleProcess, true},
		{"strict-serializable", Session, true},
		// Session variants (Daudjee & Salem).
		{"strong-session-serializable", G2Process, true},
		{"strong-session-serializable", G2Realtime, false},
		{"strong-session-snapshot-isolation", GSingleProcess, true},
		{"strong-session-snapshot-isolation", GSingleRealtime, false},
		{"strong-snapshot-isolation", GSingleRealtime, true},
		{"strong-snapshot-isolation", G2ItemRealtime, false},
		{"strong-session-read-committed", G1cProcess, true},
		{"strong-session-read-committed", GSingleProcess, false},
		// Cerone models.
		{"read-atomic", FutureRead, true},
		{"read-atomic", Internal, true},
		{"read-atomic", LostUpdate, false},
		{"update-atomic", LostUpdate, true},
		{"cursor-stability", LostUpdate, true},
		{"cursor-stability", GCursor, true},
		{"consistent-view", GSingle, true},
		{"forward-consistent-view", GSIb, true},
		{"forward-consistent-view", "GSIb", true},
		// Unknowns.
		{"serializable", "no-such-anomaly", false},
		{"no-such-model", G0, false},
		{"serializable", CycleSearchTimeout, false},
		{"serializable", FUW, false},
	}
	for _, c := range cases {
		if got := Prohibits(c.model, c.anomaly); got != c.want {
			t.Errorf("Prohibits(%s, %s) = %v; want %v", c.model, c.anomaly, got, c.want)
		}
	}
}

// TestProhibitedAnomaliesReadCommitted mirrors Elle's
// anomalies-prohibited-by-test for read committed, plus txray's additions
// (garbage-versions, result-set-mismatch, and the order-free read anomalies
// of readanomaly.go) and the -process/-realtime
// variants Elle's closure also contains... Elle's closure over
// all-anomalies-implying does not add G1-process, so neither do we.
func TestProhibitedAnomaliesReadCommitted(t *testing.T) {
	want := set(DirtyUpdate, G1a, G1b, G1c, G1, G0, PL1CycleExists, PL2CycleExists, CyclicVersions,
		DuplicateElements, IncompatibleOrder, FutureRead, GarbageVersions, ResultSetMismatch,
		ThinAirRead, AbortedRead, IntermediateRead, NotMyOwnWrite, NotMyLastWrite)
	if got := ProhibitedAnomalies("read-committed"); !eq(got, want) {
		t.Errorf("ProhibitedAnomalies(rc) = %v\nwant %v", got, want)
	}
	if got := ProhibitedAnomalies("nope"); got != nil {
		t.Errorf("unknown model: %v", got)
	}
}

// TestImpossibleModels mirrors Elle's anomaly->impossible-models-test, with
// strict-serializable for Elle's friendly name strong-serializable.
func TestImpossibleModels(t *testing.T) {
	cases := []struct {
		anomaly string
		want    []string
	}{
		{GSingle, []string{"consistent-view", "forward-consistent-view", "strict-serializable", "serializable",
			"snapshot-isolation", "strong-session-serializable", "strong-session-snapshot-isolation",
			"strong-snapshot-isolation", "update-serializable"}},
		{GSI, []string{"snapshot-isolation", "serializable", "strict-serializable", "strong-session-serializable",
			"strong-session-snapshot-isolation", "strong-snapshot-isolation"}},
		{DirtyUpdate, []string{"read-committed", "read-committed-be", "monotonic-atomic-view", "snapshot-isolation", "repeatable-read",
			"update-atomic", "serializable", "strict-serializable", "update-serializable", "cursor-stability",
			"forward-consistent-view", "consistent-view", "monotonic-view", "monotonic-snapshot-read",
			"causal-cerone", "parallel-snapshot-isolation", "prefix", "read-atomic", "strong-session-read-committed",
			"strong-session-serializable", "strong-session-snapshot-isolation", "strong-read-committed",
			"strong-snapshot-isolation"}},
		// Not read-committed-be: Elle's internal covers non-repeatable reads,
		// which Biswas-Enea read committed allows.
		{Internal, []string{"causal-cerone", "parallel-snapshot-isolation", "prefix", "read-atomic", "update-atomic",
			"repeatable-read", "serializable", "snapshot-isolation", "strict-serializable", "strong-session-serializable",
			"strong-session-snapshot-isolation", "strong-snapshot-isolation"}},
	}
	for _, c := range cases {
		if got := ImpossibleModels([]string{c.anomaly}); !eq(got, set(c.want...)) {
			t.Errorf("ImpossibleModels(%s) = %v\nwant %v", c.anomaly, got, set(c.want...))
		}
	}
}

// TestRulesOut mirrors Elle's friendly-boundary-test.
func TestRulesOut(t *testing.T) {
	cases := []struct {
		name      string
		anomalies []string
		not       []string
		alsoNot   []string
	}{
		{"empty", nil, nil, nil},
		{"cyclic-versions", []string{CyclicVersions}, []string{"read-uncommitted"},
			[]string{"read-committed", "read-committed-be", "snapshot-isolation", "causal-cerone", "consistent-view", "cursor-stability",
				"forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view",
				"parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "update-atomic",
				"serializable", "strong-read-committed", "strong-read-uncommitted", "strict-serializable",
				"strong-session-read-committed", "strong-session-read-uncommitted", "strong-session-serializable",
				"strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-serializable"}},
		{"internal", []string{Internal}, []string{"read-atomic", "repeatable-read"},
			[]string{"causal-cerone", "parallel-snapshot-isolation", "prefix", "update-atomic", "serializable",
				"snapshot-isolation", "strict-serializable", "strong-session-serializable",
				"strong-session-snapshot-isolation", "strong-snapshot-isolation"}},
		{"G1a", []string{G1a}, []string{"read-committed"},
			[]string{"read-atomic", "read-committed-be", "update-atomic", "causal-cerone", "consistent-view", "cursor-stability",
				"forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view",
				"parallel-snapshot-isolation", "prefix", "repeatable-read", "serializable", "snapshot-isolation",
				"strong-read-committed", "strong-snapshot-isolation", "strict-serializable",
				"strong-session-read-committed", "strong-session-serializable", "strong-session-snapshot-isolation",
				"update-serializable"}},
		{"G-single", []string{GSingle}, []string{"consistent-view"},
			[]string{"snapshot-isolation", "serializable", "strict-serializable", "strong-session-snapshot-isolation",
				"strong-snapshot-isolation", "strong-session-serializable", "forward-consistent-view",
				"update-serializable"}},
		{"internal and G2", []string{G2, Internal}, []string{"read-atomic", "repeatable-read"},
			[]string{"update-atomic", "causal-cerone", "parallel-snapshot-isolation", "prefix", "serializable",
				"snapshot-isolation", "strict-serializable", "strong-session-serializable",
				"strong-session-snapshot-isolation", "strong-snapshot-isolation"}},
		{"G-single-realtime", []string{GSingleRealtime}, []string{"strong-snapshot-isolation"},
			[]string{"strict-serializable"}},
		// Beyond Elle's tests: G2-item rules out repeatable-read (Adya PL-2.99)
		// and everything stronger, but not snapshot isolation.
		{"G2-item", []string{G2Item}, []string{"repeatable-read"},
			[]string{"serializable", "strict-serializable", "strong-session-serializable"}},
		{"mechanism only", []string{FUW, CycleSearchTimeout}, nil, nil},
	}
	for _, c := range cases {
		not, also := RulesOut(c.anomalies)
		if !eq(not, set(c.not...)) || !eq(also, set(c.alsoNot...)) {
			t.Errorf("%s: RulesOut = not %v also-not %v\nwant not %v also-not %v", c.name, not, also,
				set(c.not...), set(c.alsoNot...))
		}
	}
	// Elle: (:not (friendly-boundary [:lost-update])) = #{:update-atomic :cursor-stability}
	if not, _ := RulesOut([]string{LostUpdate}); !eq(not, set("update-atomic", "cursor-stability")) {
		t.Errorf("lost-update: not = %v", not)
	}
}

// TestSplitWeakest: a ruled-out model is in not when no other ruled-out
// model is weaker, else in alsoNot (RulesOut's split, which TestRulesOut
// covers per anomaly type; chronos and enne split their own sets).
func TestSplitWeakest(t *testing.T) {
	for _, c := range []struct {
		name      string
		out       []string
		not, also []string
	}{
		{"none", nil, nil, nil},
		{"one", []string{Serializable}, []string{Serializable}, nil},
		{"chain", []string{ReadCommitted, Serializable, StrictSerializable}, []string{ReadCommitted}, []string{Serializable, StrictSerializable}},
		{"incomparable", []string{RepeatableRead, SnapshotIsolation, Serializable}, []string{RepeatableRead, SnapshotIsolation}, []string{Serializable}},
	} {
		out := map[string]bool{}
		for _, m := range c.out {
			out[m] = true
		}
		not, also := SplitWeakest(out)
		if !slices.Equal(not, c.not) || !slices.Equal(also, c.also) {
			t.Errorf("%s: SplitWeakest = %v / %v, want %v / %v", c.name, not, also, c.not, c.also)
		}
	}
}

func TestDescribe(t *testing.T) {
	for _, a := range []string{G2ItemRealtime, GSingleProcess, PL3CycleExists, "GSIa"} {
		if d := Describe(a); d == "" {
			t.Errorf("Describe(%s) is empty", a)
		}
	}
	if !strings.Contains(Describe(G1c), "Adya") || !strings.Contains(Describe(G2ItemRealtime), "realtime") {
		t.Errorf("descriptions lack sources: %q / %q", Describe(G1c), Describe(G2ItemRealtime))
	}
	if Describe("bogus") != "" {
		t.Error("unknown anomaly described")
	}
}

func TestCycleExists(t *testing.T) {
	if a, ok := CycleExistsAnomaly("ser"); !ok || a != PL3CycleExists {
		t.Errorf("CycleExistsAnomaly(ser) = %q %v", a, ok)
	}
	if m, ok := CycleExistsModel(PLSSCycleExists); !ok || m != StrictSerializable {
		t.Errorf("CycleExistsModel(PL-SS) = %q %v", m, ok)
	}
	// Each cycle-exists anomaly rules out exactly its own model as weakest.
	for a, m := range cycleExistsModel {
		if not, _ := RulesOut([]string{a}); !eq(not, []string{m}) {
			t.Errorf("RulesOut(%s).not = %v; want [%s]", a, not, m)
		}
		if !Prohibits(m, a) {
			t.Errorf("%s does not prohibit %s", m, a)
		}
	}
}

func TestProfiles(t *testing.T) {
	cases := []struct {
		in, name, model string
		mechs           []Mechanism
		perStmt         bool
	}{
		{"postgres:repeatable-read", "postgres:repeatable-read", SnapshotIsolation, []Mechanism{ConsistentRead, FirstUpdaterWins}, false},
		{"pg:rr", "postgres:repeatable-read", SnapshotIsolation, []Mechanism{ConsistentRead, FirstUpdaterWins}, false},
		{"PostgreSQL:SERIALIZABLE", "postgres:serializable", Serializable, []Mechanism{ConsistentRead, FirstUpdaterWins, SerializationCertifier}, false},
		{"pg:rc", "postgres:read-committed", ReadCommitted, []Mechanism{ConsistentRead, MutualExclusion}, true},
		{"pg:ru", "postgres:read-committed", ReadCommitted, []Mechanism{ConsistentRead, MutualExclusion}, true},
		{"mysql:rr", "mysql:repeatable-read", ReadCommitted, []Mechanism{ConsistentRead, MutualExclusion}, false},
		{"mysql:REPEATABLE_READ", "mysql:repeatable-read", ReadCommitted, []Mechanism{ConsistentRead, MutualExclusion}, false},
		{"mariadb:serializable", "mariadb:serializable", Serializable, []Mechanism{MutualExclusion}, false},
		{"mssql:snapshot", "sqlserver:snapshot-isolation", SnapshotIsolation, []Mechanism{ConsistentRead, FirstUpdaterWins}, false},
		{"tidb-optimistic:rr", "tidb:snapshot-isolation", SnapshotIsolation, []Mechanism{ConsistentRead, FirstUpdaterWins}, false},
		{"crdb:ser", "cockroachdb:serializable", Serializable, []Mechanism{ConsistentRead, MutualExclusion, SerializationCertifier}, false},
		{"oracle:si", "oracle:serializable", SnapshotIsolation, []Mechanism{ConsistentRead, FirstUpdaterWins}, false},
		{"fdb:serializable", "foundationdb:serializable", StrictSerializable, []Mechanism{ConsistentRead, SerializationCertifier}, false},
	}
	for _, c := range cases {
		p, ok := LookupProfile(c.in)
		if !ok {
			t.Errorf("LookupProfile(%q) not found", c.in)
			continue
		}
		if p.Name != c.name || p.Model != c.model || !reflect.DeepEqual(p.Mechanisms, c.mechs) || p.SnapshotPerStatement != c.perStmt {
			t.Errorf("LookupProfile(%q) = %+v; want %s %s %v %v", c.in, p, c.name, c.model, c.mechs, c.perStmt)
		}
	}
	for _, bad := range []string{"postgres", "nosuchdb:serializable", "postgres:bogus", ":rr", "mysql:"} {
		if _, ok := LookupProfile(bad); ok {
			t.Errorf("LookupProfile(%q) found", bad)
		}
	}
	// The brief's required coverage.
	for _, n := range []string{"postgres:read-committed", "opengauss:repeatable-read", "opengauss:serializable",
		"yugabytedb:serializable", "mysql:read-committed", "mysql:serializable", "mariadb:repeatable-read",
		"sqlserver:read-committed", "sqlserver:repeatable-read", "sqlserver:serializable", "tidb:read-committed",
		"tidb:repeatable-read", "sqlite:serializable", "oceanbase:read-committed", "oceanbase:serializable",
		"spanner:serializable"} {
		if _, ok := LookupProfile(n); !ok {
			t.Errorf("missing profile %s", n)
		}
	}
	ps := Profiles()
	if !sort.SliceIsSorted(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name }) {
		t.Error("Profiles not sorted")
	}
	ps[0].Mechanisms[0] = "mutated"
	if Profiles()[0].Mechanisms[0] == "mutated" {
		t.Error("Profiles shares its slices")
	}
}

// TestProfileProhibits: a profile prohibits its model's anomalies and the
// violations of its own mechanisms (Leopard), and no others.
func TestProfileProhibits(t *testing.T) {
	cases := []struct {
		profile, anomaly string
		want             bool
	}{
		// mysql:repeatable-read allows lost update (Hermitage; Jepsen 2023).
		{"mysql:repeatable-read", LostUpdate, false},
		{"mysql:repeatable-read", GSingle, false},
		{"mysql:repeatable-read", G1a, true},
		{"mysql:repeatable-read", CR, true},
		{"mysql:repeatable-read", ME, true},
		{"mysql:repeatable-read", FUW, false},
		{"postgres:repeatable-read", LostUpdate, true}, // SI prohibits lost update (first updater wins)
		{"postgres:repeatable-read", FUW, true},
		{"postgres:repeatable-read", GSingleItem, true},
		{"postgres:repeatable-read", G2Item, false},
		{"postgres:serializable", G2Item, true},
		{"postgres:serializable", SC, true},
		{"sqlserver:repeatable-read", LostUpdate, true},
		{"sqlserver:repeatable-read", G2, false},
		{"spanner:serializable", G2Realtime, true},
	}
	for _, c := range cases {
		if got := Prohibits(c.profile, c.anomaly); got != c.want {
			t.Errorf("Prohibits(%s, %s) = %v; want %v", c.profile, c.anomaly, got, c.want)
		}
	}
	got := ProhibitedAnomalies("pg:serializable")
	for _, want := range []string{G2, CR, FUW, SC} {
		found := false
		for _, a := range got {
			found = found || a == want
		}
		if !found {
			t.Errorf("ProhibitedAnomalies(pg:serializable) lacks %s", want)
		}
	}
}
