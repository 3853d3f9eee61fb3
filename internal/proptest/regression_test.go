package proptest

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/edn"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/history/timekiller"
	"github.com/txray/txray/sim"
)

var regressUpdate = flag.Bool("regress.update", false, "rewrite testdata/regressions from the regressions table")

const regressDir = "../../testdata/regressions"

// Regression is the sidecar (NAME.json) of a regression history
// (NAME.jsonl): what one checker must say about it.
type Regression struct {
	Checker string `json:"checker"`
	Model   string `json:"model"`
	// Want is "valid", "invalid" or "not-invalid" (valid or unknown).
	Want string `json:"want"`
	// WantTypes must all be among the reported anomaly types (Want invalid).
	WantTypes []string `json:"want_types,omitempty"`
	// KnownBug, when set, names an open checker bug: a mismatch is skipped
	// with "known bug: ..." instead of failing. Clear it once fixed.
	KnownBug string `json:"known_bug,omitempty"`
	// Format is the history file's format (`txray gen -f`): "" or "jsonl"
	// (NAME.jsonl), "chronos" (NAME.chronos), "edn" (NAME.edn).
	Format string `json:"format,omitempty"`
	// Found records how the case was found, Repro how to regenerate it.
	Found string `json:"found"`
	Repro string `json:"repro"`
}

// regressions is the source of testdata/regressions (go test
// ./internal/proptest -run TestRegressions -regress.update rewrites it):
// every real bug these tests found, plus the bars as fixed cases.
var regressions = []struct {
	name string
	c    Case
	reg  Regression
}{
	{"bar-si-lost-update-list-append", Case{Level: sim.SnapshotIsolation, Workload: sim.ListAppend, Fault: sim.FaultLostUpdate, Prob: 0.3, Seed: 1},
		Regression{Checker: "list-append", Model: "snapshot-isolation", Want: "invalid", Found: "issue 3 bar: SI + lost-update:0.3 is invalid under SI"}},
	{"bar-si-lost-update-chronos", Case{Level: sim.SnapshotIsolation, Workload: sim.ListAppend, Fault: sim.FaultLostUpdate, Prob: 0.3, Seed: 1},
		Regression{Checker: "chronos", Model: "snapshot-isolation", Want: "invalid", WantTypes: []string{"noconflict"}, Found: "issue 3 bar: SI + lost-update:0.3 is invalid under SI"}},
	{"bar-serializable-valid", Case{Level: sim.Serializable, Workload: sim.ListAppend, Seed: 1},
		Regression{Checker: "list-append", Model: "serializable", Want: "valid", Found: "issue 3 bar: serializable histories are valid under serializable"}},
	{"leopard-mysql-rr-cr", Case{Level: sim.RepeatableReadMySQL, Workload: sim.ListAppend, Seed: 1},
		Regression{Checker: "leopard", Model: "mysql:repeatable-read", Want: "valid", Found: "TestProperty: false positive cr on a correct repeatable-read-mysql history (fixed in leopard)"}},
	{"leopard-info-nil-read", Case{Level: sim.SnapshotIsolation, Workload: sim.RWRegister, Seed: 1, Info: 0.05},
		Regression{Checker: "leopard", Model: "postgres:repeatable-read", Want: "not-invalid", Found: "TestProperty with info-rate 0.05 (first seen at strict-serializable/rw-register seed 1 under the plain model, which leopard no longer judges): false positive internal/cr from the nil results of unknown-outcome reads"}},
	{"chronos-si-session-lag", Case{Level: sim.Serializable, Workload: sim.ListAppend, Seed: 1},
		Regression{Checker: "chronos", Model: "snapshot-isolation", Want: "valid", Found: "TestProperty: session violation reported under plain snapshot-isolation (fixed in chronos)"}},
	{"chronos-list-unknown-writer", Case{Level: sim.StrictSerializable, Workload: sim.ListAppend, Seed: 2, Info: 0.05},
		Regression{Checker: "chronos", Model: "serializable", Want: "not-invalid", Found: "TestProperty with info-rate 0.05: ext reported for a list element of an unknown-outcome txn (fixed in chronos: now unknown)"}},
	{"chronos-panic-list-dirty-write", Case{Level: sim.Strict2PL, Workload: sim.ListAppend, Fault: sim.FaultDirtyWrite, Prob: 0.3, Seed: 1018},
		Regression{Checker: "chronos", Model: "strict-serializable", Want: "invalid", Found: "TestDetection: panic index out of range in chronos extList (fixed in chronos)"}},
	{"leopard-list-aborted-element", Case{Level: sim.SnapshotIsolation, Workload: sim.ListAppend, Fault: sim.FaultDirtyWrite, Prob: 0.3, Seed: 1085},
		Regression{Checker: "leopard", Model: "postgres:repeatable-read", Want: "invalid", WantTypes: []string{"cr"},
			Found: "TestDetection (500 seeds): committed T25 (c3-5) read a list containing 20, appended by aborted T17 (c4-4) (G1a), and leopard said valid: the aborted append had been garbage-collected before the list-prefix check (fixed in leopard: collected appends are remembered per list key)"}},
	{"leopard-nonrepeatable-read", Case{Level: sim.SnapshotIsolation, Workload: sim.RWRegister, Fault: sim.FaultLostUpdate, Prob: 0.3, Seed: 1085, Info: 0.05},
		Regression{Checker: "leopard", Model: "postgres:repeatable-read", Want: "invalid", WantTypes: []string{"cr"},
			Found: "TestDetectionUnknownOutcomes (100 seeds): committed T101 (c0-17) [r 2 112, w 3 113, r 2 108] reads two different versions of key 2 under one transaction snapshot (internal), and leopard said valid: each read was checked alone (fixed in leopard: rereads under a fixed transaction snapshot must agree)"}},
	{"chronos-format-unknown-list-read", Case{Level: sim.SnapshotIsolation, Workload: sim.ListAppend, Seed: 900, Info: 0.05},
		Regression{Checker: "list-append", Model: "snapshot-isolation", Want: "valid", Format: "chronos",
			Found: "TestDifferentialFormats: on the `txray gen -f chronos` copy of a correct history list-append reported G-single-item: the unknown read results of unknown-outcome transactions (written as null) were decoded as reads of the empty list (fixed in the timekiller decoder: null list reads inside status \"unknown\" transactions stay unknown)"}},
}

// regressionFile is the history file of a regression case.
func regressionFile(sidecar, format string) string {
	ext := ".jsonl"
	if format != "" && format != "jsonl" {
		ext = "." + format
	}
	return strings.TrimSuffix(sidecar, ".json") + ext
}

func writeRegressions(t *testing.T) {
	for _, r := range regressions {
		reg := r.reg
		gen := r.c.GenCommand()
		if reg.Format != "" && reg.Format != "jsonl" {
			gen += " -f " + reg.Format
		}
		reg.Repro = gen + " | txray check --checker " + reg.Checker + " --model " + reg.Model + " -"
		f, err := os.Create(regressionFile(filepath.Join(regressDir, r.name+".json"), reg.Format))
		if err != nil {
			t.Fatal(err)
		}
		switch reg.Format {
		case "", "jsonl":
			w := jsonl.NewWriter(f)
			if _, err := sim.Stream(r.c.Config(), w); err != nil {
				t.Fatal(err)
			}
			err = w.Close()
		default: // the bytes `txray gen -f FORMAT` writes
			var h *history.History
			if h, _, err = sim.Generate(r.c.Config()); err != nil {
				t.Fatal(err)
			}
			switch reg.Format {
			case "chronos":
				err = timekiller.Encode(f, h)
			case "edn":
				err = edn.Encode(f, h)
			default:
				t.Fatalf("%s: no encoder for format %q", r.name, reg.Format)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(reg, "", "  ")
		if err := os.WriteFile(filepath.Join(regressDir, r.name+".json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRegressions runs every case under testdata/regressions: the history
// NAME.jsonl must get the verdict and anomaly types NAME.json names.
func TestRegressions(t *testing.T) {
	if *regressUpdate {
		writeRegressions(t)
	}
	side, err := filepath.Glob(filepath.Join(regressDir, "*.json"))
	if err != nil || len(side) == 0 {
		t.Fatalf("no regression cases in %s (%v)", regressDir, err)
	}
	for _, p := range side {
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var reg Regression
			if err := json.Unmarshal(b, &reg); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			format := reg.Format
			if format == "" {
				format = "jsonl"
			}
			h, err := history.DecodeFile(regressionFile(p, reg.Format), format, history.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(h, Target{reg.Checker, reg.Model})
			problem := ""
			switch {
			case err != nil:
				problem = err.Error()
			case !verdictOK(reg.Want, r.Verdict):
				problem = fmt.Sprintf("want %s, got %s", reg.Want, Explain(r, 2))
			default:
				for _, ty := range reg.WantTypes {
					if !slices.Contains(r.AnomalyTypes, ty) {
						problem = fmt.Sprintf("want anomaly type %s, got %v", ty, r.AnomalyTypes)
					}
				}
			}
			if problem == "" {
				if reg.KnownBug != "" {
					t.Logf("known bug appears fixed (clear known_bug in %s and the knownBugs entry): %s", p, reg.KnownBug)
				}
				return
			}
			if reg.KnownBug != "" {
				t.Skipf("known bug: %s\n  %s\n  reproduce: %s", reg.KnownBug, problem, reg.Repro)
			}
			t.Errorf("%s\n  found: %s\n  reproduce: %s", problem, reg.Found, reg.Repro)
		})
	}
}

func verdictOK(want string, v check.Verdict) bool {
	switch want {
	case "valid":
		return v == check.Valid
	case "invalid":
		return v == check.Invalid
	case "not-invalid":
		return v != check.Invalid
	}
	return false
}
