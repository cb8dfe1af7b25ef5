package accept

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/safefs"
)

// The diagnostics stage (StageDiagnostics) keeps what NVIDIA support asks
// for when a node FAILs: the output of nvidia-bug-report.sh, the kernel log and DCGM's host engine
// log. nvidia-bug-report.sh comes with the driver package, not with the
// container toolkit: in a pod it exists only where the driver's directory
// is mounted (GKE mounts the host's driver at /usr/local/nvidia, its bin/
// on no PATH), so the container looks on PATH and in /usr/local/nvidia/bin
// and prints `nvidia-smi -q` instead, saying so, where it finds none. On GPU
// Operator nodes the script is in the driver container
// (https://github.com/NVIDIA/NVSentinel/pull/1677), which gpuctl does not
// enter.

// ContainerBugReport is the diagnostics container that runs
// nvidia-bug-report.sh (or nvidia-smi -q).
const ContainerBugReport = "nvidia-bug-report"

// BugReportCapBytes is the largest bug report the diagnostics stage keeps:
// 6 MiB, whose base64 (8 MiB) stays under the kubelet's default
// containerLogMaxSize of 10 MiB, beyond which the pod log it is read from
// is rotated (https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/),
// and under safefs.Evidence's 16 MiB that verify reads.
const BugReportCapBytes = 6 << 20

// The markers of the diagnostics and dcgm logs. A base64 block is
// "==> gpuctl: begin NAME base64" ... "==> gpuctl: end NAME"; a note line
// "==> gpuctl: note TEXT" says what the container could not do.
const (
	markerBegin = "==> gpuctl: begin "
	markerEnd   = "==> gpuctl: end "
	markerNote  = "==> gpuctl: note "
	// HostEngineLogMarker separates, in the dcgm stage's log, dcgmi's
	// output from the host engine's log that follows it on a failed diag.
	HostEngineLogMarker = "==> gpuctl: nv-hostengine log"
	// HostEngineLogPath is where nv-hostengine writes its log by default
	// (DCGM_LOGGING_DEFAULT_HOSTENGINE_FILE, common/DcgmLogging.h).
	HostEngineLogPath = "/var/log/nv-hostengine.log"
)

// bugReportNames are the files nvidia-bug-report.sh writes with
// --output-file /tmp/nvidia-bug-report.log: gzip-compressed where gzip is
// there, else plain.
var bugReportNames = []string{"nvidia-bug-report.log.gz", "nvidia-bug-report.log"}

// bugReportScript runs nvidia-bug-report.sh and prints its file base64
// between markers (up to BugReportCapBytes), else a note and nvidia-smi -q.
func bugReportScript() string {
	return fmt.Sprintf(`B=$(command -v nvidia-bug-report.sh || { [ -x /usr/local/nvidia/bin/nvidia-bug-report.sh ] && echo /usr/local/nvidia/bin/nvidia-bug-report.sh; })
kept=
if [ -n "$B" ]; then
  cd /tmp && "$B" --output-file /tmp/nvidia-bug-report.log >/dev/null 2>&1
  for f in %[1]s; do
    [ -s "/tmp/$f" ] || continue
    n=$(wc -c < "/tmp/$f")
    if [ "$n" -le %[2]d ]; then echo "%[3]s$f base64"; base64 "/tmp/$f"; echo "%[4]s$f"; kept=1
    else echo "%[5]s$f is $n bytes, over the cap of %[2]d bytes"; fi
    break
  done
  [ -n "$kept" ] || echo "%[5]snvidia-bug-report.sh ($B) wrote no report: nvidia-smi -q instead"
else
  echo "%[5]snvidia-bug-report.sh is not in the image or the driver mount (PATH, /usr/local/nvidia/bin): nvidia-smi -q instead"
fi
[ -n "$kept" ] || PATH="$PATH:/usr/local/nvidia/bin" nvidia-smi -q`,
		strings.Join(bugReportNames, " "), BugReportCapBytes, markerBegin, markerEnd, markerNote)
}

// diagnosticsContainers: nvidia-bug-report.sh (root, which it insists on)
// with the node's GPUs; with privilege the kernel log (dmesg) as well.
func diagnosticsContainers(s JobSpec) ([]corev1.Container, []corev1.Volume) {
	cs := []corev1.Container{container(ContainerBugReport, s.Image.Ref, []string{"sh", "-c", bugReportScript()}, smiEnv(), gpuLimit(s.GPUs), asImageUser)}
	if s.AllowPrivileged {
		cs = append(cs, container(ContainerDmesg, s.Image.Ref, []string{"dmesg", "-T"}, nil, corev1.ResourceRequirements{}, asPrivileged))
	}
	return cs, nil
}

// evidenceSkip says why evidence stage st does not run (""; it runs):
// the run is over or stopped for a reason no Job gets past, or, not
// selected, no probe Job FAILed or --no-diagnostics turned it off.
func (s *runState) evidenceSkip(ctx context.Context, selected bool) string {
	switch {
	case ctx.Err() != nil:
		return "run interrupted or timed out"
	case s.stopWhy != "":
		return s.stopWhy
	case s.tr.nodeGone(s.plan.Node):
		return fmt.Sprintf("node %s was deleted", s.plan.Node)
	case selected:
		return ""
	case s.plan.NoDiagnostics:
		return "--no-diagnostics: no capture after the FAIL"
	case !jobStageFailed(s.results):
		return "not selected (it runs by itself after a stage of the node Job FAILs)"
	}
	return ""
}

// jobStageFailed reports whether a stage that ran a Job on the node FAILed:
// a FAIL of the API-only kubernetes stage (a node not Ready, no device
// plugin) says the node may run no pod, so nothing is captured by itself.
func jobStageFailed(results []StageResult) bool {
	for _, r := range results {
		if d, _ := stageOf(r.Name); r.Verdict == diag.Fail && d.containers != nil && !d.evidence {
			return true
		}
	}
	return false
}

// runEvidenceStage runs evidence stage d after the node's stages, when
// selected or after a FAIL (evidenceSkip), else records it SKIPPED.
func (r *Runner) runEvidenceStage(ctx context.Context, s *runState, d stageDef, selected bool) (StageResult, error) {
	if why := s.evidenceSkip(ctx, selected); why != "" {
		return result(d.name, diag.Skipped, "%s", why), nil
	}
	// A selected stage's pods were held to the namespace's Pod Security
	// level before the run (PrepareNamespace); an automatic one is held
	// here, so that a rejected pod does not wait out the stage timeout.
	if why := r.podSecurityRejects(ctx, s, d.name); !selected && why != "" {
		return withCause(result(d.name, diag.Inconclusive, "could not capture: %s", why), CauseCluster), nil
	}
	r.progress(s.plan.Node, d.name, "")
	res, err := d.run(r, ctx, s, d.name)
	if err != nil {
		return StageResult{}, err
	}
	r.progress(s.plan.Node, d.name, res.Verdict)
	s.log.Info("stage finished", "stage", d.name, "verdict", res.Verdict, "cause", res.Cause, "reason", res.Reason)
	return res, nil
}

// podSecurityRejects says why the run's namespace would reject stage st's
// pods (PodSecurityProblem), or "" (also when the namespace cannot be read:
// the stage then says what happened to its pod).
func (r *Runner) podSecurityRejects(ctx context.Context, s *runState, st Stage) string {
	ns, err := r.Client.CoreV1().Namespaces().Get(ctx, s.plan.Namespace, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return PodSecurityProblem(ns, s.plan.AllowPrivileged, []Stage{st})
}

// diagnosticsStage runs the diagnostics Job and saves what it captured:
// the bug report decoded (diagnostics.nvidia-bug-report.log.gz), the rest
// of each container's log, and the host engine log of the dcgm stage's
// evidence (diagnostics.nv-hostengine.log). PASS: something was captured;
// INCONCLUSIVE (cause harness, or the Job's): nothing was.
func (r *Runner) diagnosticsStage(ctx context.Context, s *runState, st Stage) (StageResult, error) {
	started := r.now()
	finish := func(res StageResult) StageResult {
		res.Started, res.Finished = started, r.now()
		return res
	}
	out, img, early, err := r.execJob(ctx, s, st)
	if err != nil || early != nil {
		return finishEarly(early, finish), err
	}
	c := CaptureDiagnostics(out)
	if hl := hostEngineLog(s.plan.EvidenceDir); len(hl) > 0 {
		c.Files = append(c.Files, CapturedFile{Name: "nv-hostengine.log", Data: hl})
	}
	var ev []Evidence
	for _, f := range c.Files {
		e, err := s.saveBytes(string(st)+"."+f.Name, f.Data)
		if err != nil {
			return StageResult{}, fmt.Errorf("saving evidence: %w", err)
		}
		ev = append(ev, e)
	}
	e, err := s.save(string(st)+".status.json", out)
	if err != nil {
		return StageResult{}, fmt.Errorf("saving evidence: %w", err)
	}
	res := judgeCapture(st, out, c)
	res.Image, res.Evidence = img.Ref, append(ev, e)
	return finish(res), nil
}

// judgeCapture: INCONCLUSIVE when the Job did not run or captured nothing,
// else PASS naming what was captured and what could not be.
func judgeCapture(st Stage, out StageOutput, c Capture) StageResult {
	if out.Harness != "" && len(c.Files) == 0 {
		return withCause(result(st, diag.Inconclusive, "could not capture: %s", out.Harness), cmpOr(out.Cause, CauseHarness))
	}
	if len(c.Files) == 0 {
		return withCause(result(st, diag.Inconclusive, "could not capture: the diagnostics containers printed nothing"), CauseHarness)
	}
	var got []string
	for _, f := range c.Files {
		got = append(got, fmt.Sprintf("%s (%s)", f.Name, safefs.Size(int64(len(f.Data)))))
	}
	reason := "captured " + strings.Join(got, ", ")
	if len(c.Notes) > 0 {
		reason += "; " + strings.Join(c.Notes, "; ")
	}
	return withCause(result(st, diag.Pass, "%s", reason), CauseNode)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Capture is what the diagnostics containers printed, as evidence files.
type Capture struct {
	// Files are named CONTAINER.log, or the name of a decoded block
	// ("nvidia-bug-report.log.gz"); in container order.
	Files []CapturedFile
	// Notes are what the containers said they could not do (a marker's
	// "note" line, a block that did not decode).
	Notes []string
}

// CapturedFile is one evidence file of a capture.
type CapturedFile struct {
	Name string
	Data []byte
}

// CaptureDiagnostics turns the diagnostics containers' logs into evidence
// files: a base64 block of a known bug report name becomes that file
// (decoded, at most BugReportCapBytes), the rest of the log CONTAINER.log
// (when not blank). Notes collect the marker notes and blocks that did not
// decode.
func CaptureDiagnostics(out StageOutput) Capture {
	var c Capture
	for _, name := range sortedKeys(out.Logs) {
		rest, files, notes := splitBlocks(out.Logs[name])
		c.Files = append(c.Files, files...)
		c.Notes = append(c.Notes, notes...)
		if len(bytes.TrimSpace(rest)) > 0 {
			c.Files = append(c.Files, CapturedFile{Name: name + ".log", Data: rest})
		}
	}
	return c
}

// splitBlocks takes the base64 blocks and note lines out of a log: the log
// without the blocks, the decoded files and the notes.
func splitBlocks(log []byte) (rest []byte, files []CapturedFile, notes []string) {
	var b blockReader
	for _, line := range bytes.SplitAfter(log, []byte("\n")) {
		rest = b.line(line, rest, &files, &notes)
	}
	if b.name != "" {
		notes = append(notes, fmt.Sprintf("%s: the block has no end marker (the log is truncated)", b.name))
	}
	return rest, files, notes
}

// blockReader is splitBlocks' state: the name of the block being read
// ("" outside one) and its base64 text.
type blockReader struct {
	name string
	b64  bytes.Buffer
}

// line reads one line: a marker starts or ends a block, a note is kept,
// a line inside a block is base64, any other line goes to rest.
func (b *blockReader) line(line, rest []byte, files *[]CapturedFile, notes *[]string) []byte {
	t := strings.TrimSpace(string(line))
	switch {
	case b.name == "" && strings.HasPrefix(t, markerBegin):
		b.name = strings.TrimSuffix(strings.TrimPrefix(t, markerBegin), " base64")
		b.b64.Reset()
	case b.name != "" && t == markerEnd+b.name:
		f, err := decodeBlock(b.name, b.b64.Bytes())
		if err != nil {
			*notes = append(*notes, err.Error())
		} else {
			*files = append(*files, f)
		}
		b.name = ""
	case b.name != "":
		if b.b64.Len() <= base64.StdEncoding.EncodedLen(BugReportCapBytes)+BugReportCapBytes/64 {
			b.b64.WriteString(t)
		}
	case strings.HasPrefix(t, markerNote):
		*notes = append(*notes, strings.TrimPrefix(t, markerNote))
	default:
		return append(rest, line...)
	}
	return rest
}

// decodeBlock decodes a block of a known bug report name, at most
// BugReportCapBytes.
func decodeBlock(name string, b64 []byte) (CapturedFile, error) {
	known := false
	for _, n := range bugReportNames {
		known = known || n == name
	}
	if !known {
		return CapturedFile{}, fmt.Errorf("a block named %q is not a bug report gpuctl keeps", name)
	}
	data, err := base64.StdEncoding.DecodeString(string(b64))
	if err != nil {
		return CapturedFile{}, fmt.Errorf("%s: the block does not decode (%v)", name, err)
	}
	if len(data) > BugReportCapBytes {
		return CapturedFile{}, fmt.Errorf("%s is %s, over the %d MiB cap", name, safefs.Size(int64(len(data))), BugReportCapBytes>>20)
	}
	return CapturedFile{Name: name, Data: data}, nil
}

// hostEngineLog is the host engine log the dcgm stage's container printed
// after HostEngineLogMarker (dcgm.dcgmi.log in dir); nil when the dcgm
// stage did not run, passed, or printed none.
func hostEngineLog(dir string) []byte {
	root, err := safefs.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	data, err := root.ReadFile(string(StageDCGM)+"."+ContainerDCGM+".log", safefs.Evidence)
	if err != nil {
		return nil
	}
	_, after := splitHostEngineLog(data)
	return after
}

// splitHostEngineLog splits a dcgm container's log at HostEngineLogMarker:
// dcgmi's output, which the judge reads, and the host engine's log after
// it (nil when the log has no marker).
func splitHostEngineLog(data []byte) (diagOut, engineLog []byte) {
	i := bytes.Index(data, []byte("\n"+HostEngineLogMarker+"\n"))
	if i < 0 {
		return data, nil
	}
	return data[:i+1], data[i+len(HostEngineLogMarker)+2:]
}

// judgedLog is the part of container c's log of stage st that its judge
// reads: dcgmi's output without the host engine log behind it.
func judgedLog(st Stage, c string, data []byte) []byte {
	if st == StageDCGM && c == ContainerDCGM {
		d, _ := splitHostEngineLog(data)
		return d
	}
	return data
}

// recordDiagnostics puts the diagnostics stage's verdict and reason into
// the record.
func recordDiagnostics(p *Predicate, r StageResult, _ *runState) {
	p.Diagnostics = &StageSummary{Verdict: r.Verdict, Reason: r.Reason}
}
