package browser

import (
	"bufio"
	"net"
	"net/http"
	"sort"
	"sync"

	"github.com/chromedp/chromedp"
)

// Flags are the command-line switches Chromium starts with for gpuctl's
// tests, beside chromedp's defaults: nothing in the background
// (networking, component updates, sync, default apps, first run, metrics
// reporting, crash reports, domain reliability, hyperlink pings, network
// time, on-demand components, the account check), no sandbox or GPU
// (containers), and no network but loopback: every host name but
// localhost and 127.0.0.1 resolves to nothing, and every request that is
// not to loopback goes to the loopback guard (AllocatorOptions sets the
// proxy), which fails it and records it (Page.LeftLoopback; LoadAndCheck
// fails on any).
var Flags = map[string]any{
	"headless":                               true,
	"no-sandbox":                             true,
	"disable-gpu":                            true,
	"disable-dev-shm-usage":                  true,
	"disable-background-networking":          true,
	"disable-component-update":               true,
	"disable-sync":                           true,
	"disable-default-apps":                   true,
	"no-first-run":                           true,
	"no-default-browser-check":               true,
	"metrics-recording-only":                 true, // record, never report
	"disable-breakpad":                       true,
	"disable-crash-reporter":                 true,
	"disable-domain-reliability":             true,
	"no-pings":                               true,
	"disable-client-side-phishing-detection": true,
	"safebrowsing-disable-auto-update":       true,
	"disable-extensions":                     true,
	"host-resolver-rules":                    "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
	"proxy-bypass-list":                      "127.0.0.1;localhost;[::1]",
	// Chromium's own requests that the switches above leave on: the
	// network time query (clients2.google.com/time), and from Chromium 148
	// the search engine preconnect (www.google.com), AI Mode's eligibility
	// check (www.google.com/async/folae) and the optimization guide's model
	// list (optimizationguide-pa.googleapis.com), each found in a net log of
	// a bare start (--log-net-log); on-demand component installs
	// (update.googleapis.com), the account check (accounts.google.com) and
	// the GCM device check-in (android.clients.google.com) are sent to a
	// closed loopback port. chromedp's own disabled features stay disabled.
	"disable-features": "Translate,BlinkGenPropertyTrees,NetworkTimeServiceQuerying," +
		"SearchEnginePreconnector,PreconnectToSearch,AimEligibilityService,AimServerEligibilityEnabled," +
		"AimServerRequestOnStartupEnabled,OptimizationGuideModelDownloading,OptimizationHintsFetching," +
		"OptimizationTargetPrediction,OptimizationHints",
	"component-updater": "url-source=http://127.0.0.1:9/",
	"gaia-url":          "http://127.0.0.1:9/",
	"gcm-checkin-url":   "http://127.0.0.1:9/",
}

// AllocatorOptions are the options of the Chromium at exe that test/browser
// and test/e2e start: chromedp's defaults, Flags, a 1280x900 window, and
// guard (host:port on loopback) as the proxy of every request not to
// loopback.
func AllocatorOptions(exe, guard string) []chromedp.ExecAllocatorOption {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.WindowSize(1280, 900),
		chromedp.ProxyServer("http://"+guard))
	names := make([]string, 0, len(Flags))
	for name := range Flags {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		opts = append(opts, chromedp.Flag(name, Flags[name]))
	}
	return opts
}

// guard is an HTTP proxy on loopback that answers every request with 403
// and records it: a request that reaches it tried to leave the machine.
type guard struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
}

func startGuard() (*guard, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g := &guard{ln: ln}
	go g.serve()
	return g, nil
}

// Addr is the guard's host:port.
func (g *guard) Addr() string { return g.ln.Addr().String() }

// Close stops the guard.
func (g *guard) Close() error { return g.ln.Close() }

// Requests are the request lines the guard saw, in order.
func (g *guard) Requests() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string{}, g.seen...)
}

func (g *guard) serve() {
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return
		}
		go g.refuse(c)
	}
}

// refuse reads one request from c, records it and answers 403.
func (g *guard) refuse(c net.Conn) {
	defer c.Close()
	req, err := http.ReadRequest(bufio.NewReader(c))
	line := "unreadable request"
	if err == nil {
		line = req.Method + " " + req.RequestURI
	}
	g.mu.Lock()
	g.seen = append(g.seen, line)
	g.mu.Unlock()
	_, _ = c.Write([]byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
}
