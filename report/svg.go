package report

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// Geometry of the anomaly pictures. The layout is computed here in plain Go
// and rendered by html/template (html.go), which escapes every string; the
// structs below hold only numbers formatted by this file and text to escape.
//
// Cycles are small (2–20 transactions), so a circular layout suffices:
// nodes in cycle order clockwise from the top, so the cycle's edges run
// around the circle; edges are quadratic Bézier curves bent outwards, and
// several edges between one pair of nodes (a 2-cycle, or ww and rw between
// the same transactions) are spread on both sides of the chord so they never
// coincide. Labels are nudged away from node boxes and earlier labels.

const (
	nodeFont     = 12.0 // px, monospace
	nodeCharW    = 7.3  // px per character at nodeFont (DejaVu Sans Mono ≈ 0.6em)
	labelFont    = 11.0
	labelCharW   = 6.7
	nodeLineH    = 15.0
	nodePad      = 8.0
	maxOpLines   = 10 // op lines drawn per node; the rest are summarised
	maxLineChars = 44 // characters per drawn line; longer ones are cut with "…"
	maxLabelChar = 28
	arrowLen     = 10.0
	arrowHalfW   = 4.5
	margin       = 16.0
)

type pt struct{ X, Y float64 }

func (p pt) add(q pt) pt      { return pt{p.X + q.X, p.Y + q.Y} }
func (p pt) sub(q pt) pt      { return pt{p.X - q.X, p.Y - q.Y} }
func (p pt) mul(f float64) pt { return pt{p.X * f, p.Y * f} }
func (p pt) len() float64     { return math.Hypot(p.X, p.Y) }
func (p pt) unit() pt {
	l := p.len()
	if l == 0 {
		return pt{1, 0}
	}
	return p.mul(1 / l)
}
func (p pt) dot(q pt) float64 { return p.X*q.X + p.Y*q.Y }

type rect struct{ X, Y, W, H float64 }

func (r rect) overlaps(o rect) bool {
	return r.X < o.X+o.W && o.X < r.X+r.W && r.Y < o.Y+o.H && o.Y < r.Y+r.H
}

// svgText is one line of text at a position.
type svgText struct {
	X, Y  string
	Text  string
	Class string
}

// svgNode is a transaction box.
type svgNode struct {
	X, Y, W, H string
	Class      string // committed | aborted | unknown | missing
	Title      string // tooltip: the whole transaction
	Lines      []svgText
}

// svgEdge is one dependency edge with its label.
type svgEdge struct {
	Class  string // rel-ww, rel-wr, rel-rw, rel-process, rel-realtime, rel-other
	Path   string
	Arrow  string
	Why    string // tooltip
	LabelX string
	LabelY string
	LabelW string
	LabelH string
	TextX  string
	TextY  string
	Label  string

	bounds []pt // points the drawing reaches, for the view box
}

// svgGraph is one anomaly's picture.
type svgGraph struct {
	W, H, ViewBox string
	Label         string // aria-label
	Nodes         []svgNode
	Edges         []svgEdge
}

func f1(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// truncRunes cuts s to n runes, ending in "…" when cut.
func truncRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// nodeBox is a node during layout.
type nodeBox struct {
	txn    int32
	c      pt
	w, h   float64
	title  string
	full   string
	lines  []string
	hot    []bool // lines showing an op on a key the anomaly is about
	status string
}

func (n *nodeBox) rect() rect { return rect{n.c.X - n.w/2, n.c.Y - n.h/2, n.w, n.h} }

// newNode prepares the box for transaction t: its name, then one line per op
// (from the history when it has t, else the checker's Ops rendering).
func newNode(h *history.History, a *check.Anomaly, t int32) *nodeBox {
	n := &nodeBox{txn: t, title: txnName(h, t)}
	if s, ok := a.Ops[t]; ok {
		n.full = s
	} else if s, ok := txnString(h, t); ok {
		n.full = s
	}
	switch {
	case validTxn(h, t) && h.Keys != nil && h.Values != nil:
		tx := &h.Txns[t]
		n.status = tx.Status.String()
		if tx.Status != history.Committed {
			n.title += " " + tx.Status.String()
		}
		n.lines, n.hot = opLines(h, tx, anomalyKeySet(a))
	case n.full != "":
		n.status = "missing"
		n.lines = wrap(n.full, maxLineChars)
		if len(n.lines) > maxOpLines {
			n.lines = append(n.lines[:maxOpLines-1], "…")
		}
	default:
		n.status = "missing"
		n.lines = []string{"(not in the history)"}
	}
	if n.full == "" {
		n.full = n.title
	}
	n.title = truncRunes(n.title, maxLineChars)
	chars := utf8.RuneCountInString(n.title)
	for i, l := range n.lines {
		n.lines[i] = truncRunes(l, maxLineChars)
		if c := utf8.RuneCountInString(n.lines[i]); c > chars {
			chars = c
		}
	}
	n.w = float64(chars)*nodeCharW + 2*nodePad
	n.h = nodePad + nodeLineH*float64(1+len(n.lines)) + nodePad/2
	return n
}

// anomalyKeySet is the set of rendered keys an anomaly is about: its Key and
// the keys of its steps.
func anomalyKeySet(a *check.Anomaly) map[string]bool {
	ks := map[string]bool{}
	if a.Key != "" {
		ks[a.Key] = true
	}
	for _, s := range a.Cycle {
		if s.Key != "" {
			ks[s.Key] = true
		}
	}
	return ks
}

// opLines renders a transaction's ops for its box, marking ops on the
// anomaly's keys as hot. A transaction with more than maxOpLines ops shows
// its hot ops first choice, then the others in program order up to the cap,
// each prefixed by its op index (explanations cite "op 14"), and a last line
// counting the rest.
func opLines(h *history.History, tx *history.Txn, keys map[string]bool) ([]string, []bool) {
	isHot := func(o *history.Op) bool {
		if o.Kind == history.PredRead {
			p := tx.PredOf(o)
			return p != nil && keys[p.Table]
		}
		return keys[h.KeyName(o.Key)]
	}
	if len(tx.Ops) <= maxOpLines {
		lines := make([]string, len(tx.Ops))
		hot := make([]bool, len(tx.Ops))
		for i := range tx.Ops {
			lines[i] = h.OpString(tx, &tx.Ops[i])
			hot[i] = isHot(&tx.Ops[i])
		}
		return lines, hot
	}
	budget := maxOpLines - 1
	show := make([]bool, len(tx.Ops))
	for i := range tx.Ops {
		if budget > 0 && isHot(&tx.Ops[i]) {
			show[i] = true
			budget--
		}
	}
	for i := range tx.Ops {
		if budget > 0 && !show[i] {
			show[i] = true
			budget--
		}
	}
	var lines []string
	var hot []bool
	for i := range tx.Ops {
		if show[i] {
			lines = append(lines, strconv.Itoa(i)+": "+h.OpString(tx, &tx.Ops[i]))
			hot = append(hot, isHot(&tx.Ops[i]))
		}
	}
	lines = append(lines, "… "+strconv.Itoa(len(tx.Ops)-(maxOpLines-1))+" more ops")
	return lines, append(hot, false)
}

// relClass maps a step relation to a CSS class.
func relClass(rel string) string {
	switch rel {
	case "ww", "wr", "rw", "process", "realtime":
		return "rel-" + rel
	}
	return "rel-other"
}

// layoutGraph lays out anomaly a: the transactions of its cycle (in cycle
// order) and any other involved ones as nodes, its steps as edges.
func layoutGraph(h *history.History, a *check.Anomaly) *svgGraph {
	order := involved(a)
	idx := make(map[int32]int, len(order))
	nodes := make([]*nodeBox, len(order))
	for i, t := range order {
		idx[t] = i
		nodes[i] = newNode(h, a, t)
	}
	if len(a.Cycle) == 0 {
		placeRow(nodes)
	} else {
		placeNodes(nodes)
	}

	var occupied []rect
	for _, n := range nodes {
		occupied = append(occupied, n.rect())
	}
	centroid := pt{}
	for _, n := range nodes {
		centroid = centroid.add(n.c)
	}
	if len(nodes) > 0 {
		centroid = centroid.mul(1 / float64(len(nodes)))
	}

	// Group edges by unordered node pair so parallel edges fan out.
	type pair struct{ a, b int }
	groups := map[pair][]int{}
	for i, s := range a.Cycle {
		p := pair{idx[s.From], idx[s.To]}
		if p.a > p.b {
			p.a, p.b = p.b, p.a
		}
		groups[p] = append(groups[p], i)
	}
	edges := make([]svgEdge, len(a.Cycle))
	labels := make([]rect, 0, len(a.Cycle))
	var labelBoxes []rect
	for i, s := range a.Cycle {
		p := pair{idx[s.From], idx[s.To]}
		if p.a > p.b {
			p.a, p.b = p.b, p.a
		}
		g := groups[p]
		j := sort.SearchInts(g, i)
		from, to := nodes[idx[s.From]], nodes[idx[s.To]]
		e := svgEdge{Class: relClass(s.Rel), Why: s.Why}
		label := strconv.Itoa(i+1) + ": " + s.Rel
		if s.Key != "" {
			label += " " + s.Key
			if v := edgeValues(h, s); v != "" {
				label += ": " + v
			}
		}
		e.Label = truncRunes(label, maxLabelChar)
		lw := float64(utf8.RuneCountInString(e.Label))*labelCharW + 8
		lh := labelFont + 5
		var mid, away pt
		if p.a == p.b {
			mid, away = selfLoop(&e, from, from.c.sub(centroid), j)
		} else {
			pa, pb := nodes[p.a].c, nodes[p.b].c
			chord := pb.sub(pa)
			nrm := pt{-chord.Y, chord.X}.unit()
			var off float64
			if len(g) == 1 {
				if len(nodes) > 2 {
					off = 0.18 * chord.len()
					if nrm.dot(pa.add(pb).mul(0.5).sub(centroid)) < 0 {
						off = -off
					}
				}
			} else {
				off = (float64(j) - float64(len(g)-1)/2) * 56
			}
			ctrl := pa.add(pb).mul(0.5).add(nrm.mul(2 * off))
			mid = curveEdge(&e, from, to, ctrl)
			away = nrm
			if off < 0 {
				away = nrm.mul(-1)
			}
		}
		lr := placeLabel(mid, away, lw, lh, occupied, labelBoxes)
		labelBoxes = append(labelBoxes, lr)
		labels = append(labels, lr)
		e.LabelX, e.LabelY, e.LabelW, e.LabelH = f1(lr.X), f1(lr.Y), f1(lr.W), f1(lr.H)
		e.TextX, e.TextY = f1(lr.X+4), f1(lr.Y+lr.H-4.5)
		edges[i] = e
	}

	// Bounding box of everything drawn.
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	grow := func(r rect) {
		minX, minY = math.Min(minX, r.X), math.Min(minY, r.Y)
		maxX, maxY = math.Max(maxX, r.X+r.W), math.Max(maxY, r.Y+r.H)
	}
	for _, r := range occupied {
		grow(r)
	}
	for _, r := range labels {
		grow(r)
	}
	for i := range edges {
		for _, q := range edges[i].bounds {
			grow(rect{q.X, q.Y, 0, 0})
		}
	}
	if math.IsInf(minX, 0) {
		minX, minY, maxX, maxY = 0, 0, 100, 40
	}
	minX, minY, maxX, maxY = minX-margin, minY-margin, maxX+margin, maxY+margin
	g := &svgGraph{
		W: f1(maxX - minX), H: f1(maxY - minY),
		ViewBox: f1(minX) + " " + f1(minY) + " " + f1(maxX-minX) + " " + f1(maxY-minY),
		Label:   a.Type + " among " + strconv.Itoa(len(nodes)) + " transactions",
		Edges:   edges,
	}
	for _, n := range nodes {
		r := n.rect()
		sn := svgNode{X: f1(r.X), Y: f1(r.Y), W: f1(r.W), H: f1(r.H), Class: n.status, Title: n.full}
		y := r.Y + nodePad + nodeFont
		sn.Lines = append(sn.Lines, svgText{X: f1(r.X + nodePad), Y: f1(y), Text: n.title, Class: "name"})
		for i, l := range n.lines {
			y += nodeLineH
			class := "op"
			if i < len(n.hot) && n.hot[i] {
				class = "op hot"
			}
			sn.Lines = append(sn.Lines, svgText{X: f1(r.X + nodePad), Y: f1(y), Text: l, Class: class})
		}
		g.Nodes = append(g.Nodes, sn)
	}
	return g
}

// edgeValues renders the versions behind a ww, wr or rw step on its key, read
// off the two transactions' ops in the history (Adya's dependency
// definitions): ww "a→b" — From installed version a (its last write of the
// key) and To's write b (its first) came next; wr "a" — To read From's
// version a (the value, or for a list the element From appended that ends
// the list To read); rw "a→b" — From read version a (the value, or the last
// element of the list, "[]" when empty) and To's write b (its first)
// replaced it. It returns "" when the ops do not show the values (no such
// ops, an unknown read, or a hand-built history without interners), so a
// label never shows a value the history does not contain.
func edgeValues(h *history.History, s check.Step) string {
	if !validTxn(h, s.From) || !validTxn(h, s.To) || h.Keys == nil || h.Values == nil {
		return ""
	}
	from, to := &h.Txns[s.From], &h.Txns[s.To]
	onKey := func(o *history.Op) bool {
		return o.Kind != history.PredRead && h.KeyName(o.Key) == s.Key
	}
	isWrite := func(o *history.Op) bool { return o.Kind.IsWrite() || o.Kind == history.Append }
	writes := func(t *history.Txn) []int32 {
		var ws []int32
		for i := range t.Ops {
			if o := &t.Ops[i]; onKey(o) && isWrite(o) && o.Value != history.NoValue {
				ws = append(ws, o.Value)
			}
		}
		return ws
	}
	// readVersion is the version a read returned: the register value, or
	// the last element of the list ("[]" for the empty list).
	readVersion := func(t *history.Txn, o *history.Op) (string, int32, bool) {
		l := t.ListOf(o)
		switch {
		case o.IsList && o.ListUnknown:
			return "", 0, false
		case o.IsList && len(l) == 0:
			return "[]", history.NoValue, true
		case o.IsList:
			v := l[len(l)-1]
			return h.ValueName(v), v, true
		}
		return h.ValueName(o.Value), o.Value, true
	}
	fw, tw := writes(from), writes(to)
	switch s.Rel {
	case "ww":
		if len(fw) > 0 && len(tw) > 0 {
			return h.ValueName(fw[len(fw)-1]) + "→" + h.ValueName(tw[0])
		}
	case "wr":
		for i := range to.Ops {
			o := &to.Ops[i]
			if !onKey(o) || o.Kind != history.Read {
				continue
			}
			if txt, v, ok := readVersion(to, o); ok && v != history.NoValue {
				for _, w := range fw {
					if w == v {
						return txt
					}
				}
			}
		}
	case "rw":
		if len(tw) == 0 {
			return ""
		}
		for i := range from.Ops {
			o := &from.Ops[i]
			if onKey(o) && isWrite(o) {
				break // a read after From's own write shows its own version
			}
			if onKey(o) && o.Kind == history.Read {
				if txt, _, ok := readVersion(from, o); ok {
					return txt + "→" + h.ValueName(tw[0])
				}
				return ""
			}
		}
	}
	return ""
}

// placeNodes puts nodes on a circle (clockwise from the top), two nodes side
// by side, one in the middle; the radius keeps neighbouring boxes apart.
func placeNodes(nodes []*nodeBox) {
	n := len(nodes)
	switch n {
	case 0:
		return
	case 1:
		nodes[0].c = pt{}
		return
	case 2:
		gap := 150.0
		nodes[0].c = pt{-(nodes[0].w/2 + gap/2), 0}
		nodes[1].c = pt{nodes[1].w/2 + gap/2, 0}
		return
	}
	var maxDiag float64
	for _, b := range nodes {
		maxDiag = math.Max(maxDiag, math.Hypot(b.w, b.h))
	}
	r := (maxDiag + 70) / (2 * math.Sin(math.Pi/float64(n)))
	r = math.Max(r, 130)
	for i, b := range nodes {
		th := -math.Pi/2 + 2*math.Pi*float64(i)/float64(n)
		// Stretch horizontally: boxes are wider than tall.
		b.c = pt{r * 1.25 * math.Cos(th), r * math.Sin(th)}
	}
}

// placeRow lines up the transactions of an anomaly without edges (no
// cycle to go around) left to right, top-aligned, wrapping into rows of at
// most rowWidth.
func placeRow(nodes []*nodeBox) {
	const gap, rowWidth = 24.0, 640.0
	x, y, rowH := 0.0, 0.0, 0.0
	for _, b := range nodes {
		if x > 0 && x+b.w > rowWidth {
			x, y, rowH = 0, y+rowH+gap, 0
		}
		b.c = pt{x + b.w/2, y + b.h/2}
		x += b.w + gap
		rowH = math.Max(rowH, b.h)
	}
}

// boxExit is where the ray from b's centre towards p leaves b's box (plus a
// small gap).
func boxExit(b *nodeBox, p pt) pt {
	d := p.sub(b.c)
	if d.len() == 0 {
		d = pt{1, 0}
	}
	hw, hh := b.w/2+3, b.h/2+3
	t := math.Inf(1)
	if d.X != 0 {
		t = math.Min(t, hw/math.Abs(d.X))
	}
	if d.Y != 0 {
		t = math.Min(t, hh/math.Abs(d.Y))
	}
	return b.c.add(d.mul(t))
}

// curveEdge draws a quadratic edge from box a to box b bent towards ctrl,
// ending in an arrowhead at b's border; it returns the curve's midpoint.
func curveEdge(e *svgEdge, a, b *nodeBox, ctrl pt) pt {
	s := boxExit(a, ctrl)
	t := boxExit(b, ctrl)
	dir := t.sub(ctrl).unit()
	if ctrl.sub(t).len() < 1 {
		dir = t.sub(s).unit()
	}
	base := t.sub(dir.mul(arrowLen))
	e.Path = "M" + f1(s.X) + " " + f1(s.Y) + " Q" + f1(ctrl.X) + " " + f1(ctrl.Y) + " " + f1(base.X) + " " + f1(base.Y)
	e.Arrow = arrowHead(t, dir)
	e.bounds = []pt{s, t, s.mul(0.25).add(ctrl.mul(0.5)).add(t.mul(0.25))}
	return s.mul(0.25).add(ctrl.mul(0.5)).add(t.mul(0.25))
}

// selfLoop draws an edge from a box to itself as a loop on the box's side
// facing away from the centroid (the k-th loop further out, a little
// wider); it returns the loop's apex and its outward direction.
func selfLoop(e *svgEdge, b *nodeBox, out pt, k int) (pt, pt) {
	if out.len() < 1 {
		out = pt{0, -1}
	}
	out = out.unit()
	anchor := boxExit(b, b.c.add(out.mul(1e4)))
	perp := pt{-out.Y, out.X}
	hgt := 36 + 22*float64(k)
	spread := 12 + 4*float64(k)
	s := anchor.add(perp.mul(spread))
	t := anchor.sub(perp.mul(spread))
	c1 := s.add(out.mul(hgt)).add(perp.mul(18))
	c2 := t.add(out.mul(hgt)).sub(perp.mul(18))
	dir := t.sub(c2).unit()
	base := t.sub(dir.mul(arrowLen))
	e.Path = "M" + f1(s.X) + " " + f1(s.Y) + " C" + f1(c1.X) + " " + f1(c1.Y) + " " + f1(c2.X) + " " + f1(c2.Y) + " " + f1(base.X) + " " + f1(base.Y)
	e.Arrow = arrowHead(t, dir)
	apex := anchor.add(out.mul(0.75*hgt + 14))
	e.bounds = []pt{s, t, apex, s.add(out.mul(hgt)), t.add(out.mul(hgt))}
	return apex, out
}

func arrowHead(tip, dir pt) string {
	base := tip.sub(dir.mul(arrowLen))
	nrm := pt{-dir.Y, dir.X}.mul(arrowHalfW)
	l, r := base.add(nrm), base.sub(nrm)
	return f1(tip.X) + "," + f1(tip.Y) + " " + f1(l.X) + "," + f1(l.Y) + " " + f1(r.X) + "," + f1(r.Y)
}

// placeLabel centres a w×h label on at, then moves it along away until it
// overlaps neither a node box nor an earlier label (giving up after a
// bounded number of steps: a crowded picture stays readable via tooltips
// and the numbered step list next to it).
func placeLabel(at, away pt, w, h float64, nodes, labels []rect) rect {
	away = away.unit()
	r := rect{at.X - w/2, at.Y - h/2, w, h}
	for step := 0; step < 40; step++ {
		clear := true
		for _, o := range nodes {
			if r.overlaps(o) {
				clear = false
				break
			}
		}
		if clear {
			for _, o := range labels {
				if r.overlaps(o) {
					clear = false
					break
				}
			}
		}
		if clear {
			return r
		}
		c := at.add(away.mul(float64(step+1) * 6))
		r = rect{c.X - w/2, c.Y - h/2, w, h}
	}
	return r
}

// --- timeline ---------------------------------------------------------

// svgBar is one transaction's row in a timeline.
type svgBar struct {
	Name         svgText
	X, Y, W, H   string
	Point        bool   // a single instant (drawn as a tick)
	Class        string // committed | aborted | unknown
	Title        string
	None         bool // the transaction has no interval of this kind
	NoneX, NoneY string
}

// svgTimeline is a timeline of an anomaly's transactions.
type svgTimeline struct {
	W, H, ViewBox string
	Caption       string
	AxisY         string
	AxisX1        string
	AxisX2        string
	Ticks         []svgText
	TickLines     []string // x positions
	Bars          []svgBar
}

const (
	tlNameW = 190.0
	// tlNameChars fit in tlNameW at the monospace width used for nodes.
	tlNameChars = 23 // ≈ (tlNameW - 16) / nodeCharW
	tlAxisW     = 560.0
	tlRowH      = 22.0
)

// dbTimeCheckers judge database start/commit timestamps (Chronos, Aion):
// their anomalies are drawn against those timestamps, the evidence they
// argue from, even when client intervals are recorded too.
var dbTimeCheckers = map[string]bool{"chronos": true, "aion": true}

// layoutTimelineFor is layoutTimeline for an anomaly reported by checker:
// a timestamp checker's anomaly is drawn on database timestamps when any
// involved transaction has them.
func layoutTimelineFor(h *history.History, a *check.Anomaly, checker string) *svgTimeline {
	return layoutTimelineMode(h, a, dbTimeCheckers[checker])
}

// layoutTimeline draws the anomaly's transactions against time: client
// intervals (Txn.Invoke..Complete) when any involved transaction has them,
// else database timestamps (StartTS..CommitTS). It returns nil when there is
// no time information at all. Hybrid-logical-clock pairs are drawn by rank
// (order only), plain integers to scale.
func layoutTimeline(h *history.History, a *check.Anomaly) *svgTimeline {
	return layoutTimelineMode(h, a, false)
}

func layoutTimelineMode(h *history.History, a *check.Anomaly, preferDB bool) *svgTimeline {
	if h == nil {
		return nil
	}
	var txns []int32
	for _, t := range involved(a) {
		if validTxn(h, t) {
			txns = append(txns, t)
		}
	}
	type iv struct {
		t         int32
		lo, hi    float64
		ok, point bool
	}
	mode := ""
	for _, t := range txns {
		if h.Txns[t].HasTime && !preferDB {
			mode = "client"
			break
		}
	}
	if mode == "" {
		for _, t := range txns {
			if h.Txns[t].StartTS.Set || h.Txns[t].CommitTS.Set {
				mode = "db"
				break
			}
		}
	}
	if mode == "" && preferDB {
		for _, t := range txns {
			if h.Txns[t].HasTime {
				mode = "client"
				break
			}
		}
	}
	if mode == "" {
		return nil
	}
	ivs := make([]iv, len(txns))
	caption := "client time (invoke → complete)"
	if mode == "client" {
		for i, t := range txns {
			x := &h.Txns[t]
			ivs[i] = iv{t: t, ok: x.HasTime}
			if x.HasTime {
				lo, hi := x.Invoke, x.Complete
				if hi < lo {
					lo, hi = hi, lo
				}
				ivs[i].lo, ivs[i].hi, ivs[i].point = float64(lo), float64(hi), lo == hi
			}
		}
	} else {
		caption = "database timestamps (start → commit)"
		hlc := false
		var all []history.Timestamp
		for _, t := range txns {
			x := &h.Txns[t]
			for _, ts := range []history.Timestamp{x.StartTS, x.CommitTS} {
				if ts.Set {
					all = append(all, ts)
					hlc = hlc || ts.L != 0
				}
			}
		}
		pos := func(ts history.Timestamp) float64 { return float64(ts.P) }
		if hlc {
			caption = "database timestamps (start → commit), by rank: hybrid clocks are drawn in order, not to scale"
			sort.Slice(all, func(i, j int) bool { return all[i].Less(all[j]) })
			pos = func(ts history.Timestamp) float64 {
				return float64(sort.Search(len(all), func(i int) bool { return !all[i].Less(ts) }))
			}
		}
		for i, t := range txns {
			x := &h.Txns[t]
			ivs[i] = iv{t: t}
			switch {
			case x.StartTS.Set && x.CommitTS.Set:
				lo, hi := pos(x.StartTS), pos(x.CommitTS)
				if hi < lo {
					lo, hi = hi, lo
				}
				ivs[i] = iv{t, lo, hi, true, lo == hi}
			case x.StartTS.Set:
				p := pos(x.StartTS)
				ivs[i] = iv{t, p, p, true, true}
			case x.CommitTS.Set:
				p := pos(x.CommitTS)
				ivs[i] = iv{t, p, p, true, true}
			}
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range ivs {
		if v.ok {
			lo, hi = math.Min(lo, v.lo), math.Max(hi, v.hi)
		}
	}
	if math.IsInf(lo, 0) || hi <= lo {
		// No times, or every time the same instant (e.g. zeros): a
		// timeline would show nothing.
		return nil
	}
	span := hi - lo
	if span <= 0 {
		span = 1
	}
	x := func(v float64) float64 { return tlNameW + (v-lo)/span*tlAxisW }
	// Rows in order of start, transactions without an interval last.
	sort.SliceStable(ivs, func(i, j int) bool {
		if ivs[i].ok != ivs[j].ok {
			return ivs[i].ok
		}
		return ivs[i].lo < ivs[j].lo
	})
	if mode == "client" {
		caption += ", time from the first invocation shown (" + exactMin(h, txns, mode) + " ns on the history's clock)"
	}
	tl := &svgTimeline{Caption: caption}
	for r, v := range ivs {
		y := 8 + float64(r)*tlRowH
		t := &h.Txns[v.t]
		b := svgBar{
			Name:  svgText{X: f1(tlNameW - 8), Y: f1(y + 12), Text: truncRunes(h.TxnName(v.t), tlNameChars)},
			Class: t.Status.String(),
			Title: h.TxnName(v.t),
			H:     f1(tlRowH - 8), Y: f1(y + 1),
		}
		switch {
		case !v.ok:
			b.None, b.NoneX, b.NoneY = true, f1(tlNameW), f1(y+12)
		case v.point:
			b.Point, b.X, b.W = true, f1(x(v.lo)-2), "4"
		default:
			w := math.Max(x(v.hi)-x(v.lo), 2)
			b.X, b.W = f1(x(v.lo)), f1(w)
		}
		if full, ok := txnString(h, v.t); ok {
			b.Title = full
		}
		b.Title += timeRange(mode, t)
		tl.Bars = append(tl.Bars, b)
	}
	axisY := 8 + float64(len(ivs))*tlRowH + 4
	tl.AxisY, tl.AxisX1, tl.AxisX2 = f1(axisY), f1(tlNameW), f1(tlNameW+tlAxisW)
	for i := 0; i <= 4; i++ {
		v := lo + span*float64(i)/4
		tx := x(v)
		tl.TickLines = append(tl.TickLines, f1(tx))
		label := "+" + siNumber(v-lo)
		if mode == "client" {
			// Client times are nanoseconds (history.Txn.Invoke): ticks
			// are offsets from the earliest invocation, in human units;
			// the exact origin is in the caption and tooltips.
			label = "+" + humanNanos(v-lo)
			if i == 0 {
				label = "0"
			}
		} else if i == 0 {
			label = exactMin(h, txns, mode)
		}
		if mode == "db" && strings.Contains(caption, "rank") {
			label = "#" + strconv.Itoa(int(math.Round(v)))
		}
		tl.Ticks = append(tl.Ticks, svgText{X: f1(tx), Y: f1(axisY + 16), Text: label})
	}
	w, hh := tlNameW+tlAxisW+40, axisY+26
	tl.W, tl.H, tl.ViewBox = f1(w), f1(hh), "0 0 "+f1(w)+" "+f1(hh)
	return tl
}

// exactMin renders the earliest time of the timeline exactly: float64
// cannot hold a 64-bit timestamp (TiDB TSOs, nanosecond clocks).
func exactMin(h *history.History, txns []int32, mode string) string {
	var m int64
	found := false
	take := func(v int64) {
		if !found || v < m {
			m, found = v, true
		}
	}
	for _, t := range txns {
		x := &h.Txns[t]
		if mode == "client" {
			if x.HasTime {
				take(min(x.Invoke, x.Complete))
			}
			continue
		}
		for _, ts := range []history.Timestamp{x.StartTS, x.CommitTS} {
			if ts.Set {
				take(ts.P)
			}
		}
	}
	return strconv.FormatInt(m, 10)
}

// timeRange renders a transaction's interval for a tooltip.
func timeRange(mode string, t *history.Txn) string {
	if mode == "client" {
		if !t.HasTime {
			return "\nno client interval"
		}
		return "\ninvoke " + strconv.FormatInt(t.Invoke, 10) + ", complete " + strconv.FormatInt(t.Complete, 10)
	}
	return "\nstart_ts " + t.StartTS.String() + ", commit_ts " + t.CommitTS.String()
}

// siNumber renders v compactly (1234567 → "1.23M"); the unit is the
// history's own, so no unit is printed.
func siNumber(v float64) string {
	a := math.Abs(v)
	for _, s := range []struct {
		f float64
		p string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if a >= s.f {
			return strconv.FormatFloat(v/s.f, 'g', 3, 64) + s.p
		}
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// humanNanos renders a span of nanoseconds with a unit: 850ns, 12.5µs,
// 3.2ms, 1.25s, 2.5min.
func humanNanos(v float64) string {
	a := math.Abs(v)
	for _, u := range []struct {
		f float64
		s string
	}{{60e9, "min"}, {1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}} {
		if a >= u.f {
			return strconv.FormatFloat(v/u.f, 'g', 3, 64) + u.s
		}
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + "ns"
}
