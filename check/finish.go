package check

import (
	"sort"
	"strconv"

	"github.com/txray/txray/model"
)

// DefaultModel is the model Finish assumes when Result.Model is empty
// (Elle's default :consistency-models [:strict-serializable]).
const DefaultModel = model.StrictSerializable

// ListCapped appends the anomalies as to r.Anomalies, at most max of each
// type (counting those of this call only); the rest are counted in
// r.Truncated, so Finish still counts them (Counts, the verdict).
func (r *Result) ListCapped(as []Anomaly, max int) {
	perType := map[string]int{}
	for _, a := range as {
		if perType[a.Type] >= max {
			if r.Truncated == nil {
				r.Truncated = map[string]int{}
			}
			r.Truncated[a.Type]++
			continue
		}
		perType[a.Type]++
		r.Anomalies = append(r.Anomalies, a)
	}
}

// Finish completes a Result once a checker has collected its anomalies; every
// checker calls it last (Elle elle.txn/result-map):
//
//   - Model becomes its canonical name (a DBMS profile keeps its canonical
//     "db:level" name; an empty model becomes DefaultModel);
//   - AnomalyTypes becomes the sorted, de-duplicated types of Anomalies
//     and Truncated;
//   - Counts becomes the number found per type, listed or not (Anomalies
//     plus Truncated), so totals never depend on the listing cap;
//   - each anomaly whose type the model does not prohibit is marked Allowed
//     (unknown-type markers such as cycle-search-timeout never are);
//   - Verdict becomes Invalid if any anomaly is prohibited; otherwise
//     Unknown if it already was, if an unknown-type marker was found, or if
//     the model is not known; otherwise Valid;
//   - Not/AlsoNot become the models all found anomalies rule out
//     (model.RulesOut), whether prohibited or not.
//
// For a DBMS profile, prohibitions are the profile model's plus the
// violations of the profile's mechanisms (model.Prohibits).
func (r *Result) Finish() {
	if r.Model == "" {
		r.Model = DefaultModel
	}
	known := true
	if m, err := model.Canonical(r.Model); err == nil {
		r.Model = m
	} else if p, ok := model.LookupProfile(r.Model); ok {
		r.Model = p.Name
	} else {
		known = false
	}

	seen := map[string]bool{}
	prohibited, incomplete := false, false
	for i := range r.Anomalies {
		a := &r.Anomalies[i]
		if c, ok := model.CanonicalAnomaly(a.Type); ok {
			a.Type = c
		}
		seen[a.Type] = true
		switch {
		case model.IsUnknownType(a.Type):
			a.Allowed = false
			incomplete = true
		case known && model.Prohibits(r.Model, a.Type):
			a.Allowed = false
			prohibited = true
		default:
			a.Allowed = known
		}
	}
	// Truncated anomalies were found too: they count for the verdict and the
	// boundary even though they are not listed.
	for t, n := range r.Truncated {
		if n <= 0 {
			continue
		}
		if c, ok := model.CanonicalAnomaly(t); ok {
			t = c
		}
		seen[t] = true
		if model.IsUnknownType(t) {
			incomplete = true
		} else if known && model.Prohibits(r.Model, t) {
			prohibited = true
		}
	}

	r.Counts = make(map[string]int, len(seen))
	for i := range r.Anomalies {
		r.Counts[r.Anomalies[i].Type]++
	}
	for t, n := range r.Truncated {
		if n <= 0 {
			continue
		}
		if c, ok := model.CanonicalAnomaly(t); ok {
			t = c
		}
		r.Counts[t] += n
	}
	if len(r.Counts) == 0 {
		r.Counts = nil
	}
	for i, t := range r.CountsAtLeast {
		if c, ok := model.CanonicalAnomaly(t); ok {
			r.CountsAtLeast[i] = c
		}
	}
	sort.Strings(r.CountsAtLeast)

	types := make([]string, 0, len(seen))
	for t := range seen {
		types = append(types, t)
	}
	sort.Strings(types)
	r.AnomalyTypes = types
	r.Not, r.AlsoNot = model.RulesOut(types)

	switch {
	case prohibited:
		r.Verdict = Invalid
	case r.Verdict == Unknown:
	case !known:
		r.Verdict = Unknown
		r.addReason("unknown consistency model or profile " + strconv.Quote(r.Model) + ": cannot tell which anomalies it prohibits")
	case incomplete:
		r.Verdict = Unknown
		r.addReason("the check was incomplete (" + incompleteTypes(types) + ")")
	default:
		r.Verdict = Valid
	}
}

func (r *Result) addReason(s string) {
	if r.Reason == "" {
		r.Reason = s
	} else {
		r.Reason += "; " + s
	}
}

func incompleteTypes(types []string) string {
	out := ""
	for _, t := range types {
		if model.IsUnknownType(t) {
			if out != "" {
				out += ", "
			}
			out += t
		}
	}
	return out
}
