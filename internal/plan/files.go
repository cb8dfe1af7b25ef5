package plan

import (
	"bytes"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/hclshape"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// File and object actions, as terraform plan marks them.
const (
	ActionAdd    = "add"    // +
	ActionChange = "change" // ~
	ActionRemove = "remove" // -
)

// FileChange is one generated file that differs from the folder compared.
type FileChange struct {
	// Path is relative to the folder ("terraform/base/node_pools.tf").
	Path   string `json:"path"`
	Action string `json:"action"`
	// Objects are the Terraform blocks (resource.TYPE.NAME, variable.NAME)
	// or YAML objects (Kind/namespace/name; values.KEY for Helm values)
	// that are added, changed or removed.
	Objects []ObjectChange `json:"objects"`
	// Diff is the unified diff (old file a/PATH, new b/PATH).
	Diff string `json:"diff"`
	// Kept is true when generate would keep the file as it is instead:
	// its content is not what gpuctl wrote there (OutFile.Owned), a hand
	// edit or a file of the team's own.
	Kept bool `json:"kept"`
}

// ObjectChange is one block or object of a changed file.
type ObjectChange struct {
	Name   string `json:"name"`
	Action string `json:"action"`
}

// CompareFiles compares the files generate would write for env (as
// check.InScope takes it) with those under old (the --out folder, read
// without following links: TreeFS), as CompareOut does. Errors: a
// *TreeError for a tree gpuctl does not read.
func CompareFiles(want []check.File, old fs.FS, env string) ([]FileChange, error) {
	out, err := ReadOut(TreeFS(old, "."), want, check.LayerAll, env)
	if err != nil {
		return nil, err
	}
	return CompareOut(out), nil
}

// CompareOut lists what generate would do to the tree read by ReadOut:
// files added, changed, and removed: a file an earlier generate listed in
// the tree's manifest (check.ManifestName) in the run's scope that it
// does not write any more, as for a removed environment or an add-on
// turned off. Files gpuctl did not write and that are not where it writes
// (a backend.tf beside the Terraform) are never listed; a changed or
// removed file whose content is not what gpuctl wrote is marked Kept.
// Sorted by path.
func CompareOut(out *Out) []FileChange {
	changes := []FileChange{}
	for _, f := range out.Files {
		switch {
		case !f.Exists:
			changes = append(changes, change(f.Path, nil, f.Want, ActionAdd))
		case f.Differs():
			c := change(f.Path, f.Have, f.Want, ActionChange)
			c.Kept = !f.Owned()
			changes = append(changes, c)
		}
	}
	for _, f := range out.Stale {
		c := change(f.Path, f.Have, nil, ActionRemove)
		c.Kept = !f.Owned()
		changes = append(changes, c)
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes
}

func change(p string, old, new []byte, action string) FileChange {
	return FileChange{Path: p, Action: action, Objects: objectChanges(p, old, new), Diff: UnifiedDiff("a/"+p, "b/"+p, string(old), string(new))}
}

// objectChanges compares the named objects of the two versions of a file.
func objectChanges(p string, old, new []byte) []ObjectChange {
	parse := yamlObjects
	if strings.HasSuffix(p, ".tf") {
		parse = hclBlocks
	}
	o, n := parse(old), parse(new)
	names := map[string]bool{}
	for k := range o {
		names[k] = true
	}
	for k := range n {
		names[k] = true
	}
	out := []ObjectChange{}
	for k := range names {
		ov, inOld := o[k]
		nv, inNew := n[k]
		switch {
		case !inOld:
			out = append(out, ObjectChange{k, ActionAdd})
		case !inNew:
			out = append(out, ObjectChange{k, ActionRemove})
		case ov != nv:
			out = append(out, ObjectChange{k, ActionChange})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// hclBlocks maps each top-level block of a Terraform file (TYPE.LABEL...)
// to its source text; nothing for a file that does not parse.
func hclBlocks(src []byte) map[string]string {
	out := map[string]string{}
	if len(src) == 0 || !shallowHCL(src) {
		return out
	}
	f, diags := hclsyntax.ParseConfig(src, "f.tf", hcl.InitialPos)
	if diags.HasErrors() {
		return out
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return out
	}
	for _, b := range body.Blocks {
		name := strings.Join(append([]string{b.Type}, b.Labels...), ".")
		r := b.Range()
		out[name] = string(src[r.Start.Byte:r.End.Byte])
	}
	return out
}

// Limits of a file of the --out tree that plan parses to name its changed
// objects (the tree may come from a pull request): a file past them is
// compared as text only. gpuctl's own files nest about 10 levels.
const (
	maxObjectNesting = 64
	maxObjectTokens  = 200_000
)

// objectLimits are the YAML limits of such a file (spec.CheckYAML runs
// them on the bytes before the YAML library builds a tree).
var objectLimits = spec.YAMLLimits{Depth: maxObjectNesting, Nodes: 200_000, Keys: 10_000, StringBytes: 1 << 20}

// shallowHCL reports whether src lexes (hclsyntax's lexer, which does not
// recurse) into at most maxObjectTokens tokens nested at most
// maxObjectNesting deep, so that the parser's recursion and diagnostics
// stay bounded.
func shallowHCL(src []byte) bool {
	if _, at := hclshape.Tokens(src, maxObjectTokens); at >= 0 {
		return false // the lexer's own tokens would cost too much
	}
	toks, _ := hclsyntax.LexConfig(src, "f.tf", hcl.InitialPos)
	if len(toks) > maxObjectTokens {
		return false
	}
	depth := 0
	for _, t := range toks {
		switch t.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl, hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
			if depth++; depth > maxObjectNesting {
				return false
			}
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenTemplateSeqEnd, hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			depth = max(depth-1, 0)
		case hclsyntax.TokenInvalid, hclsyntax.TokenBadUTF8:
			return false
		}
	}
	return true
}

// yamlObjects maps each object of a YAML file to its text: Kind/name (with
// the namespace, Kind/namespace/name) for Kubernetes objects, values.KEY
// for each top-level key of a document without a kind (Helm values).
func yamlObjects(src []byte) map[string]string {
	out := map[string]string{}
	if len(src) == 0 || spec.CheckYAML("f.yaml", src, objectLimits) != nil {
		return out
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if doc == nil {
			continue
		}
		if kind, ok := doc["kind"].(string); ok {
			meta, _ := doc["metadata"].(map[string]any)
			name := kind
			if ns, _ := meta["namespace"].(string); ns != "" {
				name += "/" + ns
			}
			if n, _ := meta["name"].(string); n != "" {
				name += "/" + n
			}
			out[name] = text(doc)
			continue
		}
		for k, v := range doc {
			out["values."+k] = text(v)
		}
	}
	return out
}

func text(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
