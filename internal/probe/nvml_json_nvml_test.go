//go:build nvml

package probe

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe/nvmlmock"
)

// nvmlJSON renders a report as `gpuctl probe nvml -o json` does.
// update rewrites the NVML JSON fixtures in testdata/nvml from go-nvml's
// mock servers (go test -tags nvml -run NVMLJSON -update; needs cgo).
var update = flag.Bool("update", false, "rewrite the testdata/nvml fixtures")

func nvmlJSON(t *testing.T, r *NVMLReport) []byte {
	t.Helper()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// reMockUUID matches the GPU UUIDs go-nvml's mock servers draw at random.
var reMockUUID = regexp.MustCompile(`"GPU-[0-9a-f-]{36}"`)

// maskUUIDs is a report's JSON with the random UUIDs replaced.
func maskUUIDs(b []byte) string {
	return reMockUUID.ReplaceAllString(string(b), `"GPU-uuid"`)
}

// faultyH100 is a DGX H100 with an uncorrectable ECC error on GPU 3 and a
// row remap pending on GPU 5.
func faultyH100() *server.Server {
	s := dgxh100.New()
	nvmlmock.Healthy(s, 18, 5)
	dev := func(i int) *server.Device { return s.Devices[i].(*server.Device) }
	dev(3).GetTotalEccErrorsFunc = func(typ nvml.MemoryErrorType, c nvml.EccCounterType) (uint64, nvml.Return) {
		if typ == nvml.MEMORY_ERROR_TYPE_UNCORRECTED {
			return 2, nvml.SUCCESS
		}
		return 0, nvml.SUCCESS
	}
	dev(5).GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 1, true, false, nvml.SUCCESS }
	return s
}

func TestNVMLJSONRoundTripOnMockServers(t *testing.T) {
	a100 := dgxa100.New()
	nvmlmock.Healthy(a100, 12, 4)
	h100 := dgxh100.New()
	nvmlmock.Healthy(h100, 18, 5)
	for _, tc := range []struct {
		name    string
		lib     nvml.Interface
		verdict diag.ReportVerdict
		fixture string
	}{
		{"dgxa100-healthy", a100, diag.ReportOK, "nvml-dgxa100-healthy.json"},
		{"dgxh100-healthy", h100, diag.ReportOK, "nvml-dgxh100-healthy.json"},
		{"dgxh100-faulty", faultyH100(), diag.ReportFail, "nvml-dgxh100-ecc-rowremap.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := probe(t, tc.lib)
			if want.Verdict != tc.verdict {
				t.Fatalf("prober verdict %s: %v", want.Verdict, findingRules(&want.Header))
			}
			data := nvmlJSON(t, want)
			if k, err := Detect(data); err != nil || k != KindNVML {
				t.Fatalf("Detect = %q, %v", k, err)
			}
			rep, err := Parse(KindAuto, data)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := rep.(*NVMLReport)
			if !ok {
				t.Fatalf("Parse gave %T", rep)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip differs:\n got %s\nwant %s", nvmlJSON(t, got), data)
			}
			path := filepath.Join("testdata", "nvml", tc.fixture)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if fixture, err := os.ReadFile(path); err != nil {
				t.Fatal(err)
			} else if maskUUIDs(fixture) != maskUUIDs(data) {
				t.Errorf("%s is stale: rerun with -tags nvml -run NVMLJSON -update", path)
			}
		})
	}
}
