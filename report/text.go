package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// textWidth is the column at which explanations are wrapped.
const textWidth = 100

// TextOptions tune WriteTextOptions.
type TextOptions struct {
	// Verbose adds each anomaly's transactions and cycle step by step, the
	// ignored record counts by reason, the decoder's notes, checker stats
	// and the full reasons checkers did not apply.
	Verbose bool
	// Summary lines are printed in the summary, after the verdict and
	// counts (e.g. `txray run`'s line on the level's promise).
	Summary []string
	// ReportPath, if set, is named in the summary ("report: PATH").
	ReportPath string
	// SummaryOnly leaves out the details (the anomalies' explanations):
	// DetailsHint, if set, is printed instead to say where they are.
	SummaryOnly bool
	DetailsHint string
}

// WriteText writes a human summary of in; see WriteTextOptions.
func WriteText(w io.Writer, in *Input, verbose bool) error {
	return WriteTextOptions(w, in, TextOptions{Verbose: verbose})
}

// WriteTextOptions writes in for a person, summary first:
//
//   - the file, and the error if it could not be checked;
//   - per result one line "verdict: VERDICT under MODEL (checker C)" and
//     the number of anomalies found per type, cycle types included, which
//     never depends on the listing cap; the reason of an unknown verdict;
//     opts.Summary; the report path;
//   - the history in one or two lines (size, source, evidence, ignored);
//   - one line per checker that did not apply (the first clause of its
//     reason; the whole of it with Verbose);
//   - then the details of each result: the models ruled out, warnings,
//     every listed anomaly with its explanation (wrapped), and for each
//     type how many more were found than listed.
//
// Control characters in history-supplied strings are escaped so a hostile
// key cannot drive the terminal.
func WriteTextOptions(w io.Writer, in *Input, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	t := &textWriter{w: bw, h: in.History}
	t.input(in, opts)
	return bw.Flush()
}

type textWriter struct {
	w *bufio.Writer
	h *history.History
}

func (t *textWriter) line(indent string, s string) {
	t.w.WriteString(indent)
	t.w.WriteString(s)
	t.w.WriteByte('\n')
}

func (t *textWriter) input(in *Input, opts TextOptions) {
	verbose := opts.Verbose
	name := in.File
	if name == "-" {
		name = "<stdin>"
	}
	t.line("", "file: "+clean(name))
	if in.Error != "" {
		t.wrapped("  ", "error: ", in.Error)
	}
	// Summary.
	var results []*check.Result
	for _, r := range in.Results {
		if r != nil {
			results = append(results, r)
		}
	}
	if len(results) == 0 {
		if in.Error != "" && in.Reason == "" {
			t.line("", "verdict: UNKNOWN (not checked: the input could not be read)")
		} else {
			t.line("", "verdict: UNKNOWN")
			t.wrapped("  ", "reason: ", noResultReason(in))
		}
	}
	for i, r := range results {
		t.verdictLine(r, i > 0)
	}
	for _, s := range opts.Summary {
		t.hanging(s)
	}
	if opts.ReportPath != "" {
		t.line("", "report: "+clean(opts.ReportPath))
	}
	if h := in.History; h != nil {
		t.historySummary(h, verbose)
	}
	if len(in.NotApplicable) > 0 {
		names := make([]string, 0, len(in.NotApplicable))
		for n := range in.NotApplicable {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			why := in.NotApplicable[n]
			if !verbose {
				why = firstClause(why)
			}
			t.wrapped("", "not applicable: "+clean(n)+": ", why)
		}
		if !verbose && !opts.SummaryOnly {
			for _, n := range names {
				if firstClause(in.NotApplicable[n]) != in.NotApplicable[n] {
					t.line("", "  (-v gives the full reasons)")
					break
				}
			}
		}
	}
	if in.Elapsed > 0 {
		t.line("", "elapsed: "+roundDuration(in.Elapsed).String())
	}
	// Details.
	if opts.SummaryOnly {
		if opts.DetailsHint != "" {
			t.hanging(opts.DetailsHint)
		}
		return
	}
	for _, r := range results {
		if hasDetails(r, verbose) {
			t.result(r, verbose)
		}
	}
}

// verdictLine writes the summary of one result: its verdict, the model and
// checker, the per-type totals and the reason.
func (t *textWriter) verdictLine(r *check.Result, also bool) {
	mdl := r.Model
	if mdl == "" {
		mdl = "no model"
	}
	head := "verdict: "
	if also {
		head = "also: "
	}
	t.line("", fmt.Sprintf("%s%s under %s (checker %s)", head, verdictWord(r.Verdict), clean(mdl), clean(r.Checker)))
	if found := FoundSummary(r); found != "" {
		t.wrapped("  ", "found: ", found)
	}
	if r.Reason != "" {
		t.wrapped("  ", "reason: ", r.Reason)
	}
}

// FoundSummary renders a result's per-type totals, prohibited types first:
// "132 G-single-item, 31 G2-item, 3 lost-update (allowed: 5 internal)".
// Totals are listed plus not listed (check.Result.Counts); a type whose
// count is a lower bound reads "at least N". Empty when nothing was found.
func FoundSummary(r *check.Result) string {
	counts := resultCounts(r)
	if len(counts) == 0 {
		return ""
	}
	allowed := map[string]bool{}
	for i := range r.Anomalies {
		if r.Anomalies[i].Allowed {
			allowed[r.Anomalies[i].Type] = true
		}
	}
	atLeast := map[string]bool{}
	for _, t := range r.CountsAtLeast {
		atLeast[t] = true
	}
	types := make([]string, 0, len(counts))
	for ty := range counts {
		types = append(types, ty)
	}
	sort.Strings(types)
	var bad, ok []string
	for _, ty := range types {
		s := strconv.Itoa(counts[ty]) + " " + clean(ty)
		if atLeast[ty] {
			s = "at least " + s
		}
		if allowed[ty] {
			ok = append(ok, s)
		} else {
			bad = append(bad, s)
		}
	}
	out := strings.Join(bad, ", ")
	if len(ok) > 0 {
		if out != "" {
			out += " "
		}
		out += "(allowed by the model: " + strings.Join(ok, ", ") + ")"
	}
	return out
}

// resultCounts returns r.Counts, or (for a result Finish did not complete)
// the listed anomalies plus Truncated.
func resultCounts(r *check.Result) map[string]int {
	if len(r.Counts) > 0 {
		return r.Counts
	}
	m := map[string]int{}
	for i := range r.Anomalies {
		m[r.Anomalies[i].Type]++
	}
	for ty, n := range r.Truncated {
		if n > 0 {
			m[ty] += n
		}
	}
	return m
}

func hasDetails(r *check.Result, verbose bool) bool {
	return len(r.Anomalies) > 0 || len(r.Not) > 0 || len(r.AlsoNot) > 0 || len(r.Warnings) > 0 ||
		len(r.Truncated) > 0 || (verbose && len(r.Stats) > 0)
}

// firstClause shortens a reason to its first sentence or clause (up to the
// first ". ", "; " or ": "), for one-line notes.
func firstClause(s string) string {
	cut := len(s)
	for _, sep := range []string{". ", "; ", ": ", "\n"} {
		if i := strings.Index(s, sep); i >= 0 && i < cut {
			cut = i
		}
	}
	return strings.TrimRight(s[:cut], ".")
}

func (t *textWriter) historySummary(h *history.History, verbose bool) {
	var s history.Stats
	if h.Keys != nil && h.Sessions != nil {
		s = h.Stats()
	} else {
		s.Txns = len(h.Txns)
	}
	format := h.Header.Format
	if format == "" {
		format = "unknown"
	}
	t.line("", "format: "+clean(format))
	var meta []string
	for _, kv := range [][2]string{{"db", h.Header.DB}, {"db version", h.Header.Version}, {"level", h.Header.Level}, {"workload", h.Header.Workload}} {
		if kv[1] != "" {
			meta = append(meta, kv[0]+" "+clean(kv[1]))
		}
	}
	if len(meta) > 0 {
		t.line("", "run: "+strings.Join(meta, ", "))
	}
	t.line("", fmt.Sprintf("history: %d txns (%d committed, %d aborted, %d unknown), %d ops, %d keys, %d sessions",
		s.Txns, s.Committed, s.Aborted, s.Unknown, s.Ops, s.Keys, s.Sessions))
	if ev := evidenceNames(h.Evidence); len(ev) > 0 {
		t.line("", "evidence: "+strings.Join(ev, ", "))
	} else {
		t.line("", "evidence: none beyond the transactions")
	}
	total := 0
	reasons := make([]string, 0, len(h.Ignored))
	for r, n := range h.Ignored {
		total += n
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	if total > 0 {
		if verbose {
			t.line("", "ignored records:")
			for _, r := range reasons {
				t.line("  ", strconv.Itoa(h.Ignored[r])+" "+clean(r))
			}
		} else {
			t.line("", fmt.Sprintf("ignored: %d records that are not client transactions (-v for reasons)", total))
		}
	}
	if verbose {
		for _, n := range h.Notes {
			t.wrapped("", "note: ", n)
		}
	}
}

// evidenceNames lists the evidence layers a history carries.
func evidenceNames(e history.Evidence) []string {
	var out []string
	for _, x := range []struct {
		on   bool
		name string
	}{
		{e.Sessions, "sessions"}, {e.ClientTime, "client time"}, {e.OpTime, "op time"},
		{e.Timestamps, "db timestamps"}, {e.VersionOrder, "version order"},
		{e.CommitOrder, "commit order"}, {e.PredicateRead, "predicate reads"},
	} {
		if x.on {
			out = append(out, x.name)
		}
	}
	return out
}

func verdictWord(v check.Verdict) string { return strings.ToUpper(v.String()) }

func (t *textWriter) result(r *check.Result, verbose bool) {
	model := r.Model
	if model == "" {
		model = "no model"
	}
	t.line("", fmt.Sprintf("details of %s (%s): %s", clean(r.Checker), clean(model), verdictWord(r.Verdict)))
	if len(r.Not) > 0 {
		t.wrapped("  ", "not: ", strings.Join(r.Not, ", "))
	}
	if len(r.AlsoNot) > 0 {
		t.wrapped("  ", "also not: ", strings.Join(r.AlsoNot, ", "))
	}
	for _, wn := range r.Warnings {
		t.wrapped("  ", "warning: ", wn)
	}
	for i := range r.Anomalies {
		t.anomaly(i+1, &r.Anomalies[i], verbose)
	}
	if len(r.Truncated) > 0 {
		types := make([]string, 0, len(r.Truncated))
		for ty := range r.Truncated {
			types = append(types, ty)
		}
		sort.Strings(types)
		for _, ty := range types {
			if n := r.Truncated[ty]; n > 0 {
				more := strconv.Itoa(n)
				if slices.Contains(r.CountsAtLeast, ty) {
					more = "at least " + more
				}
				t.line("  ", fmt.Sprintf("... and %s more %s not listed (--max-anomalies caps the listing per type; 0 lists all)", more, clean(ty)))
			}
		}
	}
	if verbose && len(r.Stats) > 0 {
		keys := make([]string, 0, len(r.Stats))
		for k := range r.Stats {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%v", k, r.Stats[k]))
		}
		t.wrapped("  ", "stats: ", strings.Join(parts, ", "))
	}
}

func (t *textWriter) anomaly(n int, a *check.Anomaly, verbose bool) {
	names := make([]string, 0, len(a.Txns))
	for _, x := range a.Txns {
		names = append(names, txnName(t.h, x))
	}
	head := fmt.Sprintf("[%d] %s", n, clean(a.Type))
	if a.Key != "" {
		head += " on key " + clean(a.Key)
	}
	if len(names) > 0 {
		head += ": " + clean(strings.Join(names, ", "))
	}
	if a.Allowed {
		head += " (allowed by the model; for information)"
	}
	t.line("  ", head)
	t.wrapped("      ", "", a.Explanation)
	if !verbose {
		return
	}
	inv := involved(a)
	if len(inv) > 0 {
		t.line("      ", "transactions:")
		for _, x := range inv {
			s, ok := a.Ops[x]
			if !ok {
				s, ok = txnString(t.h, x)
			}
			if !ok {
				s = txnName(t.h, x) + " (not in the history)"
			}
			t.wrapped("        ", "", s)
		}
	}
	if len(a.Cycle) > 0 {
		t.line("      ", "cycle:")
		for i, s := range a.Cycle {
			rel := s.Rel
			if s.Key != "" {
				rel += " " + s.Key
			}
			t.line("        ", fmt.Sprintf("%d. %s -%s-> %s", i+1, clean(txnName(t.h, s.From)), clean(rel), clean(txnName(t.h, s.To))))
			t.wrapped("           ", "", s.Why)
		}
	}
}

// hanging writes a summary line wrapped with a hanging indent: after its
// "label: " when it has a short one, else two spaces.
func (t *textWriter) hanging(s string) {
	if i := strings.Index(s, ": "); i > 0 && i < 24 && !strings.Contains(s[:i], " ") {
		t.wrapped("", s[:i+2], s[i+2:])
		return
	}
	cont := "  "
	first := true
	for _, l := range wrap(clean(s), textWidth-len(cont)) {
		if first {
			t.line("", l)
			first = false
		} else {
			t.line(cont, l)
		}
	}
}

// wrapped writes prefix+text wrapped at textWidth; continuation lines are
// indented to the prefix's width. Newlines in text start new lines.
func (t *textWriter) wrapped(indent, prefix, text string) {
	cont := indent + strings.Repeat(" ", utf8.RuneCountInString(prefix))
	if utf8.RuneCountInString(prefix) > textWidth/3 {
		cont = indent + "    "
	}
	first := true
	for _, para := range strings.Split(clean(strings.TrimRight(text, "\n")), "\n") {
		// Keep a paragraph's own indentation (explanations indent their
		// bullet lists).
		body := strings.TrimLeft(para, " ")
		lead := para[:len(para)-len(body)]
		for _, l := range wrap(body, textWidth-utf8.RuneCountInString(cont+lead)) {
			if first {
				t.line(indent, prefix+lead+l)
				first = false
			} else {
				t.line(cont, lead+l)
			}
		}
	}
	if first {
		t.line(indent, strings.TrimRight(prefix, " "))
	}
}

// wrap splits s at spaces into lines of at most width runes; a word longer
// than width gets a line of its own.
func wrap(s string, width int) []string {
	if width < 20 {
		width = 20
	}
	words := strings.Fields(s)
	if len(words) == 0 {
		return []string{""}
	}
	var lines []string
	var cur strings.Builder
	n := 0
	for _, w := range words {
		wl := utf8.RuneCountInString(w)
		if n > 0 && n+1+wl > width {
			lines = append(lines, cur.String())
			cur.Reset()
			n = 0
		}
		if n > 0 {
			cur.WriteByte(' ')
			n++
		}
		cur.WriteString(w)
		n += wl
	}
	return append(lines, cur.String())
}

// clean makes s safe for a terminal: invalid UTF-8 becomes U+FFFD and control
// characters other than newline are escaped (\x1b, \u009b, ...); tabs become
// spaces.
func clean(s string) string {
	ok := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (unicode.IsControl(r) && r != '\n') {
			ok = false
			break
		}
		i += size
	}
	if ok {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\t':
			b.WriteByte(' ')
		case r == '\n':
			b.WriteByte('\n')
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// roundDuration keeps about three significant digits: 1.234s, 12.35ms, 85µs.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
