package cli

import (
	"strings"
	"testing"

	"github.com/txray/txray/check"
)

// TestPromiseLine: a run checked against serializable also says whether the
// level's own promise held (PostgreSQL repeatable read promises snapshot
// isolation, which allows G2-item but not lost-update).
func TestPromiseLine(t *testing.T) {
	cases := []struct {
		name, db, level string
		r               *check.Result
		want            string
	}{
		{"G2-item-under-pg-rr-kept", "postgres", "repeatable-read",
			&check.Result{Verdict: check.Invalid, AnomalyTypes: []string{"G2-item"}}, "promises snapshot-isolation: kept"},
		{"lost-update-under-mariadb-rr-broken", "mariadb", "repeatable-read",
			&check.Result{Verdict: check.Invalid, AnomalyTypes: []string{"G2-item", "lost-update"}}, "promises repeatable-read: BROKEN (G2-item, lost-update"},
		{"G1c-under-rc-broken", "postgres", "read-committed",
			&check.Result{Verdict: check.Invalid, AnomalyTypes: []string{"G1c"}}, "BROKEN (G1c"},
		{"valid-kept", "postgres", "read-committed", &check.Result{Verdict: check.Valid}, "promises read-committed: kept"},
		{"unknown-undecided", "postgres", "read-committed", &check.Result{Verdict: check.Unknown}, "not decided"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := promiseLine(c.db, c.level, "serializable", c.r)
			if !strings.Contains(got, c.want) {
				t.Fatalf("promiseLine = %q, want containing %q", got, c.want)
			}
		})
	}
	// checked under a weaker model: finding nothing decides nothing
	for _, checked := range []string{"read-committed", "mariadb:repeatable-read"} {
		if got := promiseLine("mariadb", "repeatable-read", checked, &check.Result{Verdict: check.Valid}); !strings.Contains(got, "not decided") {
			t.Errorf("checked under %s: %q, want not decided", checked, got)
		}
	}
	if got := promiseLine("postgres", "repeatable-read", "postgres:serializable", &check.Result{Verdict: check.Valid}); !strings.Contains(got, "kept") {
		t.Errorf("checked under a stronger profile: %q, want kept", got)
	}
	if got := promiseLine("postgres", "serializable", "serializable", &check.Result{}); got != "" {
		t.Errorf("same model: %q, want no line", got)
	}
}
