package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExternalHistoriesJSONAndExitCodes: every public history under
// testdata/external, in every format, checked by auto and by every
// applicable checker (--checker all), prints schema-valid objects; the exit
// code follows the verdicts (0 all valid, 1 some invalid, 3 some unknown,
// README); each type's count is at least the anomalies listed of it.
func TestExternalHistoriesJSONAndExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("checks every public history twice")
	}
	s := outputSchema(t)
	root := "../../testdata/external"
	var inputs []string
	for _, dir := range []string{"elle", "elle-cli", "chronos", "polysi", "polysi/verifier-tests", "isovista", "dbcop/dgraph", "cobra"} {
		es, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			p := filepath.Join(root, dir, e.Name())
			if e.IsDir() != (dir == "cobra") || strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			inputs = append(inputs, p)
		}
	}
	for _, in := range inputs {
		for _, checker := range []string{"auto", "all"} {
			t.Run(strings.TrimPrefix(in, root+"/")+"/"+checker, func(t *testing.T) {
				args := []string{"check", "--json", "--max-anomalies", "2", "--checker", checker, in}
				if strings.Contains(in, "chronos/format-kv") || strings.Contains(in, "dbcop") || strings.Contains(in, "isovista") || strings.HasSuffix(in, "galera.txt") {
					args = append(args[:len(args)-1], "-p", "initial-value=0", in)
				}
				code, out, errs := runCmd(t, "", args...)
				objs := validLines(t, s, out)
				if len(objs) != 1 {
					t.Fatalf("%d objects, want 1; stderr %s", len(objs), errs)
				}
				o := objs[0]
				want := map[any]int{true: ExitValid, false: ExitInvalid, "unknown": ExitUnknown}[o["valid"]]
				if code != want {
					t.Errorf("exit %d for valid=%v, want %d; stderr %s", code, o["valid"], want, errs)
				}
				results := []map[string]any{o}
				if rs, ok := o["results"].([]any); ok {
					for _, r := range rs {
						results = append(results, r.(map[string]any))
					}
				}
				for _, r := range results {
					counts, _ := r["counts"].(map[string]any)
					listed := map[string]int{}
					as, _ := r["anomalies"].([]any)
					for _, a := range as {
						listed[a.(map[string]any)["type"].(string)]++
					}
					for typ, n := range listed {
						c, _ := counts[typ].(float64)
						if int(c) < n {
							t.Errorf("%v: count of %s is %v, but %d are listed", r["checker"], typ, counts[typ], n)
						}
					}
					if r["valid"] == false && len(counts) == 0 {
						t.Errorf("%v: invalid with no anomaly counted", r["checker"])
					}
				}
			})
		}
	}
}
