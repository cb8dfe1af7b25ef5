// Command helmkeys prints the values key list of one Helm chart version in
// the format of internal/helmgen/data/<chart>-<version>.txt: every dotted
// values key path that the chart's values.yaml sets or one of its templates
// reads, sorted, with the three header lines the helmgen tests expect.
//
// It reads the chart from a folder, or from a git repository at a tag:
//
//	go run ./hack/helmkeys -chart nvidia-device-plugin -path deployments/helm/nvidia-device-plugin -tag v0.17.4 DIR
//	go run ./hack/helmkeys -chart nvidia-device-plugin -path deployments/helm/nvidia-device-plugin -tag v0.17.4 -git REPO
//
// DIR is the chart folder itself (the one holding values.yaml). With -git,
// the chart is read from `git -C REPO archive TAG:PATH`.
//
// The key paths:
//   - values.yaml: every map key, joined with "."; a non-empty map is listed
//     and followed; a list, a scalar, null or an empty map ends the path
//     (the key is opaque: any value may go there).
//   - templates/ (all files, recursively; not the subcharts in charts/):
//     every `.Values.a.b.c` (also `$.Values...`) and every
//     `index .Values "a" "b"` reference. A path, and each path above it, that
//     values.yaml does not set is listed with the comment
//     "# read by templates, not defaulted".
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing/fstest"

	"sigs.k8s.io/yaml"
)

func main() {
	chart := flag.String("chart", "", "chart name, as in the key list's file name (required)")
	version := flag.String("version", "", "chart version for the header (default: Chart.yaml's version)")
	tag := flag.String("tag", "", "repository tag the chart is read at (required)")
	repoPath := flag.String("path", "", "the chart's folder inside its repository, for the header (required)")
	gitDir := flag.String("git", "", "read the chart from this git repository at -tag instead of a folder")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: helmkeys -chart NAME -tag TAG -path REPO_PATH [-version V] (DIR | -git REPO)\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *chart == "" || *tag == "" || *repoPath == "" || (*gitDir == "") == (flag.NArg() != 1) {
		flag.Usage()
		os.Exit(2)
	}
	var fsys fs.FS
	var err error
	if *gitDir != "" {
		fsys, err = gitChart(*gitDir, *tag, *repoPath)
	} else {
		fsys = os.DirFS(flag.Arg(0))
	}
	if err == nil {
		var out []byte
		out, err = keyList(fsys, *chart, *version, *tag, strings.Trim(*repoPath, "/"))
		if err == nil {
			_, err = os.Stdout.Write(out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helmkeys:", err)
		os.Exit(1)
	}
}

// gitChart reads the files of repoPath at tag from the git repository dir.
func gitChart(dir, tag, repoPath string) (fs.FS, error) {
	cmd := exec.Command("git", "-C", dir, "archive", "--format=tar", tag+":"+strings.Trim(repoPath, "/"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git archive %s:%s: %v: %s", tag, repoPath, err, strings.TrimSpace(stderr.String()))
	}
	m := fstest.MapFS{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		m[path.Clean(h.Name)] = &fstest.MapFile{Data: b, Mode: 0o644}
	}
	return m, nil
}

// keyList builds the key list file of the chart in fsys.
func keyList(fsys fs.FS, chart, version, tag, repoPath string) ([]byte, error) {
	if version == "" {
		v, err := chartVersion(fsys)
		if err != nil {
			return nil, err
		}
		version = v
	}
	valuesData, err := fs.ReadFile(fsys, "values.yaml")
	if err != nil {
		return nil, err
	}
	var values map[string]any
	if err := yaml.Unmarshal(valuesData, &values); err != nil {
		return nil, fmt.Errorf("values.yaml: %w", err)
	}
	set := map[string]bool{}
	valuesPaths("", values, set)

	read := map[string]bool{}
	err = fs.WalkDir(fsys, "templates", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		for _, ref := range templateRefs(string(data)) {
			for q := ref; q != ""; q = parent(q) {
				read[q] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	var paths []string
	for p := range set {
		paths = append(paths, p)
	}
	for p := range read {
		if !set[p] {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)

	var b bytes.Buffer
	if strings.TrimPrefix(tag, "v") == strings.TrimPrefix(version, "v") {
		fmt.Fprintf(&b, "# %s chart at tag %s: every values key path (dotted) that values.yaml sets or a template reads.\n", chart, tag)
	} else {
		fmt.Fprintf(&b, "# %s chart %s (repository tag %s): every values key path (dotted) that values.yaml sets or a template reads.\n", chart, version, tag)
	}
	fmt.Fprintf(&b, "# Source: %[1]s/values.yaml and %[1]s/templates/ in the chart's public repository at %[2]s.\n", repoPath, tag)
	b.WriteString("# A path ending in a map also allows any key below it only where the template iterates it (e.g. config.map, nodeSelector, tolerations, affinity, resources, annotations, labels).\n")
	for _, p := range paths {
		b.WriteString(p)
		if !set[p] {
			b.WriteString("    # read by templates, not defaulted")
		}
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

// chartVersion is the version field of the chart's Chart.yaml.
func chartVersion(fsys fs.FS) (string, error) {
	data, err := fs.ReadFile(fsys, "Chart.yaml")
	if err != nil {
		return "", err
	}
	var c struct {
		Version string `json:"version"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		return "", fmt.Errorf("reading Chart.yaml: %w", err)
	}
	if c.Version == "" {
		return "", errors.New("the chart's Chart.yaml has no version; pass -version")
	}
	return c.Version, nil
}

// valuesPaths adds the key paths of m below prefix to set: every key, and
// the keys below each non-empty map.
func valuesPaths(prefix string, m map[string]any, set map[string]bool) {
	for k, v := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		set[p] = true
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			valuesPaths(p, sub, set)
		}
	}
}

var (
	// dotRef is .Values.a.b.c (also $.Values...).
	dotRef = regexp.MustCompile(`\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)`)
	// indexRef is index .Values "a" "b" (also $.Values, and .Values.x "a").
	indexRef = regexp.MustCompile(`index\s+\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)*)((?:\s+"[^"]*")+)`)
	quoted   = regexp.MustCompile(`"([^"]*)"`)
)

// templateRefs returns the values key paths a template's text reads.
func templateRefs(text string) []string {
	var out []string
	for _, m := range dotRef.FindAllStringSubmatch(text, -1) {
		out = append(out, strings.TrimPrefix(m[1], "."))
	}
	for _, m := range indexRef.FindAllStringSubmatch(text, -1) {
		p := strings.TrimPrefix(m[1], ".")
		for _, q := range quoted.FindAllStringSubmatch(m[2], -1) {
			if p != "" {
				p += "."
			}
			p += q[1]
		}
		out = append(out, p)
	}
	return out
}

// parent is the path above p ("" at the top).
func parent(p string) string {
	if i := strings.LastIndex(p, "."); i >= 0 {
		return p[:i]
	}
	return ""
}
