package probe

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

var reKindRow = regexp.MustCompile(`^\| (\S+) \| ([a-z-]+) \|$`)

// TestDetectKinds runs every tool output of the repository's test data
// through detection and compares the kind with testdata/KINDS.md. A new
// output without a row fails, as does a row whose file is gone.
func TestDetectKinds(t *testing.T) {
	f, err := os.Open("testdata/KINDS.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]Kind{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := reKindRow.FindStringSubmatch(sc.Text()); m != nil && m[1] != "file" {
			if _, dup := want[m[1]]; dup {
				t.Errorf("KINDS.md lists %s twice", m[1])
			}
			want[m[1]] = Kind(m[2])
		}
	}
	if len(want) < 100 {
		t.Fatalf("read only %d rows from KINDS.md", len(want))
	}
	seen := map[string]bool{}
	for _, root := range []string{"testdata/corpus", "internal/probe/testdata"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, root), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(repoRoot, path)
			rel = filepath.ToSlash(rel)
			if strings.HasSuffix(rel, ".md") || strings.HasSuffix(rel, ".source") || strings.Contains(rel, "/testdata/fuzz/") {
				return nil
			}
			seen[rel] = true
			k, ok := want[rel]
			if !ok {
				t.Errorf("%s has no row in testdata/KINDS.md", rel)
				return nil
			}
			// A file whose note has a Gap: line is checked strictly by
			// TestCorpus (checkKnownGap); here a wrong kind is logged.
			report := t.Errorf
			if gap := corpusGap(t, path); gap != "" {
				report = t.Logf
			}
			got, err := Detect(readFile(t, path))
			if err != nil || got != k {
				report("%s: Detect = %q, %v; KINDS.md says %q", rel, got, err, k)
			}
			r, err := Parse(KindAuto, readFile(t, path))
			if err != nil || r.Common().Kind != k {
				report("%s: parse auto gave %v, %v", rel, r, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for p := range want {
		if !seen[p] {
			t.Errorf("KINDS.md lists %s, which does not exist", p)
		}
	}
}

// TestDmesgNeedsKernelLogShape: text that is not a kernel log is unknown,
// even when it mentions nvidia (an nvidia-smi XML, a device plugin's log).
func TestDmesgNeedsKernelLogShape(t *testing.T) {
	for _, file := range []string{"nvidia-smi/t4-x1-v11-515.xml", "k8s/device-plugin-legacy-failed-init-nvml-could-not-load.txt", "nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt"} {
		r := ParseDmesg(readFile(t, source(file)))
		eq(t, file+" verdict", r.Verdict, diag.ReportUnknown)
		if !hasRule(&r.Header, "not-a-kernel-log") {
			t.Errorf("%s: findings %v", file, rules(&r.Header))
		}
	}
	// A bare NVRM line is a kernel log line.
	r := ParseDmesg([]byte("NVRM: Xid (PCI:0000:04:00): 150, MSE_WATCHDOG Fatal XC0 i0 Link 00 (0x00000000 0x00000000 0x00000000 0x00000000)\n"))
	eq(t, "bare NVRM verdict", r.Verdict, diag.ReportFail)
}

// TestPasteRemovesOSC: terminals with shell integration wrap a command's
// output in OSC sequences (ESC ] ... BEL or ESC \); a paste keeps them.
func TestPasteRemovesOSC(t *testing.T) {
	data := readFile(t, source("failures/nvidia-smi-couldnt-communicate-with-driver.txt"))
	wrapped := append([]byte("\x1b]633;A\x07\x1b]0;user@node-a: ~\x07\x1b]8;;file://node-a/home\x1b\\"), data...)
	wrapped = append(wrapped, []byte("\x1b]633;D;0\x07")...)
	r, err := Parse(KindAuto, wrapped)
	if err != nil {
		t.Fatal(err)
	}
	s := r.(*SMIReport)
	eq(t, "verdict", s.Verdict, diag.ReportFail)
	if s.Error == nil || strings.ContainsRune(s.Error.Message, 0x1b) || strings.Contains(s.Error.Message, "633") {
		t.Errorf("error %+v", s.Error)
	}
}
