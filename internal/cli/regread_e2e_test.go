package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSharedRegisterHistories: `txray check` with --format auto and
// --checker auto on the public Cobra, dbcop and PolySI histories gives the
// verdicts their origin projects state (../shared/testdata/README.md):
// cock-G2 violates serializability (G2) but not snapshot isolation
// (VeriStrong); chengRW-100 satisfies both (VeriStrong); the Dgraph dbcop
// history violates both (VeriStrong); galera violates snapshot isolation
// (PolySI: a lost update).
func TestSharedRegisterHistories(t *testing.T) {
	base := filepath.Join("..", "..", "testdata", "external")
	cases := []struct {
		path, model string
		valid       bool
	}{
		{"cobra/cock-G2", "serializable", false},
		{"cobra/cock-G2", "snapshot-isolation", true},
		{"cobra/chengRW-100", "serializable", true},
		{"cobra/chengRW-100", "snapshot-isolation", true},
		{"dbcop/dgraph/history.bincode", "serializable", false},
		{"dbcop/dgraph/history.bincode", "snapshot-isolation", false},
		{"polysi/galera.txt", "snapshot-isolation", false},
	}
	for _, c := range cases {
		t.Run(c.path+"/"+c.model, func(t *testing.T) {
			p := filepath.Join(base, c.path)
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("%s missing: it is part of the repository (%v)", p, err)
			}
			var out, errb bytes.Buffer
			code := Main([]string{"check", p, "--model", c.model, "--json"}, &out, &errb)
			var res struct {
				Valid   any    `json:"valid"`
				Checker string `json:"checker"`
			}
			line := strings.SplitN(out.String(), "\n", 2)[0]
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				t.Fatalf("exit %d, output %q, stderr %q: %v", code, out.String(), errb.String(), err)
			}
			if res.Valid != c.valid {
				t.Errorf("valid = %v (checker %s, exit %d), want %v", res.Valid, res.Checker, code, c.valid)
			}
		})
	}
}
