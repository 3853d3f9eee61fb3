package report

// pageHTML is the report page. It is an html/template: every value is
// escaped for its context. The markup is kept well-formed XML (closed empty
// elements, no named entities) so tests can check its structure with
// encoding/xml. The page has no script and fetches nothing: the
// Content-Security-Policy allows only its inline style.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>txray report</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em; color: #1d232a; background: #fff; line-height: 1.4; }
h1 { font-size: 1.5em; margin: 0 0 .3em; }
h2 { font-size: 1.25em; margin: 1.6em 0 .4em; border-bottom: 2px solid #d6dbe0; padding-bottom: .2em; overflow-wrap: anywhere; }
h3 { font-size: 1.05em; margin: 1.2em 0 .4em; }
h4 { font-size: 1em; margin: 0 0 .5em; }
table { border-collapse: collapse; margin: .3em 0 .8em; font-size: .92em; }
th, td { border: 1px solid #d6dbe0; padding: .25em .55em; text-align: left; vertical-align: top; overflow-wrap: break-word; }
td.models { min-width: 9em; }
th { background: #f1f3f5; font-weight: 600; }
code, pre, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .9em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f8f9; border: 1px solid #e3e6e9; padding: .6em; margin: 0 0 .6em; }
.verdict { display: inline-block; white-space: nowrap; padding: .05em .5em; border-radius: .3em; font-weight: 700; font-size: .85em; color: #fff; }
.v-valid { background: #2f7d32; } .v-invalid { background: #c62828; } .v-unknown { background: #8a6d00; }
.muted { color: #5f6b76; }
.anomaly { border: 1px solid #d6dbe0; border-radius: .4em; padding: .8em 1em; margin: 1em 0; }
.figs { display: flex; flex-wrap: wrap; gap: 1.2em; align-items: flex-start; }
.figs figure { margin: 0; flex: 0 1 auto; max-width: 100%; }
.figs .explain { flex: 1 1 26em; min-width: 18em; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: .85em; color: #5f6b76; }
ol.steps li { margin-bottom: .35em; }
ul.txns { padding-left: 1.2em; }
.allowed { color: #5f6b76; font-style: italic; }
.rel { font-weight: 700; }
.rel.rel-ww { color: #b71c1c; } .rel.rel-wr { color: #1565c0; } .rel.rel-rw { color: #e65100; }
.rel.rel-process { color: #616161; } .rel.rel-realtime { color: #2e7d32; } .rel.rel-other { color: #6a1b9a; }
svg .node rect { fill: #fbfcfd; stroke: #37474f; stroke-width: 1.2; }
svg .node.aborted rect { fill: #fdecea; stroke: #c62828; stroke-dasharray: 5 3; }
svg .node.unknown rect { fill: #fff8e1; stroke: #8a6d00; stroke-dasharray: 2 2; }
svg .node.missing rect { fill: #f3e5f5; stroke: #6a1b9a; stroke-dasharray: 2 2; }
svg text { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; fill: #1d232a; }
svg text.name { font-weight: 700; }
svg text.hot { fill: #0d47a1; font-weight: 700; }
svg .edge path { fill: none; stroke-width: 1.8; }
svg .edge.rel-ww path { stroke: #b71c1c; } svg .edge.rel-ww polygon { fill: #b71c1c; }
svg .edge.rel-wr path { stroke: #1565c0; } svg .edge.rel-wr polygon { fill: #1565c0; }
svg .edge.rel-rw path { stroke: #e65100; stroke-dasharray: 7 4; } svg .edge.rel-rw polygon { fill: #e65100; }
svg .edge.rel-process path { stroke: #616161; stroke-dasharray: 2 3; } svg .edge.rel-process polygon { fill: #616161; }
svg .edge.rel-realtime path { stroke: #2e7d32; stroke-dasharray: 1 3; } svg .edge.rel-realtime polygon { fill: #2e7d32; }
svg .edge.rel-other path { stroke: #6a1b9a; } svg .edge.rel-other polygon { fill: #6a1b9a; }
svg .label rect { fill: #fff; fill-opacity: .92; stroke: #cfd8dc; stroke-width: .8; }
svg .label text { font-size: 11px; }
svg .label.rel-ww text { fill: #b71c1c; } svg .label.rel-wr text { fill: #1565c0; } svg .label.rel-rw text { fill: #e65100; }
svg .label.rel-process text { fill: #616161; } svg .label.rel-realtime text { fill: #2e7d32; } svg .label.rel-other text { fill: #6a1b9a; }
svg.timeline .bar rect { fill: #90a4ae; }
svg.timeline .bar.committed rect { fill: #1565c0; } svg.timeline .bar.aborted rect { fill: #c62828; }
svg.timeline .bar.unknown rect { fill: #8a6d00; fill-opacity: .6; }
svg.timeline text.name { text-anchor: end; font-weight: 400; }
svg.timeline text.tick { text-anchor: middle; font-size: 10px; fill: #5f6b76; }
svg.timeline line { stroke: #b0bec5; stroke-width: 1; }
svg.timeline line.grid { stroke: #eceff1; }
.legend span { margin-right: 1.2em; white-space: nowrap; }
</style>
</head>
<body>
<h1>txray report</h1>
<p class="muted">{{len .Inputs}} input{{if ne (len .Inputs) 1}}s{{end}}. Complete data, including anomalies not drawn here: <a href="report.json">report.json</a>.</p>
<p class="legend muted">Edges: <span><b class="rel rel-ww">ww</b> write-write</span> <span><b class="rel rel-wr">wr</b> write-read</span> <span><b class="rel rel-rw">rw</b> read-write (anti-dependency)</span> <span><b class="rel rel-process">process</b> session order</span> <span><b class="rel rel-realtime">realtime</b> real-time order</span></p>
{{if .Multi}}
<table class="summary">
<tr><th>#</th><th>file</th><th>verdict</th><th>checker</th><th>anomalies</th></tr>
{{range .Inputs}}<tr><td>{{.N}}</td><td><a href="#in{{.N}}">{{.File}}</a></td><td><span class="verdict {{.VClass}}">{{.Verdict}}</span></td><td>{{range $i, $r := .Results}}{{if $i}}, {{end}}{{$r.Checker}} ({{$r.Model}}){{end}}</td><td>{{.Total}}</td></tr>
{{end}}</table>
{{end}}
{{range .Inputs}}
<section class="input" id="in{{.N}}">
<h2>{{.File}} <span class="verdict {{.VClass}}">{{.Verdict}}</span></h2>
{{if .Error}}<p><b>Error:</b> <code>{{.Error}}</code></p>{{end}}
{{if .Reason}}<p><b>Reason:</b> {{.Reason}}</p>{{end}}
{{if .ModelWhy}}<p><b>Model:</b> {{.ModelWhy}}</p>{{end}}
{{if .Stats}}
<h3>History</h3>
<table class="stats">
<tr><th>format</th><th>transactions</th><th>committed</th><th>aborted</th><th>unknown</th><th>ops</th><th>keys</th><th>sessions</th></tr>
<tr><td>{{.Format}}</td><td>{{.Stats.Txns}}</td><td>{{.Stats.Committed}}</td><td>{{.Stats.Aborted}}</td><td>{{.Stats.Unknown}}</td><td>{{.Stats.Ops}}</td><td>{{.Stats.Keys}}</td><td>{{.Stats.Sessions}}</td></tr>
</table>
<p><b>Evidence:</b> {{.Evidence}}{{range .Header}}. <b>{{index . 0}}:</b> {{index . 1}}{{end}}{{if .Elapsed}}. <b>Checked in</b> {{.Elapsed}}{{end}}.</p>
{{if .Ignored}}<p><b>Ignored records</b> (not client transactions): {{range $i, $x := .Ignored}}{{if $i}}; {{end}}{{index $x 0}} {{index $x 1}}{{end}}.</p>{{end}}
{{range .Notes}}<p class="muted">Note: {{.}}</p>{{end}}
{{end}}
{{if .Results}}
<h3>Verdicts</h3>
<table class="results">
<tr><th>checker</th><th>model</th><th>verdict</th><th>anomalies found (all counted)</th><th>ruled out (not)</th><th>also not</th><th>reason / notes</th></tr>
{{range .Results}}{{$r := .}}<tr><td>{{.Checker}}</td><td>{{.Model}}</td><td><span class="verdict {{.VClass}}">{{.Verdict}}</span></td><td>{{range $i, $f := .Found}}{{if $i}}<br/>{{end}}{{$f.Count}} <a class="def" href="#{{$f.DefID}}" title="{{$f.Def}}">{{$f.Type}}</a>{{if $f.Plain}} ({{$f.Plain}}){{end}}{{if $f.Allowed}} <span class="allowed">(allowed)</span>{{end}}{{end}}</td><td class="models">{{.Not}}</td><td class="models">{{.AlsoNot}}</td><td>{{.Reason}}{{if .Truncated}}{{if .Reason}}<br/>{{end}}Not listed (per-type cap): {{.Truncated}}.{{end}}{{range $i, $w := .Warnings}}{{if or $i $r.Reason $r.Truncated}}<br/>{{end}}Warning: {{$w}}{{end}}</td></tr>
{{end}}</table>
{{end}}
{{if .NotApplicable}}<p><b>Checkers that did not apply:</b> {{range $i, $x := .NotApplicable}}{{if $i}}; {{end}}{{index $x 0}}: {{index $x 1}}{{end}}.</p>{{end}}
{{if .Rows}}
<h3>Anomalies</h3>
<table class="anomalies">
<tr><th>checker</th><th>#</th><th>type</th><th>transactions</th><th>key</th></tr>
{{range .Rows}}<tr><td>{{.Checker}}</td><td>{{.N}}</td><td>{{if .ID}}<a href="#{{.ID}}">{{.Type}}</a>{{else}}{{.Type}}{{end}}{{if .Plain}} <span class="muted">({{.Plain}})</span>{{end}}{{if .Allowed}} <span class="allowed">(allowed)</span>{{end}}</td><td>{{.Txns}}</td><td>{{.Key}}</td></tr>
{{end}}</table>
{{if .MoreRows}}<p class="muted">{{.MoreRows}} more anomalies are not listed here; see <a href="report.json">report.json</a>.</p>{{end}}
{{if .Undrawn}}<p class="muted">Only the first {{len .Drawn}} anomalies are drawn; the other {{.Undrawn}} are in the table above and in <a href="report.json">report.json</a>.</p>{{end}}
{{range .Drawn}}
<article class="anomaly" id="{{.ID}}">
<h4><a class="def" href="#{{.DefID}}" title="{{.Def}}">{{.Type}}</a>{{if .Plain}} ({{.Plain}}){{end}}{{if .Allowed}} <span class="allowed">(allowed by {{.Model}}; for information)</span>{{end}} <span class="muted">— {{.Checker}}, {{.Model}}, anomaly {{.N}}</span></h4>
<div class="figs">
<figure>
{{with .Graph}}<svg class="cycle" xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="{{.ViewBox}}" role="img" aria-label="{{.Label}}">
{{range .Edges}}<g class="edge {{.Class}}"><path d="{{.Path}}"/><polygon points="{{.Arrow}}"/></g>
{{end}}{{range .Nodes}}<g class="node {{.Class}}"><title>{{.Title}}</title><rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" rx="5"/>{{range .Lines}}<text class="{{.Class}}" x="{{.X}}" y="{{.Y}}">{{.Text}}</text>{{end}}</g>
{{end}}{{range .Edges}}<g class="label {{.Class}}"><title>{{.Why}}</title><rect x="{{.LabelX}}" y="{{.LabelY}}" width="{{.LabelW}}" height="{{.LabelH}}" rx="3"/><text x="{{.TextX}}" y="{{.TextY}}">{{.Label}}</text></g>
{{end}}</svg>{{end}}
<figcaption>{{.GraphCaption}}</figcaption>
</figure>
<div class="explain">
{{if .Explanation}}<pre>{{.Explanation}}</pre>{{end}}
{{if .Steps}}<ol class="steps">
{{range .Steps}}<li><b>{{.From}}</b> <span class="rel {{.Class}}">{{.Rel}}{{if .Key}} {{.Key}}{{end}}</span> <b>{{.To}}</b>{{if .Why}}: {{.Why}}{{end}}</li>
{{end}}</ol>{{end}}
<ul class="txns mono">
{{range .Txns}}<li>{{.}}</li>
{{end}}</ul>
</div>
</div>
{{with .Timeline}}{{$axisY := .AxisY}}<figure>
<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="{{.ViewBox}}" role="img" aria-label="{{.Caption}}">
{{range .TickLines}}<line class="grid" x1="{{.}}" y1="0" x2="{{.}}" y2="{{$axisY}}"/>{{end}}
{{range .Bars}}<g class="bar {{.Class}}"><title>{{.Title}}</title><text class="name" x="{{.Name.X}}" y="{{.Name.Y}}">{{.Name.Text}}</text>{{if .None}}<text x="{{.NoneX}}" y="{{.NoneY}}">(no interval)</text>{{else}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" rx="2"/>{{end}}</g>
{{end}}<line x1="{{.AxisX1}}" y1="{{.AxisY}}" x2="{{.AxisX2}}" y2="{{.AxisY}}"/>
{{range .Ticks}}<text class="tick" x="{{.X}}" y="{{.Y}}">{{.Text}}</text>{{end}}
</svg>
<figcaption>Timeline of the transactions involved: {{.Caption}}.</figcaption>
</figure>{{end}}
</article>
{{end}}
{{end}}
</section>
{{end}}
{{if .Defs}}
<div class="defs" id="definitions">
<h2>Anomaly definitions</h2>
<dl>
{{range .Defs}}<dt id="{{.ID}}"><b>{{.Type}}</b>{{if .Plain}} — {{.Plain}}{{end}}</dt><dd>{{.Def}}</dd>
{{end}}</dl>
<p class="muted">Which models prohibit each anomaly: docs/models.md in the txray repository.</p>
</div>
{{end}}
</body>
</html>
`
