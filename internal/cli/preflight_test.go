package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// Real outputs of the corpus (testdata/corpus/LOG.md gives each one's
// source) that the preflight tests judge.
const (
	// nvidia-smi -q of a healthy H100 80GB HBM3 x8 (driver 535.161.08;
	// leptonai/gpud's testdata).
	corpusSMIH100 = "nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt"
	// nvidia-smi -q of an A10 with a pending row remap (leptonai/gpud).
	corpusSMIA10RowRemap = "nvidia-smi/a10-x1-q-535.129.03.txt"
	// nvidia-smi -q of an H100 x8 cut off inside its first GPU (leptonai/gpud).
	corpusSMITruncated = "nvidia-smi/h100-80gb-hbm3-x8-q-535.183.01-truncated-garbled.txt"
	// nvidia-smi topo -m of an H100 x8, NV18 between every pair (sglang notes).
	corpusTopoH100 = "topo/h100-x8-8nic-sglang-checkenv-570.txt"
	// vectorAdd passing, and failing on an older driver (CUDA samples).
	corpusVecAddPass = "cuda-samples/vectoradd-pass-cuda12.5.txt"
	corpusVecAddFail = "cuda-samples/vectoradd-fail-driver-insufficient.txt"
	// nvidia-smi nvlink -s of an H100 x8, 18 links per GPU up (the
	// probe's testdata, its .source beside it).
	corpusNVLinkH100 = "../../internal/probe/testdata/nvidia-smi/nvlink-s-h100-80gb-hbm3-x8-550.90.07.txt"
	// corpusSMIH100 with GPU 3's row remap pending (testdata/derived).
	derivedSMIH100Remap = "../derived/nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08-gpu3-row-remap-pending.txt"
)

// corpusFile reads a file of the corpus.
func corpusFile(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// preflightDir writes files (--from-dir name -> corpus path) into a new
// folder.
func preflightDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, rel := range files {
		if err := os.WriteFile(filepath.Join(dir, name), corpusFile(t, rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// h100Files are a healthy H100 x8's outputs, vectorAdd on each GPU.
func h100Files() map[string]string {
	fs := map[string]string{"nvidia-smi-q.txt": corpusSMIH100, "topo.txt": corpusTopoH100}
	for _, i := range []string{"0", "1", "2", "3", "4", "5", "6", "7"} {
		fs["vectoradd-"+i+".txt"] = corpusVecAddPass
	}
	return fs
}

// with is fs with name's file replaced by corpus path rel.
func with(fs map[string]string, name, rel string) map[string]string {
	fs[name] = rel
	return fs
}

// runPreflight runs gpuctl preflight with tools and args; it returns the
// exit code, stdout and stderr.
func runPreflight(t *testing.T, tools preflightTools, args ...string) (int, string, string) {
	t.Helper()
	streams, _, out, errOut := TestStreams()
	f := NewFactory()
	root := newRootCommand(streams, f)
	for _, c := range root.Commands() {
		if c.Name() == "preflight" {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(newPreflightCommandWith(streams, f, tools))
	root.SetArgs(append([]string{"preflight"}, args...))
	err := root.ExecuteContext(context.Background())
	var ee *ExitError
	if err != nil && (!errors.As(err, &ee) || ee.Err != nil) {
		errOut.WriteString("error: " + err.Error() + "\n")
	}
	return exitCodeOf(err), out.String(), errOut.String()
}

// noTools is a machine without NVML, nvidia-smi or the CUDA sample, and
// without NVIDIA_VISIBLE_DEVICES.
func noTools() preflightTools {
	return preflightTools{
		newProber: func() (probe.Prober, error) { return nil, probe.ErrNVMLNotCompiled },
		lookPath:  func(name string) (string, error) { return "", errors.New("not found") },
		lookupEnv: func(string) (string, bool) { return "", false },
		run: func(context.Context, []string, string, ...string) ([]byte, int, error) {
			return nil, 0, errors.New("nothing runs here")
		},
	}
}

// stageVerdicts are the report's stage verdicts, "inventory=PASS ...".
func stageVerdicts(t *testing.T, out string) string {
	t.Helper()
	var rep accept.PreflightReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	var vs []string
	for _, s := range rep.Stages {
		vs = append(vs, string(s.Name)+"="+string(s.Verdict))
	}
	return strings.Join(vs, " ")
}

// TestPreflightCorpus judges real outputs of the corpus: PASS, FAIL and
// INCONCLUSIVE, with accept's judges and thresholds (the SKU's baseline
// link class, the spec pool's GPU count and product).
func TestPreflightCorpus(t *testing.T) {
	spec := []string{"--spec", "../../examples/gke-h100-acceptance-sweep.yaml", "--pool", "train-h100"}
	for _, tc := range []struct {
		name   string
		files  map[string]string
		args   []string
		code   int
		stages string
		want   string // in the summary
	}{
		{"healthy H100 x8 against the spec's pool", h100Files(), spec, ExitOK,
			"inventory=PASS topology=PASS cuda=PASS", "preflight PASS (expectations: spec ../../examples/gke-h100-acceptance-sweep.yaml (pool train-h100))"},
		{"healthy H100 x8 by flags", h100Files(), []string{"--gpus", "8", "--product", "NVIDIA H100 80GB HBM3", "--driver-min", "535.104"}, ExitOK,
			"inventory=PASS topology=PASS cuda=PASS", "all 28 GPU pairs NV18 as expected for h100-sxm-x8"},
		{"no CUDA sample output: cuda SKIPPED, not counted", map[string]string{"nvidia-smi-q.txt": corpusSMIH100, "topo.txt": corpusTopoH100}, nil, ExitOK,
			"inventory=PASS topology=PASS cuda=SKIPPED", "has no vectoradd.txt or vectoradd-0.txt"},
		{"wrong GPU count against the pool", h100Files(), []string{"--gpus", "4"}, ExitCheckFailed,
			"inventory=FAIL topology=SKIPPED cuda=SKIPPED", "expected 4 GPUs (flags --gpus)"},
		{"another driver than --driver", h100Files(), []string{"--driver", "550"}, ExitCheckFailed,
			"inventory=FAIL topology=SKIPPED cuda=SKIPPED", "driver 535.161.08, expected 550 (flags --driver)"},
		{"driver older than --driver-min", h100Files(), []string{"--driver-min", "550"}, ExitCheckFailed,
			"inventory=FAIL topology=SKIPPED cuda=SKIPPED", "driver 535.161.08 is older than 550, the oldest accepted"},
		{"pending row remap", map[string]string{"nvidia-smi-q.txt": corpusSMIA10RowRemap}, nil, ExitCheckFailed,
			"inventory=FAIL topology=SKIPPED cuda=SKIPPED", "a row remap is pending"},
		{"link class other than --link", h100Files(), []string{"--link", "NV12"}, ExitCheckFailed,
			"inventory=PASS topology=FAIL cuda=SKIPPED", "expected NV12 between every GPU pair"},
		{"CUDA sample failing on one GPU", with(h100Files(), "vectoradd-3.txt", corpusVecAddFail), nil, ExitCheckFailed,
			"inventory=PASS topology=PASS cuda=FAIL", "vectoradd-3: the CUDA runtime cannot use the node's driver"},
		{"--continue runs the stages after a FAIL", with(h100Files(), "nvidia-smi-q.txt", corpusSMIA10RowRemap), []string{"--continue"}, ExitCheckFailed,
			"inventory=FAIL topology=FAIL cuda=PASS", "topo -m shows 8 GPUs, expected 1"},
		{"truncated nvidia-smi -q, no topology", map[string]string{"nvidia-smi-q.txt": corpusSMITruncated}, nil, ExitInconclusive,
			"inventory=INCONCLUSIVE topology=INCONCLUSIVE cuda=SKIPPED", "the output is truncated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := preflightDir(t, tc.files)
			code, out, errOut := runPreflight(t, noTools(), append([]string{"--from-dir", dir, "-o", "json"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, errOut)
			}
			if got := stageVerdicts(t, out); got != tc.stages {
				t.Errorf("stages %s, want %s\n%s", got, tc.stages, errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("summary lacks %q:\n%s", tc.want, errOut)
			}
		})
	}
}

// fakeMachine is a GPU node's tools answering with corpus outputs:
// nvidia-smi -q -x / nvlink -s / topo -m and vectorAdd by argument.
type fakeMachine struct {
	t       *testing.T
	outputs map[string]string // command line -> corpus path ("" : no output)
	visible *string           // NVIDIA_VISIBLE_DEVICES; nil: unset
	prober  probe.Prober      // nil: NVML not compiled in
	ran     []string
}

func (m *fakeMachine) tools() preflightTools {
	return preflightTools{
		newProber: func() (probe.Prober, error) {
			if m.prober == nil {
				return nil, probe.ErrNVMLNotCompiled
			}
			return m.prober, nil
		},
		lookPath: func(name string) (string, error) {
			for cmd := range m.outputs {
				if strings.Fields(cmd)[0] == name {
					return "/usr/bin/" + name, nil
				}
			}
			return "", errors.New("not found")
		},
		lookupEnv: func(name string) (string, bool) {
			if name != "NVIDIA_VISIBLE_DEVICES" || m.visible == nil {
				return "", false
			}
			return *m.visible, true
		},
		run: func(_ context.Context, env []string, name string, args ...string) ([]byte, int, error) {
			cmd := strings.Join(append([]string{filepath.Base(name)}, args...), " ")
			m.ran = append(m.ran, strings.TrimSpace(strings.Join(env, " ")+" "+cmd))
			rel, ok := m.outputs[cmd]
			switch {
			case !ok:
				m.t.Errorf("unexpected command %q", cmd)
				return nil, 127, nil
			case rel == "":
				return nil, 0, nil
			}
			return corpusFile(m.t, rel), 0, nil
		},
	}
}

// TestPreflightLive runs the tools as on a node: nvidia-smi (no NVML in
// this build), topo -m and vectorAdd once per GPU with CUDA_VISIBLE_DEVICES,
// and keeps what it read with --evidence-dir, which --from-dir judges
// again to the same verdicts; a pending row remap FAILs.
func TestPreflightLive(t *testing.T) {
	m := &fakeMachine{t: t, outputs: map[string]string{
		"nvidia-smi -q -x": corpusSMIH100, "nvidia-smi nvlink -s": corpusNVLinkH100, "nvidia-smi topo -m": corpusTopoH100, "vectorAdd": corpusVecAddPass,
	}}
	ev := filepath.Join(t.TempDir(), "evidence")
	code, out, errOut := runPreflight(t, m.tools(), "--gpus", "8", "--evidence-dir", ev, "-o", "json")
	if code != ExitOK || stageVerdicts(t, out) != "inventory=PASS topology=PASS cuda=PASS" || !strings.Contains(errOut, "144 NVLinks active") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if got := strings.Join(m.ran, "\n"); !strings.Contains(got, "CUDA_VISIBLE_DEVICES=7 CUDA_DEVICE_ORDER=PCI_BUS_ID vectorAdd") || strings.Contains(got, "CUDA_VISIBLE_DEVICES=8") {
		t.Errorf("commands run:\n%s", got)
	}
	for _, name := range []string{"nvidia-smi-q.xml", "nvidia-smi-nvlink.txt", "topo.txt", "vectoradd-0.txt", "vectoradd-7.txt", "preflight.json"} {
		if _, err := os.Stat(filepath.Join(ev, name)); err != nil {
			t.Errorf("evidence: %v", err)
		}
	}
	// nvidia-smi-q.xml holds what nvidia-smi -q -x printed (here the
	// corpus's -q text): the parser detects the form.
	code, again, _ := runPreflight(t, noTools(), "--gpus", "8", "--from-dir", ev, "-o", "json")
	if code != ExitOK || stageVerdicts(t, again) != stageVerdicts(t, out) {
		t.Errorf("evidence judged again: exit %d, %s", code, stageVerdicts(t, again))
	}

	// GPU 3's row remap pending: FAIL, naming the board; nothing after it runs.
	m = &fakeMachine{t: t, outputs: map[string]string{"nvidia-smi -q -x": derivedSMIH100Remap, "nvidia-smi nvlink -s": corpusNVLinkH100, "nvidia-smi topo -m": corpusTopoH100}}
	code, _, errOut = runPreflight(t, m.tools(), "--gpus", "8")
	if code != ExitCheckFailed || !strings.Contains(errOut, "a row remap is pending") || len(m.ran) != 2 {
		t.Errorf("row remap: exit %d, ran %v\n%s", code, m.ran, errOut)
	}

	// The corpus has no nvidia-smi nvlink -s printing nothing on an H100
	// x8; an empty one leaves the NVLinks unchecked: INCONCLUSIVE.
	m = &fakeMachine{t: t, outputs: map[string]string{"nvidia-smi -q -x": corpusSMIH100, "nvidia-smi nvlink -s": "", "nvidia-smi topo -m": corpusTopoH100}}
	code, _, errOut = runPreflight(t, m.tools(), "--gpus", "8")
	if code != ExitInconclusive || !strings.Contains(errOut, "nvidia-smi nvlink -s printed nothing, but h100-sxm-x8 has NVLink (NV18)") {
		t.Errorf("empty nvlink -s: exit %d\n%s", code, errOut)
	}
}

// TestPreflightLiveHarness: a machine without the tools, or a container
// given no GPU, is INCONCLUSIVE, never PASS; a list of GPUs in
// NVIDIA_VISIBLE_DEVICES is the GPU count expected.
func TestPreflightLiveHarness(t *testing.T) {
	code, out, errOut := runPreflight(t, noTools(), "-o", "json")
	if code != ExitInconclusive || stageVerdicts(t, out) != "inventory=INCONCLUSIVE topology=INCONCLUSIVE cuda=SKIPPED" ||
		!strings.Contains(errOut, "nvidia-smi -q -x: nvidia-smi not found on PATH") {
		t.Errorf("no tools: exit %d %s\n%s", code, stageVerdicts(t, out), errOut)
	}

	none := "void"
	m := &fakeMachine{t: t, visible: &none, outputs: map[string]string{"nvidia-smi -q -x": corpusSMIH100}}
	code, _, errOut = runPreflight(t, m.tools())
	if code != ExitInconclusive || !strings.Contains(errOut, `the container was given no GPU (NVIDIA_VISIBLE_DEVICES="void")`) || len(m.ran) != 0 {
		t.Errorf("no GPU given: exit %d, ran %v\n%s", code, m.ran, errOut)
	}

	two := "GPU-00000000-0000-0000-0000-000000000001,GPU-00000000-0000-0000-0000-000000000002"
	m = &fakeMachine{t: t, visible: &two, outputs: map[string]string{"nvidia-smi -q -x": corpusSMIH100, "nvidia-smi nvlink -s": ""}}
	code, _, errOut = runPreflight(t, m.tools())
	// The count is a FAIL although nvlink -s printed nothing.
	if code != ExitCheckFailed || !strings.Contains(errOut, "expected 2 GPUs (NVIDIA_VISIBLE_DEVICES (2 GPUs))") {
		t.Errorf("two GPUs given, eight seen: exit %d\n%s", code, errOut)
	}
}

// TestPreflightUsage: flags that do not fit are exit 2.
func TestPreflightUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--gpus", "-1"},
		{"--link", "NVLINK"},
		{"--driver-min", "latest"},
		{"--pool", "train"},
		{"--from-dir", ".", "--cuda-sample", "/bin/true"},
		{"--from-dir", ".", "--evidence-dir", "ev"},
		{"--tool-timeout", "0s"},
		{"--spec", "../../examples/gke-h100-acceptance-sweep.yaml", "--pool", "nope"},
		{"-o", "yaml"},
		{"extra"},
	} {
		if code, _, errOut := runPreflight(t, noTools(), args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, errOut)
		}
	}
}

// TestParseVisibleDevices reads NVIDIA_VISIBLE_DEVICES as the NVIDIA
// Container Toolkit documents it.
func TestParseVisibleDevices(t *testing.T) {
	for _, tc := range []struct {
		value string
		set   bool
		none  bool
		ids   int
	}{
		{"", false, false, 0}, {"all", true, false, 0}, {"/var/run/nvidia-container-devices", true, false, 0},
		{"none", true, true, 0}, {"void", true, true, 0}, {"", true, true, 0},
		{"0,1", true, false, 2}, {" GPU-a , GPU-b ,", true, false, 2},
	} {
		v := accept.ParseVisibleDevices(tc.value, tc.set)
		if v.None != tc.none || len(v.IDs) != tc.ids {
			t.Errorf("%q (set %v): %+v", tc.value, tc.set, v)
		}
	}
	rep := &probe.NVMLReport{GPUs: []probe.SMIGPU{{Index: 0, UUID: "GPU-a"}, {Index: 1, UUID: "GPU-b"}, {Index: 2, UUID: "GPU-c"}},
		Unavailable: []probe.NVMLUnavailable{{GPU: "1"}, {GPU: "2"}, {GPU: ""}}}
	got := accept.ParseVisibleDevices("GPU-c,GPU-a", true).OnlyGiven(rep)
	if len(got.GPUs) != 2 || got.GPUs[0].UUID != "GPU-a" || got.GPUs[1].UUID != "GPU-c" || *got.AttachedGPUs != 2 || len(got.Unavailable) != 2 {
		t.Errorf("OnlyGiven by UUID: %+v", got)
	}
	if accept.ParseVisibleDevices("0,2", true).OnlyGiven(rep) != rep {
		t.Error("a list of indexes must leave the report as it is")
	}
}
