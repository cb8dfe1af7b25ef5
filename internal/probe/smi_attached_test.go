package probe

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// TestAttachedGPUsNotACount: an attached GPU count that overflows or is no
// count of GPUs (99999999999999999999, -1, more than a report reads, text)
// is a parse error in every shape that prints one (XML, -q text, CSV): the
// verdict is unknown with attached-gpus-invalid, not ok. The real outputs
// the cases are made from read ok with their own count.
func TestAttachedGPUsNotACount(t *testing.T) {
	shapes := []struct {
		file, old, format string
		edit              func(v string) string
	}{
		{"a10g-x1-v11-515.xml", "<attached_gpus>1</attached_gpus>", "xml", func(v string) string { return "<attached_gpus>" + v + "</attached_gpus>" }},
		{"l4-x1-q-550.90.07.txt", "Attached GPUs                             : 1", "query", func(v string) string { return "Attached GPUs                             : " + v }},
		{"testdata/nvidia-smi/csv-wide-idle-h200-590.48.01.txt", "[N/A], 1, NVIDIA H200", "csv", func(v string) string { return "[N/A], " + v + ", NVIDIA H200" }},
	}
	for _, s := range shapes {
		path := source(s.file)
		if s.format != "csv" {
			path = filepath.Join(corpusDir, "nvidia-smi", s.file)
		}
		data := readFile(t, path)
		if !bytes.Contains(data, []byte(s.old)) {
			t.Fatalf("%s: no %q to edit", s.file, s.old)
		}
		good := ParseNvidiaSMI(data)
		if good.Format != s.format || good.Verdict != diag.ReportOK || good.AttachedGPUs == nil || *good.AttachedGPUs != 1 || hasRule(&good.Header, "attached-gpus-invalid") {
			t.Errorf("%s as printed: format %s, verdict %s, attached %v, rules %v", s.file, good.Format, good.Verdict, good.AttachedGPUs, rules(&good.Header))
		}
		for _, v := range []string{"99999999999999999999", "18446744073709551617", "-1", "4097", "8 GPUs", "0x10"} {
			r := ParseNvidiaSMI(bytes.Replace(data, []byte(s.old), []byte(s.edit(v)), 1))
			f := findingFor(&r.Header, "attached-gpus-invalid", "")
			if r.Verdict != diag.ReportUnknown || f == nil || r.AttachedGPUs != nil {
				t.Errorf("%s, attached %s: verdict %s, attached %v, rules %v; want unknown with attached-gpus-invalid", s.file, v, r.Verdict, r.AttachedGPUs, rules(&r.Header))
				continue
			}
			if !strings.Contains(f.Message, "from 0 to 4096") {
				t.Errorf("%s, attached %s: message %q", s.file, v, f.Message)
			}
		}
		// N/A is no count, and no error.
		r := ParseNvidiaSMI(bytes.Replace(data, []byte(s.old), []byte(s.edit("N/A")), 1))
		if r.AttachedGPUs != nil || hasRule(&r.Header, "attached-gpus-invalid") {
			t.Errorf("%s, attached N/A: attached %v, rules %v", s.file, r.AttachedGPUs, rules(&r.Header))
		}
	}
}
