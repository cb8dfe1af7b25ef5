package accept

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
)

// TestCaptureDiagnostics: a base64 block becomes the decoded file, notes
// are kept, the rest of a log is its own file; a block over the cap, of an
// unknown name or without its end is a note, not a file.
func TestCaptureDiagnostics(t *testing.T) {
	block, err := os.ReadFile("testdata/diagnostics/bug-report-block.log")
	if err != nil {
		t.Fatal(err)
	}
	big := base64.StdEncoding.EncodeToString(make([]byte, BugReportCapBytes+1))
	for _, tc := range []struct {
		name      string
		logs      map[string][]byte
		files     []string
		notes     []string
		gzipBegin string
	}{
		{"block", map[string][]byte{ContainerBugReport: block, ContainerDmesg: []byte("[Mon Nov 30 08:00:00 2026] NVRM: Xid (PCI:0000:07:00): 79\n")},
			[]string{"dmesg.log", "nvidia-bug-report.log.gz"}, nil, "fake report"},
		{"fallback", map[string][]byte{ContainerBugReport: []byte(markerNote + "nvidia-bug-report.sh is not in the image: nvidia-smi -q instead\n==============NVSMI LOG==============\n")},
			[]string{"nvidia-bug-report.log"}, []string{"nvidia-bug-report.sh is not in the image: nvidia-smi -q instead"}, ""},
		{"over the cap", map[string][]byte{ContainerBugReport: []byte(markerBegin + "nvidia-bug-report.log.gz base64\n" + big + "\n" + markerEnd + "nvidia-bug-report.log.gz\n")},
			nil, []string{"over the 6 MiB cap"}, ""},
		{"unknown name", map[string][]byte{ContainerBugReport: []byte(markerBegin + "../../etc/passwd base64\ncm9vdAo=\n" + markerEnd + "../../etc/passwd\n")},
			nil, []string{"not a bug report gpuctl keeps"}, ""},
		{"truncated", map[string][]byte{ContainerBugReport: []byte(markerBegin + "nvidia-bug-report.log.gz base64\nH4sIAAAA\n")},
			nil, []string{"no end marker"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CaptureDiagnostics(StageOutput{Logs: tc.logs})
			var names []string
			for _, f := range c.Files {
				names = append(names, f.Name)
			}
			if strings.Join(names, " ") != strings.Join(tc.files, " ") {
				t.Errorf("files %v, want %v", names, tc.files)
			}
			for i, want := range tc.notes {
				if i >= len(c.Notes) || !strings.Contains(c.Notes[i], want) {
					t.Errorf("notes %q, want %q", c.Notes, tc.notes)
				}
			}
			if tc.gzipBegin != "" {
				zr, err := gzip.NewReader(bytes.NewReader(c.Files[len(c.Files)-1].Data))
				if err != nil {
					t.Fatal(err)
				}
				text, _ := io.ReadAll(zr)
				if !strings.HasPrefix(string(text), tc.gzipBegin) {
					t.Errorf("decoded report %q", text)
				}
			}
		})
	}
}

// TestSplitHostEngineLog: the judge reads dcgmi's JSON, the host engine's
// log behind the marker goes to the diagnostics evidence.
func TestSplitHostEngineLog(t *testing.T) {
	log := []byte("{\"DCGM Diagnostic\": {}}\n\n" + HostEngineLogMarker + "\n2026-11-30 08:00:01.000 ERROR [1:2] nvml error\n")
	d, e := splitHostEngineLog(log)
	if string(d) != "{\"DCGM Diagnostic\": {}}\n\n" || !strings.HasPrefix(string(e), "2026-11-30") {
		t.Errorf("split %q | %q", d, e)
	}
	if d, e := splitHostEngineLog([]byte("{}\n")); string(d) != "{}\n" || e != nil {
		t.Errorf("no marker: %q | %q", d, e)
	}
}

// jobWatch records the stages whose Job was created.
func jobWatch(t *testing.T, h *harness) (stop func() []Stage) {
	t.Helper()
	w, err := h.client.BatchV1().Jobs(testNS).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []Stage
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if j, ok := ev.Object.(*batchv1.Job); ok && ev.Type == watch.Added {
				mu.Lock()
				seen = append(seen, Stage(j.Labels[LabelStage]))
				mu.Unlock()
			}
		}
	}()
	return func() []Stage {
		w.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// TestRunDiagnosticsAfterFail: a FAIL in inventory ends the node Job and
// runs the diagnostics Job after it (a PASS run is one node Job); its logs
// are the run's evidence and the node stays FAIL; a PASS run and
// --no-diagnostics create no diagnostics Job; selected, it runs on
// a PASS run too. Nothing is left behind (run asserts it).
func TestRunDiagnosticsAfterFail(t *testing.T) {
	block, err := os.ReadFile("testdata/diagnostics/bug-report-block.log")
	if err != nil {
		t.Fatal(err)
	}
	fail := map[Stage]string{StageInventory: "FAIL:row remapping pending", StageDiagnostics: string(block)}
	for _, tc := range []struct {
		name   string
		logs   map[Stage]string
		noDiag bool
		extra  []Stage
		jobs   string
		diag   diag.Verdict
		run    diag.Verdict
	}{
		{"fail", fail, false, nil, "inventory diagnostics", diag.Pass, diag.Fail},
		{"fail --no-diagnostics", fail, true, nil, "inventory", diag.Skipped, diag.Fail},
		{"pass", map[Stage]string{StageDiagnostics: string(block)}, false, nil, "inventory", diag.Skipped, diag.Pass},
		{"pass selected", map[Stage]string{StageDiagnostics: string(block)}, true, []Stage{StageDiagnostics}, "inventory diagnostics", diag.Pass, diag.Pass},
		{"fail, nothing captured", map[Stage]string{StageInventory: "FAIL:x", StageDiagnostics: " "}, false, nil, "inventory diagnostics", diag.Inconclusive, diag.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.logs)
			h.plan.NoDiagnostics = tc.noDiag
			h.plan.Stages = append(append([]Stage(nil), DefaultStages...), tc.extra...)
			stop := jobWatch(t, h)
			res := run(t, h, succeed)
			var jobs []string
			for _, st := range stop() {
				jobs = append(jobs, string(st))
			}
			if got := strings.Join(jobs, " "); got != tc.jobs {
				t.Errorf("Jobs of stages %q, want %q", got, tc.jobs)
			}
			d := res.Stages[len(res.Stages)-1]
			if d.Name != StageDiagnostics || d.Verdict != tc.diag || res.Verdict != tc.run || res.Predicate.Verdict != tc.run {
				t.Fatalf("diagnostics %s (%s), run %s, want %s and %s", d.Verdict, d.Reason, res.Verdict, tc.diag, tc.run)
			}
			if probs := record.CheckEvidence(h.plan.EvidenceDir, res.Stages); len(probs) > 0 {
				t.Error(probs)
			}
			if tc.diag != diag.Pass {
				return
			}
			if _, err := os.Stat(filepath.Join(h.plan.EvidenceDir, "diagnostics.nvidia-bug-report.log.gz")); err != nil {
				t.Error(err)
			}
			// Re-judged offline, the capture stays what it was.
			off, err := Rejudge(h.plan.EvidenceDir, ParserFunc(fakeParser), DefaultBaselines(), "test", rejudgedAt)
			if err != nil {
				t.Fatal(err)
			}
			if od := off.Stages[len(off.Stages)-1]; od.Verdict != d.Verdict || od.Reason != d.Reason || off.Verdict != tc.run {
				t.Errorf("offline diagnostics %s %q, run %s", od.Verdict, od.Reason, off.Verdict)
			}
			if res.Predicate.Diagnostics == nil || !strings.Contains(res.Predicate.Diagnostics.Reason, "nvidia-bug-report.log.gz") {
				t.Errorf("record diagnostics %+v", res.Predicate.Diagnostics)
			}
		})
	}
}
