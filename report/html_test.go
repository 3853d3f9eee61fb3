package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

func writeHTMLFor(t *testing.T, ins ...*Input) (string, string) {
	t.Helper()
	dir := t.TempDir()
	path, err := WriteHTML(dir, ins)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, "report.html") {
		t.Fatalf("path = %s", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return dir, string(b)
}

// wellFormed parses s as XML (the page is written as well-formed XHTML-style
// HTML5) and returns the element names seen.
func wellFormed(t *testing.T, s string) map[string]int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = true
	seen := map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return seen
		}
		if err != nil {
			line := d.InputPos
			l, _ := line()
			t.Fatalf("not well-formed at line %d: %v\n%s", l, err, nthLine(s, l))
		}
		if se, ok := tok.(xml.StartElement); ok {
			seen[se.Name.Local]++
		}
	}
}

func nthLine(s string, n int) string {
	ls := strings.Split(s, "\n")
	if n-1 < len(ls) && n > 0 {
		return ls[n-1]
	}
	return ""
}

var svgRE = regexp.MustCompile(`(?s)<svg class="cycle".*?</svg>`)

func TestHTMLOneSVGPerDrawnAnomaly(t *testing.T) {
	in := invalidInput()
	dir, page := writeHTMLFor(t, in, validInput(), brokenInput())
	seen := wellFormed(t, page)
	frags := svgRE.FindAllString(page, -1)
	if want := len(in.Results[0].Anomalies); len(frags) != want {
		t.Fatalf("%d cycle SVGs, want %d", len(frags), want)
	}
	for i, f := range frags {
		// Each fragment stands alone as an SVG document.
		d := xml.NewDecoder(strings.NewReader(f))
		d.Strict = true
		nodes, edges := 0, 0
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("svg %d: %v", i, err)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "g" {
				for _, a := range se.Attr {
					if a.Name.Local == "class" && strings.HasPrefix(a.Value, "node") {
						nodes++
					}
					if a.Name.Local == "class" && strings.HasPrefix(a.Value, "edge") {
						edges++
					}
				}
			}
		}
		an := in.Results[0].Anomalies[i]
		if edges != len(an.Cycle) || nodes != len(involved(&an)) {
			t.Errorf("svg %d (%s): %d nodes, %d edges; want %d, %d", i, an.Type, nodes, edges, len(involved(&an)), len(an.Cycle))
		}
	}
	// Timelines: every anomaly of the invalid input has client intervals.
	if n := strings.Count(page, `<svg class="timeline"`); n != len(frags) {
		t.Errorf("%d timelines, want %d", n, len(frags))
	}
	if seen["section"] != 3 {
		t.Errorf("%d sections, want 3", seen["section"])
	}
	for _, want := range []string{"G1c", "G-single-item", "read-committed", "strict-serializable", "INVALID", "VALID", "UNKNOWN",
		"history has no database timestamps", "3 more G1c", "nemesis op", "search budget of 1000 steps"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Self-contained: nothing is fetched.
	for _, bad := range []string{"http://", "https://", "<script", "<link", "src="} {
		if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	// report.json: all inputs, parseable.
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all []map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0]["valid"] != false || all[1]["valid"] != true || all[2]["valid"] != "unknown" {
		t.Fatalf("report.json: %d inputs, verdicts %v %v %v", len(all), all[0]["valid"], all[1]["valid"], all[2]["valid"])
	}
}

// Hostile keys, ids and explanations must come out escaped in text and in
// the SVG, and the page must stay well-formed.
func TestHTMLEscapesHostileStrings(t *testing.T) {
	_, page := writeHTMLFor(t, hostileInput())
	wellFormed(t, page)
	for _, bad := range []string{"<script", "<img", "</svg><img", "onerror=alert(1)>", "\x1b"} {
		if strings.Contains(page, bad) {
			i := strings.Index(page, bad)
			t.Errorf("unescaped %q in page: ...%s...", bad, page[max(0, i-80):min(len(page), i+80)])
		}
	}
	if !strings.Contains(page, "&lt;script&gt;") {
		t.Error("escaped key missing from page")
	}
	if n := len(svgRE.FindAllString(page, -1)); n != 1 {
		t.Fatalf("%d cycle SVGs, want 1", n)
	}
	// The step to a transaction outside the history is drawn as such.
	if !strings.Contains(page, "(not in the history)") {
		t.Error("missing transaction not marked")
	}
}

func TestHTMLCapsDrawnAnomalies(t *testing.T) {
	in := invalidInput()
	r := in.Results[0]
	base := r.Anomalies
	for len(r.Anomalies) < MaxDrawn+7 {
		r.Anomalies = append(r.Anomalies, base[len(r.Anomalies)%len(base)])
	}
	_, page := writeHTMLFor(t, in)
	wellFormed(t, page)
	if n := len(svgRE.FindAllString(page, -1)); n != MaxDrawn {
		t.Fatalf("%d drawn, want cap %d", n, MaxDrawn)
	}
	if !strings.Contains(page, fmt.Sprintf("the other %d are in the table above", 7)) {
		t.Error("no pointer to the undrawn anomalies")
	}
	if n := len(regexp.MustCompile(`<tr><td>elle</td><td>\d+</td>`).FindAllString(page, -1)); n != MaxDrawn+7 {
		t.Errorf("anomaly table has %d elle rows, want %d", n, MaxDrawn+7)
	}
}

// Layout: node boxes never overlap, edges of a 2-cycle are two distinct
// curves, and every label lies inside the view box.
func TestGraphLayout(t *testing.T) {
	in := invalidInput()
	h := in.History
	for _, a := range append(in.Results[0].Anomalies, bigCycle(h.Txns[0].Index, int32(len(h.Txns)))) {
		g := layoutGraph(h, &a)
		var boxes []rect
		for _, n := range g.Nodes {
			boxes = append(boxes, rect{num(t, n.X), num(t, n.Y), num(t, n.W), num(t, n.H)})
		}
		for i := range boxes {
			for j := i + 1; j < len(boxes); j++ {
				if boxes[i].overlaps(boxes[j]) {
					t.Errorf("%s: boxes %d and %d overlap", a.Type, i, j)
				}
			}
		}
		vb := strings.Fields(g.ViewBox)
		view := rect{num(t, vb[0]), num(t, vb[1]), num(t, vb[2]), num(t, vb[3])}
		for _, e := range g.Edges {
			lr := rect{num(t, e.LabelX), num(t, e.LabelY), num(t, e.LabelW), num(t, e.LabelH)}
			if lr.X < view.X || lr.Y < view.Y || lr.X+lr.W > view.X+view.W || lr.Y+lr.H > view.Y+view.H {
				t.Errorf("%s: label %q outside view box", a.Type, e.Label)
			}
			for i, b := range boxes {
				if lr.overlaps(b) {
					t.Errorf("%s: label %q overlaps node %d", a.Type, e.Label, i)
				}
			}
		}
		paths := map[string]bool{}
		for _, e := range g.Edges {
			if paths[e.Path] {
				t.Errorf("%s: two edges share path %s", a.Type, e.Path)
			}
			paths[e.Path] = true
		}
	}
}

// bigCycle is a 6-transaction cycle over the fixture's transactions plus a
// self-loop and a parallel edge.
func bigCycle(first, n int32) check.Anomaly {
	a := check.Anomaly{Type: "G2"}
	for i := int32(0); i < n; i++ {
		a.Txns = append(a.Txns, first+i)
		a.Cycle = append(a.Cycle, check.Step{From: first + i, To: first + (i+1)%n, Rel: []string{"ww", "wr", "rw", "process", "realtime", "lock"}[i%6], Key: "k"})
	}
	a.Cycle = append(a.Cycle, check.Step{From: first, To: first + 1, Rel: "rw", Key: "x"}, check.Step{From: first + 2, To: first + 2, Rel: "ts"})
	return a
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	if _, err := fmt.Sscan(s, &f); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return f
}

func TestTimelineDBTimestamps(t *testing.T) {
	in := validInput()
	a := check.Anomaly{Type: "x", Txns: []int32{0, 1, 2}}
	tl := layoutTimeline(in.History, &a)
	if tl == nil || !strings.Contains(tl.Caption, "database timestamps") || len(tl.Bars) != 3 {
		t.Fatalf("timeline = %+v", tl)
	}
	if !tl.Bars[2].Point {
		t.Error("a transaction with only a start timestamp should be drawn as an instant")
	}
	// No time information at all: no timeline.
	if tl := layoutTimeline(hostileInputNoTime(), &check.Anomaly{Txns: []int32{0, 1}}); tl != nil {
		t.Errorf("timeline without time: %+v", tl)
	}
}

func hostileInputNoTime() *history.History {
	h := hostileInput().History
	for i := range h.Txns {
		h.Txns[i].HasTime = false
	}
	return h
}

func TestWriteHTMLBadDir(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteHTML(filepath.Join(f, "sub"), []*Input{validInput()}); err == nil {
		t.Fatal("want an error for a directory under a file")
	}
}

// A long transaction's box shows the ops on the anomaly's keys even when
// they come after the cap, numbered so "op 14" in an explanation is found.
func TestOpLinesShowHotOpsFirst(t *testing.T) {
	var ops []opSpec
	for i := 0; i < 20; i++ {
		ops = append(ops, wr("k"+strconv.Itoa(i), int64(i)))
	}
	h := buildHistory("jsonl", []txnSpec{txn("t", "s", ops...)})
	lines, hot := opLines(h, &h.Txns[0], map[string]bool{"k17": true})
	if len(lines) != maxOpLines || len(hot) != len(lines) {
		t.Fatalf("%d lines, want %d: %q", len(lines), maxOpLines, lines)
	}
	found := false
	for i, l := range lines {
		if l == "17: w k17 17" {
			found = hot[i]
		}
	}
	if !found {
		t.Errorf("hot op 17 not shown or not marked: %q %v", lines, hot)
	}
	if last := lines[len(lines)-1]; last != "… 11 more ops" {
		t.Errorf("last line %q", last)
	}
	// Short transactions: every op, unnumbered.
	h2 := buildHistory("jsonl", []txnSpec{txn("t", "s", wr("a", 1), rr("b", 1))})
	lines, hot = opLines(h2, &h2.Txns[0], map[string]bool{"b": true})
	if len(lines) != 2 || lines[0] != "w a 1" || hot[0] || !hot[1] {
		t.Errorf("short txn: %q %v", lines, hot)
	}
}

func TestRoundDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1234567890 * time.Nanosecond: "1.235s",
		12345678 * time.Nanosecond:   "12.35ms",
		85432 * time.Nanosecond:      "85µs",
	} {
		if got := roundDuration(d).String(); got != want {
			t.Errorf("%v: got %s, want %s", d, got, want)
		}
	}
}
