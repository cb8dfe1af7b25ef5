package importer

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/gpuctl/gpuctl/internal/safefs"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// sandbox is the function table of one configuration (a Terraform root
// module or a blueprint) and what it may read: files inside the root only,
// relative to the configuration's folder, each through safefs with the
// Template kind's cap. Every function counts what it takes and makes into
// the command's budget, and the functions whose result the arguments
// bound (range, setproduct, format, ...) check the bound before they run.
type sandbox struct {
	root *safefs.Root
	// dir is the configuration's folder inside the root; outside is true
	// when it is not inside (then no file is read).
	dir     string
	outside bool
	// top is the root as an absolute path in the sandbox: "/" and the
	// root folder's own name, so that path.cwd and abspath() end as
	// Terraform's do and no folder above the root is named.
	top   string
	b     *budget
	funcs map[string]function.Function
	// templates are the templatefile() paths being rendered, outermost
	// first.
	templates []string
}

// newSandbox is the sandbox of the configuration in folder dir (as the
// user gave it) under opts' root, spending into b.
func newSandbox(opts Options, dir string, b *budget) *sandbox {
	s := &sandbox{root: opts.root, dir: ".", b: b, top: "/"}
	if s.root != nil {
		s.top = path.Join("/", s.root.Name())
	}
	if s.root == nil {
		s.outside = true
	} else if rel, err := s.root.Rel(dir); err != nil {
		s.outside = true
	} else {
		s.dir = rel
	}
	s.funcs = s.table()
	return s
}

// pureFunctions are Terraform's functions that need no provider, no state
// and no file: go-cty's library under Terraform's names.
var pureFunctions = map[string]function.Function{
	"abs": stdlib.AbsoluteFunc, "ceil": stdlib.CeilFunc, "chomp": stdlib.ChompFunc, "chunklist": stdlib.ChunklistFunc,
	"coalesce": stdlib.CoalesceFunc, "coalescelist": stdlib.CoalesceListFunc, "compact": stdlib.CompactFunc,
	"concat": stdlib.ConcatFunc, "contains": stdlib.ContainsFunc, "csvdecode": stdlib.CSVDecodeFunc,
	"distinct": stdlib.DistinctFunc, "element": stdlib.ElementFunc, "flatten": stdlib.FlattenFunc,
	"floor": stdlib.FloorFunc, "format": stdlib.FormatFunc, "formatdate": stdlib.FormatDateFunc,
	"formatlist": stdlib.FormatListFunc, "indent": stdlib.IndentFunc, "index": stdlib.IndexFunc,
	"join": stdlib.JoinFunc, "jsondecode": stdlib.JSONDecodeFunc, "jsonencode": stdlib.JSONEncodeFunc,
	"keys": stdlib.KeysFunc, "log": stdlib.LogFunc, "lookup": lookupFunc,
	"lower": stdlib.LowerFunc, "max": stdlib.MaxFunc, "merge": stdlib.MergeFunc, "min": stdlib.MinFunc,
	"parseint": stdlib.ParseIntFunc, "pow": stdlib.PowFunc, "range": stdlib.RangeFunc, "regex": stdlib.RegexFunc,
	"regexall": stdlib.RegexAllFunc, "reverse": stdlib.ReverseListFunc,
	"setintersection": stdlib.SetIntersectionFunc, "setproduct": stdlib.SetProductFunc,
	"setsubtract": stdlib.SetSubtractFunc, "setunion": stdlib.SetUnionFunc, "signum": stdlib.SignumFunc,
	"slice": stdlib.SliceFunc, "sort": stdlib.SortFunc, "split": stdlib.SplitFunc, "strlen": stdlib.StrlenFunc,
	"strrev": stdlib.ReverseFunc, "substr": stdlib.SubstrFunc, "timeadd": stdlib.TimeAddFunc, "title": stdlib.TitleFunc,
	"tobool": stdlib.MakeToFunc(cty.Bool), "tolist": stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
	"tomap": stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)), "tonumber": stdlib.MakeToFunc(cty.Number),
	"toset": stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)), "tostring": stdlib.MakeToFunc(cty.String),
	"trim": stdlib.TrimFunc, "trimprefix": stdlib.TrimPrefixFunc, "trimspace": stdlib.TrimSpaceFunc,
	"trimsuffix": stdlib.TrimSuffixFunc, "upper": stdlib.UpperFunc, "values": stdlib.ValuesFunc,
	"zipmap": stdlib.ZipmapFunc,
}

// lookupFunc is Terraform's lookup: go-cty's, except that the default may
// be null (`lookup(each.value, "capacity_type", null)`), which gives null
// for a missing key, as Terraform's does (hashicorp/terraform
// internal/lang/funcs/collection.go, its default parameter AllowNull;
// https://developer.hashicorp.com/terraform/language/functions/lookup,
// 2026-12-02).
var lookupFunc = function.New(&function.Spec{
	Params: []function.Parameter{
		{Name: "inputMap", Type: cty.DynamicPseudoType, AllowMarked: true},
		{Name: "key", Type: cty.String, AllowMarked: true},
	},
	VarParam: &function.Parameter{Name: "default", Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true, AllowDynamicType: true, AllowMarked: true},
	Type: func(args []cty.Value) (cty.Type, error) {
		if len(args) == 3 && args[2].IsNull() {
			return cty.DynamicPseudoType, nil
		}
		return stdlib.LookupFunc.ReturnTypeForValues(args)
	},
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if len(args) == 3 && args[2].IsNull() {
			m, key := args[0], args[1]
			if !m.IsKnown() || !key.IsKnown() {
				return cty.DynamicVal, nil
			}
			if m.IsNull() || !(m.Type().IsObjectType() || m.Type().IsMapType()) {
				return cty.NilVal, errors.New("the first argument is not a map or an object")
			}
			if !m.Type().IsObjectType() || !m.Type().HasAttribute(key.AsString()) {
				if m.Type().IsMapType() && m.HasIndex(key).True() {
					return m.Index(key), nil
				}
				return cty.NullVal(cty.DynamicPseudoType), nil
			}
			return m.GetAttr(key.AsString()), nil
		}
		return stdlib.LookupFunc.Call(args)
	},
})

// base64EncodeFunc and base64DecodeFunc are Terraform's base64encode and
// base64decode (standard encoding; a decoded value must be UTF-8 text):
// hashicorp/terraform internal/lang/funcs/encoding.go, as documented at
// https://developer.hashicorp.com/terraform/language/functions/base64decode
// (2026-12-01).
var (
	base64EncodeFunc = function.New(&function.Spec{
		Params: []function.Parameter{{Name: "str", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.StringVal(base64.StdEncoding.EncodeToString([]byte(args[0].AsString()))), nil
		},
	})
	base64DecodeFunc = function.New(&function.Spec{
		Params: []function.Parameter{{Name: "str", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			b, err := base64.StdEncoding.DecodeString(args[0].AsString())
			if err != nil {
				return cty.NilVal, errors.New("the argument is not base64")
			}
			if !utf8.Valid(b) {
				return cty.NilVal, errors.New("the decoded value is not UTF-8 text")
			}
			return cty.StringVal(string(b)), nil
		},
	})
)

// fileHashes are the file functions that return a digest or encoding of
// a file's bytes.
var fileHashes = map[string]func([]byte) string{
	"filebase64":       base64.StdEncoding.EncodeToString,
	"filesha1":         hexOf(sha1.New),
	"filesha256":       hexOf(sha256.New),
	"filesha512":       hexOf(sha512.New),
	"filemd5":          hexOf(md5.New),
	"filebase64sha256": base64Of(sha256.New),
	"filebase64sha512": base64Of(sha512.New),
}

func hexOf(h func() hash.Hash) func([]byte) string {
	return func(b []byte) string { x := h(); x.Write(b); return hex.EncodeToString(x.Sum(nil)) }
}

func base64Of(h func() hash.Hash) func([]byte) string {
	return func(b []byte) string { x := h(); x.Write(b); return base64.StdEncoding.EncodeToString(x.Sum(nil)) }
}

// table is the sandbox's function table: the pure functions, yaml, the
// file family and abspath, each counted; try and can as HCL has them.
func (s *sandbox) table() map[string]function.Function {
	f := map[string]function.Function{}
	for n, fn := range pureFunctions {
		f[n] = fn
	}
	f["base64encode"], f["base64decode"] = base64EncodeFunc, base64DecodeFunc
	f["yamlencode"] = yamlEncodeFunc
	f["yamldecode"] = yamlDecodeFunc
	f["file"] = s.fileFunc("file", func(b []byte) string { return string(b) })
	for n, h := range fileHashes {
		f[n] = s.fileFunc(n, h)
	}
	f["fileexists"] = s.fileExistsFunc()
	f["fileset"] = s.fileSetFunc()
	f["templatefile"] = s.templateFileFunc()
	f["abspath"] = s.absPathFunc()
	for n, fn := range moreFunctions {
		f[n] = fn
	}
	for n, why := range laterFunctions {
		f[n] = laterFunc(n, why)
	}
	f["pathexpand"] = pathExpandFunc()
	f["templatestring"] = s.templateStringFunc()
	f[providerFunc] = providerFunction
	for n, fn := range f {
		f[n] = s.counted(n, fn)
	}
	f["try"], f["can"] = tryfunc.TryFunc, tryfunc.CanFunc
	f[countFunc] = s.countFunction()
	return f
}

// counted is fn with its cost spent into the budget: a step, the size of
// its arguments and of its result; the pre-check of its name runs first.
func (s *sandbox) counted(name string, fn function.Function) function.Function {
	pre := prechecks[name]
	return function.New(&function.Spec{
		Description: fn.Description(),
		Params:      fn.Params(),
		VarParam:    fn.VarParam(),
		Type:        fn.ReturnTypeForValues,
		Impl: func(args []cty.Value, ret cty.Type) (cty.Value, error) {
			if s.b.err() != nil {
				return cty.UnknownVal(ret), nil // stoppedWhy: no more work, no more diagnostics
			}
			if err := s.spendArgs(name, args); err != nil {
				return cty.NilVal, err
			}
			if pre != nil {
				if err := pre(args); err != nil {
					return cty.NilVal, s.b.fail(fmt.Errorf("%s(): %w", name, err))
				}
			}
			if cost := costs[name]; cost != nil {
				if err := s.b.add(cost(args)); err != nil {
					return cty.NilVal, err
				}
			}
			v, err := fn.Call(args)
			if err != nil || s.b.err() != nil {
				return cty.NilVal, errors.Join(err, s.b.err())
			}
			size, err := measure(v)
			if err != nil {
				return cty.NilVal, s.b.fail(fmt.Errorf("%s(): %w", name, err))
			}
			return v, s.b.add(size.steps())
		},
	})
}

// spendArgs spends a call's step and its arguments' size. Errors: the
// arguments together hold more than MaxValueNodes values, the budget.
func (s *sandbox) spendArgs(name string, args []cty.Value) error {
	if err := s.b.add(1); err != nil {
		return err
	}
	var nodes int64
	for _, a := range args {
		size, err := measure(a)
		if err != nil {
			return s.b.fail(fmt.Errorf("%s(): %w", name, err))
		}
		if nodes += size.nodes; nodes > MaxValueNodes {
			return s.b.fail(fmt.Errorf("%s(): %w", name, capErr("arguments of more than %d values (MaxValueNodes)", MaxValueNodes)))
		}
		if err := s.b.add(size.steps()); err != nil {
			return err
		}
	}
	return nil
}

// maxShownPath is the most bytes of a path argument a message quotes.
const maxShownPath = 200

// refuse is the refusal of argument pos (1-based) of function fn, path p,
// which leaves the root; it stops the import.
func (s *sandbox) refuse(fn string, pos int, p string) error {
	if len(p) > maxShownPath {
		p = p[:maxShownPath] + "..."
	}
	return s.b.fail(fmt.Errorf("%s(): argument %d: %q is %s (the root %s; --root sets another)", fn, pos, p, safefs.ErrOutside, s.root.Shown()))
}

// resolve maps path argument p of fn (argument pos) to its name inside the
// root: relative to the configuration's folder. An absolute path, a ".."
// past the root or a configuration outside the root is refused.
func (s *sandbox) resolve(fn string, pos int, p string) (string, error) {
	if s.outside || p == "" || strings.HasPrefix(p, "~") {
		return "", s.refuse(fn, pos, p)
	}
	rel := filepath.Join(s.dir, filepath.FromSlash(p))
	if filepath.IsAbs(p) {
		// only the sandbox's own absolute paths (path.cwd, abspath())
		under, ok := strings.CutPrefix(path.Clean(filepath.ToSlash(p)), s.top)
		if !ok || under != "" && !strings.HasPrefix(under, "/") || s.top == "/" {
			return "", s.refuse(fn, pos, p)
		}
		rel = filepath.Join(".", filepath.FromSlash(strings.TrimPrefix(under, "/")))
	}
	if !safefs.Local(rel) {
		return "", s.refuse(fn, pos, p)
	}
	return rel, nil
}

// read reads path argument p of fn inside the root. A file outside (by
// its name or a link), one that is not a regular file or one over the
// cap stops the import; one that does not exist is an error of the call.
func (s *sandbox) read(fn string, pos int, p string) ([]byte, string, error) {
	rel, err := s.resolve(fn, pos, p)
	if err != nil {
		return nil, "", err
	}
	data, err := s.root.ReadFile(rel, safefs.Template)
	switch {
	case errors.Is(err, safefs.ErrOutside):
		return nil, "", s.refuse(fn, pos, p)
	case errors.Is(err, safefs.ErrNotRegular), errors.Is(err, safefs.ErrTooLarge):
		return nil, "", s.b.fail(fmt.Errorf("%s(): argument %d: %w", fn, pos, err))
	case err != nil:
		// a file that is not there (yet: one a step before apply writes)
		// is an error of the call, which try() and can() catch; the value
		// is unknown
		return nil, "", &callError{fmt.Sprintf("%s(): argument %d: %v", fn, pos, err)}
	}
	return data, rel, s.b.add(int64(len(data)) / 64)
}

// callError is an error of a file function that names only the function,
// the argument and the path (a *safefs.Error's text, never content): the
// one error text of a call that an unknown value's reason may quote.
type callError struct{ msg string }

func (e *callError) Error() string { return e.msg }

// fileFunc is file() or one of the digests of a file: conv of its bytes.
func (s *sandbox) fileFunc(name string, conv func([]byte) string) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			b, _, err := s.read(name, 1, args[0].AsString())
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(conv(b)), nil
		},
	})
}

// fileExistsFunc is fileexists(): whether a regular file is at the path
// inside the root.
func (s *sandbox) fileExistsFunc() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := args[0].AsString()
			rel, err := s.resolve("fileexists", 1, p)
			if err != nil {
				return cty.NilVal, err
			}
			st, err := s.root.Stat(rel)
			if errors.Is(err, safefs.ErrOutside) {
				return cty.NilVal, s.refuse("fileexists", 1, p)
			}
			return cty.BoolVal(err == nil && st.Mode().IsRegular()), nil
		},
	})
}

// maxFilesetDepth is the deepest folder fileset() walks into.
const maxFilesetDepth = 32

// fileSetFunc is fileset(path, pattern): the regular files under path
// (inside the root) whose names relative to it match pattern ("*" within a
// name, "**" across folders), at most MaxCollection entries visited.
func (s *sandbox) fileSetFunc() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}, {Name: "pattern", Type: cty.String}},
		Type:   function.StaticReturnType(cty.Set(cty.String)),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			base, err := s.resolve("fileset", 1, args[0].AsString())
			if err != nil {
				return cty.NilVal, err
			}
			var found []cty.Value
			visited := 0
			err = s.walk(base, "", 0, &visited, func(name string) {
				// matching costs the pattern's segments for each file
				if s.b.add(int64(len(args[1].AsString())/16+1)) != nil {
					return
				}
				if globMatch(strings.Split(args[1].AsString(), "/"), strings.Split(name, "/")) {
					found = append(found, cty.StringVal(name))
				}
			})
			if err != nil {
				return cty.NilVal, err
			}
			if len(found) == 0 {
				return cty.SetValEmpty(cty.String), nil
			}
			return cty.SetVal(found), nil
		},
	})
}

// walk calls fn with the slash-separated name (below base) of each regular
// file under base/sub; links are not followed.
func (s *sandbox) walk(base, sub string, depth int, visited *int, fn func(string)) error {
	if depth > maxFilesetDepth {
		return s.b.fail(capErr("fileset(): folders nested deeper than %d levels", maxFilesetDepth))
	}
	ents, err := s.root.ReadDir(filepath.Join(base, filepath.FromSlash(sub)))
	if err != nil {
		return fmt.Errorf("fileset(): argument 1: %w", err)
	}
	for _, e := range ents {
		if *visited++; *visited > MaxCollection {
			return s.b.fail(capErr("fileset(): more than %d entries (MaxCollection)", MaxCollection))
		}
		name := path.Join(sub, e.Name())
		switch {
		case e.IsDir():
			if err := s.walk(base, name, depth+1, visited, fn); err != nil {
				return err
			}
		case e.Type()&fs.ModeType == 0:
			fn(name)
		}
	}
	return nil
}

// globMatch matches name segments against pattern segments: "**" matches
// any number of segments, others as path.Match. It fills a table of
// (pattern, name) suffixes, so that many "**" cost no backtracking.
func globMatch(pat, name []string) bool {
	// ok[j] is whether pat[i:] matches name[j:], for the i of the loop.
	ok := make([]bool, len(name)+1)
	ok[len(name)] = true
	for i := len(pat) - 1; i >= 0; i-- {
		next := make([]bool, len(name)+1)
		for j := len(name); j >= 0; j-- {
			switch {
			case pat[i] == "**":
				next[j] = ok[j] || j < len(name) && next[j+1]
			case j < len(name):
				m, _ := path.Match(pat[i], name[j])
				next[j] = m && ok[j+1]
			}
		}
		ok = next
	}
	return ok[0]
}

// cwd is path.cwd: the configuration's folder under the sandbox's top
// ("/" and the root folder's name), never the machine's folders above.
func (s *sandbox) cwd() string {
	return path.Join(s.top, filepath.ToSlash(s.dir))
}

// absPathFunc is abspath(): the path joined to path.cwd and cleaned, as
// Terraform's is (https://developer.hashicorp.com/terraform/language/
// functions/abspath, 2026-12-02), under the sandbox's top instead of the
// machine's root, so that no absolute path of the runner reaches a spec.
func (s *sandbox) absPathFunc() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := filepath.ToSlash(args[0].AsString())
			if !path.IsAbs(p) {
				p = path.Join(s.cwd(), p)
			}
			return cty.StringVal(path.Clean(p)), nil
		},
	})
}

// templateFileFunc is templatefile(path, vars): the template read inside
// the root, scanned and counted as a .tf file is, rendered with vars and
// this table. A template that includes itself, directly or through others,
// is refused, as Terraform refuses it.
func (s *sandbox) templateFileFunc() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}, {Name: "vars", Type: cty.DynamicPseudoType}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := args[0].AsString()
			rel, err := s.resolve("templatefile", 1, p)
			if err != nil {
				return cty.NilVal, err
			}
			if slices.Contains(s.templates, rel) {
				chain := strings.Join(append(slices.Clone(s.templates), rel), " -> ")
				return cty.NilVal, s.b.fail(fmt.Errorf("templatefile(): argument 1: %q includes itself (%s)", p, chain))
			}
			if len(s.templates) >= MaxTemplateDepth {
				return cty.NilVal, s.b.fail(capErr("templatefile(): templates nested deeper than %d (MaxTemplateDepth)", MaxTemplateDepth))
			}
			data, _, err := s.read("templatefile", 1, p)
			if err != nil {
				return cty.NilVal, err
			}
			return s.render(rel, data, args[1])
		},
	})
}

// render evaluates the template data (rel inside the root) with vars.
func (s *sandbox) render(rel string, data []byte, vars cty.Value) (cty.Value, error) {
	name := s.root.Path(rel)
	if err := scanNesting(s.b, data, name, hcl.InitialPos, scanTemplate); err != nil {
		return cty.NilVal, s.b.fail(err)
	}
	t, d := hclsyntax.ParseTemplate(data, name, hcl.InitialPos)
	if d.HasErrors() {
		return cty.NilVal, fmt.Errorf("templatefile(): %s", firstError(d))
	}
	instrument(t)
	return s.renderParsed("templatefile", rel, t, vars)
}

// renderParsed evaluates template t (named rel while it renders) of
// function fn with vars.
func (s *sandbox) renderParsed(fn, rel string, t hclsyntax.Expression, vars cty.Value) (cty.Value, error) {
	scope := map[string]cty.Value{}
	if vars.IsKnown() && !vars.IsNull() && (vars.Type().IsObjectType() || vars.Type().IsMapType()) {
		for k, v := range vars.AsValueMap() {
			scope[k] = v
		}
	}
	s.templates = append(s.templates, rel)
	v, d := t.Value(&hcl.EvalContext{Variables: scope, Functions: s.funcs})
	s.templates = s.templates[:len(s.templates)-1]
	if s.b.err() != nil {
		s.b.place(d, t.Range())
		return cty.NilVal, s.b.err()
	}
	if d.HasErrors() {
		return cty.NilVal, fmt.Errorf("%s(): %s", fn, firstError(d))
	}
	return v, nil
}

// yamldecodeLimits are yamldecode()'s: the spec path's alias and depth limits,
// with a string as long as any other of an expression.
var yamldecodeLimits = spec.YAMLLimits{Depth: MaxValueDepth, Nodes: MaxValueNodes, Keys: MaxCollection, StringBytes: MaxStringBytes}

var yamlEncodeFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		// JSON is YAML: the encoding differs from Terraform's in layout
		// only, and import reads it back, never shows it.
		b, err := ctyjson.Marshal(args[0], args[0].Type())
		if err != nil {
			return cty.NilVal, err
		}
		return cty.StringVal(string(b)), nil
	},
})

var yamlDecodeFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "src", Type: cty.String}},
	Type:   function.StaticReturnType(cty.DynamicPseudoType),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return yamlToCty([]byte(args[0].AsString()))
	},
})
