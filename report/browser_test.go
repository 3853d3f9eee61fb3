package report

// End-to-end test (issue 7 item 5): render report.html in headless Chromium,
// driven over the Chrome DevTools Protocol on --remote-debugging-pipe (no
// npm, no puppeteer), and check that the anomaly diagrams are laid out and
// painted, that the page logs no console error, exception or failed load,
// and keep a screenshot. The test skips when Chromium is not installed
// (Debian: apt-get install -y chromium).
//
// Artifacts (report.html, report.json, dom.html, screenshot.png) go to
// $TXRAY_ARTIFACTS/report-browser, or $TMPDIR/txray-artifacts/report-browser.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txray/txray/internal/testenv"
)

func chromiumPath() string {
	if p := os.Getenv("TXRAY_CHROMIUM"); p != "" {
		return p
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

func artifactDir(t *testing.T) string {
	base := os.Getenv("TXRAY_ARTIFACTS")
	if base == "" {
		base = filepath.Join(os.TempDir(), "txray-artifacts")
	}
	dir := filepath.Join(base, "report-browser")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// cdp is a minimal DevTools Protocol client over the pipe transport:
// NUL-separated JSON messages, commands on the browser's fd 3, replies and
// events from its fd 4.
type cdp struct {
	w       io.Writer
	mu      sync.Mutex
	nextID  int
	replies map[int]chan cdpMsg
	events  []cdpMsg
	evCond  *sync.Cond
	closed  bool
}

type cdpMsg struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func newCDP(w io.Writer, r io.Reader) *cdp {
	c := &cdp{w: w, replies: map[int]chan cdpMsg{}}
	c.evCond = sync.NewCond(&c.mu)
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			b, err := br.ReadBytes(0)
			if len(b) > 1 {
				var m cdpMsg
				if json.Unmarshal(b[:len(b)-1], &m) == nil {
					c.mu.Lock()
					if m.ID != 0 {
						if ch, ok := c.replies[m.ID]; ok {
							ch <- m
							delete(c.replies, m.ID)
						}
					} else {
						c.events = append(c.events, m)
						c.evCond.Broadcast()
					}
					c.mu.Unlock()
				}
			}
			if err != nil {
				c.mu.Lock()
				c.closed = true
				for id, ch := range c.replies {
					close(ch)
					delete(c.replies, id)
				}
				c.evCond.Broadcast()
				c.mu.Unlock()
				return
			}
		}
	}()
	return c
}

func (c *cdp) call(ctx context.Context, session, method string, params any, out any) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errors.New("browser pipe closed")
	}
	c.nextID++
	id := c.nextID
	ch := make(chan cdpMsg, 1)
	c.replies[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := c.w.Write(append(b, 0)); err != nil {
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: browser pipe closed", method)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// waitEvent waits for an event named method (after index from) and returns
// the index after it.
func (c *cdp) waitEvent(ctx context.Context, method string, from int) (int, error) {
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.evCond.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for i := from; i < len(c.events); i++ {
			if c.events[i].Method == method {
				return i + 1, nil
			}
		}
		from = len(c.events)
		if c.closed {
			return 0, errors.New("browser pipe closed while waiting for " + method)
		}
		if ctx.Err() != nil {
			return 0, fmt.Errorf("waiting for %s: %w", method, ctx.Err())
		}
		c.evCond.Wait()
	}
}

func (c *cdp) eventCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.events)
}

// problems returns console errors/warnings, uncaught exceptions and log
// errors (failed loads, CSP violations) among events[from:].
func (c *cdp) problems(from int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, e := range c.events[from:] {
		switch e.Method {
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string `json:"type"`
				Args []struct {
					Value       any    `json:"value"`
					Description string `json:"description"`
				} `json:"args"`
			}
			_ = json.Unmarshal(e.Params, &p)
			if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
				var parts []string
				for _, a := range p.Args {
					parts = append(parts, fmt.Sprint(a.Value, a.Description))
				}
				out = append(out, "console."+p.Type+": "+strings.Join(parts, " "))
			}
		case "Runtime.exceptionThrown":
			out = append(out, "exception: "+string(e.Params))
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level  string `json:"level"`
					Source string `json:"source"`
					Text   string `json:"text"`
					URL    string `json:"url"`
				} `json:"entry"`
			}
			_ = json.Unmarshal(e.Params, &p)
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				out = append(out, "log "+p.Entry.Level+" ("+p.Entry.Source+"): "+p.Entry.Text+" "+p.Entry.URL)
			}
		}
	}
	return out
}

type browser struct {
	cmd     *exec.Cmd
	c       *cdp
	session string
	stderr  *bytes.Buffer
}

func startBrowser(ctx context.Context, t *testing.T, bin string) *browser {
	t.Helper()
	profile := t.TempDir()
	toBrowserR, toBrowserW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromBrowserR, fromBrowserW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
		"--user-data-dir="+profile, "--remote-debugging-pipe", "--window-size=1280,900",
		"about:blank")
	cmd.ExtraFiles = []*os.File{toBrowserR, fromBrowserW} // fd 3, fd 4
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	toBrowserR.Close()
	fromBrowserW.Close()
	b := &browser{cmd: cmd, c: newCDP(toBrowserW, fromBrowserR), stderr: &stderr}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = b.c.call(cctx, "", "Browser.close", nil, nil)
		cancel()
		toBrowserW.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		fromBrowserR.Close()
	})
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		t.Fatalf("%v\nchromium stderr:\n%s", err, stderr.String())
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		t.Fatal(err)
	}
	b.session = att.SessionID
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable"} {
		if err := b.c.call(ctx, b.session, m, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.c.call(ctx, b.session, "Emulation.setDeviceMetricsOverride",
		map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		t.Fatal(err)
	}
	return b
}

// open navigates to path and waits for the load event; it returns the
// event index from which this page's problems are counted.
func (b *browser) open(ctx context.Context, t *testing.T, path string) int {
	t.Helper()
	from := b.c.eventCount()
	u := url.URL{Scheme: "file", Path: path}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := b.c.call(ctx, b.session, "Page.navigate", map[string]any{"url": u.String()}, &nav); err != nil {
		t.Fatal(err)
	}
	if nav.ErrorText != "" {
		t.Fatalf("navigate %s: %s", path, nav.ErrorText)
	}
	if _, err := b.c.waitEvent(ctx, "Page.loadEventFired", from); err != nil {
		t.Fatal(err)
	}
	// Let late console messages and log entries arrive.
	time.Sleep(300 * time.Millisecond)
	return from
}

func (b *browser) eval(ctx context.Context, t *testing.T, expr string, out any) {
	t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if err := b.c.call(ctx, b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.ExceptionDetails) > 0 {
		t.Fatalf("evaluate: %s", r.ExceptionDetails)
	}
	if err := json.Unmarshal(r.Result.Value, out); err != nil {
		t.Fatalf("evaluate result %s: %v", r.Result.Value, err)
	}
}

// layoutJS measures every cycle diagram as painted: its size, its edges'
// lengths, and for each node box how far its text overflows the box.
const layoutJS = `(() => {
  const svgs = [...document.querySelectorAll('svg.cycle')];
  return svgs.map(s => {
    const r = s.getBoundingClientRect();
    const nodes = [...s.querySelectorAll('g.node')].map(g => {
      const box = g.querySelector('rect').getBBox();
      let overflow = 0;
      for (const t of g.querySelectorAll('text')) {
        const b = t.getBBox();
        overflow = Math.max(overflow, (b.x + b.width) - (box.x + box.width), box.x - b.x);
      }
      return overflow;
    });
    const edges = [...s.querySelectorAll('g.edge path')].map(p => p.getTotalLength());
    const visible = getComputedStyle(s).display !== 'none' && r.width > 0;
    return {w: r.width, h: r.height, visible, overflow: nodes, edges};
  });
})()`

func TestBrowserRendersReport(t *testing.T) {
	bin := chromiumPath()
	if bin == "" {
		testenv.Missing(t, "headless Chromium not found (/usr/bin/chromium); install it with: apt-get update && apt-get install -y chromium")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := artifactDir(t)

	// The report under test: an invalid history (2-cycle, 3-cycle, G1a),
	// hostile strings, and a valid one.
	in := invalidInput()
	big := bigCycle(0, int32(len(in.History.Txns)))
	in.Results[0].Anomalies = append(in.Results[0].Anomalies, big)
	ins := []*Input{in, hostileInput(), validInput()}
	page, err := WriteHTML(dir, ins)
	if err != nil {
		t.Fatal(err)
	}
	page, _ = filepath.Abs(page)
	wantSVGs := len(in.Results[0].Anomalies) + len(ins[1].Results[0].Anomalies)

	// A control page with a deliberate console error and a failed load
	// shows the problem detection works.
	control := filepath.Join(t.TempDir(), "control.html")
	if err := os.WriteFile(control, []byte(`<!DOCTYPE html><html><body><script>console.error("control error")</script><img src="missing.png"/></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}

	b := startBrowser(ctx, t, bin)
	from := b.open(ctx, t, control)
	if p := b.c.problems(from); len(p) == 0 {
		t.Fatal("control page: the deliberate console error was not detected; the check below would prove nothing")
	} else {
		t.Logf("control page problems detected as expected: %q", p)
	}

	from = b.open(ctx, t, page)
	if p := b.c.problems(from); len(p) > 0 {
		t.Errorf("report.html logged problems:\n%s", strings.Join(p, "\n"))
	}
	var diagrams []struct {
		W, H     float64
		Visible  bool
		Overflow []float64
		Edges    []float64
	}
	b.eval(ctx, t, layoutJS, &diagrams)
	if len(diagrams) != wantSVGs {
		t.Fatalf("%d cycle diagrams rendered, want %d", len(diagrams), wantSVGs)
	}
	for i, d := range diagrams {
		if !d.Visible || d.W < 100 || d.H < 40 {
			t.Errorf("diagram %d not visibly rendered: %.0fx%.0f", i, d.W, d.H)
		}
		for j, o := range d.Overflow {
			if o > 2 {
				t.Errorf("diagram %d node %d: text overflows its box by %.1fpx", i, j, o)
			}
		}
		for j, l := range d.Edges {
			if l < 10 {
				t.Errorf("diagram %d edge %d: length %.1f", i, j, l)
			}
		}
	}
	var injected bool
	b.eval(ctx, t, `document.querySelectorAll('script, img').length > 0`, &injected)
	if injected {
		t.Error("hostile strings produced elements in the DOM")
	}
	var dom string
	b.eval(ctx, t, `document.documentElement.outerHTML`, &dom)
	if err := os.WriteFile(filepath.Join(dir, "dom.html"), []byte(dom), 0o644); err != nil {
		t.Fatal(err)
	}

	// Full-page screenshot.
	var metrics struct {
		CSSContentSize struct{ Width, Height float64 } `json:"cssContentSize"`
	}
	if err := b.c.call(ctx, b.session, "Page.getLayoutMetrics", nil, &metrics); err != nil {
		t.Fatal(err)
	}
	h := min(metrics.CSSContentSize.Height, 12000)
	var shot struct {
		Data string `json:"data"`
	}
	if err := b.c.call(ctx, b.session, "Page.captureScreenshot", map[string]any{
		"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": 1280, "height": h, "scale": 1},
	}, &shot); err != nil {
		t.Fatal(err)
	}
	pngBytes, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	shotPath := filepath.Join(dir, "screenshot.png")
	if err := os.WriteFile(shotPath, pngBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(pngBytes))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// Something was painted: the edge colours of the diagrams appear.
	colours := map[string][3]uint32{"ww": {0xb7, 0x1c, 0x1c}, "wr": {0x15, 0x65, 0xc0}, "rw": {0xe6, 0x51, 0x00}}
	found := map[string]int{}
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			for name, c := range colours {
				if near(r>>8, c[0]) && near(g>>8, c[1]) && near(bl>>8, c[2]) {
					found[name]++
				}
			}
		}
	}
	for name := range colours {
		if found[name] < 20 {
			t.Errorf("screenshot shows almost no %s edge colour (%d pixels)", name, found[name])
		}
	}
	t.Logf("artifacts in %s (report.html, report.json, dom.html, screenshot.png %dx%d)", dir, bd.Dx(), bd.Dy())
}

func near(a, b uint32) bool {
	d := int(a) - int(b)
	return d > -12 && d < 12
}
