package chronos

import (
	"strings"
	"testing"

	"github.com/txray/txray/check"
)

// TestUncheckedOpsNeverValid: chronos replays item reads and writes only;
// on a history with predicate reads (or increments) it may still find an
// item anomaly (invalid stands: dropping reads only drops constraints),
// but it must not say valid, which would vouch for reads it never looked
// at (txray check --checker auto falls back to chronos when emme cannot
// decide a predicate read).
func TestUncheckedOpsNeverValid(t *testing.T) {
	cases := []struct {
		name  string
		h     func() []spec
		model string
		want  check.Verdict
	}{
		{"serial-with-predicate-read", func() []spec {
			return []spec{T("a", 1, 2, "w x 1"), T("b", 3, 4, "r x 1", "rp t nil")}
		}, "serializable", check.Unknown},
		{"serial-with-predicate-read-si", func() []spec {
			return []spec{T("a", 1, 2, "w x 1"), T("b", 3, 4, "r x 1", "rp t nil")}
		}, "snapshot-isolation", check.Unknown},
		{"stale-item-read-beside-predicate-read", func() []spec {
			return []spec{T("a", 1, 2, "w x 1"), T("b", 3, 4, "r x nil", "rp t nil")}
		}, "snapshot-isolation", check.Invalid},
		{"serial-items-only", func() []spec {
			return []spec{T("a", 1, 2, "w x 1"), T("b", 3, 4, "r x 1")}
		}, "serializable", check.Valid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run1(t, co(build(c.h()...)), c.model, nil)
			if r.Verdict != c.want {
				t.Fatalf("%s (%s) %v, want %s", r.Verdict, r.Reason, r.AnomalyTypes, c.want)
			}
			if c.want == check.Unknown && !strings.Contains(r.Reason, "not checked by chronos") {
				t.Errorf("reason %q does not say which ops were not checked", r.Reason)
			}
		})
	}
}
