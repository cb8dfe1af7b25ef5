//go:build hostile

package hostile

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	// addressSpaceKiB is the child's address-space limit (ulimit -v, KiB): 2 GiB.
	addressSpaceKiB = 2 << 20
	// maxRSSKiB is the most peak RSS a case may reach: 200 MiB.
	maxRSSKiB = 200 << 10
	// hardTimeout kills a case that is still running, so a runaway fails
	// instead of hanging the suite.
	hardTimeout = 10 * time.Second
	// maxOutput is the most stdout (and stderr) kept of one case.
	maxOutput = 16 << 20
)

// traceRE matches a Go runtime trace or panic in a case's output.
var traceRE = regexp.MustCompile(`(?m)goroutine \d+ \[|runtime\.[A-Za-z_]+\(|fatal error:|^panic: `)

// sentinels are the secrets no case may print or write: one in the
// environment, one in a file next to the case's folder, and /etc/passwd's
// first line.
type sentinels struct {
	env, file, passwd string
}

func newSentinels(t *testing.T) sentinels {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	s := sentinels{
		env:  "gpuctl-sentinel-env-" + hex.EncodeToString(b),
		file: "gpuctl-sentinel-file-" + hex.EncodeToString(b),
	}
	if data, err := os.ReadFile("/etc/passwd"); err == nil {
		s.passwd, _, _ = strings.Cut(string(data), "\n")
	}
	return s
}

// found names the sentinels in data.
func (s sentinels) found(data []byte) []string {
	var out []string
	for name, v := range map[string]string{"environment": s.env, "secret file": s.file, "/etc/passwd": s.passwd} {
		if v != "" && bytes.Contains(data, []byte(v)) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// excerpt is the start of r's stderr (stdout when it is empty), quoted,
// with the sentinels masked, for the failure report.
func (s sentinels) excerpt(r childResult) string {
	out := r.stderr
	if len(bytes.TrimSpace(out)) == 0 {
		out = r.stdout
	}
	if len(out) > 240 {
		out = out[:240]
	}
	text := string(out)
	for _, v := range []string{s.env, s.file, s.passwd} {
		if v != "" {
			text = strings.ReplaceAll(text, v, "<sentinel>")
		}
	}
	return strconv.Quote(text)
}

// outcome is what one case did and what was wrong with it.
type outcome struct {
	name     string
	exit     int
	wall     time.Duration
	rssKiB   int64
	problems []string
	excerpt  string // the start of the output, sentinels masked
}

func TestHostile(t *testing.T) {
	bin := gpuctlBinary(t)
	checkLimitRuns(t, bin)
	paths, err := filepath.Glob("cases/*/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases under cases/ (%v)", err)
	}
	fixtures, err := filepath.Abs("../../internal/accept/testdata/records")
	if err != nil {
		t.Fatal(err)
	}
	sent := newSentinels(t)
	start := time.Now()
	var failed []outcome
	for _, p := range paths {
		c, err := loadCase(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(c.name, func(t *testing.T) {
			o := runCase(t, bin, c, sent, fixtures)
			if len(o.problems) > 0 {
				failed = append(failed, o)
				t.Errorf("exit %d, %.2f s, %d MiB: %s\n\toutput: %s", o.exit, o.wall.Seconds(), o.rssKiB>>10, strings.Join(o.problems, "; "), o.excerpt)
			}
		})
	}
	t.Logf("%d case(s), %d failed, %.1f s", len(paths), len(failed), time.Since(start).Seconds())
	if len(failed) > 0 {
		t.Log("failures:\n" + table(failed))
	}
}

// table is a compact text table of failed cases.
func table(os []outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-48s %4s %6s %6s  %s\n", "case", "exit", "wall s", "MiB", "problems")
	for _, o := range os {
		fmt.Fprintf(&b, "%-48s %4d %6.2f %6d  %s\n", o.name, o.exit, o.wall.Seconds(), o.rssKiB>>10, strings.Join(o.problems, "; "))
	}
	return b.String()
}

// gpuctlBinary is GPUCTL_BIN (relative to the repository root when not
// absolute) or a binary built once for the test.
func gpuctlBinary(t *testing.T) string {
	if b := os.Getenv("GPUCTL_BIN"); b != "" {
		if !filepath.IsAbs(b) {
			b = filepath.Join("..", "..", b)
		}
		abs, err := filepath.Abs(b)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	bin := filepath.Join(t.TempDir(), "gpuctl")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/gpuctl")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// checkLimitRuns makes sure the Go binary starts under the address-space
// limit at all, so that a failing case is the case's doing.
func checkLimitRuns(t *testing.T, bin string) {
	r := runLimited(context.Background(), bin, t.TempDir(), os.Environ(), []string{"version"})
	t.Logf("gpuctl version under ulimit -v %d KiB: exit %d, %d MiB peak RSS", addressSpaceKiB, r.exit, r.rssKiB>>10)
	if r.err != nil || r.exit != 0 {
		t.Fatalf("gpuctl version under ulimit -v %d: exit %d, %v\n%s", addressSpaceKiB, r.exit, r.err, r.stderr)
	}
}

// childResult is what a limited child did.
type childResult struct {
	exit           int
	signal         string
	wall           time.Duration
	rssKiB         int64
	stdout, stderr []byte
	err            error
	timedOut       bool
	dropped        int // bytes of output past maxOutput
}

// runLimited runs bin args in dir under the address-space limit, killed
// (with its process group) after hardTimeout. It runs them through this
// test binary started again as a small runner (runnerMain): a child that
// Go starts shares the parent's memory until it execs (vfork), and Linux
// counts the parent's peak RSS into the child's, so gpuctl's own peak is
// only what a small parent reports.
func runLimited(ctx context.Context, bin, dir string, env, args []string) childResult {
	ctx, cancel := context.WithTimeout(ctx, hardTimeout)
	defer cancel()
	resDir, err := os.MkdirTemp("", "hostile-result-")
	if err != nil {
		return childResult{err: err}
	}
	defer os.RemoveAll(resDir)
	resFile := filepath.Join(resDir, "result")
	self, err := os.Executable()
	if err != nil {
		return childResult{err: err}
	}
	cmd := exec.CommandContext(ctx, self, append([]string{bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, env...), runnerEnv+"="+resFile)
	stdout, stderr := &capped{max: maxOutput}, &capped{max: maxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	r := childResult{wall: time.Since(start), stdout: stdout.Bytes(), stderr: stderr.Bytes(), timedOut: ctx.Err() != nil, dropped: stdout.dropped + stderr.dropped}
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything left of the group
	}
	if r.timedOut {
		r.exit = -1
		return r
	}
	if err := readRunnerResult(resFile, &r); err != nil {
		r.err = fmt.Errorf("runner: %v (%v)", err, runErr)
	}
	return r
}

// runnerEnv names the file the runner writes its result to; set, the test
// binary is the runner.
const runnerEnv = "GPUCTL_HOSTILE_RUNNER_RESULT"

func TestMain(m *testing.M) {
	if res := os.Getenv(runnerEnv); res != "" {
		os.Exit(runnerMain(res, os.Args[1], os.Args[2:]))
	}
	os.Exit(m.Run())
}

// runnerMain runs bin args under ulimit -v (sh, exec'd into gpuctl) with
// this process's streams and writes "exit signal wall-ns maxrss-KiB" to
// res.
func runnerMain(res, bin string, args []string) int {
	script := "ulimit -v " + strconv.Itoa(addressSpaceKiB) + ` && exec "$0" "$@"`
	cmd := exec.Command("sh", append([]string{"-c", script, bin}, args...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, runnerEnv+"=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 1
	}
	ps := cmd.ProcessState
	sig := "-"
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig = strings.ReplaceAll(ws.Signal().String(), " ", "_")
	}
	var rss int64
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	line := fmt.Sprintf("%d %s %d %d\n", ps.ExitCode(), sig, wall.Nanoseconds(), rss)
	if err := os.WriteFile(res, []byte(line), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 1
	}
	return 0
}

func readRunnerResult(path string, r *childResult) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var sig string
	var wall int64
	if _, err := fmt.Sscanf(string(data), "%d %s %d %d", &r.exit, &sig, &wall, &r.rssKiB); err != nil {
		return err
	}
	if sig != "-" {
		r.signal = strings.ReplaceAll(sig, "_", " ")
	}
	r.wall = time.Duration(wall)
	return nil
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	bytes.Buffer
	max     int
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	if room := max(c.max-c.Len(), 0); room < n {
		c.dropped += n - room
		p = p[:room]
	}
	c.Buffer.Write(p)
	return n, nil
}

// wallLimit is GPUCTL_HOSTILE_WALL seconds, 2 s by default.
func wallLimit() time.Duration {
	if s := os.Getenv("GPUCTL_HOSTILE_WALL"); s != "" {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 {
			return time.Duration(f * float64(time.Second))
		}
	}
	return 2 * time.Second
}

// runCase lays the case out in a fresh folder (secret.txt beside work/),
// runs it and judges what it did.
func runCase(t *testing.T, bin string, c *hostileCase, sent sentinels, fixtures string) outcome {
	top := t.TempDir()
	work := filepath.Join(top, "work")
	home := filepath.Join(top, "home")
	secret := filepath.Join(top, "secret.txt")
	for _, d := range []string{work, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte(sent.file+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	v := vars{secret: secret, work: work, fixtures: fixtures}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "NO_COLOR=1", "KUBECONFIG=", "HOSTILE_SENTINEL_TOKEN=" + sent.env}
	if err := c.extract(work, v); err != nil {
		t.Fatal(err)
	}
	for _, g := range c.gens {
		if err := generate(work, v, g); err != nil {
			t.Fatalf("gen %s: %v", strings.Join(g, " "), err)
		}
	}
	for _, s := range c.setup {
		if err := setup(bin, work, env, v, s); err != nil {
			t.Fatalf("setup %s: %v", strings.Join(s, " "), err)
		}
	}
	before, err := snapshot(top)
	if err != nil {
		t.Fatal(err)
	}
	args, err := expandArgs(work, c.args, v)
	if err != nil {
		t.Fatal(err)
	}
	r := runLimited(context.Background(), bin, work, env, args)
	o := outcome{name: c.name, exit: r.exit, wall: r.wall, rssKiB: r.rssKiB, excerpt: sent.excerpt(r)}
	written, werr := changedFiles(top, before)
	if werr != nil {
		t.Fatal(werr)
	}
	o.problems = append(judge(c, r, written, sent, v), kept(c, work, top, v)...)
	return o
}

// expandArgs expands the placeholders of args and, as a shell would, an
// argument holding * into the names it matches under work (sorted).
func expandArgs(work string, args []string, v vars) ([]string, error) {
	var out []string
	for _, a := range args {
		a = v.expand(a)
		if !strings.Contains(a, "*") {
			out = append(out, a)
			continue
		}
		m, err := filepath.Glob(filepath.Join(work, a))
		if err != nil || len(m) == 0 {
			return nil, fmt.Errorf("args: %s matches nothing (%v)", a, err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(work, p)
			out = append(out, rel)
		}
	}
	return out, nil
}

// judge lists what is wrong with a case's run.
func judge(c *hostileCase, r childResult, written map[string][]byte, sent sentinels, v vars) []string {
	var p []string
	out := append(append([]byte{}, r.stdout...), r.stderr...)
	switch {
	case r.err != nil:
		p = append(p, "did not run: "+r.err.Error())
	case r.timedOut:
		p = append(p, fmt.Sprintf("killed after %s", hardTimeout))
	case r.signal != "":
		p = append(p, "ended by "+r.signal)
	case !containsInt(c.exits, r.exit):
		p = append(p, fmt.Sprintf("exit %d, want %s", r.exit, joinInts(c.exits)))
	}
	if r.dropped > 0 {
		p = append(p, fmt.Sprintf("more than %d MiB of output", maxOutput>>20))
	}
	if w := wallLimit(); r.wall > w {
		p = append(p, fmt.Sprintf("wall %.2f s > %s", r.wall.Seconds(), w))
	}
	if r.rssKiB > maxRSSKiB {
		p = append(p, fmt.Sprintf("peak RSS %d MiB > %d MiB", r.rssKiB>>10, maxRSSKiB>>10))
	}
	if traceRE.Match(out) {
		p = append(p, "Go runtime trace or panic in the output")
	}
	p = append(p, leaks(out, written, sent, c, v)...)
	return append(p, messageProblems(c, r, out, written)...)
}

// kept lists the files of keep: that are gone; a name is relative to the
// case's folder, ../NAME beside it.
func kept(c *hostileCase, work, top string, v vars) []string {
	var p []string
	for _, k := range c.keep {
		path := filepath.Join(work, filepath.FromSlash(v.expand(k)))
		if !strings.HasPrefix(path, top) {
			continue
		}
		if _, err := os.Lstat(path); err != nil {
			p = append(p, k+" was deleted")
		}
	}
	return p
}

// leaks lists the sentinels and absent texts found in the output or in a
// file written.
func leaks(out []byte, written map[string][]byte, sent sentinels, c *hostileCase, v vars) []string {
	var p []string
	if f := sent.found(out); len(f) > 0 {
		p = append(p, "output holds the sentinel of "+strings.Join(f, ", "))
	}
	for _, name := range sortedKeys(written) {
		if f := sent.found(written[name]); len(f) > 0 {
			p = append(p, fmt.Sprintf("%s holds the sentinel of %s", name, strings.Join(f, ", ")))
		}
	}
	for _, re := range c.refuse {
		if re.Match(out) {
			p = append(p, "output matches "+re.String())
		}
		for _, name := range sortedKeys(written) {
			if re.Match(written[name]) {
				p = append(p, name+" matches "+re.String())
			}
		}
	}
	for _, a := range c.absent {
		a = v.expand(a)
		if bytes.Contains(out, []byte(a)) {
			p = append(p, fmt.Sprintf("output holds %q", a))
		}
		for _, name := range sortedKeys(written) {
			if bytes.Contains(written[name], []byte(a)) {
				p = append(p, fmt.Sprintf("%s holds %q", name, a))
			}
		}
	}
	return p
}

// messageProblems: an error names where it is (file:line:col or the path);
// a report page marks the record's trust. For a case with trust: the page
// (stdout or a file written) must carry it unless the exit is 2 (the record
// refused, no page), and an explicit where: is matched against the output
// and the files written; otherwise where: (or a path of the case) against
// the output.
func messageProblems(c *hostileCase, r childResult, out []byte, written map[string][]byte) []string {
	var p []string
	if c.trust != nil && r.exit != 2 && !matchAny(c.trust, r.stdout, written) {
		p = append(p, "the page does not mark the record "+c.trust.String())
	}
	switch {
	case c.trust != nil && c.where != nil:
		if !matchAny(c.where, out, written) {
			p = append(p, "neither the output nor the page names "+c.where.String())
		}
	case c.trust == nil || r.exit == 2:
		where := c.where
		if where == nil {
			where = c.defaultWhere()
		}
		if !where.Match(out) {
			p = append(p, "the message names no path of the case ("+where.String()+")")
		}
	}
	return p
}

// matchAny reports whether re matches data or one of the files written.
func matchAny(re *regexp.Regexp, data []byte, written map[string][]byte) bool {
	if re.Match(data) {
		return true
	}
	for _, w := range written {
		if re.Match(w) {
			return true
		}
	}
	return false
}

func containsInt(s []int, n int) bool {
	for _, x := range s {
		if x == n {
			return true
		}
	}
	return false
}

func joinInts(s []int) string {
	var parts []string
	for _, n := range s {
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, "|")
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
