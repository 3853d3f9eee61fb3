package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/txray/txray/check"
)

// The JSON contract (docs/json-output.md): every command's --json output is
// one object per input that validates against docs/json-output.schema.json,
// checked with a maintained JSON Schema (draft 2020-12) validator.

const schemaPath = "../../docs/json-output.schema.json"

func outputSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://github.com/txray/txray/docs/json-output.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runCmd runs the CLI with stdin and returns the exit code and outputs.
func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	root := NewRoot(&out, &errb)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err := root.Execute()
	code := ExitValid
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	} else if err != nil {
		code = ExitUsage
	}
	if err != nil && err.Error() != "" && (ee == nil || ee.Err != nil) {
		errb.WriteString("txray: " + err.Error() + "\n") // as Main prints it
	}
	return code, out.String(), errb.String()
}

// validLines validates every stdout line against the schema and returns the
// decoded objects.
func validLines(t *testing.T, s *jsonschema.Schema, stdout string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for i, line := range strings.Split(strings.TrimRight(stdout, "\n"), "\n") {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, line)
		}
		if err := s.Validate(inst); err != nil {
			t.Errorf("line %d does not validate against %s: %v\n%s", i+1, schemaPath, err, line)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, m)
	}
	return objs
}

// TestCheckJSONGoodAndUndecodable: `check --json` on good, undecodable and
// missing files prints one schema-valid object per file, in order; the
// failed ones carry "error" and "history": null; the exit code is 2.
func TestCheckJSONGoodAndUndecodable(t *testing.T) {
	s := outputSchema(t)
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.jsonl")
	os.WriteFile(garbage, []byte("garbage{\n"), 0o644)
	truncated := filepath.Join(dir, "truncated.edn")
	os.WriteFile(truncated, []byte("{:type :invoke, :f :txn, :value [[:append 1 2]], :process 0}\n{:type :ok, :f :txn, :value [[:append 1 "), 0o644)
	good := "../../testdata/external/elle/si-without-g-single.edn"
	files := []string{good, garbage, truncated, filepath.Join(dir, "missing.jsonl"), "../../testdata/external/chronos/format-kv.json"}
	code, out, _ := runCmd(t, "", append([]string{"check", "--json", "-p", "initial-value=0"}, files...)...)
	if code != ExitUsage {
		t.Errorf("exit %d, want %d (some input could not be decoded)", code, ExitUsage)
	}
	objs := validLines(t, s, out)
	if len(objs) != len(files) {
		t.Fatalf("%d objects for %d files:\n%s", len(objs), len(files), out)
	}
	for i, o := range objs {
		if o["file"] != files[i] {
			t.Errorf("object %d is for %v, want %s", i, o["file"], files[i])
		}
		failed := i >= 1 && i <= 3
		_, hasErr := o["error"]
		if failed != hasErr || failed != (o["history"] == nil) {
			t.Errorf("%s: error %v, history %v; want an error and history null exactly for undecodable inputs", files[i], o["error"], o["history"])
		}
		if failed && o["valid"] != "unknown" {
			t.Errorf("%s: valid %v, want \"unknown\"", files[i], o["valid"])
		}
	}
	if objs[0]["valid"] != false {
		t.Errorf("%s: valid %v, want false (G2-item under the default strict-serializable)", good, objs[0]["valid"])
	}
}

// TestCheckJSONStdinAndTimeout: stdin ("-") and a --timeout that ends the
// command give schema-valid objects too.
func TestCheckJSONStdinAndTimeout(t *testing.T) {
	s := outputSchema(t)
	// check reads "-" from the process's stdin (history.DecodeFile).
	f, err := os.Open("../../testdata/external/elle/rw-register.edn")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = saved }()
	code, out, errs := runCmd(t, "", "check", "--json", "-")
	if code == ExitUsage {
		t.Errorf("stdin: exit %d, want a verdict; stderr %s", code, errs)
	}
	validLines(t, s, out)
	_, out, _ = runCmd(t, "", "check", "--json", "--timeout", "1ns", "../../testdata/external/elle/paper-example.edn")
	objs := validLines(t, s, out)
	if len(objs) != 1 || objs[0]["valid"] != "unknown" || !strings.Contains(objs[0]["reason"].(string), "timed out") {
		t.Errorf("--timeout 1ns: want one unknown object with a timed-out reason, got %s", out)
	}
}

// TestWatchJSONContract: `watch --json` prints one schema-valid object, for
// a good stream, an invalid one and input it cannot read.
func TestWatchJSONContract(t *testing.T) {
	s := outputSchema(t)
	good := `{"id":"a","session":"s1","status":"committed","start_ts":1,"commit_ts":2,"ops":[{"f":"w","k":"x","v":1}]}
{"id":"b","session":"s2","status":"committed","start_ts":3,"commit_ts":4,"ops":[{"f":"r","k":"x","v":1}]}
`
	stale := `{"id":"a","session":"s1","status":"committed","start_ts":1,"commit_ts":2,"ops":[{"f":"w","k":"x","v":1}]}
{"id":"b","session":"s2","status":"committed","start_ts":3,"commit_ts":4,"ops":[{"f":"w","k":"x","v":2}]}
{"id":"c","session":"s3","status":"committed","start_ts":5,"commit_ts":6,"ops":[{"f":"r","k":"x","v":1}]}
`
	for _, c := range []struct {
		name, in string
		code     int
		valid    any
	}{
		{"valid", good, ExitValid, true},
		{"ext-stale-read", stale, ExitInvalid, false},
		{"garbage", "garbage{\n", ExitUsage, "unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(t, c.in, "watch", "--json", "--final-after", "1ms")
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %s", code, c.code, errs)
			}
			objs := validLines(t, s, out)
			if len(objs) != 1 || objs[0]["valid"] != c.valid {
				t.Errorf("want one object with valid %v, got %s", c.valid, out)
			}
		})
	}
}

// TestCountsIndependentOfCap: the per-type totals (JSON counts, text
// "found:") are the same whatever --max-anomalies lists, cycle types
// included; 0 lists them all.
func TestCountsIndependentOfCap(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "rc.jsonl")
	if code, _, errs := runCmd(t, "", "gen", "-q", "--workload", "list-append", "--level", "read-committed", "--txns", "1500",
		"--clients", "8", "--keys", "5", "--seed", "7", "-o", h); code != ExitValid {
		t.Fatalf("gen: exit %d: %s", code, errs)
	}
	var first map[string]any
	for _, m := range []string{"1", "8", "0"} {
		_, out, _ := runCmd(t, "", "check", "--json", "-m", "serializable", "--max-anomalies", m, "--checker", "list-append", h)
		var o map[string]any
		if err := json.Unmarshal([]byte(out), &o); err != nil {
			t.Fatal(err)
		}
		counts := o["counts"].(map[string]any)
		listed := map[string]float64{}
		for _, a := range o["anomalies"].([]any) {
			listed[a.(map[string]any)["type"].(string)]++
		}
		if first == nil {
			first = counts
			if n, _ := counts["G-single-item"].(float64); n <= 8 {
				t.Fatalf("want a history with more than 8 G-single-item cycles, got counts %v", counts)
			}
		} else if !jsonEqual(first, counts) {
			t.Errorf("--max-anomalies %s: counts %v, want %v (as with --max-anomalies 1)", m, counts, first)
		}
		for ty, n := range counts {
			want := n.(float64)
			if m != "0" {
				want = min(want, atof(m))
			}
			if listed[ty] != want {
				t.Errorf("--max-anomalies %s: %v %s listed, want %v", m, listed[ty], ty, want)
			}
		}
	}
	_, out, _ := runCmd(t, "", "check", "-m", "serializable", "--checker", "list-append", h)
	n := int(first["G-single-item"].(float64))
	if !strings.Contains(out, "found: ") || !strings.Contains(out, itoa(n)+" G-single-item") ||
		!strings.Contains(out, "... and "+itoa(n-8)+" more G-single-item") {
		t.Errorf("text output lacks the full G-single-item count %d:\n%s", n, out)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func atof(s string) float64 {
	var f float64
	json.Unmarshal([]byte(s), &f)
	return f
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestParamsDocumented: every --param key a registered checker declares is
// listed in the README's table, and an undeclared key is rejected with the
// list.
func TestParamsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range check.Names() {
		for _, p := range check.ParamsOf(c) {
			n++
			if !bytes.Contains(readme, []byte("`"+p.Key+"`")) {
				t.Errorf("README.md does not document --param %s (checker %s)", p.Key, c)
			}
		}
	}
	if n == 0 {
		t.Fatal("no checker declares a --param key")
	}
	code, _, errs := runCmd(t, "", "check", "-p", "no-such-key=1", "../../testdata/external/elle/paper-example.edn")
	if code != ExitUsage || !strings.Contains(errs, "no-such-key") || !strings.Contains(errs, "wfr-keys") {
		t.Errorf("unknown key: exit %d, stderr %q; want exit 2 naming the key and listing the known ones", code, errs)
	}
}

// TestModelHints: a misspelt model gets the closest names; elle-cli's
// workload names get the --checker hint; --format timekiller is accepted.
func TestModelHints(t *testing.T) {
	for _, c := range []struct{ model, want string }{
		{"seriallizable", "did you mean serializable"},
		{"list-append", "--checker list-append"},
		{"postgres:repeatable-reed", "did you mean postgres:repeatable-read"},
		{"postgress:serializable", "postgres:serializable"},
	} {
		code, _, errs := runCmd(t, "", "check", "-m", c.model, "../../testdata/external/elle/paper-example.edn")
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("--model %s: exit %d, stderr %q; want exit 2 and %q", c.model, code, errs, c.want)
		}
	}
	code, out, errs := runCmd(t, "", "check", "--format", "timekiller", "-p", "initial-value=0", "-m", "si", "../../testdata/external/chronos/format-kv.json")
	if code != ExitValid {
		t.Errorf("--format timekiller: exit %d, want 0 (TimeKiller reports SI satisfied with initial value 0)\n%s%s", code, out, errs)
	}
}

// TestPostgresReadCommittedCountsAgree: a PostgreSQL read-committed run has
// more G-single-item cycles than the listing cap; the text summary, the
// JSON report and the HTML report all give the same full count.
func TestPostgresReadCommittedCountsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: records a workload against PostgreSQL")
	}
	const url = "postgres://postgres@127.0.0.1:5432/test"
	if c, err := net.DialTimeout("tcp", "127.0.0.1:5432", time.Second); err != nil {
		t.Skipf("PostgreSQL at 127.0.0.1:5432 not reachable (%v): start it to run this test", err)
	} else {
		c.Close()
	}
	dir := t.TempDir()
	code, out, errs := runCmd(t, "", "run", "-q", "--db", url, "--level", "read-committed", "--clients", "8", "--keys", "5",
		"--txns", "1500", "--out", dir)
	if code != ExitInvalid {
		t.Fatalf("exit %d, want 1 (read committed lets through anomalies serializable forbids)\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	if err := json.Unmarshal(b, &objs); err != nil || len(objs) != 1 {
		t.Fatalf("report.json: %v (%d objects)", err, len(objs))
	}
	counts := objs[0]["counts"].(map[string]any)
	n, _ := counts["G-single-item"].(float64)
	if n <= float64(check.DefaultMaxPerType) {
		t.Skipf("this run found %v G-single-item cycles, not more than the cap %d: nothing to compare", n, check.DefaultMaxPerType)
	}
	want := itoa(int(n)) + " G-single-item"
	if !strings.Contains(out, want) {
		t.Errorf("text summary lacks %q:\n%s", want, out)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	// The count starts its cell, or follows a <br/> when another type is
	// listed before it in the same cell.
	cell := itoa(int(n)) + ` <a class="def" href="#def-G-single-item"`
	if !bytes.Contains(page, []byte("<td>"+cell)) && !bytes.Contains(page, []byte("<br/>"+cell)) {
		t.Errorf("report.html does not give the count %d of G-single-item", int(n))
	}
}

// TestCheckJSONCertificateEvidence: a history carrying certificate evidence
// and declared tables
// (a predicate read's version set, an expected serialization order, reads
// that name tombstones: what txray run records on PostgreSQL and MariaDB and
// txray gen with --predicate-reads --deletes) gives a `history.evidence`
// object that validates too; such runs' `check --json` output used to fail
// the schema ("version_sets" was unexpected).
func TestCheckJSONCertificateEvidence(t *testing.T) {
	s := outputSchema(t)
	const h = `{"txray":1,"level":"serializable","evidence":{"serial_order":"commit","tombstone_reads":true},"tables":[{"name":"u","key":"u:{id}","columns":["c"]}]}
{"id":"a","session":"s","status":"committed","commit_ts":1,"ops":[{"f":"w","k":1,"v":10}]}
{"id":"b","session":"s","status":"committed","commit_ts":2,"ops":[{"f":"rp","table":"t","where":"k >= 0","result":[[1,10]],"vs":[[1,10]]}]}
{"type":"version_order","k":1,"order":[10]}
`
	p := filepath.Join(t.TempDir(), "cert.jsonl")
	if err := os.WriteFile(p, []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, errs := runCmd(t, "", "check", "--json", "--checker", "all", p)
	objs := validLines(t, s, out)
	hist, _ := objs[0]["history"].(map[string]any)
	if hist == nil {
		t.Fatalf("history not decoded: %v\n%s\n%s", objs[0]["error"], out, errs)
	}
	ev, _ := hist["evidence"].(map[string]any)
	if ev["version_sets"] != true || ev["serial_order"] != "commit" || ev["tombstone_reads"] != true {
		t.Errorf("evidence %v: want version_sets, serial_order and tombstone_reads reported", ev)
	}
	// Declared tables (txray run --workload tpcc) are part of the header.
	if hd, _ := hist["header"].(map[string]any); hd == nil || hd["tables"] == nil {
		t.Errorf("header %v: want the declared tables", hist["header"])
	}
}
