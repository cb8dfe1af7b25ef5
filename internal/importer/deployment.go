package importer

import (
	"path/filepath"
	"strings"

	"github.com/gpuctl/gpuctl/internal/safefs"
)

// IsDeployment reports whether path is a cluster-toolkit deployment file:
// YAML whose top level holds vars and neither deployment_groups (a
// blueprint) nor apiVersion (a gpuctl spec, Karpenter YAML). It reads
// inside root ("" for the root Import would use), as Detect does. Errors:
// path cannot be read, path is not inside root.
func IsDeployment(path, root string) (bool, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
	default:
		return false, nil
	}
	r, err := openRoot(path, root)
	if err != nil {
		return false, err
	}
	defer r.Close()
	opts := &Options{root: r}
	if isDir, err := opts.isDir(path); err != nil || isDir {
		return false, err
	}
	data, err := opts.readPath(path, safefs.Blueprint)
	if err != nil {
		return false, err
	}
	vars := false
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "deployment_groups:"), strings.HasPrefix(l, "blueprint_name:"), strings.HasPrefix(l, "apiVersion:"):
			return false, nil
		case strings.HasPrefix(l, "vars:"):
			vars = true
		}
	}
	return vars, nil
}
