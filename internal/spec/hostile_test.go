package spec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/safefs"
)

// TestControlCharactersRefused: a key or string value with a line break or
// another control character is refused where it is written, with the
// field's path, whatever way YAML writes it (an escape in double quotes, a
// raw byte, a block scalar), so that nothing gpuctl echoes from a spec into
// a generated file can start a new line of it.
func TestControlCharactersRefused(t *testing.T) {
	for _, c := range []struct{ yaml, at, path, char string }{
		{"  addons:\n    dcgmExporter: {enabled: true, version: \"4.2\\nfoo\"}\n", "t.yaml:6:44:", "spec.addons.dcgmExporter.version", "U+000A (a line break)"},
		{"  region: \"us\\r\\nkind: Secret\"\n", "t.yaml:5:11:", "spec.region", "U+000D (a line break)"},
		{"  region: \"us\\tcentral1\"\n", "t.yaml:5:11:", "spec.region", "U+0009 (a tab)"},
		{"  region: \"us\\x00\"\n", "t.yaml:5:11:", "spec.region", "U+0000"},
		{"  region: us\x1b[31mred\n", "t.yaml:5:11:", "spec.region", "U+001B"},
		{"  region: \"us\\u2028x\"\n", "t.yaml:5:11:", "spec.region", "U+2028 (a line break)"},
		{"  region: \"us\\u0085x\"\n", "t.yaml:5:11:", "spec.region", "U+0085 (a line break)"},
		{"  clusterName: \"abc\\u202edcb\"\n", "t.yaml:5:16:", "spec.clusterName", "U+202E"},
		{"  clusterName: \"a\\ufeffb\"\n", "t.yaml:5:16:", "spec.clusterName", "U+FEFF (a byte order mark)"},
		{"  nodePools:\n    - name: |\n        two\n        lines\n", "t.yaml:6:13:", "spec.nodePools[0].name", "U+000A (a line break)"},
		{"  nodePools:\n    - name: >\n        folded\n", "t.yaml:6:13:", "spec.nodePools[0].name", "U+000A (a line break)"},
		{"  tags: {\"team\\nevil\": a}\n", "t.yaml:5:10:", "spec.tags", "U+000A (a line break)"},
		{"  nodePools:\n    - {name: a, labels: {x: \"1\\x7f\"}}\n", "t.yaml:6:29:", "spec.nodePools[0].labels.x", "U+007F"},
		{"  waivers: [{rule: X, reason: \"ok\\nfine\", expires: 2027-01-01}]\n", "t.yaml:5:31:", "spec.waivers[0].reason", "U+000A (a line break)"},
	} {
		_, err := Parse("t.yaml", []byte(header+"spec:\n"+c.yaml))
		var se *Error
		if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), c.at) || !strings.HasPrefix(se.Path, c.path) || !strings.Contains(se.Message, "control character "+c.char) {
			t.Errorf("%q:\n got %v\nwant %s %s: string holds the control character %s", c.yaml, err, c.at, c.path, c.char)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\r\x1b\u2028\u202e") {
			t.Errorf("%q: the error quotes the character: %q", c.yaml, err)
		}
	}
	_, err := Parse("t.yaml", []byte(header+"spec:\n  region: \"us\xff\"\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "t.yaml:5:11: spec.region: string holds the control character U+FFFD (not valid UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	// A long value folded with >- is one line, and printable Unicode
	// stays.
	doc, err := Parse("t.yaml", []byte(header+"spec:\n  clusterName: >-\n    ml\n    prod\n  tags: {owner: \"Zoë 日本\"}\n"))
	if err != nil || doc.Spec.Spec.ClusterName != "ml prod" || doc.Spec.Spec.Tags["owner"] != "Zoë 日本" {
		t.Errorf("folded and Unicode values: %v", err)
	}
}

// TestControlCharactersRefusedInLists: waivers and policy files hold to
// the same rule (a waiver's reason is shown in every output format).
func TestControlCharactersRefusedInLists(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		body string
		load func(string) error
	}{
		"waivers": {"waivers:\n  - rule: GPU-DRIVER-EOL\n    reason: \"held\\n\\x1b[2Jcleared\"\n    expires: 2027-01-01\n", func(p string) error { _, err := LoadWaivers(p); return err }},
		"policy":  {"policy:\n  requiredTags: [\"team\\u2029x\"]\n", func(p string) error { _, err := LoadPolicy(p); return err }},
	} {
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		err := c.load(p)
		if err == nil || !strings.HasPrefix(err.Error(), p+":") || !strings.Contains(err.Error(), "control character") {
			t.Errorf("%s: %v, want a control character refused", name, err)
		}
	}
}

// TestControlRuneIsOneLine: the characters refused in a spec are the ones
// diag.OneLine escapes, so a value that loads is written unchanged in a
// header or comment.
func TestControlRuneIsOneLine(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		if got, want := ControlRune(r), diag.OneLine(string(r)) != string(r); got != want {
			t.Errorf("%U: ControlRune %v, diag.OneLine escapes it: %v", r, got, want)
		}
	}
	for _, r := range []rune{0xfeff, 0xfffd, 0xfe0f, 0x1f600} {
		if got, want := ControlRune(r), diag.OneLine(string(r)) != string(r); got != want {
			t.Errorf("%U: ControlRune %v, diag.OneLine escapes it: %v", r, got, want)
		}
	}
}

// manyDocuments is a spec followed by n-1 more documents, the third and
// later not YAML at all: a parse of the whole file would stop at the
// third's syntax error.
func manyDocuments(n int) []byte {
	var b strings.Builder
	b.WriteString(header + "spec:\n  region: us-central1\n")
	for i := 1; i < n; i++ {
		b.WriteString("---\n")
		if i == 1 {
			b.WriteString(header + "spec: {}\n")
		} else {
			b.WriteString("a: [: }\n")
		}
	}
	return []byte(b.String())
}

// TestSecondDocumentRefusedByScan: a file of 1,000 documents is refused at
// the second, by the scan of the bytes: the error is the scan's, at the
// second document's first line, although later documents do not parse.
func TestSecondDocumentRefusedByScan(t *testing.T) {
	data := manyDocuments(1000)
	if _, err := prescan("t.yaml", data); err == nil {
		t.Fatal("the scan let a second document through")
	}
	_, err := Parse("t.yaml", data)
	var se *Error
	if !errors.As(err, &se) || se.Line != 7 || se.Column != 1 || se.Message != "file holds more than one YAML document" || !strings.Contains(se.Hint, "one ClusterSpec per file") {
		t.Fatalf("Parse(1,000 documents) = %v, want t.yaml:7:1: file holds more than one YAML document", err)
	}
	// A marker before the one document, or an empty document after it, is
	// one document; content after "..." is a second.
	for src, ok := range map[string]bool{
		"---\n" + header + "spec: {}\n":                   true,
		"%YAML 1.2\n---\n" + header + "spec: {}\n---\n":   true,
		header + "spec: {}\n...\n":                        true,
		header + "spec: {}\n...\nfoo: 1\n":                false,
		header + "spec: {}\n--- foo\n":                    false,
		header + "spec:\n  clusterName: |\n---\na: 1\n":   false,
		header + "spec:\n  clusterName: \"x\n---\na: 1\n": false,
	} {
		_, err := prescan("t.yaml", []byte(src))
		if (err == nil) != ok {
			t.Errorf("%q: scan error %v, want one document: %v", src, err, ok)
		}
	}
}

// TestCheckYAMLDocuments: CheckYAML reads any number of documents unless
// the limits say otherwise (the importer reads multi-document Karpenter
// YAML), and refuses past lim.Documents with lim's hint.
func TestCheckYAMLDocuments(t *testing.T) {
	data := []byte("a: 1\n---\nb: 2\n---\nc: 3\n---\nd: 4\n")
	lim := SpecLimits
	lim.Documents, lim.Hint = 3, "split it"
	err := CheckYAML("k.yaml", data, lim)
	if err == nil || err.Error() != "k.yaml:7:1: file holds more than 3 YAML documents (split it)" {
		t.Errorf("three documents at most: %v", err)
	}
	if err := CheckYAML("s.yaml", data, SpecLimits); err != nil {
		t.Errorf("SpecLimits hold one document's shape, not the count: %v", err)
	}
	if err := CheckYAML("w.yaml", data, ListLimits); err == nil || !strings.HasPrefix(err.Error(), "w.yaml:3:1: file holds more than one YAML document") {
		t.Errorf("ListLimits: %v", err)
	}
}

// TestListFilesOneDocument: a waivers or policy file is one document too,
// refused at the second (the rest was read silently before).
func TestListFilesOneDocument(t *testing.T) {
	dir := t.TempDir()
	for name, load := range map[string]func(string) error{
		"waivers": func(p string) error { _, err := LoadWaivers(p); return err },
		"policy":  func(p string) error { _, err := LoadPolicy(p); return err },
	} {
		p := filepath.Join(dir, name+".yaml")
		body := name + ": {}\n---\n" + strings.Repeat(name+": {}\n---\n", 999)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := load(p); err == nil || !strings.HasPrefix(err.Error(), p+":3:1: file holds more than one YAML document") {
			t.Errorf("%s: %v", name, err)
		}
		deep := name + ":\n" + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n"
		if err := os.WriteFile(p, []byte(deep), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := load(p); err == nil || !strings.Contains(err.Error(), "nest deeper than 64 levels") {
			t.Errorf("%s, 100 levels: %v", name, err)
		}
	}
}

// TestNotRegularFilesRefused: a FIFO, a device or a folder named as a spec,
// waivers or policy file is refused by its mode, naming the path, without
// blocking on the FIFO or reading the device.
func TestNotRegularFilesRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "spec.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	loads := map[string]func(string) error{
		"spec":    func(p string) error { _, err := Load(p, nil); return err },
		"context": func(p string) error { _, err := LoadContext(context.Background(), p, nil); return err },
		"waivers": func(p string) error { _, err := LoadWaivers(p); return err },
		"policy":  func(p string) error { _, err := LoadPolicy(p); return err },
	}
	for _, path := range []string{fifo, "/dev/zero", t.TempDir()} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		for name, load := range loads {
			done := make(chan error, 1)
			go func() { done <- load(path) }()
			select {
			case err := <-done:
				var se *Error
				if !errors.As(err, &se) || se.File != path || !errors.Is(err, safefs.ErrNotRegular) || !strings.HasPrefix(err.Error(), path+": cannot read") {
					t.Errorf("%s %s: %v, want refused as not a regular file", name, path, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s %s: still reading after 5 s", name, path)
			}
		}
	}
}

// TestLoadSizeAndStdin: the spec's cap is safefs.Spec's, on a file and on
// stdin; "-" reads stdin, and LoadContext returns on cancel while stdin
// blocks.
func TestLoadSizeAndStdin(t *testing.T) {
	if MaxFileBytes != safefs.Spec.Max {
		t.Errorf("MaxFileBytes %d, safefs.Spec.Max %d", MaxFileBytes, safefs.Spec.Max)
	}
	big := io.MultiReader(strings.NewReader(header+"# "), zeros{})
	_, err := Load("-", big)
	if err == nil || !strings.HasPrefix(err.Error(), "-: cluster spec is larger than 4 MiB") || !errors.Is(err, safefs.ErrTooLarge) {
		t.Errorf("endless stdin: %v", err)
	}
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err = LoadContext(ctx, "-", r)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Errorf("LoadContext on a blocked stdin: %v after %v", err, time.Since(start))
	}
}

// zeros is an endless reader of 'x' bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// noControlText reports the first string reachable from v (struct fields,
// slices, maps, keys included) that holds a control rune.
func noControlText(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.String:
		if strings.ContainsFunc(v.String(), ControlRune) {
			return fmt.Errorf("%s = %q", path, v.String())
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return noControlText(v.Elem(), path)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if err := noControlText(v.Field(i), path+"."+v.Type().Field(i).Name); err != nil {
					return err
				}
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if err := noControlText(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if err := noControlText(k, path+" key"); err != nil {
				return err
			}
			if err := noControlText(v.MapIndex(k), path+"["+k.String()+"]"); err != nil {
				return err
			}
		}
	}
	return nil
}
