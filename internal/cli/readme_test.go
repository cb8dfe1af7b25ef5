package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/helmgen"
)

func readREADME(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The generate manual's chart table lists exactly the versions gpuctl has
// key lists for, so nobody reads a span as "every version in between".
func TestReadmeChartVersions(t *testing.T) {
	b, err := os.ReadFile("../../docs/generate.md")
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, chart := range []string{"nvidia-device-plugin", "gpu-operator", "dcgm-exporter"} {
		want := strings.Join(helmgen.ChartVersions(chart), ", ")
		if want == "" {
			t.Fatalf("%s: no key lists", chart)
		}
		row := "| `" + chart + "` | " + want + " |"
		if !strings.Contains(md, row) {
			t.Errorf("docs/generate.md has no row %q", row)
		}
	}
	if regexp.MustCompile(`\(\d+\.\d+\.\d+ to \d+\.\d+\.\d+\)`).MatchString(md) {
		t.Errorf("docs/generate.md still gives chart versions as a range")
	}
}

// The README's requirements name the Go of go.mod and the C compiler that
// the cgo tests need, and the Makefile silences go-nvml's warnings.
func TestReadmeRequirements(t *testing.T) {
	md := readREADME(t)
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)(\.\d+)?$`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	req := md[strings.Index(md, "Requirements:"):]
	req = req[:strings.Index(req, "\n\n")]
	for _, want := range []string{"Go " + string(m[1]), "go " + string(m[1]) + string(m[2]), "C compiler", "make test-nvml"} {
		if !strings.Contains(req, want) {
			t.Errorf("README requirements do not say %q:\n%s", want, req)
		}
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^test-nvml:\n\tCGO_ENABLED=1 CGO_CFLAGS='\$\(NVML_CGO_CFLAGS\)'`).Match(mk) ||
		!strings.Contains(string(mk), "NVML_CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations") {
		t.Errorf("Makefile's test-nvml does not build with -Wno-deprecated-declarations")
	}
}

// The CI snippet builds gpuctl from source: nothing installs a module
// version that is not published, and the paths it builds exist.
func TestReadmeCISnippet(t *testing.T) {
	md := readREADME(t)
	i := strings.Index(md, "## CI usage")
	if i < 0 {
		t.Fatal("README has no CI usage section")
	}
	ci := md[i:]
	ci = ci[:strings.Index(ci[3:], "\n## ")+3]
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(ci)
	if block == nil {
		t.Fatal("CI usage has no yaml block")
	}
	snippet := block[1]
	if strings.Contains(snippet, "@latest") || strings.Contains(snippet, "go install") {
		t.Errorf("the CI snippet installs a published module, and there is none:\n%s", snippet)
	}
	for _, want := range []string{"go-version-file: .gpuctl/go.mod", "go build -C .gpuctl -o \"$PWD/bin/gpuctl\" ./cmd/gpuctl", "bin/gpuctl validate --strict -o sarif"} {
		if !strings.Contains(snippet, want) {
			t.Errorf("CI snippet lacks %q", want)
		}
	}
	for _, path := range []string{"../../go.mod", "../../cmd/gpuctl/main.go"} {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("the CI snippet builds %s: %v", path, err)
		}
	}
	// the flags the snippet uses exist
	streams, _, _, _ := TestStreams()
	v, _, err := NewRootCommand(streams).Find([]string{"validate"})
	if err != nil {
		t.Fatal(err)
	}
	for _, fl := range []string{"strict", "output"} {
		if v.Flags().Lookup(fl) == nil {
			t.Errorf("validate has no --%s", fl)
		}
	}
}

// readmeMaxLines is the README's size as the front door: purpose, quick
// start, commands, formats, exit codes, environment, CI and development;
// the manuals live in docs/ with a one-line link each.
const readmeMaxLines = 400

// The README stays a front door: at most readmeMaxLines lines, and every
// hand-written manual in docs/ is linked from it (a manual nobody can find
// from the README is not documentation).
func TestReadmeFrontDoor(t *testing.T) {
	md := readREADME(t)
	if n := strings.Count(md, "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines; at most %d: move the manual into docs/ and link it", n, readmeMaxLines)
	}
	manuals := handWrittenDocs(t)
	if len(manuals) == 0 {
		t.Fatal("docs/ holds no hand-written manual")
	}
	for _, name := range manuals {
		if !strings.Contains(md, "(docs/"+name) {
			t.Errorf("README.md does not link docs/%s", name)
		}
	}
}

// handWrittenDocs returns the Markdown files of docs/ that `make docs` does
// not write (the command reference is gpuctl*.md and man/).
func handWrittenDocs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("..", "..", DocsDir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") && !generatedDoc(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}
