package report

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txray/txray/check"
	_ "github.com/txray/txray/check/chronos" // "chronos"
	_ "github.com/txray/txray/check/elle"    // "list-append", "rw-register"
	_ "github.com/txray/txray/check/leopard" // "leopard"
	"github.com/txray/txray/internal/testenv"
	"github.com/txray/txray/sim"
)

// TestBrowserRendersSimReports renders, in headless Chromium, the report of
// real checker results on simulated faulty histories — list-append, chronos
// and leopard on a snapshot-isolation history with lost updates, rw-register
// on a register one — and checks that the page logs no problem, that every
// drawn anomaly has its diagram, and that cycle edges are labelled with
// relation, key and versions. The screenshot is kept next to the other
// browser artifacts (report-browser-sim).
func TestBrowserRendersSimReports(t *testing.T) {
	bin := chromiumPath()
	if bin == "" {
		testenv.Missing(t, "headless Chromium not found (/usr/bin/chromium); install it with: apt-get update && apt-get install -y chromium")
	}
	gen := func(wl string, txns, keys int, seed uint64) *Input {
		cfg := sim.DefaultConfig()
		cfg.Level, cfg.Workload, cfg.Txns, cfg.Keys, cfg.Seed = sim.SnapshotIsolation, wl, txns, keys, seed
		cfg.Faults = []sim.Fault{{Name: sim.FaultLostUpdate, Prob: 0.3}}
		h, _, err := sim.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return &Input{File: wl + ".jsonl", History: h}
	}
	run := func(in *Input, checker, m string) {
		c, ok := check.Lookup(checker)
		if !ok {
			t.Fatalf("checker %s not registered", checker)
		}
		r, err := c.Check(context.Background(), in.History, check.Options{Model: m, MaxAnomalies: 4})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != check.Invalid {
			t.Fatalf("%s on %s: want invalid, got %s", checker, in.File, r.Verdict)
		}
		in.Results = append(in.Results, r)
	}
	la := gen(sim.ListAppend, 200, 8, 3)
	run(la, "list-append", "snapshot-isolation")
	run(la, "chronos", "snapshot-isolation")
	run(la, "leopard", "postgres:repeatable-read")
	// Register lost updates are visible to rw-register only when both
	// writers read the version they overwrite: take the first seed where
	// that happens.
	var rw *Input
	for seed := uint64(1); rw == nil && seed < 50; seed++ {
		in := gen(sim.RWRegister, 300, 4, seed)
		c, _ := check.Lookup("rw-register")
		if r, err := c.Check(context.Background(), in.History, check.Options{Model: "snapshot-isolation", MaxAnomalies: 4}); err == nil && r.Verdict == check.Invalid {
			in.Results = append(in.Results, r)
			rw = in
		}
	}
	if rw == nil {
		t.Fatal("no rw-register lost update visible in 50 seeds")
	}
	ins := []*Input{la, rw}
	want := 0
	for _, in := range ins {
		n := 0
		for _, r := range in.Results {
			n += len(r.Anomalies)
		}
		want += min(n, MaxDrawn)
	}

	dir := filepath.Join(filepath.Dir(artifactDir(t)), "report-browser-sim")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	page, err := WriteHTML(dir, ins)
	if err != nil {
		t.Fatal(err)
	}
	page, _ = filepath.Abs(page)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := startBrowser(ctx, t, bin)
	from := b.open(ctx, t, page)
	if p := b.c.problems(from); len(p) > 0 {
		t.Errorf("report.html logged problems:\n%s", strings.Join(p, "\n"))
	}
	var got struct {
		Articles, WithDiagram, WithTimeline int
		Labels                              []string
	}
	b.eval(ctx, t, `(() => {
  const arts = [...document.querySelectorAll('article.anomaly')];
  return {
    Articles: arts.length,
    WithDiagram: arts.filter(a => { const s = a.querySelector('svg.cycle'); return s && s.getBoundingClientRect().width > 50; }).length,
    WithTimeline: arts.filter(a => a.querySelector('svg.timeline')).length,
    Labels: [...document.querySelectorAll('svg.cycle g.label text')].map(t => t.textContent),
  };
})()`, &got)
	if got.Articles != want || got.WithDiagram != want || got.WithTimeline != want {
		t.Errorf("%d anomalies drawn, %d with a painted diagram, %d with a timeline; want %d each", got.Articles, got.WithDiagram, got.WithTimeline, want)
	}
	valued := 0
	for _, l := range got.Labels {
		// "N: rel key: versions", e.g. "3: ww 4: 42→54"
		if f := strings.SplitN(l, ": ", 3); len(f) == 3 && strings.Contains(f[1], " ") {
			valued++
		}
	}
	if len(got.Labels) == 0 || valued == 0 {
		t.Errorf("cycle edge labels %q: none shows key and versions", got.Labels)
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := b.c.call(ctx, b.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &shot); err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || len(png) == 0 {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "screenshot.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d anomalies drawn, %d of %d edge labels with versions; artifacts in %s", got.Articles, valued, len(got.Labels), dir)
}
