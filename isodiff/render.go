package isodiff

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
)

// WriteText renders the report for a terminal.
func WriteText(w io.Writer, r *Report) {
	t := r.Trace
	fmt.Fprintf(w, "IsoDiff analysis at %s (k=%d, ℓ=%d)\n", r.Level, r.K, r.L)
	fmt.Fprintf(w, "trace: %d statements, %d transactions (%d committed, %d rolled back, %d incomplete), %d loop iterations collapsed\n",
		t.Statements, t.Transactions, t.Committed, t.RolledBack, t.Incomplete, t.Collapsed)
	if t.Unparsable > 0 {
		fmt.Fprintf(w, "UNPARSABLE: %d statements could not be parsed and were left out:\n", t.Unparsable)
		for _, u := range t.Unparsed {
			fmt.Fprintf(w, "  %s:%d: %s\n    %s\n", u.File, u.Line, u.Error, u.SQL)
		}
	}
	fmt.Fprintf(w, "\n%d transaction classes:\n", len(r.Classes))
	for _, c := range r.Classes {
		extra := ""
		if c.Removed {
			extra = " [removed by hint]"
		}
		name := c.ID
		if c.Label != "" {
			name = c.Label + " (" + c.ID + ")"
		}
		fmt.Fprintf(w, "  %s: %d instances, %d statements, %d replicas%s\n", name, c.Instances, len(c.Stmts), c.Replicas, extra)
		for _, s := range c.Stmts {
			fmt.Fprintf(w, "      %s\n", clip(s.SQL, 120))
		}
	}
	s := r.Stats
	fmt.Fprintf(w, "\ngraph: %d classes, %d transaction edges, %d operation edges; %d dangerous paths, %d transaction cycles examined, %d operation-level samples\n",
		s.Classes, s.TxnEdges, s.OpEdges, s.DangerousPaths, s.TxnCycles, s.OpSamples)
	fmt.Fprintf(w, "pruned: %d by the timing check, %d by the correlation check, %d by hints", s.TimingPruned, s.CorrPruned, s.HintPruned)
	if s.CorrIncomplete > 0 {
		fmt.Fprintf(w, "; correlation check incomplete on %d cycles (lowest coverage %.1f%%), kept", s.CorrIncomplete, 100*s.MinCoverage)
	}
	fmt.Fprintln(w)
	if len(r.Cycles) == 0 && s.Classes == 0 {
		fmt.Fprintf(w, "\nnothing analysed: no transaction class accesses a table, so no claim is made (unknown)\n")
		return
	}
	if len(r.Cycles) == 0 && t.Unparsable > 0 {
		fmt.Fprintf(w, "\nno Δ cycle among the statements parsed at %s, but %d statements could not be parsed and were left out: they may close a Δ cycle, so no claim is made (unknown)\n", r.Level, t.Unparsable)
		writeObserved(w, r)
		return
	}
	if len(r.Cycles) == 0 {
		fmt.Fprintf(w, "\nno Δ cycle: no anomaly of these transactions is possible at %s\n", r.Level)
		writeObserved(w, r)
		return
	}
	fmt.Fprintf(w, "\n%d Δ cycles", r.Stats.DeltaCycles)
	if len(r.Cycles) < r.Stats.DeltaCycles {
		fmt.Fprintf(w, " (the first %d listed)", len(r.Cycles))
	}
	fmt.Fprintln(w, ":")
	for _, c := range r.Cycles {
		fmt.Fprintf(w, "  #%d", c.Index)
		if c.Round > 0 {
			fmt.Fprintf(w, " (appears once the first %d TargetColumns are protected)", c.Round)
		}
		if c.Coverage < 1 {
			fmt.Fprintf(w, " (correlation coverage %.1f%%)", 100*c.Coverage)
		}
		fmt.Fprintln(w)
		for _, e := range c.Edges {
			fmt.Fprintf(w, "    %s -%s-> %s on %s: %s ... %s\n", e.From, e.Type, e.To, e.Column, e.FromOp, e.ToOp)
			fmt.Fprintf(w, "        %s\n        %s\n", clip(e.FromSQL, 110), clip(e.ToSQL, 110))
		}
		if c.ObservedCount > 0 {
			fmt.Fprintf(w, "    OBSERVED %d times in the recorded histories, e.g.:\n", c.ObservedCount)
			for _, o := range c.Observed {
				fmt.Fprintf(w, "      %s: %s %s%s\n", o.History, o.Type, strings.Join(o.Txns, " -> "), map[bool]string{true: " (same dependency types)", false: ""}[o.Exact])
			}
		}
	}
	fmt.Fprintf(w, "\nTargetColumns (%d):\n", len(r.Targets))
	for _, t := range r.Targets {
		fmt.Fprintf(w, "  %s breaks %d cycles %v\n    fix: %s\n", t.Column, t.BreaksCount, t.Breaks, t.Fix)
	}
	if len(r.Residual) > 0 {
		fmt.Fprintf(w, "cycles no reparable column breaks: %v\n", r.Residual)
	}
	if r.Incomplete {
		fmt.Fprintln(w, "set cover stopped at its round limit: more TargetColumns may be needed")
	}
	writeObserved(w, r)
}

// writeObserved summarises the recorded histories' evidence (Observe).
func writeObserved(w io.Writer, r *Report) {
	o := r.Observed
	if o == nil {
		return
	}
	fmt.Fprintf(w, "\nrecorded histories %s (checked by %s): %d cycle anomalies, %d mapped to analysed classes, %d match a Δ cycle; %d of %d listed Δ cycles observed\n",
		strings.Join(o.Histories, ", "), strings.Join(o.Checkers, ", "), o.Anomalies, o.Mapped, o.Matched, o.CyclesObserved, len(r.Cycles))
	for _, u := range o.Unmapped {
		fmt.Fprintf(w, "  unmapped: %s\n", u)
	}
	for _, u := range o.NotPredicted {
		fmt.Fprintf(w, "  matches no listed Δ cycle: %s\n", u)
	}
	for _, n := range o.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

type svgNode struct {
	X, Y, W, RX, RY float64
	Label           string
}

type svgEdge struct {
	Path, Head string
	LX, LY     float64
	Label      string
}

type cycleView struct {
	CycleInfo
	W, H  float64
	Nodes []svgNode
	SVG   []svgEdge
}

// layout draws a cycle: instances on a circle, dependencies as arcs bent
// outwards, each labelled with its type and column.
func layout(c CycleInfo) cycleView {
	n := len(c.Edges)
	v := cycleView{CycleInfo: c}
	R := 90.0 + 25*float64(n)
	v.W, v.H = 2*R+260, 2*R+80
	cx, cy := v.W/2, v.H/2
	pos := make([][2]float64, n)
	for i, e := range c.Edges {
		a := -math.Pi/2 + 2*math.Pi*float64(i)/float64(n)
		pos[i] = [2]float64{cx + R*math.Cos(a), cy + R*math.Sin(a)}
		w := 7.2*float64(len([]rune(e.From))) + 12
		v.Nodes = append(v.Nodes, svgNode{X: pos[i][0], Y: pos[i][1], W: w, RX: pos[i][0] - w/2, RY: pos[i][1] - 11, Label: e.From})
	}
	for i, e := range c.Edges {
		p, q := pos[i], pos[(i+1)%n]
		mx, my := (p[0]+q[0])/2, (p[1]+q[1])/2
		dx, dy := mx-cx, my-cy
		d := math.Hypot(dx, dy)
		bend := 40.0
		if d < 1 {
			dx, dy, d = q[1]-p[1], p[0]-q[0], math.Hypot(q[1]-p[1], p[0]-q[0])
		}
		ctl := [2]float64{mx + dx/d*bend, my + dy/d*bend}
		// Shorten the end so the arrow stops at the node's edge.
		tx, ty := q[0]-ctl[0], q[1]-ctl[1]
		tl := math.Hypot(tx, ty)
		end := [2]float64{q[0] - tx/tl*16, q[1] - ty/tl*16}
		v.SVG = append(v.SVG, svgEdge{
			Path:  fmt.Sprintf("M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f", p[0], p[1], ctl[0], ctl[1], end[0], end[1]),
			Head:  arrow(end, [2]float64{tx / tl, ty / tl}),
			LX:    ctl[0],
			LY:    ctl[1],
			Label: e.Type + " " + e.Column,
		})
	}
	return v
}

func arrow(tip, dir [2]float64) string {
	l, h := 10.0, 4.5
	bx, by := tip[0]-dir[0]*l, tip[1]-dir[1]*l
	return fmt.Sprintf("%.1f,%.1f %.1f,%.1f %.1f,%.1f", tip[0], tip[1], bx-dir[1]*h, by+dir[0]*h, bx+dir[1]*h, by-dir[0]*h)
}

var htmlTmpl = template.Must(template.New("a").Funcs(template.FuncMap{"pct": func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>txray analyze — {{.R.Level}}</title>
<style>body{font-family:sans-serif;margin:2em;max-width:1200px}code,pre,td.sql{font-family:monospace;font-size:12px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}.rw{color:#c00}.ww{color:#06c}.wr{color:#080}.obs{color:#a00;font-weight:bold}
svg text{font-family:monospace;font-size:12px}</style></head><body>
<h1>IsoDiff analysis at {{.R.Level}}</h1>
<p>{{.R.Trace.Statements}} statements, {{.R.Trace.Transactions}} transactions ({{.R.Trace.Committed}} committed), {{len .R.Classes}} classes;
{{.R.Stats.DangerousPaths}} dangerous paths, {{.R.Stats.TxnCycles}} transaction cycles examined; pruned {{.R.Stats.TimingPruned}} by timing, {{.R.Stats.CorrPruned}} by correlation, {{.R.Stats.HintPruned}} by hints.
{{if .R.Trace.Unparsable}}<b>{{.R.Trace.Unparsable}} statements could not be parsed</b> and were left out.{{end}}</p>
<h2>TargetColumns</h2>
{{if .R.Targets}}<table><tr><th>column</th><th>breaks cycles</th><th>fix</th></tr>
{{range .R.Targets}}<tr><td><code>{{.Column}}</code></td><td>{{range .Breaks}}<a href="#c{{.}}">#{{.}}</a> {{end}}</td><td>{{.Fix}}</td></tr>{{end}}</table>
{{else}}<p>none: no Δ cycle.</p>{{end}}
{{with .R.Observed}}<h2>Recorded histories</h2><p>{{range .Histories}}<code>{{.}}</code> {{end}}checked by {{range .Checkers}}{{.}} {{end}}:
{{.Anomalies}} cycle anomalies, {{.Mapped}} mapped to analysed classes, {{.Matched}} match a Δ cycle; {{.CyclesObserved}} Δ cycles observed.
{{range .Unmapped}}<br>unmapped: {{.}}{{end}}{{range .NotPredicted}}<br>matches no listed Δ cycle: {{.}}{{end}}{{range .Notes}}<br>note: {{.}}{{end}}</p>{{end}}
<h2>Δ cycles ({{len .Cycles}})</h2>
{{range .Cycles}}<h3 id="c{{.Index}}">#{{.Index}}{{if .BrokenBy}} — broken by <code>{{.BrokenBy}}</code>{{end}}{{if lt .Coverage 1.0}} (correlation coverage {{pct .Coverage}}){{end}}{{if .ObservedCount}} — <span class="obs">OBSERVED {{.ObservedCount}}×</span>{{end}}</h3>
{{if .Observed}}<p class="obs">Observed in recorded histories: {{range .Observed}}<br>{{.History}}: {{.Type}} {{range $i, $t := .Txns}}{{if $i}} → {{end}}{{$t}}{{end}}{{if .Exact}} (same dependency types){{end}}{{end}}</p>{{end}}
<svg width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}">
{{range .SVG}}<path d="{{.Path}}" fill="none" stroke="#444"/><polygon points="{{.Head}}" fill="#444"/><text x="{{.LX}}" y="{{.LY}}" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Nodes}}<rect x="{{.RX}}" y="{{.RY}}" width="{{.W}}" height="22" rx="4" fill="#fff" stroke="#000"/><text x="{{.X}}" y="{{.Y}}" dy="4" text-anchor="middle">{{.Label}}</text>
{{end}}</svg>
<table><tr><th>from</th><th>dep</th><th>to</th><th>statement of from</th><th>statement of to</th></tr>
{{range .Edges}}<tr><td>{{.From}}</td><td class="{{.Type}}">{{.Type}} {{.Column}}<br>{{.FromOp}} → {{.ToOp}}</td><td>{{.To}}</td><td class="sql">{{.FromSQL}}</td><td class="sql">{{.ToSQL}}</td></tr>{{end}}</table>
{{end}}
<h2>Classes</h2><table><tr><th>class</th><th>instances</th><th>replicas</th><th>statements</th></tr>
{{range .R.Classes}}<tr><td>{{if .Label}}{{.Label}}<br>{{end}}<code>{{.ID}}</code>{{if .Removed}}<br>(removed by hint){{end}}</td><td>{{.Instances}}</td><td>{{.Replicas}}</td><td class="sql">{{range .Stmts}}{{.SQL}}<br>{{end}}</td></tr>{{end}}</table>
</body></html>
`))

// WriteHTML renders the report as one HTML page with a diagram per Δ
// cycle (at most 200 drawn).
func WriteHTML(w io.Writer, r *Report) error {
	var cs []cycleView
	for i, c := range r.Cycles {
		if i >= 200 {
			break
		}
		cs = append(cs, layout(c))
	}
	return htmlTmpl.Execute(w, struct {
		R      *Report
		Cycles []cycleView
	}{r, cs})
}

var _ = strings.TrimSpace
