//go:build nvml

package cli

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpuctl/gpuctl/internal/probe"
	"github.com/gpuctl/gpuctl/internal/probe/nvmlmock"
)

// TestPreflightNVML reads the inventory through the NVML prober `gpuctl
// probe nvml` uses, over go-nvml's mock DGX servers, and the topology from
// the corpus's H100 x8 topo -m: PASS on healthy GPUs; FAIL on a pending row
// remap, on a page pending retirement, on more GPUs expected than the node
// has.
func TestPreflightNVML(t *testing.T) {
	spec := []string{"--spec", "../../examples/gke-h100-acceptance-sweep.yaml", "--pool", "train-h100"}
	h100 := func(edit func(s *server.Server)) *server.Server {
		s := dgxh100.New()
		nvmlmock.Healthy(s, 18, 5)
		if edit != nil {
			edit(s)
		}
		return s
	}
	dev := func(s *server.Server, i int) *server.Device { return s.Devices[i].(*server.Device) }
	for _, tc := range []struct {
		name string
		lib  nvml.Interface
		args []string
		code int
		want string
	}{
		{"healthy DGX H100 against the pool", h100(nil), spec, ExitOK, "8 x NVIDIA H100 80GB HBM3, driver 550.54.15 (CUDA 12.4); ECC, retired pages and row remapping clean; 144 NVLinks active"},
		{"pending row remap", h100(func(s *server.Server) {
			dev(s, 5).GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 1, true, false, nvml.SUCCESS }
		}), spec, ExitCheckFailed, "GPU 0000:05:00.0"},
		{"page pending retirement", h100(func(s *server.Server) {
			dev(s, 2).GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_ENABLED, nvml.SUCCESS }
		}), spec, ExitCheckFailed, "GPU 0000:02:00.0"},
		{"a DGX A100's 8 GPUs against --gpus 16", func() nvml.Interface { s := dgxa100.New(); nvmlmock.Healthy(s, 12, 4); return s }(), []string{"--gpus", "16"}, ExitCheckFailed, "expected 16 GPUs (flags --gpus), NVML shows 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &fakeMachine{t: t, prober: probe.NewNVMLProber(tc.lib), outputs: map[string]string{"nvidia-smi topo -m": corpusTopoH100}}
			code, _, errOut := runPreflight(t, m.tools(), tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, tc.code, tc.want, errOut)
			}
		})
	}
}

// TestPreflightNVMLVisibleDevices: a container given GPUs 1 and 6 by UUID
// (NVIDIA_VISIBLE_DEVICES) is judged on those two, not on GPU 5's pending
// row remap, and expects two.
func TestPreflightNVMLVisibleDevices(t *testing.T) {
	s := dgxh100.New()
	nvmlmock.Healthy(s, 18, 5)
	s.Devices[5].(*server.Device).GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 1, true, false, nvml.SUCCESS }
	var uuids []string
	for _, i := range []int{1, 6} {
		u, ret := s.Devices[i].GetUUID()
		if ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
		uuids = append(uuids, u)
	}
	visible := strings.Join(uuids, ",")
	m := &fakeMachine{t: t, prober: probe.NewNVMLProber(s), visible: &visible, outputs: map[string]string{"nvidia-smi topo -m": ""}}
	code, out, errOut := runPreflight(t, m.tools(), "-o", "json")
	// topo -m printed nothing here: INCONCLUSIVE.
	if code != ExitInconclusive || stageVerdicts(t, out) != "inventory=PASS topology=INCONCLUSIVE cuda=SKIPPED" ||
		!strings.Contains(errOut, "inventory  PASS         2 x NVIDIA H100 80GB HBM3") || !strings.Contains(errOut, "NVIDIA_VISIBLE_DEVICES (2 GPUs)") {
		t.Errorf("exit %d %s\n%s", code, stageVerdicts(t, out), errOut)
	}
}
