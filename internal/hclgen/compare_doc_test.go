package hclgen

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// compareDoc is the side-by-side page whose gpuctl column
// TestCompareDocQuotes holds to the generated files.
const compareDoc = "../../docs/compare.md"

var (
	// goldenMarker opens a section of compareDoc whose tables quote the
	// golden files of one example and environment.
	goldenMarker = regexp.MustCompile(`^<!-- golden: ([a-z0-9-]+/[a-z0-9-]+) -->$`)
	codeSpan     = regexp.MustCompile("`([^`]+)`")
	// yamlLine is a quoted `key: value` line of a generated manifest.
	yamlLine = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9./-]*: \S`)
)

// TestCompareDocQuotes holds docs/compare.md to what gpuctl writes: in
// each section after a "<!-- golden: <example>/<env> -->" marker, every
// code span in a table row's gpuctl column (the third) that reads as an
// output line, an HCL `attribute = value` or a YAML `key: value`, must be
// a line (whitespace collapsed, a YAML list dash dropped) of that example's
// golden files: internal/hclgen/testdata/golden/<example>/<env>/*.tf and
// internal/helmgen/testdata/golden/<example>/<env>/**/*.yaml. A generator
// change that makes a quote untrue fails here until the page is updated.
func TestCompareDocQuotes(t *testing.T) {
	doc, err := os.ReadFile(compareDoc)
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]int{}
	golden := map[string]map[string]bool{}
	section := ""
	for i, line := range strings.Split(string(doc), "\n") {
		if m := goldenMarker.FindStringSubmatch(line); m != nil {
			section = m[1]
			if golden[section] == nil {
				golden[section] = goldenLines(t, section)
			}
			continue
		}
		if strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### ") {
			section = ""
		}
		if section == "" || !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) != 6 {
			t.Errorf("compare.md:%d: a table row needs 4 cells, has %d (a | inside a cell?)", i+1, len(cells)-2)
			continue
		}
		if strings.TrimSpace(cells[3]) == "gpuctl" {
			continue // the header
		}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[3], -1) {
			q := m[1]
			if !strings.Contains(q, " = ") && !yamlLine.MatchString(q) {
				continue
			}
			checked[section]++
			if !golden[section][normalizeLine(q)] {
				t.Errorf("compare.md:%d: %q is not a line of the generated files of %s", i+1, q, section)
			}
		}
	}
	if len(checked) < 5 {
		t.Fatalf("compare.md: %d sections with quotes checked, want at least 5 (markers lost?)", len(checked))
	}
	for s := range golden {
		if checked[s] < 3 {
			t.Errorf("compare.md: section %s quotes %d output lines, want at least 3", s, checked[s])
		}
	}
}

// goldenLines reads the golden Terraform and manifests of example/env into
// a set of normalized lines; it fails the test when there are none.
func goldenLines(t *testing.T, exampleEnv string) map[string]bool {
	t.Helper()
	lines := map[string]bool{}
	for _, root := range []string{"testdata/golden/", "../helmgen/testdata/golden/"} {
		dir := filepath.FromSlash(root + exampleEnv)
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || (!strings.HasSuffix(p, ".tf") && !strings.HasSuffix(p, ".yaml")) {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, l := range strings.Split(string(b), "\n") {
				lines[normalizeLine(l)] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("no golden files for %s", exampleEnv)
	}
	return lines
}

// normalizeLine collapses whitespace runs to one space and drops a
// leading YAML list dash.
func normalizeLine(l string) string {
	return strings.TrimPrefix(strings.Join(strings.Fields(l), " "), "- ")
}
