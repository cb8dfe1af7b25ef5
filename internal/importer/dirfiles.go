package importer

import (
	"strings"

	"github.com/gpuctl/gpuctl/internal/safefs"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// FromSpec is what a DirFile that is a gpuctl cluster spec holds.
const FromSpec = "spec"

// DirFile is one YAML file of a folder without .tf files, as `gpuctl
// validate DIR` reads it.
type DirFile struct {
	// File is "DIR/NAME", as messages name it.
	File string
	// From is FromSpec, FromKarpenter, or "" for a file validate skips
	// (Reason says why, naming no content).
	From, Reason string
	// Data is a spec's bytes, read inside the root.
	Data []byte
}

// DirFiles says what validate reads in folder dir (inside root, as
// DetectIn): terraform is true when dir holds .tf files (it is then read
// as Terraform and files is nil); else files are its .yaml and .yml files
// by name, each read inside the root under safefs.Blueprint's cap and
// told apart by its apiVersion and kind. Errors: dir cannot be listed
// inside the root (an *OutsideRootError for one outside it).
func DirFiles(dir, root string) (terraform bool, files []DirFile, err error) {
	r, err := openRoot(dir, root)
	if err != nil {
		return false, nil, err
	}
	defer r.Close()
	opts := &Options{root: r}
	tf, err := opts.list(dir, ".tf", ".tf.json")
	if err != nil || len(tf) > 0 {
		return len(tf) > 0, nil, err
	}
	names, err := opts.list(dir, ".yaml", ".yml")
	if err != nil {
		return false, nil, err
	}
	for _, f := range names {
		data, err := opts.readPath(f, safefs.Blueprint)
		if err != nil {
			files = append(files, DirFile{File: f, Reason: strings.TrimPrefix(err.Error(), f+": ")})
			continue
		}
		from, reason := classify(data)
		df := DirFile{File: f, From: from, Reason: reason}
		if from == FromSpec {
			df.Data = data
		}
		files = append(files, df)
	}
	return false, files, nil
}

// classify tells what YAML data is by its top-level apiVersion and kind:
// FromSpec, FromKarpenter, or "" with the reason it is skipped.
func classify(data []byte) (from, reason string) {
	switch detectYAML(data) {
	case FromKarpenter:
		return FromKarpenter, ""
	case FromBlueprint:
		return "", "a cluster-toolkit blueprint: validate it as a PATH of its own, with its deployment files"
	}
	if isEksctl(data) {
		return "", spec.EksctlConfig
	}
	apiVersion, kind := topLevel(data, "apiVersion"), topLevel(data, "kind")
	switch {
	case strings.HasPrefix(apiVersion, "gpuctl.dev/") && kind == spec.Kind:
		return FromSpec, ""
	case apiVersion == "" && kind == "":
		return "", "no apiVersion and kind: not a gpuctl ClusterSpec or Karpenter YAML"
	}
	return "", "not a gpuctl ClusterSpec or Karpenter NodePool/EC2NodeClass (its apiVersion and kind)"
}

// topLevel is the plain scalar of the first top-level key name in YAML
// data ("" when none).
func topLevel(data []byte, name string) string {
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			v, _, _ = strings.Cut(v, "#")
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}
