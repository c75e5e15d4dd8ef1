package ui_test

// These tests drive the web UI in a real Chromium (chromedp) against the
// real tsd binary holding known data, and compare what the pages show
// with what the JSON routes answer. One Chromium serves every test of the
// package, a tab each.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/tsd-db/tsd/internal/daemontest"
)

// browserTimeout guards each test's browser steps against a hang; the
// steps take well under a second each.
const browserTimeout = 30 * time.Second

// chromiumPath is Debian's chromium package's binary; TSD_CHROMIUM names
// another.
func chromiumPath() string {
	if p := os.Getenv("TSD_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

var shared struct {
	once      sync.Once
	dir       string
	browser   context.Context
	stopAlloc context.CancelFunc
	stop      context.CancelFunc
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.stop != nil {
		shared.stop()
		shared.stopAlloc()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// newTab returns a chromedp context on a new tab of the shared Chromium,
// started on first use. Without Chromium the test is skipped, saying how
// to install it, or fails when TSD_BROWSER_TESTS=required (as in CI's
// test step); TSD_BROWSER_TESTS=off skips it (CI's race step).
func newTab(t *testing.T) context.Context {
	t.Helper()
	path := needBrowser(t)
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "tsd-ui-chromium"); shared.err != nil {
			return
		}
		// The flags that keep Chromium off the network: without them a
		// closed network refuses its background connections.
		alloc, stopAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.UserDataDir(shared.dir), chromedp.WindowSize(1280, 900))
		browser, stop := chromedp.NewContext(alloc)
		shared.browser, shared.stopAlloc, shared.stop = browser, stopAlloc, stop
		shared.err = chromedp.Do(browser) // starts Chromium
	})
	if shared.err != nil {
		t.Fatalf("starting Chromium: %v", shared.err)
	}
	tab, closeTab := chromedp.NewContext(shared.browser)
	t.Cleanup(closeTab)
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 900)); err != nil { // opens the tab
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(tab, browserTimeout)
	t.Cleanup(cancel)
	return ctx
}

// needBrowser returns Chromium's path, or skips or fails the test as
// newTab says.
func needBrowser(t *testing.T) string {
	t.Helper()
	if os.Getenv("TSD_BROWSER_TESTS") == "off" {
		t.Skip("TSD_BROWSER_TESTS=off")
	}
	path := chromiumPath()
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("no Chromium at %s (%v): install it to run the web UI's browser tests "+
			"(Debian: apt-get install chromium; or set TSD_CHROMIUM to its path)", path, err)
		if os.Getenv("TSD_BROWSER_TESTS") == "required" {
			t.Fatal(msg + "; TSD_BROWSER_TESTS=required")
		}
		t.Skip(msg)
	}
	return path
}

// pageWatch records what a tab's pages do: every HTTP request, and every
// script error or console error (a Content-Security-Policy refusal among
// them). At the end of the test it fails on any error, on any request
// that is not a GET (but the POST of /api/query, which reads), and on
// any URL that holds credentials.
type pageWatch struct {
	mu       sync.Mutex
	requests []string // "METHOD URL"
	problems []string
}

func watch(t *testing.T, ctx context.Context) *pageWatch {
	t.Helper()
	w := &pageWatch{}
	err := chromedp.Listen(ctx, func(ev any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if strings.HasPrefix(e.Request.URL, "http") {
				w.requests = append(w.requests, e.Request.Method+" "+e.Request.URL)
			}
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			text := d.Text
			if d.Exception != nil {
				text += " " + d.Exception.Description
			}
			w.problems = append(w.problems, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber, text))
		case *runtime.EventConsoleAPICalled:
			if e.Type == "error" || e.Type == "assert" {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				w.problems = append(w.problems, "console."+string(e.Type)+": "+strings.Join(args, " "))
			}
		case *cdplog.EventEntryAdded:
			// Network entries are answers the page expects (a 401 before
			// the credentials, an error the page shows).
			if e.Entry.Level == cdplog.EntryLevelError && e.Entry.Source != cdplog.EntrySourceNetwork {
				w.problems = append(w.problems, fmt.Sprintf("%s log: %s (%s)", e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.check(t) })
	return w
}

func (w *pageWatch) check(t *testing.T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.problems {
		t.Errorf("page: %s", p)
	}
	n := 0
	for _, r := range w.requests {
		method, raw, _ := strings.Cut(r, " ")
		u, err := url.Parse(raw)
		if err != nil {
			t.Errorf("request %s: %v", r, err)
			continue
		}
		n++
		if u.User != nil || u.Query().Has("method_override") || u.Query().Has("p") {
			t.Errorf("request %s carries credentials or a method override", r)
		}
		if method != "GET" && !(method == "POST" && u.Path == "/api/query") {
			t.Errorf("request %s: the UI may only read (GET, or POST /api/query)", r)
		}
	}
	if n == 0 && !t.Failed() {
		t.Errorf("no request seen: the watch is broken")
	}
}

// artifacts is where screenshots go: $TSD_UI_ARTIFACTS, or a temporary
// directory of the test.
func artifacts(t *testing.T) string {
	dir := os.Getenv("TSD_UI_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(artifacts(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// navigate loads url as a fresh page: through about:blank, so that a URL
// that differs from the current one only in its fragment is not a
// same-page jump that leaves the old page's state in place.
func navigate(url string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Navigate("about:blank"), chromedp.Navigate(url))
}

// run clicks the Graph page's Run button and makes sure the chart read
// next is the new one: the old one is marked stale first.
func run() chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`document.getElementById('chart').dataset.state = 'stale', true`)(ctx, t)
			return err
		}),
		chromedp.Click(chromedp.CSS("#g-run")))
}

// do runs the steps in order; a failure names the step (from 1).
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	for i, s := range steps {
		if err := chromedp.Do(ctx, s); err != nil {
			t.Fatalf("step %d of %d: %v", i+1, len(steps), err)
		}
	}
}

// press types one key as a keyboard does: a keydown carrying the key's
// text, which the page may cancel, then a keyup. (chromedp.KeyEvent sends
// the text in a separate char event that inserts it even when the page
// cancelled the keydown.)
func press(key string) chromedp.Action[chromedp.Void] {
	k := map[string]struct {
		code int64
		text string
	}{"Enter": {13, "\r"}, "Tab": {9, ""}, "ArrowDown": {40, ""}, "Escape": {27, ""}}[key]
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: key, Code: key,
			WindowsVirtualKeyCode: k.code, NativeVirtualKeyCode: k.code, Text: k.text, UnmodifiedText: k.text}
		if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, down); err != nil {
			return err
		}
		up := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: key, Code: key,
			WindowsVirtualKeyCode: k.code, NativeVirtualKeyCode: k.code}
		_, err := cdp.Call(ctx, t, input.DispatchKeyEvent, up)
		return err
	})
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func attr(t *testing.T, ctx context.Context, sel, name string) string {
	t.Helper()
	r, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	if err != nil || !r.Exists {
		t.Fatalf("attribute %s of %s: %v (present %v)", name, sel, err, r.Exists)
	}
	return r.Value
}

// ---------- the daemon and its data ----------

// known is the data the tests write: sys.cpu.user on hosts a, b, c (c
// misses one minute), one point of sys.cpu.system and of sys.mem.free.
type known struct {
	base       int64 // Unix seconds of the first point, a whole minute
	start, end int64 // a range around all of them
}

const knownPoints = 30

func cpuValue(host string, i int) float64 {
	return map[string]float64{"a": 0, "b": 100, "c": 200}[host] + float64(i)*1.5
}

func writeKnown(t *testing.T, base string, auth string) known {
	t.Helper()
	k := known{base: time.Now().Add(-3*time.Hour).Unix() / 60 * 60}
	k.start, k.end = k.base-60, k.base+knownPoints*60+60
	var pts []map[string]any
	for _, h := range []string{"a", "b", "c"} {
		for i := range knownPoints {
			if h == "c" && i == 5 {
				continue
			}
			pts = append(pts, map[string]any{"metric": "sys.cpu.user", "timestamp": k.base + int64(i)*60,
				"value": cpuValue(h, i), "tags": map[string]string{"host": h, "dc": "east"}})
		}
	}
	pts = append(pts,
		map[string]any{"metric": "sys.cpu.system", "timestamp": k.base, "value": 3, "tags": map[string]string{"host": "a"}},
		map[string]any{"metric": "sys.mem.free", "timestamp": k.base, "value": 7, "tags": map[string]string{"host": "a"}})
	body, _ := json.Marshal(pts)
	if code, out := request(t, "POST", base+"/api/put?sync", auth, body); code != 204 {
		t.Fatalf("put: %d %s", code, out)
	}
	return k
}

func request(t *testing.T, method, u, auth string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		user, pw, _ := strings.Cut(auth, ":")
		req.SetBasicAuth(user, pw)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func getJSON(t *testing.T, u, auth string, v any) {
	t.Helper()
	code, b := request(t, "GET", u, auth, nil)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", u, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v in %s", u, err, b)
	}
}

// openTSDBSeries is one series of /api/query's answer.
type openTSDBSeries struct {
	Metric string             `json:"metric"`
	Tags   map[string]string  `json:"tags"`
	DPS    map[string]float64 `json:"dps"`
}

func (s *openTSDBSeries) label() string { return label(s.Metric, s.Tags) }

func label(metric string, tags map[string]string) string {
	var keys []string
	for k := range tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(metric + "{")
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + tags[k])
	}
	return b.String() + "}"
}

func queryOpenTSDB(t *testing.T, base, auth string, body map[string]any) []openTSDBSeries {
	t.Helper()
	b, _ := json.Marshal(body)
	code, out := request(t, "POST", base+"/api/query", auth, b)
	if code != 200 {
		t.Fatalf("/api/query %s: %d %s", b, code, out)
	}
	var res []openTSDBSeries
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// chartState is window.tsdChart as the Graph page sets it, with the
// points uPlot drew (non-null values within each series' drawn range).
type chartState struct {
	Labels []string     `json:"labels"`
	Points []int        `json:"points"`
	X      []float64    `json:"x"`
	Y      [][]*float64 `json:"y"`
	Drawn  []int        `json:"drawn"`
	Error  string       `json:"error"`
}

const chartJS = `(() => {
	const c = window.tsdChart || {};
	const u = c.plot;
	const drawn = u ? u.series.slice(1).map((s, i) => {
		const [a, b] = s.idxs || [0, -1];
		let n = 0;
		for (let j = a; j <= b; j++) if (u.data[i + 1][j] != null) n++;
		return n;
	}) : [];
	return {labels: c.labels || [], points: c.points || [], x: c.x || [], y: c.y || [], drawn: drawn, error: c.error || ''};
})()`

func waitChart(t *testing.T, ctx context.Context) chartState {
	t.Helper()
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#chart[data-state="drawn"], #chart[data-state="error"], #chart[data-state="empty"]`)))
	c := eval[chartState](t, ctx, chartJS)
	if c.Error != "" {
		t.Fatalf("the chart shows an error: %s", c.Error)
	}
	return c
}

// compareChart checks the chart against /api/query's answer: the same
// series in the same order, as many points drawn, the same values.
func compareChart(t *testing.T, c chartState, want []openTSDBSeries) {
	t.Helper()
	if len(c.Labels) != len(want) || len(c.Drawn) != len(want) {
		t.Fatalf("chart has %d series (%q), %d drawn; /api/query has %d", len(c.Labels), c.Labels, len(c.Drawn), len(want))
	}
	for i, s := range want {
		if c.Labels[i] != s.label() {
			t.Errorf("series %d: legend %q, /api/query %q", i, c.Labels[i], s.label())
		}
		if c.Points[i] != len(s.DPS) || c.Drawn[i] != len(s.DPS) {
			t.Errorf("series %s: %d points, %d drawn; /api/query has %d", s.label(), c.Points[i], c.Drawn[i], len(s.DPS))
		}
		for j, x := range c.X {
			v, ok := s.DPS[strconv.FormatInt(int64(math.Round(x*1000)), 10)]
			got := c.Y[i][j]
			if ok != (got != nil) || (ok && *got != v) {
				t.Errorf("series %s at %v: chart %v, /api/query %v (present %v)", s.label(), x, got, v, ok)
			}
		}
	}
}

// hover moves the mouse over point j of series 0 and returns the
// legend's texts: the time, then each series' value.
func hover(t *testing.T, ctx context.Context, j int) []string {
	t.Helper()
	type pos struct{ X, Y float64 }
	p := eval[pos](t, ctx, fmt.Sprintf(`(() => {
		const c = window.tsdChart, u = c.plot, r = u.over.getBoundingClientRect();
		return {X: r.left + u.valToPos(c.x[%d], 'x'), Y: r.top + r.height / 2};
	})()`, j))
	do(t, ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, p.X, p.Y))
	// uPlot updates the legend on the next animation frame.
	vals, err := chromedp.Run(ctx, chromedp.Poll[[]string](fmt.Sprintf(`(() => {
		const v = Array.from(document.querySelectorAll('.u-legend tr.u-series')).map((tr) => tr.querySelector('.u-value').textContent);
		return window.tsdChart.plot.cursor.idx === %d && v[0] !== '—' ? v : null;
	})()`, j)))
	if err != nil {
		t.Fatalf("hover over point %d: the legend does not follow: %v", j, err)
	}
	return vals
}

func legendTime(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05Z") }

// ---------- the tests ----------

// TestUI runs the Graph, Series and Status pages on a real daemon.
func TestUI(t *testing.T) {
	needBrowser(t)
	d := daemontest.Start(t, "--data", t.TempDir())
	base := "http://" + d.Addr
	k := writeKnown(t, base, "")
	t.Run("text index without Accept: text/html", func(t *testing.T) {
		code, b := request(t, "GET", base+"/", "", nil)
		if code != 200 || !strings.HasPrefix(string(b), "tsd ") || !strings.Contains(string(b), "Endpoints that answer") {
			t.Errorf("GET / without Accept = %d %.80s", code, b)
		}
	})
	t.Run("graph", func(t *testing.T) { testGraph(t, base, k) })
	t.Run("graph builder", func(t *testing.T) { testGraphBuilder(t, base, k) })
	t.Run("promql", func(t *testing.T) { testPromQL(t, base, k) })
	t.Run("series", func(t *testing.T) { testSeries(t, base, k) })
	t.Run("status", func(t *testing.T) { testStatus(t, base, "") })
}

// testGraph opens a shared link to a graph and checks the chart, the
// legend, the hover values, zoom and the table against /api/query.
func testGraph(t *testing.T, base string, k known) {
	ctx := newTab(t)
	watch(t, ctx)
	link := fmt.Sprintf("%s/#graph?mode=tsdb&m=sys.cpu.user&agg=none&start=%d&end=%d", base, k.start, k.end)
	do(t, ctx, navigate(link))
	c := waitChart(t, ctx)
	want := queryOpenTSDB(t, base, "", map[string]any{"start": strconv.FormatInt(k.start, 10), "end": strconv.FormatInt(k.end, 10),
		"queries": []map[string]any{{"aggregator": "none", "metric": "sys.cpu.user"}}, "msResolution": true})
	if len(want) != 3 {
		t.Fatalf("/api/query: %d series, want 3", len(want))
	}
	compareChart(t, c, want)
	legend := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('.u-legend tr.u-series .u-label')).map((e) => e.textContent)`)
	if len(legend) != 4 || legend[1] != want[0].label() || legend[3] != want[2].label() {
		t.Errorf("legend %q", legend)
	}
	// Hover: the legend shows the values of the minute under the mouse.
	for _, j := range []int{1, 5, 17} {
		vals := hover(t, ctx, j)
		ms := int64(math.Round(c.X[j] * 1000))
		if len(vals) != 4 || vals[0] != legendTime(ms) {
			t.Fatalf("hover %d: legend %q, want time %s", j, vals, legendTime(ms))
		}
		for i, s := range want {
			v, ok := s.DPS[strconv.FormatInt(ms, 10)]
			wantText := "—"
			if ok {
				wantText = strconv.FormatFloat(v, 'f', -1, 64)
			}
			if vals[i+1] != wantText {
				t.Errorf("hover %d, %s: legend %q, /api/query %q", j, s.label(), vals[i+1], wantText)
			}
		}
	}
	screenshot(t, ctx, "ui-graph.png")

	// Zoom: a drag across a third of the plot narrows the x scale; Reset
	// zoom restores it.
	type box struct{ L, T, W, H float64 }
	b := eval[box](t, ctx, `(() => { const r = window.tsdChart.plot.over.getBoundingClientRect(); return {L: r.left, T: r.top, W: r.width, H: r.height}; })()`)
	y := b.T + b.H/2
	do(t, ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, b.L+b.W*0.3, y),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, b.L+b.W*0.3, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, b.L+b.W*0.5, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, b.L+b.W*0.6, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, b.L+b.W*0.6, y, chromedp.ButtonLeft))
	type scale struct{ Min, Max float64 }
	z := eval[scale](t, ctx, `({Min: window.tsdChart.plot.scales.x.min, Max: window.tsdChart.plot.scales.x.max})`)
	first, last := c.X[0], c.X[len(c.X)-1]
	if !(z.Min > first && z.Max < last && z.Max > z.Min) {
		t.Errorf("after a drag the x scale is [%v, %v], want inside (%v, %v)", z.Min, z.Max, first, last)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS("#g-reset:not([disabled])")))
	z = eval[scale](t, ctx, `({Min: window.tsdChart.plot.scales.x.min, Max: window.tsdChart.plot.scales.x.max})`)
	if z.Min != first || z.Max != last {
		t.Errorf("after Reset zoom the x scale is [%v, %v], want [%v, %v]", z.Min, z.Max, first, last)
	}

	// The table view lists every minute, a column per series.
	do(t, ctx, chromedp.Click(chromedp.CSS("#view-table")), chromedp.WaitVisible(chromedp.CSS("#data-table")))
	rows := eval[[][]string](t, ctx, `Array.from(document.querySelectorAll('#data-table tr')).map((tr) => Array.from(tr.children).map((c) => c.textContent))`)
	if len(rows) != len(c.X)+1 || len(rows[0]) != 4 || rows[0][1] != want[0].label() {
		t.Fatalf("table: %d rows, header %q; want %d rows", len(rows), rows[0], len(c.X)+1)
	}
	for j, x := range c.X {
		ms := int64(math.Round(x * 1000))
		if rows[j+1][0] != legendTime(ms) {
			t.Errorf("table row %d time %q, want %q", j, rows[j+1][0], legendTime(ms))
		}
		for i, s := range want {
			wantText := "—"
			if v, ok := s.DPS[strconv.FormatInt(ms, 10)]; ok {
				wantText = strconv.FormatFloat(v, 'f', -1, 64)
			}
			if rows[j+1][i+1] != wantText {
				t.Errorf("table row %d %s: %q, want %q", j, s.label(), rows[j+1][i+1], wantText)
			}
		}
	}
}

// testGraphBuilder builds a query with the form: metric and tag
// suggestions while typing, aggregator, filter, downsampling; runs it,
// and checks the URL holds it and the chart equals /api/query's answer.
func testGraphBuilder(t *testing.T, base string, k known) {
	ctx := newTab(t)
	watch(t, ctx)
	do(t, ctx, navigate(fmt.Sprintf("%s/#graph?start=%d&end=%d", base, k.start, k.end)),
		chromedp.WaitVisible(chromedp.CSS("#q-metric")),
		chromedp.SendKeys(chromedp.CSS("#q-metric"), "sys.c"),
		chromedp.WaitVisible(chromedp.CSS(`#q-metric + ul.suggest[data-for="sys.c"] li[data-word="sys.cpu.user"]`)))
	words := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#q-metric + ul.suggest li')).map((li) => li.textContent)`)
	if strings.Join(words, ",") != "sys.cpu.system,sys.cpu.user" {
		t.Errorf("metric suggestions for sys.c: %q, want sys.cpu.system, sys.cpu.user", words)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(`ul.suggest li[data-word="sys.cpu.user"]`)))
	if v := eval[string](t, ctx, `document.getElementById('q-metric').value`); v != "sys.cpu.user" {
		t.Fatalf("picking a suggestion left %q", v)
	}
	do(t, ctx, chromedp.SetValue(chromedp.CSS("#q-agg"), "max"),
		chromedp.SetValue(chromedp.CSS("#q-ds"), "2m"), chromedp.SetValue(chromedp.CSS("#q-dsagg"), "sum"),
		chromedp.Click(chromedp.CSS("#q-add-filter")),
		chromedp.SendKeys(chromedp.CSS(".f-tagk"), "ho"),
		chromedp.WaitVisible(chromedp.CSS(`.f-tagk + ul.suggest[data-for="ho"] li[data-word="host"]`)),
		press("Enter"),
		chromedp.SendKeys(chromedp.CSS(".f-value"), "a|"),
		chromedp.WaitVisible(chromedp.CSS(`.f-value + ul.suggest[data-for="a|"] li[data-word="c"]`)),
		chromedp.Click(chromedp.CSS(`.f-value + ul.suggest li[data-word="c"]`)))
	if v := eval[string](t, ctx, `document.querySelector('.f-tagk').value + ' ' + document.querySelector('.f-value').value`); v != "host a|c" {
		t.Fatalf("filter fields hold %q, want host a|c", v)
	}
	do(t, ctx, run())
	c := waitChart(t, ctx)
	hash := eval[string](t, ctx, `location.hash`)
	for _, part := range []string{"m=sys.cpu.user", "agg=max", "ds=2m", "dsagg=sum", "f=host%3Aliteral_or%3A1%3Aa%7Cc"} {
		if !strings.Contains(hash, part) {
			t.Errorf("URL fragment %s lacks %s", hash, part)
		}
	}
	want := queryOpenTSDB(t, base, "", map[string]any{"start": strconv.FormatInt(k.start, 10), "end": strconv.FormatInt(k.end, 10),
		"queries": []map[string]any{{"aggregator": "max", "metric": "sys.cpu.user", "downsample": "2m-sum",
			"filters": []map[string]any{{"type": "literal_or", "tagk": "host", "filter": "a|c", "groupBy": true}}}}, "msResolution": true})
	if len(want) != 2 {
		t.Fatalf("/api/query: %d series, want 2", len(want))
	}
	compareChart(t, c, want)

	// The link reproduces the graph in a fresh page.
	do(t, ctx, navigate(base+"/"+hash))
	if c2 := waitChart(t, ctx); fmt.Sprint(c2.Labels, c2.Points) != fmt.Sprint(c.Labels, c.Points) {
		t.Errorf("the shared link draws %v %v, the form drew %v %v", c2.Labels, c2.Points, c.Labels, c.Points)
	}

	// The other controls, from a link: rate with counter, a fill, a
	// wildcard filter without group-by; then the filter removed.
	do(t, ctx, navigate(fmt.Sprintf("%s/#graph?mode=tsdb&m=sys.cpu.user&agg=sum&ds=1m&dsagg=max&fill=zero&rate=1&counter=1&f=host:wildcard:0:*&start=%d&end=%d",
		base, k.start, k.end)))
	c = waitChart(t, ctx)
	form := eval[string](t, ctx, `['q-agg', 'q-ds', 'q-dsagg', 'q-fill'].map((id) => document.getElementById(id).value).join(' ') + ' ' +
		document.getElementById('q-rate').checked + ' ' + document.getElementById('q-counter').checked + ' ' +
		document.querySelector('.f-type').value + ' ' + document.querySelector('.f-group').checked`)
	if form != "sum 1m max zero true true wildcard false" {
		t.Errorf("the form from the link: %q", form)
	}
	q := map[string]any{"aggregator": "sum", "metric": "sys.cpu.user", "downsample": "1m-max-zero", "rate": true, "rateOptions": map[string]any{"counter": true},
		"filters": []map[string]any{{"type": "wildcard", "tagk": "host", "filter": "*", "groupBy": false}}}
	body := map[string]any{"start": strconv.FormatInt(k.start, 10), "end": strconv.FormatInt(k.end, 10), "queries": []map[string]any{q}, "msResolution": true}
	want = queryOpenTSDB(t, base, "", body)
	if len(want) != 1 || len(want[0].DPS) < knownPoints-2 {
		t.Fatalf("/api/query of the rate: %+v", want)
	}
	compareChart(t, c, want)
	do(t, ctx, chromedp.Click(chromedp.CSS(".f-remove")), chromedp.SetValue(chromedp.CSS("#q-fill"), "none"),
		run())
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!location.hash.includes('f=') && !location.hash.includes('fill=zero')`)); err != nil {
		t.Fatalf("the fragment after removing the filter: %v", err)
	}
	c = waitChart(t, ctx)
	delete(q, "filters")
	q["downsample"] = "1m-max"
	compareChart(t, c, queryOpenTSDB(t, base, "", body))
}

// promRange is /api/v1/query_range's answer.
type promRange struct {
	Data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

// testPromQL writes a query with completion of the metric, a label name
// and a label value, runs it and compares the chart with query_range.
func testPromQL(t *testing.T, base string, k known) {
	ctx := newTab(t)
	watch(t, ctx)
	do(t, ctx, navigate(fmt.Sprintf("%s/#graph?mode=promql&start=%d&end=%d&step=60", base, k.start, k.end)),
		chromedp.WaitVisible(chromedp.CSS("#promql")),
		chromedp.SendKeys(chromedp.CSS("#promql"), "sys.cpu.u"),
		chromedp.WaitVisible(chromedp.CSS(`#promql + ul.suggest[data-for="sys.cpu.u"] li[data-word="sys.cpu.user"]`)),
		press("Tab"))
	if v := eval[string](t, ctx, `document.getElementById('promql').value`); v != `{"sys.cpu.user"}` {
		t.Fatalf("metric completion wrote %q", v)
	}
	do(t, ctx, chromedp.SendKeys(chromedp.CSS("#promql"), ", ho"),
		chromedp.WaitVisible(chromedp.CSS(`#promql + ul.suggest li[data-word="host"]`)),
		press("Tab"),
		// Picking a label name offers its values at once.
		chromedp.WaitVisible(chromedp.CSS(`#promql + ul.suggest[data-for='{"sys.cpu.user", host="}'] li[data-word="b"]`)))
	values := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#promql + ul.suggest li')).map((li) => li.textContent)`)
	if strings.Join(values, ",") != "a,b,c" {
		t.Errorf("host values offered: %q, want a, b, c", values)
	}
	do(t, ctx, press("ArrowDown"), press("Enter"))
	q := eval[string](t, ctx, `document.getElementById('promql').value`)
	if q != `{"sys.cpu.user", host="b"}` {
		t.Fatalf("query after completion: %q", q)
	}
	do(t, ctx, run())
	c := waitChart(t, ctx)
	if h := eval[string](t, ctx, `location.hash`); !strings.Contains(h, "mode=promql") || !strings.Contains(h, "q="+url.QueryEscape(q)) {
		t.Errorf("URL fragment %s does not hold the query", h)
	}
	var pr promRange
	getJSON(t, base+"/api/v1/query_range?"+url.Values{"query": {q}, "start": {strconv.FormatInt(k.start, 10)},
		"end": {strconv.FormatInt(k.end, 10)}, "step": {"60"}}.Encode(), "", &pr)
	if len(pr.Data.Result) != 1 || len(c.Labels) != 1 {
		t.Fatalf("query_range: %d series; chart %q", len(pr.Data.Result), c.Labels)
	}
	r := pr.Data.Result[0]
	if c.Labels[0] != `sys.cpu.user{dc=east,host=b}` || c.Drawn[0] != len(r.Values) || len(c.X) != len(r.Values) {
		t.Errorf("chart %q with %d drawn of %d; query_range has %d points", c.Labels, c.Drawn, len(c.X), len(r.Values))
	}
	for j, v := range r.Values {
		want, _ := strconv.ParseFloat(v[1].(string), 64)
		if j < len(c.X) && (c.X[j] != v[0].(float64) || c.Y[0][j] == nil || *c.Y[0][j] != want) {
			t.Errorf("point %d: chart (%v, %v), query_range (%v, %v)", j, c.X[j], c.Y[0][j], v[0], want)
		}
	}
	if vals := hover(t, ctx, 3); len(vals) != 2 || vals[1] != r.Values[3][1].(string) {
		t.Errorf("hover over point 3: legend %q, query_range %v", vals, r.Values[3][1])
	}
}

// testSeries walks the Series page: metric list with counts, a metric's
// tags, a series' first and last points, and its graph.
func testSeries(t *testing.T, base string, k known) {
	ctx := newTab(t)
	watch(t, ctx)
	do(t, ctx, navigate(base+"/#series"), chromedp.WaitVisible(chromedp.CSS(`#s-metrics[data-loaded="true"]`)))
	counts := eval[map[string]string](t, ctx, `Object.fromEntries(Array.from(document.querySelectorAll('#s-metrics tr')).map((tr) => [tr.dataset.metric, tr.dataset.series]))`)
	for _, m := range []string{"sys.cpu.user", "sys.cpu.system", "sys.mem.free"} {
		var sum struct {
			TotalResults int `json:"totalResults"`
		}
		getJSON(t, base+"/api/search/tsmeta_summary?"+url.Values{"query": {m}, "limit": {"1000"}}.Encode(), "", &sum)
		if counts[m] != strconv.Itoa(sum.TotalResults) {
			t.Errorf("Series page: %s has %q series; the index says %d", m, counts[m], sum.TotalResults)
		}
	}
	if counts["sys.cpu.user"] != "3" || len(counts) != 3 {
		t.Errorf("metric counts %v", counts)
	}
	// The filter box narrows the list.
	do(t, ctx, chromedp.SendKeys(chromedp.CSS("#s-filter"), "mem"))
	if shown := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#s-metrics tr:not([hidden])')).map((tr) => tr.dataset.metric)`); strings.Join(shown, ",") != "sys.mem.free" {
		t.Errorf("filtered to mem: %q", shown)
	}
	if shown := eval[int](t, ctx, `(() => { const f = document.getElementById('s-filter'); f.value = ''; f.dispatchEvent(new Event('input'));
		return document.querySelectorAll('#s-metrics tr:not([hidden])').length; })()`); shown != 3 {
		t.Errorf("an empty filter shows %d metrics", shown)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(`#s-metrics tr[data-metric="sys.cpu.user"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#m-tags")))
	if got := attr(t, ctx, "#m-count", "data-series"); got != "3" {
		t.Errorf("metric page counts %s series", got)
	}
	if got := text(t, ctx, `#m-tags tr[data-tagk="host"] .tagvs`); got != "a, b, c" {
		t.Errorf("host values %q", got)
	}
	if got := text(t, ctx, `#m-tags tr[data-tagk="dc"] .tagvs`); got != "east" {
		t.Errorf("dc values %q", got)
	}
	screenshot(t, ctx, "ui-series.png")
	// The series of host c, which misses its sixth minute.
	tsuids := eval[map[string]string](t, ctx, `Object.fromEntries(Array.from(document.querySelectorAll('#m-series tr[data-tsuid]')).map((tr) => [tr.querySelector('a').textContent, tr.dataset.tsuid]))`)
	tsuid := tsuids["sys.cpu.user{dc=east,host=c}"]
	if tsuid == "" {
		t.Fatalf("series list %v", tsuids)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(`#m-series tr[data-tsuid="`+tsuid+`"] a`)), chromedp.WaitVisible(chromedp.CSS("#sd-last")))
	for _, p := range []struct {
		sel string
		i   int
	}{{"#sd-first", 0}, {"#sd-last", knownPoints - 1}} {
		ts, v := attr(t, ctx, p.sel, "data-ts"), attr(t, ctx, p.sel, "data-value")
		if ts != strconv.FormatInt((k.base+int64(p.i)*60)*1000, 10) || v != strconv.FormatFloat(cpuValue("c", p.i), 'f', -1, 64) {
			t.Errorf("%s: (%s, %s), want (%d, %v)", p.sel, ts, v, (k.base+int64(p.i)*60)*1000, cpuValue("c", p.i))
		}
	}
	do(t, ctx, chromedp.Click(chromedp.CSS("#sd-graph")))
	c := waitChart(t, ctx)
	if len(c.Labels) != 1 || c.Labels[0] != "sys.cpu.user{dc=east,host=c}" || c.Drawn[0] != knownPoints-1 {
		t.Errorf("Graph this series: %q with %v points drawn, want host=c's %d", c.Labels, c.Drawn, knownPoints-1)
	}
}

// testStatus checks the Status page's figures against the JSON routes.
func testStatus(t *testing.T, base, auth string) {
	ctx := newTab(t)
	watch(t, ctx)
	if auth != "" {
		provideCredentials(t, ctx, auth)
	}
	do(t, ctx, navigate(base+"/#status"), chromedp.WaitVisible(chromedp.CSS(`#main[data-loaded="true"]`)))
	statusChecks(t, ctx, base, auth)
	screenshot(t, ctx, "ui-status.png")
}

func statusChecks(t *testing.T, ctx context.Context, base, auth string) {
	t.Helper()
	var st struct {
		Mode  string `json:"mode"`
		Store struct {
			Engine      string `json:"engine"`
			Format      string `json:"format"`
			SaltWidth   int    `json:"salt_width"`
			SaltBuckets int    `json:"salt_buckets"`
			UIDWidths   struct {
				Metric, TagK, TagV int
			} `json:"uid_widths"`
		} `json:"store"`
		Rollups []struct {
			Interval string `json:"interval"`
		} `json:"rollups"`
	}
	getJSON(t, base+"/api/status", auth, &st)
	var ver map[string]string
	getJSON(t, base+"/api/version", auth, &ver)
	var stats []struct {
		Metric string            `json:"metric"`
		Value  string            `json:"value"`
		Tags   map[string]string `json:"tags"`
	}
	getJSON(t, base+"/api/stats", auth, &stats)
	stat := func(name, tagk, tagv string) string {
		for _, s := range stats {
			if s.Metric == name && (tagk == "" || s.Tags[tagk] == tagv) {
				return s.Value
			}
		}
		t.Fatalf("/api/stats has no %s %s=%s", name, tagk, tagv)
		return ""
	}
	cell := func(table, key string) string { return text(t, ctx, `#`+table+` tr[data-key="`+key+`"] td`) }
	for _, c := range []struct{ got, want, what string }{
		{cell("st-daemon", "version"), ver["version"], "version"},
		{cell("st-daemon", "mode"), st.Mode, "mode"},
		{cell("st-store", "engine"), st.Store.Engine, "engine"},
		{cell("st-store", "format"), st.Store.Format, "format"},
		{cell("st-store", "salt_width"), strconv.Itoa(st.Store.SaltWidth), "salt width"},
		{cell("st-store", "salt_buckets"), strconv.Itoa(st.Store.SaltBuckets), "salt buckets"},
		{cell("st-store", "uid_widths"), fmt.Sprintf("%d/%d/%d", st.Store.UIDWidths.Metric, st.Store.UIDWidths.TagK, st.Store.UIDWidths.TagV), "UID widths"},
		{cell("st-head", "head_series"), stat("tsd.head.series", "", ""), "head series"},
		{cell("st-store", "index_series"), stat("tsd.index.series", "", ""), "index series"},
		{text(t, ctx, `#st-ingest tr[data-protocol="put"] td:nth-child(2)`), stat("tsd.ingest.points", "protocol", "put"), "points put"},
		{cell("st-config", "tsd.storage.format"), st.Store.Format, "config tsd.storage.format"},
	} {
		if c.got != c.want {
			t.Errorf("Status page %s: %q, JSON routes %q", c.what, c.got, c.want)
		}
	}
	if st.Store.Format != "dense" || st.Store.SaltWidth != 1 || st.Store.UIDWidths.Metric != 3 {
		t.Errorf("/api/status store: %+v", st.Store)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#st-rollups tbody tr').length`); n != len(st.Rollups) || n == 0 {
		t.Errorf("rollup rows %d, /api/status has %d", n, len(st.Rollups))
	}
	if got := cell("st-daemon", "uptime"); !strings.HasSuffix(got, "s") {
		t.Errorf("uptime %q", got)
	}
}

// provideCredentials answers the browser's authentication prompts with
// user:password, as a user typing them into the dialog would, and passes
// every other request on; it counts the prompts.
func provideCredentials(t *testing.T, ctx context.Context, userPassword string) *atomic.Int32 {
	t.Helper()
	user, pw, _ := strings.Cut(userPassword, ":")
	prompts := new(atomic.Int32)
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	asked := chromedp.Events(ctx, fetch.AuthRequired)
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		}
	}()
	go func() {
		for ev, err := range asked {
			if err != nil {
				return
			}
			prompts.Add(1)
			chromedp.Call(ctx, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID,
				AuthChallengeResponse: &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials,
					Username: user, Password: pw}})
		}
	}()
	handle := true
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &handle}); err != nil {
		t.Fatal(err)
	}
	return prompts
}

// TestUIAuth: with tsd.auth.config on, the page answers 401 with a Basic
// challenge, the browser asks once, and every page works with the
// credentials the browser then sends itself.
func TestUIAuth(t *testing.T) {
	needBrowser(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(t.TempDir(), "users.yaml")
	yaml := fmt.Sprintf("users:\n  - name: viewer\n    password_bcrypt: %q\n    role: read\n"+
		"  - name: writer\n    password_bcrypt: %q\n    role: write\n", hash, hash)
	if err := os.WriteFile(users, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	d := daemontest.Start(t, "--data", t.TempDir(), "--tsd.auth.config="+users)
	base := "http://" + d.Addr
	k := writeKnown(t, base, "writer:s3cret")
	for _, p := range []string{"/", "/ui/app.js", "/api/status"} {
		req, _ := http.NewRequest("GET", base+p, nil)
		req.Header.Set("Accept", "text/html")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("GET %s without credentials: %d, WWW-Authenticate %q; want 401 with a Basic challenge", p, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}

	ctx := newTab(t)
	w := watch(t, ctx)
	prompts := provideCredentials(t, ctx, "viewer:s3cret")
	do(t, ctx, navigate(base+"/#status"), chromedp.WaitVisible(chromedp.CSS(`#main[data-loaded="true"]`)))
	statusChecks(t, ctx, base, "viewer:s3cret")
	do(t, ctx, navigate(fmt.Sprintf("%s/#graph?mode=tsdb&m=sys.cpu.user&agg=sum&start=%d&end=%d", base, k.start, k.end)))
	c := waitChart(t, ctx)
	want := queryOpenTSDB(t, base, "viewer:s3cret", map[string]any{"start": strconv.FormatInt(k.start, 10), "end": strconv.FormatInt(k.end, 10),
		"queries": []map[string]any{{"aggregator": "sum", "metric": "sys.cpu.user"}}, "msResolution": true})
	compareChart(t, c, want)
	do(t, ctx, navigate(base+"/#series"), chromedp.WaitVisible(chromedp.CSS(`#s-metrics[data-loaded="true"]`)))
	if got := attr(t, ctx, `#s-metrics tr[data-metric="sys.cpu.user"]`, "data-series"); got != "3" {
		t.Errorf("Series page with auth: %s series", got)
	}
	if n := prompts.Load(); n != 1 {
		t.Errorf("the browser asked for credentials %d times, want once", n)
	}
	w.mu.Lock()
	n := len(w.requests)
	w.mu.Unlock()
	if n < 10 {
		t.Errorf("only %d requests seen", n)
	}
}
