package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The other --json shapes: `bench --json` rows validate against
// docs/bench-output.schema.json and the `analyze --json` report against
// docs/analyze-output.schema.json (docs/json-output.md).

// docSchema compiles docs/NAME with the JSON Schema (draft 2020-12)
// validator.
func docSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../../docs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	url := "https://github.com/txray/txray/docs/" + name
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validDoc validates one JSON document against s and returns it decoded.
func validDoc(t *testing.T, s *jsonschema.Schema, name, doc string) map[string]any {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("does not validate against %s: %v\n%s", name, err, doc)
	}
	m, _ := inst.(map[string]any)
	return m
}

// schemaRejects asserts that s rejects doc: the schema constrains, so the tests
// using it can fail.
func schemaRejects(t *testing.T, s *jsonschema.Schema, what, doc string) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if s.Validate(inst) == nil {
		t.Errorf("%s: the schema accepts it:\n%s", what, doc)
	}
}

// withField returns doc (a JSON object) with field set to the raw JSON
// value, or removed when value is "".
func withField(t *testing.T, doc, field, value string) string {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	m := inst.(map[string]any)
	if value == "" {
		delete(m, field)
	} else {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(value))
		if err != nil {
			t.Fatal(err)
		}
		m[field] = v
	}
	return mustJSON(t, m)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBenchJSONSchema: every `bench --json` row (one per line) validates
// against docs/bench-output.schema.json, and broken rows do not.
func TestBenchJSONSchema(t *testing.T) {
	const name = "bench-output.schema.json"
	s := docSchema(t, name)
	code, out, errs := genMain("bench", "--in-process", "--json", "--txns", "200", "--clients", "4", "--keys", "10",
		"--checker", "all")
	if code != ExitValid {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("want a row per applicable checker, got:\n%s", out)
	}
	for _, l := range lines {
		r := validDoc(t, s, name, l)
		if r["verdict"] != "valid" || r["checker"] == "" {
			t.Errorf("row %s", l)
		}
	}
	row := lines[0]
	schemaRejects(t, s, "row without txns", withField(t, row, "txns", ""))
	schemaRejects(t, s, "row with an unknown field", withField(t, row, "speed", `1`))
	schemaRejects(t, s, "row with txns a string", withField(t, row, "txns", `"200"`))
	schemaRejects(t, s, "row with a made-up verdict", withField(t, row, "verdict", `"maybe"`))
	validDoc(t, s, name, withField(t, row, "verdict", `"error: checker failed"`))
}

// TestAnalyzeJSONSchema: the `analyze --json` report validates against
// docs/analyze-output.schema.json with Δ cycles (read committed), without
// (snapshot isolation) and with nothing analysed; broken reports do not.
func TestAnalyzeJSONSchema(t *testing.T) {
	const name = "analyze-output.schema.json"
	s := docSchema(t, name)
	dir := t.TempDir()
	p := filepath.Join(dir, "t.trace")
	empty := filepath.Join(dir, "empty.trace")
	if err := os.WriteFile(p, []byte(lostUpdateTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte("s1\tBEGIN\ns1\tSELECT 1\ns1\tCOMMIT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A recorded history of two purchases that lost an update: the Δ
	// cycle is observed.
	hist := filepath.Join(dir, "h.jsonl")
	if err := os.WriteFile(hist, []byte(`{"id":"p1","session":"a","status":"committed","ops":[{"f":"r","k":7,"v":null},{"f":"w","k":7,"v":1}]}
{"id":"p2","session":"b","status":"committed","ops":[{"f":"r","k":7,"v":null},{"f":"w","k":7,"v":2}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	obsTrace := filepath.Join(dir, "obs.trace")
	if err := os.WriteFile(obsTrace, []byte("a\t-- txn: p1\n"+strings.ReplaceAll(lostUpdateTrace, "s1\t", "a\t")+"b\t-- txn: p2\n"+strings.ReplaceAll(lostUpdateTrace, "s1\t", "b\t")), 0o644); err != nil {
		t.Fatal(err)
	}
	var cyclic string
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		cycles bool
	}{
		{"cycles", []string{p}, ExitInvalid, true},
		{"no-cycle", []string{"--level", "si", p}, ExitValid, false},
		{"nothing-analysed", []string{empty}, ExitUnknown, false},
		{"observed", []string{"--history", hist, obsTrace}, ExitInvalid, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := genMain(append([]string{"analyze", "--json"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, errs)
			}
			r := validDoc(t, s, name, out)
			cycles, _ := r["delta_cycles"].([]any)
			if (len(cycles) > 0) != c.cycles {
				t.Errorf("delta_cycles %v, want some: %v", r["delta_cycles"], c.cycles)
			}
			if c.cycles {
				cyclic = out
			}
			if c.name == "observed" && !strings.Contains(out, `"observed_count": 1`) {
				t.Errorf("no Δ cycle observed:\n%s", out)
			}
		})
	}
	if cyclic == "" {
		t.Fatal("no report with Δ cycles")
	}
	schemaRejects(t, s, "report without level", withField(t, cyclic, "level", ""))
	schemaRejects(t, s, "report with an unknown field", withField(t, cyclic, "verdict", `true`))
	schemaRejects(t, s, "report with k a string", withField(t, cyclic, "k", `"10"`))
	schemaRejects(t, s, "report with a malformed cycle", withField(t, cyclic, "delta_cycles", `[{"index": 0}]`))
	schemaRejects(t, s, "report with no set cover round", withField(t, cyclic, "set_cover_rounds", `[]`))
}
