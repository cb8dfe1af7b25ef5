package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// corpusDir is the corpus of real tool outputs in the repository's testdata.
const corpusDir = "../../testdata/corpus"

// corpusKind is the kind each corpus folder (or file-name prefix) holds.
func corpusKind(rel string) probe.Kind {
	dir, name := filepath.Split(rel)
	switch strings.TrimSuffix(dir, "/") {
	case "cuda-samples":
		return probe.KindCUDA
	case "dcgm":
		return probe.KindDCGM
	case "k8s":
		return probe.KindComponentLog
	case "nccl-tests":
		return probe.KindNCCL
	case "topo":
		return probe.KindTopo
	case "failures":
		if strings.HasPrefix(name, "dmesg") {
			return probe.KindDmesg
		}
	}
	return probe.KindNvidiaSMI
}

var reVerdict = regexp.MustCompile(`^\| ([^|]+?) \| (ok|fail|unknown|\(not a parse kind)`)

func corpusVerdicts(t *testing.T) map[string]diag.ReportVerdict {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "VERDICTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]diag.ReportVerdict{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := reVerdict.FindStringSubmatch(sc.Text()); m != nil {
			v := diag.ReportVerdict(m[2])
			if strings.HasPrefix(m[2], "(") {
				v = diag.ReportUnknown
			}
			out[m[1]] = v
		}
	}
	return out
}

// TestParseAutoEveryCorpusFile runs `gpuctl parse auto FILE -o json` on every
// file of the corpus: the detected kind, the verdict of VERDICTS.md
// and the exit code that goes with it.
func TestParseAutoEveryCorpusFile(t *testing.T) {
	verdicts := corpusVerdicts(t)
	n := 0
	err := filepath.WalkDir(corpusDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".md") {
			return err
		}
		rel, _ := filepath.Rel(corpusDir, path)
		rel = filepath.ToSlash(rel)
		n++
		t.Run(rel, func(t *testing.T) {
			streams, _, out, errOut := TestStreams()
			code := Run(context.Background(), []string{"parse", "auto", path, "-o", "json"}, streams)
			var rep struct {
				Kind    probe.Kind         `json:"kind"`
				Verdict diag.ReportVerdict `json:"verdict"`
			}
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s\nstderr: %s", err, out, errOut)
			}
			if want := corpusKind(rel); rep.Kind != want {
				t.Errorf("kind %s, want %s", rep.Kind, want)
			}
			want, ok := verdicts[rel]
			if !ok {
				t.Fatalf("%s is not in VERDICTS.md", rel)
			}
			if rep.Verdict != want {
				t.Errorf("verdict %s, want %s", rep.Verdict, want)
			}
			if code != verdictExitCode(want) {
				t.Errorf("exit %d, want %d", code, verdictExitCode(want))
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr: %s", errOut)
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Fatalf("only %d corpus files found under %s", n, corpusDir)
	}
}

type fakeProber struct {
	rep *probe.NVMLReport
	err error
}

func (f fakeProber) Probe(context.Context) (*probe.NVMLReport, error) { return f.rep, f.err }

func runProbe(t *testing.T, p probe.Prober, perr error, args ...string) (int, string, string) {
	t.Helper()
	streams, _, out, errOut := TestStreams()
	root := NewRootCommand(streams)
	for _, c := range root.Commands() {
		if c.Name() == "probe" {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(newProbeCommandWith(streams, func() (probe.Prober, error) { return p, perr }))
	root.SetArgs(append([]string{"probe", "nvml"}, args...))
	err := root.ExecuteContext(context.Background())
	code := exitCodeOf(err)
	if err != nil {
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Err != nil {
			errOut.WriteString("error: " + err.Error() + "\n")
		}
	}
	return code, out.String(), errOut.String()
}

func TestProbeNVML(t *testing.T) {
	pending := true
	rep := &probe.NVMLReport{DriverVersion: "550.54.15", GPUs: []probe.SMIGPU{{Index: 0, BusID: "0000:00:00.0", RowRemapPending: &pending}}}
	probe.JudgeNVML(rep)
	code, out, _ := runProbe(t, fakeProber{rep: rep}, nil, "-o", "json")
	if code != ExitCheckFailed || !strings.Contains(out, `"rule": "row-remap-pending"`) || !strings.Contains(out, `"kind": "nvml"`) {
		t.Errorf("exit %d\n%s", code, out)
	}

	code, _, errOut := runProbe(t, fakeProber{err: probe.ErrNVMLUnavailable}, nil)
	if code != ExitInconclusive || !strings.Contains(errOut, "NVML unavailable") {
		t.Errorf("no NVML: exit %d, %q", code, errOut)
	}

	code, _, errOut = runProbe(t, nil, probe.ErrNVMLNotCompiled)
	if code != ExitInconclusive || !strings.Contains(errOut, "not compiled in") {
		t.Errorf("not compiled: exit %d, %q", code, errOut)
	}

	code, _, _ = runProbe(t, fakeProber{rep: rep}, nil, "-o", "csv")
	if code != ExitUsage {
		t.Errorf("bad -o: exit %d", code)
	}
}
