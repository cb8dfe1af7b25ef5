package importer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/safefs"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Limits on the shape of the YAML import reads, checked by spec.CheckYAML
// on the bytes before the YAML library builds its tree (a limit checked on
// the finished tree comes too late: a deeply nested file took 2 GB before
// the library returned). A refusal names the file:line:column where the
// limit trips.
const (
	// MaxKarpenterDepth is the deepest nesting of mappings and lists of a
	// Karpenter YAML file; a NodePool nests about 8 levels.
	MaxKarpenterDepth = 64
	// MaxKarpenterNodes is the most YAML nodes of one Karpenter file,
	// aliases counted where they expand (a NodePool with its EC2NodeClass
	// is about 150). The YAML library takes about 15 µs and 1 KiB a node,
	// so this bounds a file's parse to under a second and 100 MB.
	MaxKarpenterNodes = 50_000
	// MaxKarpenterKeys is the most keys of one mapping (labels, tags).
	MaxKarpenterKeys = 1_000
	// MaxKarpenterStringBytes is the longest string in bytes: an
	// EC2NodeClass's userData (EC2 caps user data at 16 KiB) fits.
	MaxKarpenterStringBytes = 64 << 10

	// MaxBlueprintDepth is the deepest nesting of a blueprint or deployment
	// file (a blueprint nests about 10 levels).
	MaxBlueprintDepth = 64
	// MaxBlueprintNodes is the most YAML nodes of one blueprint file,
	// aliases (anchors in vars among them) counted where they expand (a
	// large blueprint holds about 2,000), bounding the parse as
	// MaxKarpenterNodes does.
	MaxBlueprintNodes = 50_000
	// MaxBlueprintKeys is the most keys of one mapping (vars, settings).
	MaxBlueprintKeys = 5_000
	// MaxBlueprintStringBytes is the longest string of a blueprint in
	// bytes: longer than a spec's, for the startup scripts and manifests
	// blueprints hold inline.
	MaxBlueprintStringBytes = 256 << 10
)

// KarpenterLimits are the limits of a Karpenter YAML file.
var KarpenterLimits = spec.YAMLLimits{Depth: MaxKarpenterDepth, Nodes: MaxKarpenterNodes, Keys: MaxKarpenterKeys,
	StringBytes: MaxKarpenterStringBytes, Hint: "a Karpenter NodePool nests about 8 levels and holds a few hundred values; this file is not Karpenter YAML, or was generated wrongly"}

// BlueprintLimits are the limits of a cluster-toolkit blueprint or
// deployment file (and of a blueprint's --var value).
var BlueprintLimits = spec.YAMLLimits{Depth: MaxBlueprintDepth, Nodes: MaxBlueprintNodes, Keys: MaxBlueprintKeys,
	StringBytes: MaxBlueprintStringBytes, Hint: "a blueprint nests about 10 levels and holds a few thousand values; write the values out instead of nesting anchors and aliases"}

// yamlLimits are the limits of a YAML file read as from ("" before the
// kind is known: the loosest, a blueprint's).
func yamlLimits(from string) spec.YAMLLimits {
	if from == FromKarpenter {
		return KarpenterLimits
	}
	return BlueprintLimits
}

// kindOf is the safefs kind of a YAML file read as from.
func kindOf(from string) safefs.Kind {
	if from == FromKarpenter {
		return safefs.Karpenter
	}
	return safefs.Blueprint
}

// place is where path (a path the user named) is read: its name inside
// the root and the root. Errors: path is not inside the root by its name.
func (o *Options) place(path string) (string, error) {
	rel, err := o.root.Rel(path)
	if err != nil {
		return "", &OutsideRootError{Path: path, Root: o.root.Shown()}
	}
	return rel, nil
}

// OutsideRootError is a PATH that is not inside the root of its import
// (by its name). It wraps safefs.ErrOutside.
type OutsideRootError struct{ Path, Root string }

func (e *OutsideRootError) Error() string {
	return fmt.Sprintf("%s: not inside %s, the folder import reads (the nearest folder above the first PATH that holds .git, else that PATH, unless --root names another); pass --root with a folder that holds every PATH", diag.OneLine(e.Path), diag.OneLine(e.Root))
}

func (e *OutsideRootError) Unwrap() error { return safefs.ErrOutside }

// readPath reads the file path names (a path the user named, or a file of
// a folder the user named, as "DIR/NAME") inside the root, as a file of
// kind k: links are followed only inside the root; FIFOs, devices and
// sockets are refused. Errors name path, never content.
func (o *Options) readPath(path string, k safefs.Kind) ([]byte, error) {
	if err := o.alive(); err != nil {
		return nil, err
	}
	rel, err := o.place(path)
	if err != nil {
		return nil, err
	}
	data, err := o.root.ReadFile(rel, k)
	return data, named(err, path)
}

// isDir reports whether path is a folder inside the root (links followed
// inside it). Errors: path cannot be stat'ed there, or leaves the root.
func (o *Options) isDir(path string) (bool, error) {
	rel, err := o.place(path)
	if err != nil {
		return false, err
	}
	st, err := o.root.Stat(rel)
	if err != nil {
		return false, named(err, path)
	}
	return st.IsDir(), nil
}

// list is the names of the files in folder dir whose names end in one of
// exts, by extension in the order given and then by name ("DIR/NAME", as
// messages and origins name them); folders are left out. Errors: dir
// cannot be listed inside the root, ctx is done.
func (o *Options) list(dir string, exts ...string) ([]string, error) {
	rel, err := o.place(dir)
	if err != nil {
		return nil, err
	}
	ents, err := o.root.ReadDir(rel)
	if err != nil {
		return nil, named(err, dir)
	}
	var out []string
	for _, ext := range exts {
		for _, e := range ents {
			if err := o.alive(); err != nil {
				return nil, err
			}
			if strings.HasSuffix(e.Name(), ext) && !e.IsDir() {
				if err := plainName(filepath.Join(dir, e.Name())); err != nil {
					return nil, err
				}
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	return out, nil
}

// plainName refuses a file whose path (as messages name it) holds a line
// break or another control character: it would reach findings, tables
// and CI logs as a line of its own.
func plainName(shown string) error {
	if strings.ContainsFunc(shown, spec.ControlRune) {
		return fmt.Errorf("%s: the file name holds a line break or another control character; rename the file", diag.OneLine(shown))
	}
	return nil
}

// named is err with the path it names replaced by path (the root names
// a file by its own path; messages name it as the user did).
func named(err error, path string) error {
	var se *safefs.Error
	if err == nil || !errors.As(err, &se) {
		return err
	}
	c := *se
	c.Path = path
	return &c
}

// alive is nil while the import's context is not done, else an error
// wrapping the context's error.
func (o *Options) alive() error {
	return stopped(o.ctx)
}

// stopped is nil while ctx is not done (or nil), else an error wrapping
// its error.
func stopped(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("import stopped: %w", err)
	}
	return nil
}
