package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func runWatch(t *testing.T, in string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	root := NewRoot(&out, &errb)
	root.SetIn(strings.NewReader(in))
	root.SetArgs(append([]string{"watch"}, args...))
	err := root.Execute()
	code := ExitValid
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	} else if err != nil {
		code = ExitUsage
	}
	return code, out.String(), errb.String()
}

// TestWatchStdin: the Chronos paper's Fig. 15 (T3 reads x=1 after T2
// overwrote it, all sequential by timestamps) arriving out of order on stdin
// is invalid under SI (exit 1); the same without the stale read is valid
// (exit 0); a malformed line is an input error (exit 2).
func TestWatchStdin(t *testing.T) {
	fig15 := `{"txray":1}
{"id":"T3","session":"c","status":"committed","start_ts":5,"commit_ts":6,"ops":[{"f":"r","k":"x","v":1}]}
{"id":"T1","session":"a","status":"committed","start_ts":1,"commit_ts":2,"ops":[{"f":"w","k":"x","v":1}]}
{"id":"T2","session":"b","status":"committed","start_ts":3,"commit_ts":4,"ops":[{"f":"w","k":"x","v":2}]}
`
	code, out, _ := runWatch(t, fig15, "--json")
	if code != ExitInvalid {
		t.Fatalf("exit %d, output %s", code, out)
	}
	var res struct {
		Valid        any      `json:"valid"`
		AnomalyTypes []string `json:"anomaly_types"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Valid != false || len(res.AnomalyTypes) != 1 || res.AnomalyTypes[0] != "ext" {
		t.Fatalf("%v %s", err, out)
	}
	valid := strings.Replace(fig15, `"v":1}]}`+"\n"+`{"id":"T1"`, `"v":2}]}`+"\n"+`{"id":"T1"`, 1)
	if code, out, _ := runWatch(t, valid); code != ExitValid {
		t.Fatalf("valid: exit %d %s", code, out)
	}
	code, _, errs := runWatch(t, fig15+"{\"id\":\"T4\",\"status\":\"committed\",\"ops\":[{\"f\":\"q\"}]}\n")
	if code != ExitUsage || !strings.Contains(errs, "<stdin>:5") {
		t.Fatalf("bad line: exit %d, stderr %s", code, errs)
	}
	if code, _, _ := runWatch(t, "", "--model", "read-committed"); code != ExitUsage {
		t.Fatalf("unsupported model: exit %d", code)
	}
}
