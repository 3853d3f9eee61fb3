package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ambiguousPredicateHistory: a serial history (serial_order=commit, the
// order MariaDB/SQLite serializable commits in) whose predicate read did
// not return key 1, whose versions 10 (v=5, no match) and 11 (v=50, match)
// and 12 (v=6, no match) lie on both sides of a change of the matches: with
// no version set, emme (the strongest checker for predicate reads) cannot
// tell which version the read saw and says unknown; enne replays the
// expected serialization order and decides valid.
const ambiguousPredicateHistory = `{"txray":1,"level":"serializable","evidence":{"serial_order":"commit","commit_order":true}}
{"id":"a","session":"s","status":"committed","commit_ts":1,"ops":[{"f":"w","k":1,"v":5}]}
{"id":"b","session":"s","status":"committed","commit_ts":2,"ops":[{"f":"w","k":1,"v":50}]}
{"id":"c","session":"s","status":"committed","commit_ts":3,"ops":[{"f":"w","k":1,"v":6}]}
{"id":"d","session":"t","status":"committed","commit_ts":4,"ops":[{"f":"rp","table":"t","where":"v >= 10","result":[]}]}
{"type":"version_order","k":1,"order":[5,50,6]}
`

// TestAutoFallsBackWhenStrongestCannotDecide: --checker auto does not stop
// at an unknown verdict while a weaker applicable checker decides (txray
// run --workload tpcc on SQLite exited 3 although enne decided valid). The
// deciding checker leads, the undecided one follows with its reason, and
// the exit code follows the decision; --checker NAME still reports that
// checker alone.
func TestAutoFallsBackWhenStrongestCannotDecide(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h.jsonl")
	if err := os.WriteFile(p, []byte(ambiguousPredicateHistory), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "", "check", "-q", "--model", "serializable", p)
	if code != ExitValid || !strings.Contains(out, "verdict: VALID under serializable (checker enne)") ||
		!strings.Contains(out, "also: UNKNOWN under serializable (checker emme)") {
		t.Errorf("auto: exit %d, want 0 with enne leading and emme's unknown listed\n%s\n%s", code, out, errs)
	}
	code, out, _ = runCmd(t, "", "check", "--json", "--model", "serializable", p)
	objs := validLines(t, outputSchema(t), out)
	if code != ExitValid || objs[0]["checker"] != "enne" || objs[0]["valid"] != true {
		t.Errorf("auto --json: exit %d, primary %v %v, want enne valid", code, objs[0]["checker"], objs[0]["valid"])
	}
	if rs, _ := objs[0]["results"].([]any); len(rs) != 2 {
		t.Errorf("auto --json: %d results, want 2 (enne, then emme)", len(rs))
	}
	if code, out, _ := runCmd(t, "", "check", "-q", "--checker", "emme", "--model", "serializable", p); code != ExitUnknown {
		t.Errorf("--checker emme: exit %d, want 3 (emme alone cannot decide)\n%s", code, out)
	}
}
