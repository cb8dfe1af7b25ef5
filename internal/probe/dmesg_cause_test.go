package probe

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// TestXIDInheritsItsCause: an XID line that names an earlier XID as its
// cause ("caused by previous Xid 145", open-gpu-kernel-modules#1150) takes
// that XID's class where it implicates the GPU, and says so (an NVLink5
// XID, 144-150, that crashed an application is a GPU reset by NVIDIA's
// decode table; an Xid 74 is hardware); an Xid 45
// without a cause stays an application fault, and one caused by an
// application fault (Xid 13) stays one too.
func TestXIDInheritsItsCause(t *testing.T) {
	for _, c := range []struct {
		line, class string
		cause       int
		verdictOK   bool
	}{
		{"NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by previous Xid 145", XIDReset, 145, false},
		{"NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149", XIDReset, 149, false},
		{"NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 74", XIDHardware, 74, false},
		{"NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by previous Xid 48", XIDReset, 48, false},
		{"NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by previous Xid 13", XIDApplication, 13, true},
		{"NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c", XIDApplication, 0, true},
	} {
		r, err := Parse(KindDmesg, []byte("kernel: "+c.line+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		d := r.(*DmesgReport)
		if len(d.XIDs) != 1 || d.XIDs[0].Class != c.class || d.XIDs[0].CausedBy != c.cause {
			t.Errorf("%s: XIDs %+v, want class %s caused by %d", c.line, d.XIDs, c.class, c.cause)
			continue
		}
		if ok := d.Common().Verdict == diag.ReportOK; ok != c.verdictOK {
			t.Errorf("%s: verdict %s", c.line, d.Common().Verdict)
		}
		if c.cause != 0 && !strings.Contains(findingsText(d.Common().Findings), "caused by XID") {
			t.Errorf("%s: the finding does not name the cause: %v", c.line, d.Common().Findings)
		}
	}
}

func findingsText(fs []diag.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.Message + "\n")
	}
	return b.String()
}

// NVLink XIDs are grouped by GPU, with the links their lines name: one
// group per code and GPU, the links ascending and once each, and the
// finding says which links.
func TestNVLinkXIDsGroupByGPUAndLink(t *testing.T) {
	r := ParseDmesg(readFile(t, "testdata/dmesg/xid-144-150-nvlink5-gpud.log"))
	x := xid(r, 149, "0000:04:00")
	if x == nil || x.Count != 3 || len(x.Links) != 2 || x.Links[0] != 0 || x.Links[1] != 8 || x.Severity != "fatal" {
		t.Fatalf("xid 149 on 0000:04:00 = %+v", x)
	}
	if !strings.Contains(findingsText(r.Findings), "x3 on links 0, 8:") {
		t.Errorf("no finding names the links:\n%s", findingsText(r.Findings))
	}
	if y := xid(r, 144, "0000:01:00"); y == nil || len(y.Links) != 1 || y.Links[0] != 0 {
		t.Errorf("xid 144 on 0000:01:00 = %+v", y)
	}
}
