package spec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/gpuctl/gpuctl/internal/safefs"
)

// MaxFileBytes is the largest spec file gpuctl reads (4 MiB). Real specs are
// a few KiB; the cap keeps a stray 10 MB file from exhausting memory.
const MaxFileBytes = 4 << 20

// maxExpandedNodes caps the number of YAML nodes a document may expand to
// through aliases (a defence against "billion laughs" alias bombs): the
// same as the nodes a file may hold without aliases.
const maxExpandedNodes = MaxNodes

// maxExpandedDepth caps the nesting of a document with aliases expanded.
const maxExpandedDepth = 4 * MaxDepth

// bom is the UTF-8 byte order mark some editors write at the start of a file.
var bom = []byte("\xef\xbb\xbf")

// Error is a spec that cannot be read: a syntax error, a wrong type, an
// unknown field, a wrong apiVersion/kind or a duplicate pool name. File, Line
// and Column (1-based) locate it when known; Hint says what to do.
type Error struct {
	File    string
	Line    int
	Column  int
	Path    string
	Message string
	Hint    string
	// Err is the cause of a file that could not be read (a *safefs.Error:
	// errors.Is(err, safefs.ErrNotRegular) holds for a FIFO); nil for a
	// file read but refused.
	Err error
}

// Unwrap is the cause of a file that could not be read, or nil.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	// A message that starts with its path ("metadata.name is required")
	// does not get the path twice.
	if e.Path != "" && !strings.HasPrefix(e.Message, e.Path) {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Document is a decoded spec file: the typed spec plus what is needed to map
// a field path back to file:line:column.
type Document struct {
	// File is the name the spec was read from ("-" for stdin).
	File string
	// Spec is the base spec, without environment overlays applied.
	Spec *ClusterSpec
	// index is what positions and environment merges need of the YAML
	// tree, which is not kept.
	index *posIndex

	resolved map[string]*ClusterSpec // cache of Resolve
}

// LoadContext is Load that returns when ctx is done, also while the read
// blocks (a FIFO with no writer, a terminal): the read and decode run in a
// goroutine, which a cancelled caller leaves behind (the process is about
// to exit). The error then wraps ctx's error.
func LoadContext(ctx context.Context, path string, in io.Reader) (*Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	type result struct {
		doc *Document
		err error
	}
	ch := make(chan result, 1)
	go func() {
		doc, err := Load(path, in)
		ch <- result{doc, err}
	}()
	select {
	case r := <-ch:
		return r.doc, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", path, ctx.Err())
	}
}

// Load reads and strictly decodes the spec at path ("-" reads in). The file
// is read through safefs: a regular file only (a FIFO, device or socket is
// refused by its mode), at most safefs.Spec's cap (4 MiB). Errors are *Error
// values (exit 2 in the CLI); one for a file that cannot be read names the
// path and wraps safefs's error.
func Load(path string, in io.Reader) (*Document, error) {
	data, err := readInput(path, in, safefs.Spec, "spec")
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse strictly decodes data as a cluster spec named file. See Load.
func Parse(file string, data []byte) (*Document, error) {
	data = bytes.TrimPrefix(data, bom)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{File: file, Message: "file is empty", Hint: "start from examples/ or `gpuctl schema`"}
	}
	if len(data) > MaxFileBytes {
		return nil, &Error{File: file, Message: fmt.Sprintf("file is larger than %d MiB", MaxFileBytes>>20)}
	}
	return parse(file, data)
}

// ParseInMemory is Parse without the file-size cap, for a spec gpuctl built
// in memory (an import of a folder), which is not a file the user wrote.
func ParseInMemory(file string, data []byte) (*Document, error) {
	data = bytes.TrimPrefix(data, bom)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{File: file, Message: "file is empty"}
	}
	return parse(file, data)
}

// parse reads data through the safety prescan, goccy/go-yaml's parser,
// the header and field checks and the decoder, then holds the structure's
// rules.
func parse(file string, data []byte) (*Document, error) {
	aliases, err := prescan(file, data)
	if err != nil {
		return nil, err
	}
	body, err := parseBody(file, data)
	if err != nil {
		return nil, err
	}
	if aliases {
		if err := checkExpansion(file, body); err != nil {
			return nil, err
		}
	}
	mapping, err := rootMapping(file, body)
	if err != nil {
		return nil, err
	}
	if err := checkHeader(file, mapping); err != nil {
		return nil, err
	}
	if err := checkText(file, body); err != nil {
		return nil, err
	}
	if err := checkFields(file, body, reflect.TypeOf(ClusterSpec{}), "", map[string]ast.Node{}); err != nil {
		return nil, err
	}
	var cs ClusterSpec
	// Decode the tree already parsed rather than parsing the bytes again.
	if err := decodeSpec(file, body, &cs); err != nil {
		return nil, err
	}
	doc := &Document{File: file, Spec: &cs, index: buildIndex(body)}
	if err := doc.checkStructure(); err != nil {
		return nil, err
	}
	return doc, nil
}

// parseBody parses data and returns the body of its one YAML document. A
// syntax error is an *Error at its position; a duplicate key's names the
// field.
func parseBody(file string, data []byte) (ast.Node, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, syntaxError(file, data, err)
	}
	var docs []*ast.DocumentNode
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			docs = append(docs, d)
		}
	}
	switch {
	case len(docs) == 0:
		return nil, &Error{File: file, Message: "file holds no YAML document", Hint: "start from examples/ or `gpuctl schema`"}
	case len(docs) > 1:
		tk := docs[1].Body.GetToken()
		return nil, errAt(file, tk, "", "file holds more than one YAML document", "put one ClusterSpec per file; use spec.environments for variants")
	}
	return docs[0].Body, nil
}

// syntaxError is the parser's error as an *Error; a duplicate key's gets
// the path of the field, from a second parse that keeps both keys.
func syntaxError(file string, data []byte, err error) error {
	e := yamlError(file, err)
	se, ok := e.(*Error)
	if !ok || se.Line == 0 || !strings.HasPrefix(se.Message, "duplicate key") {
		return e
	}
	if f, err := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey()); err == nil && len(f.Docs) > 0 && f.Docs[0].Body != nil {
		se.Path = pathAt(f.Docs[0].Body, se.Line, se.Column)
	}
	return e
}

// checkExpansion refuses a document whose aliases expand to more nodes or
// levels than a file may hold.
func checkExpansion(file string, body ast.Node) error {
	if n, ok := expandedSize(body, map[string]ast.Node{}, 0); ok && n <= maxExpandedNodes {
		return nil
	}
	return errAt(file, body.GetToken(), "", fmt.Sprintf("YAML aliases expand to more than %d nodes or %d levels", maxExpandedNodes, maxExpandedDepth), "a spec needs no deeply nested anchors and aliases; write the values out")
}

// rootMapping is the document's top-level mapping (a document of one key
// is a mapping of one entry).
func rootMapping(file string, body ast.Node) (*ast.MappingNode, error) {
	switch m := unwrap(body).(type) {
	case *ast.MappingNode:
		return m, nil
	case *ast.MappingValueNode:
		return &ast.MappingNode{BaseNode: &ast.BaseNode{}, Values: []*ast.MappingValueNode{m}}, nil
	}
	return nil, errAt(file, body.GetToken(), "", "expected a mapping with apiVersion, kind, metadata and spec", "this does not look like a gpuctl ClusterSpec")
}

// An eksctl ClusterConfig (apiVersion eksctl.io/v1alpha5) is an input
// gpuctl does not read; the message names it and what gpuctl reads
// instead. Source: https://docs.aws.amazon.com/eks/latest/eksctl/schema.html
// and https://schema.eksctl.io/ (2026-12-02).
const (
	EksctlConfig = "an eksctl ClusterConfig: gpuctl reads gpuctl specs, Terraform, cluster-toolkit blueprints and Karpenter YAML, not eksctl configs"
	EksctlHint   = "validate the Terraform or Karpenter YAML that makes the cluster's node pools, or write a gpuctl spec for its managedNodeGroups (`gpuctl schema`)"
)

// IsEksctlAPIVersion reports whether apiVersion v is eksctl's.
func IsEksctlAPIVersion(v string) bool { return strings.HasPrefix(strings.TrimSpace(v), "eksctl.io/") }

// checkHeader reports a wrong or missing apiVersion/kind before anything else,
// since every other message would be noise for a file that is not a spec.
func checkHeader(file string, m *ast.MappingNode) error {
	get := func(key string) (ast.Node, string) {
		for _, mv := range m.Values {
			if keyName(mv.Key) == key {
				v := unwrap(mv.Value)
				if s, ok := v.(ast.ScalarNode); ok {
					return mv.Value, fmt.Sprint(s.GetValue())
				}
				return mv.Value, v.String()
			}
		}
		return nil, ""
	}
	node, v := get("apiVersion")
	if node == nil {
		return errAt(file, m.GetToken(), "apiVersion", "missing apiVersion", "add `apiVersion: "+APIVersion+"`")
	}
	if IsEksctlAPIVersion(v) {
		return errAt(file, node.GetToken(), "apiVersion", EksctlConfig, EksctlHint)
	}
	if v != APIVersion {
		return errAt(file, node.GetToken(), "apiVersion", fmt.Sprintf("unsupported apiVersion %q", v), "use `apiVersion: "+APIVersion+"`")
	}
	node, v = get("kind")
	if node == nil {
		return errAt(file, m.GetToken(), "kind", "missing kind", "add `kind: "+Kind+"`")
	}
	if v != Kind {
		return errAt(file, node.GetToken(), "kind", fmt.Sprintf("unsupported kind %q", v), "use `kind: "+Kind+"`")
	}
	return nil
}

// checkStructure holds the rules a decoder cannot: required names, unique
// pool names, environment overlays that name only known fields.
func (d *Document) checkStructure() error {
	s := d.Spec
	if s.Metadata.Name == "" {
		return d.errorAt("metadata.name", "metadata.name is required", "name the spec, e.g. `metadata: {name: ml-prod}`")
	}
	if err := d.checkPools("spec", s.Spec.NodePools, true); err != nil {
		return err
	}
	if err := d.checkPolicy("spec.policy", s.Spec.Policy); err != nil {
		return err
	}
	if err := d.checkAcceptance("spec.acceptance", s.Spec.Acceptance); err != nil {
		return err
	}
	if err := d.checkPreflightPools("spec.acceptance", s.Spec.Acceptance, s.Spec.NodePools); err != nil {
		return err
	}
	for _, env := range slices.Sorted(maps.Keys(s.Spec.Environments)) {
		ov := s.Spec.Environments[env]
		base := "spec.environments" + Key(env)
		if !envName.MatchString(env) {
			return d.errorAt(base, fmt.Sprintf("environment name %q is not a DNS label", env), "use lowercase letters, digits and '-'")
		}
		if len(ov.Environments) > 0 {
			return d.errorAt(base+".environments", "environments cannot nest", "move the overlay up to spec.environments")
		}
		if err := d.checkPools(base, ov.NodePools, false); err != nil {
			return err
		}
		if err := d.checkOverlayPools(base, ov.NodePools); err != nil {
			return err
		}
		if err := d.checkPolicy(base+".policy", ov.Policy); err != nil {
			return err
		}
		if err := d.checkOverlayAcceptance(env, base+".acceptance"); err != nil {
			return err
		}
	}
	return nil
}

var envName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func (d *Document) checkPools(base string, pools []NodePool, requireName bool) error {
	seen := map[string]int{}
	for i, p := range pools {
		path := fmt.Sprintf("%s.nodePools[%d]", base, i)
		if p.Name == "" {
			return d.errorAt(path, "node pool has no name", "every node pool needs a unique `name`")
		}
		if j, dup := seen[p.Name]; dup {
			line, _, _ := d.Position(fmt.Sprintf("%s.nodePools[%d].name", base, j))
			return d.errorAt(path+".name", fmt.Sprintf("duplicate node pool name %q (first defined on line %d)", p.Name, line), "node pool names must be unique")
		}
		seen[p.Name] = i
	}
	_ = requireName
	return nil
}

// checkOverlayPools refuses an overlay pool that matches no base pool by
// name and does not define a machine (machineType or instanceTypes): it is
// a misspelt base pool far more often than a new pool, and as a new pool it
// could not come up anyway.
func (d *Document) checkOverlayPools(base string, pools []NodePool) error {
	var names []string
	known := map[string]bool{}
	for _, p := range d.Spec.Spec.NodePools {
		names = append(names, p.Name)
		known[p.Name] = true
	}
	for i, p := range pools {
		if known[p.Name] || p.MachineType != "" || len(p.InstanceTypes) > 0 {
			continue
		}
		msg := fmt.Sprintf("node pool %q matches no base pool", p.Name)
		if near := nearestName(p.Name, names); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		} else if len(names) > 0 {
			msg += " (base pools: " + strings.Join(names, ", ") + ")"
		}
		return d.errorAt(fmt.Sprintf("%s.nodePools[%d].name", base, i), msg,
			"an overlay pool changes the base pool of the same name; a new pool needs its own machineType or instanceTypes")
	}
	return nil
}

// nearestName is the name in names closest to name, if it is close (at most
// a third of name's length, and at least 2, edits away); else "".
func nearestName(name string, names []string) string {
	best, bestD := "", 1<<30
	for _, n := range names {
		if d := levenshtein.ComputeDistance(name, n); d < bestD || (d == bestD && n < best) {
			best, bestD = n, d
		}
	}
	if bestD <= max(2, len(name)/3) {
		return best
	}
	return ""
}

func (d *Document) errorAt(path, msg, hint string) error {
	line, col, _ := d.Position(path)
	return &Error{File: d.File, Line: line, Column: col, Path: path, Message: msg, Hint: hint}
}

func errAt(file string, tk *token.Token, path, msg, hint string) error {
	e := &Error{File: file, Path: path, Message: msg, Hint: hint}
	if tk != nil && tk.Position != nil {
		e.Line, e.Column = tk.Position.Line, tk.Position.Column
	}
	return e
}

// yamlError turns a goccy/go-yaml error into an *Error with its position and
// a message without the library's source excerpt.
func yamlError(file string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		msg := ye.GetMessage()
		hint := ""
		var te *yaml.TypeError
		if errors.As(err, &te) {
			msg = typeErrorMessage(te)
		} else if m := dupKeyMsg.FindStringSubmatch(msg); m != nil {
			msg = fmt.Sprintf("duplicate key %s, first defined on line %s", m[1], m[2])
			hint = "keep one of them: a key may appear once per mapping"
		} else if strings.Contains(msg, "found character '\t'") {
			msg = "tab character: YAML indentation must use spaces"
			hint = "replace the tab with spaces"
		}
		return errAt(file, ye.GetToken(), "", msg, hint)
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i > 0 {
		msg = msg[:i]
	}
	return &Error{File: file, Message: msg}
}

// dupKeyMsg is goccy/go-yaml's duplicate-key message.
var dupKeyMsg = regexp.MustCompile(`^mapping key ("(?:[^"\\]|\\.)*") already defined at \[(\d+):(\d+)\]`)

func typeErrorMessage(te *yaml.TypeError) string {
	want := kindWord(te.DstType)
	got := "a value"
	if te.Token != nil {
		got = quoteShort(te.Token.Value)
	}
	return fmt.Sprintf("wrong type: want %s, got %s", want, got)
}

func kindWord(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string (quote numbers such as \"1.33\")"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}

// keyName is the key of a mapping entry as the decoder reads it: a quoted
// key ("region": ...) without its quotes.
func keyName(k ast.MapKeyNode) string {
	if s, ok := unwrap(k).(*ast.StringNode); ok {
		return s.Value
	}
	return k.String()
}

// unwrap skips anchors and tags to the value node.
func unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		default:
			return n
		}
	}
}

// expandedSize counts the nodes of n with aliases expanded; ok is false when
// the count passes maxExpandedNodes or an alias is unknown.
func expandedSize(n ast.Node, anchors map[string]ast.Node, depth int) (int, bool) {
	return expandedSizeWith(n, anchors, depth, SpecLimits)
}

// expandedSizeWith is expandedSize under lim (lim.Nodes nodes, 4*lim.Depth
// levels).
func expandedSizeWith(n ast.Node, anchors map[string]ast.Node, depth int, lim YAMLLimits) (int, bool) {
	if n == nil {
		return 0, true
	}
	if depth > 4*lim.Depth {
		return 0, false
	}
	switch v := n.(type) {
	case *ast.AnchorNode:
		anchors[v.Name.String()] = v.Value
		return expandedSizeWith(v.Value, anchors, depth+1, lim)
	case *ast.AliasNode:
		target, ok := anchors[v.Value.String()]
		if !ok {
			return 1, true // the decoder reports unknown aliases with a position
		}
		return expandedSizeWith(target, anchors, depth+1, lim)
	case *ast.TagNode:
		return expandedSizeWith(v.Value, anchors, depth+1, lim)
	case *ast.MappingNode:
		return expandedSum(v.Values, anchors, depth, lim)
	case *ast.MappingValueNode:
		c, ok := expandedSizeWith(v.Value, anchors, depth+1, lim)
		return 1 + c, ok
	case *ast.SequenceNode:
		return expandedSum(v.Values, anchors, depth, lim)
	}
	return 1, true
}

// expandedSum is expandedSize of a mapping or list at depth: one node and
// its entries', stopping once the count passes maxExpandedNodes.
func expandedSum[N ast.Node](entries []N, anchors map[string]ast.Node, depth int, lim YAMLLimits) (int, bool) {
	total := 1
	for _, e := range entries {
		c, ok := expandedSizeWith(e, anchors, depth+1, lim)
		total += c
		if !ok || total > lim.Nodes {
			return total, false
		}
	}
	return total, true
}

// pathAt returns the field path of the value (or key) written at
// line:column, "" when none is there.
func pathAt(root ast.Node, line, column int) string {
	w := &positionWalk{line: line, column: column}
	w.walk(root, "")
	return w.found
}

// positionWalk is one walk of pathAt: the position it looks for and the
// path found there.
type positionWalk struct {
	line, column int
	found        string
}

// at reports whether the token is at the position looked for.
func (w *positionWalk) at(tk *token.Token) bool {
	return tk != nil && tk.Position != nil && tk.Position.Line == w.line && tk.Position.Column == w.column
}

func (w *positionWalk) walk(n ast.Node, path string) {
	if n == nil || w.found != "" {
		return
	}
	if _, isMap := n.(*ast.MappingNode); !isMap && w.at(n.GetToken()) {
		w.found = path
		return
	}
	switch v := n.(type) {
	case *ast.AnchorNode:
		w.walk(v.Value, path)
	case *ast.TagNode:
		w.walk(v.Value, path)
	case *ast.MappingNode:
		for _, mv := range v.Values {
			w.walk(mv, path)
		}
	case *ast.MappingValueNode:
		p := join(path, keyName(v.Key))
		if w.at(v.Key.GetToken()) {
			w.found = p // a key (duplicate-key errors point at the key)
			return
		}
		w.walk(v.Value, p)
	case *ast.SequenceNode:
		for i, e := range v.Values {
			w.walk(e, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + Key(key)
}
