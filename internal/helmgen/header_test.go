package helmgen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/golden"
)

// TestHeaderEscapesFileName: a spec file name with line breaks cannot end
// the "# Source:" comment of a values or manifest file and write YAML of its
// own (a Secret document into kueue.yaml): every header line stays a
// comment and the name is written escaped as diag.OneLine escapes it.
func TestHeaderEscapesFileName(t *testing.T) {
	const name = "x\nevil: true\nkind: Secret\n#.yaml\r\u2028\x1b[2J\u202e"
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		opts := Options{SpecFile: name, Environment: ex.Env}
		vs, err := Values(ex.Spec, opts)
		if err != nil {
			t.Fatalf("%s: %v", ex.Dir, err)
		}
		ms, err := Manifests(ex.Spec, opts)
		if err != nil {
			t.Fatalf("%s: %v", ex.Dir, err)
		}
		for _, f := range append(vs, ms...) {
			if bytes.Contains(f.Data, []byte("evil: true\n")) || bytes.Contains(f.Data, []byte("\nkind: Secret")) {
				t.Errorf("%s/%s: the file name wrote YAML:\n%s", ex.Dir, f.Name, f.Data)
			}
			if !strings.Contains(string(f.Data), `# Source: x\nevil: true\nkind: Secret\n#.yaml\r\u2028\x1b[2J\u202e, spec`) {
				t.Errorf("%s/%s: header does not escape the file name:\n%.300s", ex.Dir, f.Name, f.Data)
			}
			for _, l := range strings.Split(strings.TrimSuffix(string(f.Data), "\n"), "\n") {
				if !strings.HasPrefix(l, "#") {
					break // the header ends at its first line that is not a comment
				}
				if strings.ContainsAny(l, "\r\x1b\u2028\u202e") {
					t.Errorf("%s/%s: header line holds a control character: %q", ex.Dir, f.Name, l)
				}
			}
		}
	}
}
