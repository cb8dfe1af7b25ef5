package cli

import (
	"github.com/gpuctl/gpuctl/internal/importer"
)

// groupPaths groups validate's PATH arguments as `gpuctl import` takes
// them: a cluster-toolkit blueprint followed by its deployment files is
// one import (the blueprint, then the files that set its vars); every
// other argument is validated on its own. Errors: an argument that cannot
// be read while telling what it is (a PATH outside --root among them).
func (o *validateOptions) groupPaths() error {
	o.groups = nil
	for i := 0; i < len(o.files); i++ {
		group := []string{o.files[i]}
		if o.isBlueprint(o.files[i]) {
			for i+1 < len(o.files) {
				dep, err := importer.IsDeployment(o.files[i+1], o.tf.root)
				if err != nil && detectSays(o.files[i+1], err) {
					return withCode(ExitUsage, err)
				}
				if !dep {
					break
				}
				i++
				group = append(group, o.files[i])
			}
		}
		o.groups = append(o.groups, group)
	}
	return nil
}

// isBlueprint reports whether file is read as a blueprint: --from says so,
// or its content does.
func (o *validateOptions) isBlueprint(file string) bool {
	if o.tf.from != "" || file == "-" {
		return o.tf.from == importer.FromBlueprint
	}
	from, err := importer.DetectIn(file, o.tf.root)
	return err == nil && from == importer.FromBlueprint
}

// leads are the first paths of the groups, each validated with the
// deployment files after it.
func (o *validateOptions) leads() []string {
	out := make([]string, len(o.groups))
	for i, g := range o.groups {
		out[i] = g[0]
	}
	return out
}

// pathsOf are the paths file is imported with: itself and, for a
// blueprint, its deployment files.
func (o *validateOptions) pathsOf(file string) []string {
	for _, g := range o.groups {
		if g[0] == file {
			return g
		}
	}
	return []string{file}
}
