package render

import (
	"bytes"
	"context"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/report"
)

// TestReportShowsSystem: a node's section shows the Node's OS image,
// kernel, container runtime and kubelet, the evidence URI, the baselines
// met and a row per RDMA NIC with its model and firmware (accept's A3
// Ultra record fixture, as report.Build reads it).
func TestReportShowsSystem(t *testing.T) {
	path := filepath.Join("..", "..", "accept", "testdata", "records", "a3u-network.dsse.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Build(context.Background(), []report.Input{{Path: path, Data: data}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ReportHTML(&b, r, "t"); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	p := r.Nodes[0]
	for _, want := range []string{
		"<dt>OS image</dt><dd>" + p.OSImage + "</dd>", "<dt>kernel</dt><dd>" + p.Kernel + "</dd>",
		"<dt>container runtime</dt><dd>" + p.ContainerRuntime + "</dd>", "<dt>kubelet</dt><dd>" + p.Kubelet + "</dd>",
		"<dt>evidence URI</dt><dd>" + p.EvidenceURI + "</dd>",
		`<li data-stage="network" data-met="true">`, record.BaselineText(p.Baselines[0]),
		`<tr data-nic="mlx5_0"><td class="mono">mlx5_0</td><td>mlx5</td><td class="mono">` + p.NICs[0].Model + "</td>",
		"<td class=\"mono\">" + p.NICs[0].Firmware + "</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<tr data-nic="); n != len(p.NICs) || n == 0 {
		t.Errorf("%d NIC rows, want %d", n, len(p.NICs))
	}
	// A record without NICs or baselines shows neither heading.
	b.Reset()
	if err := ReportHTML(&b, testReport(), "t"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<h3>RDMA NICs</h3>") || strings.Contains(b.String(), "<h3>Baselines</h3>") {
		t.Error("a record without NICs or baselines shows their headings")
	}
}
