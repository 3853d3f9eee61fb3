package check

import (
	"reflect"
	"strings"
	"testing"

	"github.com/txray/txray/model"
)

func types(r *Result) []bool {
	var out []bool
	for _, a := range r.Anomalies {
		out = append(out, a.Allowed)
	}
	return out
}

func TestFinish(t *testing.T) {
	cases := []struct {
		name      string
		model     string
		verdict   Verdict // verdict before Finish
		anomalies []string
		truncated map[string]int
		wantModel string
		want      Verdict
		types     []string
		allowed   []bool
		not       []string
		reason    string
	}{
		{name: "no anomalies is valid", model: "ser", verdict: Valid,
			wantModel: "serializable", want: Valid, types: []string{}},
		{name: "G2-item under snapshot isolation is allowed (write skew, Adya)", model: "si",
			anomalies: []string{model.G2Item}, wantModel: "snapshot-isolation", want: Valid,
			types: []string{"G2-item"}, allowed: []bool{true}, not: []string{"repeatable-read"}},
		{name: "G-single-item under snapshot isolation is prohibited", model: "snapshot-isolation",
			anomalies: []string{model.GSingleItem, model.G2Item, model.GSingleItem}, wantModel: "snapshot-isolation",
			want: Invalid, types: []string{"G-single-item", "G2-item"}, allowed: []bool{false, true, false},
			not: []string{"consistent-view", "repeatable-read"}},
		{name: "G1a under read committed is invalid (Adya)", model: "read_committed",
			anomalies: []string{model.G1a}, wantModel: "read-committed", want: Invalid, types: []string{"G1a"},
			allowed: []bool{false}, not: []string{"read-committed"}},
		{name: "empty model defaults to strict-serializable", model: "",
			anomalies: []string{model.G2Realtime}, wantModel: "strict-serializable", want: Invalid,
			types: []string{"G2-realtime"}, allowed: []bool{false}, not: []string{"strict-serializable"}},
		{name: "checker's unknown verdict is kept when nothing prohibited", model: "serializable", verdict: Unknown,
			anomalies: []string{model.G2Realtime}, wantModel: "serializable", want: Unknown,
			types: []string{"G2-realtime"}, allowed: []bool{true}, not: []string{"strict-serializable"}},
		{name: "prohibited anomaly beats unknown", model: "serializable", verdict: Unknown,
			anomalies: []string{model.G0}, wantModel: "serializable", want: Invalid, types: []string{"G0"},
			allowed: []bool{false}, not: []string{"read-uncommitted"}},
		{name: "cycle-search-timeout makes the verdict unknown", model: "serializable", verdict: Valid,
			anomalies: []string{model.CycleSearchTimeout}, wantModel: "serializable", want: Unknown,
			types: []string{"cycle-search-timeout"}, allowed: []bool{false}, reason: "incomplete"},
		{name: "stale Invalid without prohibited anomalies becomes Valid", model: "rc", verdict: Invalid,
			anomalies: []string{model.LostUpdate}, wantModel: "read-committed", want: Valid,
			types: []string{"lost-update"}, allowed: []bool{true}, not: []string{"cursor-stability", "update-atomic"}},
		{name: "profile: lost update allowed under mysql:repeatable-read (Jepsen MySQL 8.0.34)", model: "mysql:rr",
			anomalies: []string{model.LostUpdate}, wantModel: "mysql:repeatable-read", want: Valid,
			types: []string{"lost-update"}, allowed: []bool{true}, not: []string{"cursor-stability", "update-atomic"}},
		{name: "profile: FUW violation under postgres:repeatable-read (Leopard)", model: "pg:rr",
			anomalies: []string{model.FUW}, wantModel: "postgres:repeatable-read", want: Invalid,
			types: []string{"fuw"}, allowed: []bool{false}},
		{name: "profile: FUW not a mechanism of mysql:repeatable-read", model: "mysql:repeatable-read",
			anomalies: []string{model.FUW}, wantModel: "mysql:repeatable-read", want: Valid,
			types: []string{"fuw"}, allowed: []bool{true}},
		{name: "unknown model gives unknown verdict", model: "bogus-model",
			anomalies: []string{model.G0}, wantModel: "bogus-model", want: Unknown, types: []string{"G0"},
			allowed: []bool{false}, not: []string{"read-uncommitted"},
			reason: "unknown consistency model"},
		{name: "Elle spelling GSIb is canonicalized", model: "forward-consistent-view",
			anomalies: []string{"GSIb"}, wantModel: "forward-consistent-view", want: Invalid,
			types: []string{"G-SIb"}, allowed: []bool{false}, not: []string{"forward-consistent-view"}},
		{name: "truncated prohibited anomalies count", model: "serializable",
			anomalies: []string{model.G2Realtime}, truncated: map[string]int{model.G1c: 3},
			wantModel: "serializable", want: Invalid, types: []string{"G1c", "G2-realtime"}, allowed: []bool{true},
			not: []string{"read-committed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Result{Checker: "test", Model: c.model, Verdict: c.verdict, Truncated: c.truncated}
			for _, a := range c.anomalies {
				r.Anomalies = append(r.Anomalies, Anomaly{Type: a})
			}
			r.Finish()
			if r.Model != c.wantModel {
				t.Errorf("Model = %q; want %q", r.Model, c.wantModel)
			}
			if r.Verdict != c.want {
				t.Errorf("Verdict = %v; want %v (reason %q)", r.Verdict, c.want, r.Reason)
			}
			if !reflect.DeepEqual(r.AnomalyTypes, c.types) {
				t.Errorf("AnomalyTypes = %#v; want %#v", r.AnomalyTypes, c.types)
			}
			if got := types(r); !reflect.DeepEqual(got, c.allowed) {
				t.Errorf("Allowed = %v; want %v", got, c.allowed)
			}
			if len(r.Not) != 0 || len(c.not) != 0 {
				if !reflect.DeepEqual(r.Not, c.not) {
					t.Errorf("Not = %v; want %v", r.Not, c.not)
				}
			}
			wantNot, wantAlso := model.RulesOut(r.AnomalyTypes)
			if !reflect.DeepEqual(r.Not, wantNot) || !reflect.DeepEqual(r.AlsoNot, wantAlso) {
				t.Errorf("Not/AlsoNot = %v/%v; want RulesOut %v/%v", r.Not, r.AlsoNot, wantNot, wantAlso)
			}
			if c.reason != "" && !strings.Contains(r.Reason, c.reason) {
				t.Errorf("Reason = %q; want it to mention %q", r.Reason, c.reason)
			}
		})
	}
}

// TestFinishIdempotent: calling Finish twice changes nothing.
func TestFinishIdempotent(t *testing.T) {
	r := &Result{Model: "pg:serializable", Anomalies: []Anomaly{{Type: model.GSingle}, {Type: model.CycleSearchTimeout}}}
	r.Finish()
	first := *r
	first.Anomalies = append([]Anomaly(nil), r.Anomalies...)
	r.Finish()
	if !reflect.DeepEqual(first, *r) {
		t.Errorf("second Finish changed the result:\n%+v\n%+v", first, *r)
	}
}
