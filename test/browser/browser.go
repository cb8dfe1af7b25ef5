// Package browser loads gpuctl's HTML report in headless Chromium (through
// the DevTools protocol, chromedp) and reads back what a person would see:
// the node sections and their verdicts, the stages, the points of each
// NCCL curve, the fleet table, and every console error, uncaught exception
// or browser log error (a blocked request, a script error). Tests of the
// report (test/browser, test/e2e) use it; it is not part of gpuctl.
package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/gpuctl/gpuctl/internal/record"
)

// ErrNoChromium is Find without a Chromium on PATH.
var ErrNoChromium = errors.New("no chromium found (Debian: apt-get install -y chromium; or set GPUCTL_CHROMIUM to the browser's path)")

// Find returns the Chromium to run: $GPUCTL_CHROMIUM, else the first of
// chromium, chromium-browser, google-chrome, headless_shell on PATH.
func Find() (string, error) {
	if p := os.Getenv("GPUCTL_CHROMIUM"); p != "" {
		exe, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("GPUCTL_CHROMIUM=%s: %w", p, err)
		}
		return exe, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// Page is what the loaded report shows.
type Page struct {
	Title string `json:"title"`
	// KeyChecked: the page says its records were verified with a key.
	KeyChecked bool `json:"keyChecked"`
	// Nodes are the node sections in page order.
	Nodes []Node `json:"nodes"`
	// FleetRows are the fleet table's rows (their record paths) in page
	// order; SortedByVerdict after clicking the verdict column's heading
	// twice (descending: FAIL first), SortedByBusbw after then clicking the
	// busbw heading once (ascending), as the page's script sorts them.
	FleetRows []string `json:"fleetRows"`
	// FleetRuns and FleetRecords are the run and record cells' text of
	// the fleet rows, in page order.
	FleetRuns       []string `json:"fleetRuns"`
	FleetRecords    []string `json:"fleetRecords"`
	SortedByVerdict []string `json:"sortedByVerdict"`
	SortedByBusbw   []string `json:"sortedByBusbw"`
	// FleetRegressions and FleetNCCLMulti are the regressions and
	// nccl-multi cells of the fleet rows, in page order;
	// SortedByRegressions the rows after then clicking the regressions
	// heading twice (descending: most regressions first).
	FleetRegressions    []Cell   `json:"fleetRegressions"`
	FleetNCCLMulti      []Cell   `json:"fleetNCCLMulti"`
	SortedByRegressions []string `json:"sortedByRegressions"`
	// External are src/href attributes that leave the page.
	External []string `json:"external"`
	// Errors are console errors, uncaught exceptions and browser log
	// errors, in the order they came.
	Errors []string `json:"-"`
	// LeftLoopback are the requests that tried to leave the machine (the
	// page's or Chromium's own), as the loopback guard saw them ("GET
	// http://example.com/x.png", "CONNECT example.org:443"); each failed.
	LeftLoopback []string `json:"-"`
}

// Cell is one cell of the fleet table: its value (the regressions'
// count, the nccl-multi verdict; "" for none), its text as drawn and
// whether it is drawn (a box, not hidden or transparent).
type Cell struct {
	Value string `json:"value"`
	Text  string `json:"text"`
	Drawn bool   `json:"drawn"`
}

// Node is one node section.
type Node struct {
	Name    string            `json:"name"`
	Verdict string            `json:"verdict"`
	Stages  map[string]string `json:"stages"`
	// Points are the data-size of each curve point, in order.
	Points []int64 `json:"points"`
	// TopologyCells is the number of cells in the topology grid.
	TopologyCells int `json:"topologyCells"`
	// Evidence is the number of evidence rows.
	Evidence int `json:"evidence"`
	// NoRows and NoTopology: the page says the record has no nccl rows, no
	// topology matrix.
	NoRows     bool `json:"noRows"`
	NoTopology bool `json:"noTopology"`
	// TextOverlaps are pairs of the curve's texts (labels, ticks, legend)
	// whose boxes as laid out intersect.
	TextOverlaps []string `json:"textOverlaps"`
	// BaselineFrom is the data-size of the curve point where the minimum
	// line starts (0: no line, or it starts at no point).
	BaselineFrom int64 `json:"baselineFrom"`
	// Trust is the section's data-trust ("verified", "unverified",
	// "unsigned"), TrustText the words its trust mark shows.
	Trust     string `json:"trust"`
	TrustText string `json:"trustText"`
	// Badge is the record's verdict badge's text; BadgeLooksVerified says
	// that it is drawn as a verified record's badge of its verdict is (the
	// same background, fill and border as computed by the browser).
	Badge              string `json:"badge"`
	BadgeLooksVerified bool   `json:"badgeLooksVerified"`
	// Disagreement is the text of the section's verdict/stages note.
	Disagreement string `json:"disagreement"`
	// Regressions are the items of the section's regressions list.
	Regressions []string `json:"regressions"`
}

// inspect runs in the page: it reads the DOM and clicks the fleet table's
// verdict, busbw and regressions headings.
const inspect = `(() => {
  const nodes = [...document.querySelectorAll("section.node")].map(s => ({
    name: s.dataset.node || "",
    verdict: s.dataset.verdict || "",
    stages: Object.fromEntries([...s.querySelectorAll("table.stages tr[data-stage]")].map(r => [r.dataset.stage, r.dataset.verdict])),
    points: [...s.querySelectorAll("svg.curve circle.point")].map(c => Number(c.dataset.size)),
    topologyCells: s.querySelectorAll("table.topo td").length,
    evidence: s.querySelectorAll("table.evidence tbody tr").length,
    noRows: s.querySelector(".no-rows") !== null,
    noTopology: s.querySelector(".no-topology") !== null,
    textOverlaps: (() => {
      const boxes = [...s.querySelectorAll("svg.curve text")].map(e => [e.textContent, e.getBoundingClientRect()]);
      const out = [];
      for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
        const [a, p] = boxes[i], [b, q] = boxes[j];
        if (p.left < q.right - 0.5 && q.left < p.right - 0.5 && p.top < q.bottom - 0.5 && q.top < p.bottom - 0.5) out.push(a + " | " + b);
      }
      return out;
    })(),
    baselineFrom: (() => {
      const l = s.querySelector("svg.curve line.baseline:not(.swatch)");
      if (!l) return 0;
      const c = [...s.querySelectorAll("svg.curve circle.point")].find(c => Math.abs(c.cx.baseVal.value - l.x1.baseVal.value) < 0.5);
      return c ? Number(c.dataset.size) : 0;
    })(),
    trust: s.dataset.trust || "",
    trustText: (s.querySelector("h2 .trust") || {}).textContent || "",
    badge: (s.querySelector("h2 .record-verdict") || {}).textContent || "",
    badgeLooksVerified: (() => {
      const b = s.querySelector("h2 .record-verdict");
      if (!b) return false;
      const ref = document.createElement("span");
      ref.className = "verdict v-" + (s.dataset.verdict || "").toLowerCase();
      s.querySelector("h2").appendChild(ref);
      const look = e => { const c = getComputedStyle(e); return [c.backgroundColor, c.backgroundImage, c.borderTopStyle, c.borderTopColor, c.color].join("|"); };
      const same = look(b) === look(ref);
      ref.remove();
      return same;
    })(),
    disagreement: (s.querySelector(".disagree") || {}).textContent || "",
    regressions: [...s.querySelectorAll("ul.regressions li")].map(l => l.textContent),
  }));
  const rows = () => [...document.querySelectorAll("table.fleet tbody tr")].map(r => r.dataset.record);
  const heading = word => [...document.querySelectorAll("table.fleet th")].find(h => h.textContent.startsWith(word));
  const fleetRows = rows();
  const cells = cls => [...document.querySelectorAll("table.fleet tbody tr td." + cls)].map(c => c.textContent);
  const fleetRuns = cells("run"), fleetRecords = cells("record");
  // A cell's value (data-count, else data-verdict), its text as shown and
  // whether it is drawn (a box, not hidden or transparent).
  const shown = cls => [...document.querySelectorAll("table.fleet tbody tr td." + cls)].map(c => {
    const b = c.getBoundingClientRect();
    return {value: c.dataset.count || c.dataset.verdict || "", text: c.innerText.trim(), drawn: b.width > 0 && b.height > 0 && c.checkVisibility({opacityProperty: true, visibilityProperty: true})};
  });
  const fleetRegressions = shown("regressions"), fleetNCCLMulti = shown("nccl-multi");
  let sortedByVerdict = [], sortedByBusbw = [], sortedByRegressions = [];
  if (heading("verdict")) { heading("verdict").click(); heading("verdict").click(); sortedByVerdict = rows(); }
  if (heading("busbw")) { heading("busbw").click(); sortedByBusbw = rows(); }
  if (heading("regressions")) { heading("regressions").click(); heading("regressions").click(); sortedByRegressions = rows(); }
  const external = [...document.querySelectorAll("[src],[href]")].map(e => e.getAttribute("src") || e.getAttribute("href")).filter(u => !u.startsWith("#"));
  const keyChecked = (document.getElementById("key-note") || {}).className === "note";
  return {title: document.title, keyChecked, nodes, fleetRows, fleetRuns, fleetRecords, fleetRegressions, fleetNCCLMulti, sortedByVerdict, sortedByBusbw, sortedByRegressions, external};
})()`

// Load opens the HTML file in headless Chromium (exe), reads the page,
// and writes a full-page PNG screenshot to screenshot when that is not "".
func Load(ctx context.Context, exe, file, screenshot string) (*Page, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	guard, err := startGuard()
	if err != nil {
		return nil, err
	}
	defer guard.Close()
	actx, cancel := chromedp.NewExecAllocator(ctx, AllocatorOptions(exe, guard.Addr())...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	bctx, cancel = context.WithTimeout(bctx, 90*time.Second)
	defer cancel()

	problems, err := listen(bctx)
	if err != nil {
		return nil, fmt.Errorf("chromium %s: %w", exe, err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+filepath.ToSlash(abs)), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		return nil, fmt.Errorf("chromium %s on %s: %w", exe, abs, err)
	}
	if screenshot != "" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100)) // quality 100: PNG
		if err != nil {
			return nil, fmt.Errorf("screenshot: %w", err)
		}
		if err := os.WriteFile(screenshot, png, 0o644); err != nil {
			return nil, err
		}
	}
	raw, err := chromedp.Run(bctx, chromedp.Evaluate[[]byte](inspect))
	if err != nil {
		return nil, fmt.Errorf("reading the page: %w", err)
	}
	var p Page
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("reading the page: %w", err)
	}
	p.Errors = problems.all()
	p.LeftLoopback = guard.Requests()
	return &p, nil
}

// RequireEnv makes a missing Chromium a failure instead of a skip; make
// test-report (part of make test, which CI runs) sets it.
const RequireEnv = "GPUCTL_REQUIRE_CHROMIUM"

// Chromium returns the browser to test with (Find). Without one the test
// fails when require is true or $GPUCTL_REQUIRE_CHROMIUM is set, and is
// skipped, saying why, otherwise.
func Chromium(t testing.TB, require bool) string {
	t.Helper()
	exe, err := Find()
	if err != nil {
		if require || os.Getenv(RequireEnv) != "" {
			t.Fatalf("%v; %s is set (make test-report): the report must be tested in a browser", err, RequireEnv)
		}
		t.Skipf("SKIPPED: %v; make test-report fails instead", err)
	}
	return exe
}

// LoadAndCheck loads the report at file and holds what it shows to the
// records it was made of (in page order): no console errors, exceptions or
// requests; each node's verdict and stage verdicts; one curve point per
// message size, ascending, as nccl.rows lists them; the topology grid of
// topology.matrix; every evidence file. With $GPUCTL_ARTIFACTS set, a
// screenshot is written there as shot.
func LoadAndCheck(t *testing.T, exe, file, shot string, records []string) *Page {
	t.Helper()
	if dir := os.Getenv("GPUCTL_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		shot = filepath.Join(dir, shot)
	} else {
		shot = ""
	}
	p, err := Load(context.Background(), exe, file, shot)
	if err != nil {
		t.Fatal(err)
	}
	if shot != "" {
		if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
			t.Errorf("screenshot %s: %v", shot, err)
		} else {
			t.Logf("screenshot: %s", shot)
		}
	}
	checkClean(t, p)
	if len(p.Nodes) != len(records) {
		t.Fatalf("%d node sections, want %d", len(p.Nodes), len(records))
	}
	if len(records) > 1 && !slices.Equal(p.FleetRows, records) {
		t.Errorf("fleet rows %v, want %v", p.FleetRows, records)
	}
	if len(records) > 1 && !slices.Equal(p.FleetRecords, records) {
		t.Errorf("fleet record cells %v, want %v", p.FleetRecords, records)
	}
	for i, path := range records {
		h, err := record.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pr, n := h.Predicate, p.Nodes[i]
		if n.Name != pr.Node.Name || n.Verdict != string(pr.Verdict) {
			t.Errorf("%s: section %s %s, record %s %s", path, n.Name, n.Verdict, pr.Node.Name, pr.Verdict)
		}
		checkTrust(t, path, p.KeyChecked, h.Signed, n)
		if len(records) > 1 && (i >= len(p.FleetRuns) || p.FleetRuns[i] != pr.RunID) {
			t.Errorf("%s: fleet run cells %v, record's run %s", path, p.FleetRuns, pr.RunID)
		}
		evidence := 0
		for _, s := range pr.Stages {
			if got := n.Stages[string(s.Name)]; got != string(s.Verdict) {
				t.Errorf("%s: stage %s shows %q, record %s", path, s.Name, got, s.Verdict)
			}
			evidence += len(s.Evidence)
		}
		if n.Evidence != evidence {
			t.Errorf("%s: %d evidence rows, record has %d files", path, n.Evidence, evidence)
		}
		var sizes []int64
		if pr.NCCL != nil {
			for _, r := range pr.NCCL.Rows {
				if !slices.Contains(sizes, r.SizeBytes) {
					sizes = append(sizes, r.SizeBytes)
				}
			}
		}
		slices.Sort(sizes)
		if !slices.Equal(n.Points, sizes) {
			t.Errorf("%s: curve points at %v, record's message sizes %v", path, n.Points, sizes)
		}
		for _, o := range n.TextOverlaps {
			t.Errorf("%s: the curve's texts overprint: %s", path, o)
		}
		if b := pr.NCCL; b != nil && b.Baseline != nil && b.Baseline.MinBusBandwidthGBps > 0 && slices.Contains(sizes, b.Baseline.MinBytes) && n.BaselineFrom != b.Baseline.MinBytes {
			t.Errorf("%s: the minimum line starts at the %d B point, the baseline at min_bytes %d", path, n.BaselineFrom, b.Baseline.MinBytes)
		}
		if tp := pr.Topology; tp != nil && n.TopologyCells != len(tp.Devices)*len(tp.Devices) {
			t.Errorf("%s: %d topology cells, want %d", path, n.TopologyCells, len(tp.Devices)*len(tp.Devices))
		}
	}
	if t.Failed() {
		var b bytes.Buffer
		b.WriteString("page sections:")
		for _, n := range p.Nodes {
			b.WriteString("\n  " + n.Name + " " + n.Verdict)
		}
		t.Log(b.String())
	}
	return p
}

// The trust marks of the page (data-trust) and the words each shows.
var trustWords = map[string]string{"verified": "verified", "unverified": "signed, not verified", "unsigned": "unsigned"}

// checkTrust holds a section to the trust of its record (records given to
// LoadAndCheck are genuine): with a key a signed record is verified,
// without one signed but not verified; an unsigned one is unsigned. Only
// a verified record's badge looks like a verified one; any other says so
// in its words.
func checkTrust(t *testing.T, path string, keyChecked, signed bool, n Node) {
	t.Helper()
	want := "unsigned"
	switch {
	case signed && keyChecked:
		want = "verified"
	case signed:
		want = "unverified"
	}
	if n.Trust != want || n.TrustText != trustWords[want] {
		t.Errorf("%s: trust %q (%q), want %q (%q)", path, n.Trust, n.TrustText, want, trustWords[want])
	}
	switch {
	case want == "verified" && (!n.BadgeLooksVerified || n.Badge != n.Verdict):
		t.Errorf("%s: a verified record's badge %q is not drawn as its verdict's", path, n.Badge)
	case want != "verified" && (n.BadgeLooksVerified || !strings.Contains(n.Badge, "not verified") && !strings.Contains(n.Badge, "unsigned")):
		t.Errorf("%s: the badge %q of a record that is %s looks verified or does not say so", path, n.Badge, want)
	}
}

// checkClean fails t for every console error, exception or failed load
// the page logged, every src or href that leaves it, and every request
// (the page's or Chromium's) that tried to leave the machine.
func checkClean(t *testing.T, p *Page) {
	t.Helper()
	for _, e := range p.Errors {
		t.Errorf("the page logged: %s", e)
	}
	if len(p.External) > 0 {
		t.Errorf("the page refers to %v", p.External)
	}
	for _, r := range p.LeftLoopback {
		t.Errorf("a request tried to leave the machine: %s", r)
	}
}

// logged are the console errors, exceptions and browser log errors of a
// page, as they come.
type logged struct {
	mu   sync.Mutex
	list []string
}

func (l *logged) add(s string) {
	l.mu.Lock()
	l.list = append(l.list, s)
	l.mu.Unlock()
}

func (l *logged) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string{}, l.list...)
}

// listen records the page's console errors, uncaught exceptions and
// browser log errors and warnings.
func listen(bctx context.Context) (*logged, error) {
	l := &logged{}
	add := l.add
	err := chromedp.Listen(bctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil && e.ExceptionDetails.Exception.Description != "" {
				msg += ": " + e.ExceptionDetails.Exception.Description
			}
			add("uncaught exception: " + msg)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert || e.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range e.Args {
					args = append(args, strings.Trim(string(a.Value), `"`)+a.Description)
				}
				add(fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
				add(fmt.Sprintf("browser log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}
