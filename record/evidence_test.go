package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/db"
)

// TestEvidenceLinesAreJSON: evidence.jsonl lines written by hand decode as
// JSON into the documented fields, empty fields left out, LSNs in
// PostgreSQL's upper-case notation, and a string needing escapes escaped.
func TestEvidenceLinesAreJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "evidence.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{ef: f}
	cr := &db.CommitRecord{XID: 1234, LSN: 1<<32 | 0xD9B2F8, Time: "2026-11-22 05:01:02.123456+00"}
	for _, c := range []struct {
		id, snap, gtid string
		xid            uint64
		cr             *db.CommitRecord
		resolved       bool
	}{
		{"c3-17", "1200:1236:1230,1233", "", 1234, cr, true},
		{"c0-1", "5:5:", "", 5, nil, false},
		{"c1-2", "", "0-1-42", 0, nil, false},
		{"c\"odd\\-\n", "", "0-1-43", 0, nil, false},
		{"c2-9", "", "", 0, nil, false}, // nothing to say: no line
	} {
		if err := r.evidence(&history.Txn{ID: c.id}, c.xid, c.snap, c.gtid, c.cr, c.resolved); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.flushEvidence(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	want := []map[string]any{
		{"id": "c3-17", "xid": 1234.0, "snapshot": "1200:1236:1230,1233", "commit_lsn": "1/D9B2F8", "commit_time": "2026-11-22 05:01:02.123456+00", "resolved_by": "commit stream"},
		{"id": "c0-1", "xid": 5.0, "snapshot": "5:5:"},
		{"id": "c1-2", "gtid": "0-1-42"},
		{"id": "c\"odd\\-\n", "gtid": "0-1-43"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b)
	}
	for i, l := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d %q: %v", i+1, l, err)
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("line %d = %v, want %v", i+1, got, want[i])
		}
	}
}
