package proptest

// knownBug describes a checker bug found by these tests and reported to the
// lead, with the regression case that reproduces it (testdata/regressions).
// A failure matching an entry is skipped with "known bug: ..."; delete the
// entry when the checker is fixed (the regression case then must pass).
type knownBug struct {
	checker, level, workload string // "" matches any
	model                    string // "" matches any
	info                     bool   // only histories with unknown outcomes
	fault                    string // "" matches any
	why                      string
}

// knownBugs is empty: every bug these tests found (see
// testdata/regressions and docs/detection.md) was fixed before this was
// written. Add an entry only with a regression case and a report to the lead.
var knownBugs = []knownBug{}

// known returns the known bug explaining a failure of tg on c, or "".
// fault "-" matches only fault-free cases.
func known(tg Target, c Case) string {
	for _, k := range knownBugs {
		if k.fault == "-" && c.Fault != "" || k.model != "" && k.model != tg.Model {
			continue
		}
		if k.fault == "-" {
			k.fault = ""
		}
		if (k.checker == "" || k.checker == tg.Checker) && (k.level == "" || k.level == c.Level) &&
			(k.workload == "" || k.workload == c.Workload) && (!k.info || c.Info > 0) && (k.fault == "" || k.fault == c.Fault) {
			return "known bug: " + k.why
		}
	}
	return ""
}
