package importer

import (
	"math"
	"math/big"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// prechecks bound a function's result from its arguments before it runs,
// for the functions whose result can be far larger than what they take:
// the error names the cap the result would pass. Arguments are known
// (the function is called only then).
var prechecks = map[string]func(args []cty.Value) error{
	"range":      checkRange,
	"setproduct": checkProduct,
	"format":     func(a []cty.Value) error { _, err := formatBound(str(a[0])); return err },
	"formatlist": checkFormatList,
	"indent":     checkIndent,
	"replace":    checkReplace,
	"join":       checkJoin,
	"split":      checkSplit,
	"regexall":   checkRegexAll,
	"csvdecode":  checkCSV,
	"jsondecode": func(a []cty.Value) error { return scanJSONNesting([]byte(str(a[0])), "argument 1") },
	"yamldecode": func(a []cty.Value) error {
		return spec.CheckYAML("argument 1 (YAML)", []byte(str(a[0])), yamldecodeLimits)
	},
}

// costs are the evaluation steps a call spends beyond its arguments and
// result, for functions whose work grows faster than those: a regular
// expression's program size times the text it scans (RE2 is linear in
// the text, but by the program's size a byte), distinct's comparisons of
// each element with those before it.
var costs = map[string]func(args []cty.Value) int64{
	"regex":    func(a []cty.Value) int64 { return regexCost(str(a[0]), str(a[1])) },
	"regexall": func(a []cty.Value) int64 { return regexCost(str(a[0]), str(a[1])) },
	"replace": func(a []cty.Value) int64 {
		if p := str(a[1]); len(p) > 1 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/") {
			return regexCost(p[1:len(p)-1], str(a[0]))
		}
		return int64(len(str(a[0]))) / 64
	},
	"distinct": func(a []cty.Value) int64 {
		n := int64(0)
		if v, _ := a[0].Unmark(); v.IsKnown() && !v.IsNull() && v.CanIterateElements() {
			n = int64(v.LengthInt())
		}
		return n * n / 64
	},
}

// regexCost is the steps of matching pattern against text: its compiled
// program's instructions times the text's bytes, a step for each 32.
func regexCost(pattern, text string) int64 {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 1 // the call reports it
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 1
	}
	return int64(len(prog.Inst)) * int64(len(text)) / 32
}

// str is v as a string, "" when it is not a known string.
func str(v cty.Value) string {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}

// num is v as a float64, 0 when it is not a known number.
func num(v cty.Value) float64 {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() || v.Type() != cty.Number {
		return 0
	}
	f, _ := v.AsBigFloat().Float64()
	return f
}

func length(v cty.Value) int {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() || !v.CanIterateElements() {
		return 0
	}
	return v.LengthInt()
}

func tooManyElements() error {
	return capErr("a collection of more than %d elements (MaxCollection)", MaxCollection)
}

func tooLong() error {
	return capErr("a string of more than %d bytes (MaxStringBytes)", MaxStringBytes)
}

// checkRange: range([start,] limit[, step]) makes (limit-start)/step
// numbers; without a step it counts down to a limit below the start.
func checkRange(a []cty.Value) error {
	start, limit, step := 0.0, 0.0, 1.0
	switch len(a) {
	case 1:
		limit = num(a[0])
	case 2:
		start, limit = num(a[0]), num(a[1])
	case 3:
		start, limit, step = num(a[0]), num(a[1]), num(a[2])
	}
	if len(a) < 3 && limit < start {
		step = -1
	}
	if step == 0 {
		return nil // range refuses it itself
	}
	if n := math.Ceil((limit - start) / step); n > MaxCollection || math.IsNaN(n) {
		return tooManyElements()
	}
	return nil
}

// checkProduct: setproduct makes the product of its arguments' lengths.
func checkProduct(a []cty.Value) error {
	n := 1
	for _, v := range a {
		l := length(v)
		if l == 0 {
			return nil
		}
		if n *= l; n > MaxCollection {
			return tooManyElements()
		}
	}
	return nil
}

// formatVerb is a verb of a format string: a % sequence with its width and
// precision.
var formatVerb = regexp.MustCompile(`%[-+# 0]*(?:\[\d+\])?(\d*)(?:\.(\d*))?(?:\[\d+\])?[a-zA-Z%]`)

// formatBound is what the fixed part of a format string and its widths
// and precisions add to the result at most, in bytes. Errors: a width or
// precision past MaxStringBytes.
func formatBound(f string) (int64, error) {
	bound := int64(len(f))
	for _, m := range formatVerb.FindAllStringSubmatch(f, -1) {
		for _, n := range m[1:] {
			if n == "" {
				continue
			}
			w, err := strconv.ParseInt(n, 10, 64)
			if err != nil || w > MaxStringBytes {
				return 0, tooLong()
			}
			bound += w
		}
	}
	if bound > MaxStringBytes {
		return 0, tooLong()
	}
	return bound, nil
}

// checkFormatList: formatlist makes one string per element of its longest
// list argument, each the format with every argument's element.
func checkFormatList(a []cty.Value) error {
	fixed, err := formatBound(str(a[0]))
	if err != nil {
		return err
	}
	n := 1
	for _, v := range a[1:] {
		if v.IsKnown() && !v.IsNull() && (v.Type().IsListType() || v.Type().IsTupleType()) {
			n = max(n, length(v))
		}
	}
	if n > MaxCollection {
		return tooManyElements()
	}
	bound := int64(n) * fixed
	for _, v := range a[1:] {
		s, _ := measure(v)
		if v.IsKnown() && !v.IsNull() && (v.Type().IsListType() || v.Type().IsTupleType()) {
			bound += s.bytes
		} else {
			bound += int64(n) * (s.bytes + 32)
		}
	}
	if bound > MaxValueBytes {
		return capErr("a value of more than %d bytes of strings (MaxValueBytes)", MaxValueBytes)
	}
	return nil
}

// checkIndent: indent(spaces, s) adds spaces after every newline.
func checkIndent(a []cty.Value) error {
	spaces, s := num(a[0]), str(a[1])
	if spaces > MaxStringBytes || float64(len(s))+spaces*float64(strings.Count(s, "\n")) > MaxStringBytes {
		return tooLong()
	}
	return nil
}

// checkReplace: replace(s, old, new) writes new for each match of old (a
// /regexp/ with its $ references expanded, each at most s long).
func checkReplace(a []cty.Value) error {
	s, old, repl := str(a[0]), str(a[1]), str(a[2])
	var matches int
	refs := 0
	switch {
	case len(old) > 1 && old[0] == '/' && old[len(old)-1] == '/':
		re, err := regexp.Compile(old[1 : len(old)-1])
		if err != nil {
			return nil // replace reports it
		}
		matches = len(re.FindAllStringIndex(s, -1))
		refs = strings.Count(repl, "$")
	case old == "":
		matches = utf8.RuneCountInString(s) + 1
	default:
		matches = strings.Count(s, old)
	}
	bound := float64(len(s)) + float64(matches)*(float64(len(repl))+float64(refs)*float64(len(s)))
	if bound > MaxStringBytes {
		return tooLong()
	}
	return nil
}

// checkJoin: join(sep, lists...) writes every element and a separator
// between two.
func checkJoin(a []cty.Value) error {
	sep := int64(len(str(a[0])))
	var bound int64
	for _, l := range a[1:] {
		s, _ := measure(l)
		bound += s.bytes + int64(length(l))*sep
	}
	if bound > MaxStringBytes {
		return tooLong()
	}
	return nil
}

// checkSplit: split(sep, s) makes one element per separator, plus one.
func checkSplit(a []cty.Value) error {
	sep, s := str(a[0]), str(a[1])
	n := strings.Count(s, sep) + 1
	if n > MaxCollection {
		return tooManyElements()
	}
	return nil
}

// checkRegexAll: regexall makes one element per match.
func checkRegexAll(a []cty.Value) error {
	re, err := regexp.Compile(str(a[0]))
	if err != nil {
		return nil // regexall reports it
	}
	if len(re.FindAllStringIndex(str(a[1]), MaxCollection+1)) > MaxCollection {
		return tooManyElements()
	}
	return nil
}

// checkCSV: csvdecode makes a value per field.
func checkCSV(a []cty.Value) error {
	s := str(a[0])
	if strings.Count(s, ",")+strings.Count(s, "\n") > MaxValueNodes {
		return capErr("a value of more than %d values (MaxValueNodes)", MaxValueNodes)
	}
	return nil
}

// countFunc is the function instrument wraps around the collection of a
// for or splat expression and each part of a template, which HCL evaluates
// without calling a function: it spends the value's size, times weight.
const countFunc = "gpuctl::count"

// countFunction is countFunc: count(value, weight) returns value, having
// spent weight steps per element of a collection (at most MaxCollection),
// and one per 64 bytes of a string (at most MaxStringBytes).
func (s *sandbox) countFunction() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{
			{Name: "value", Type: cty.DynamicPseudoType, AllowUnknown: true, AllowNull: true, AllowDynamicType: true, AllowMarked: true},
			{Name: "weight", Type: cty.Number},
		},
		Type: func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
		Impl: func(args []cty.Value, ret cty.Type) (cty.Value, error) {
			if s.b.err() != nil {
				// stoppedWhy: an unknown collection ends a for expression at
				// once, without a diagnostic per element
				return cty.UnknownVal(ret), nil
			}
			return args[0], s.count(args[0], num(args[1]))
		},
	})
}

// count spends what visiting v costs, weight steps per element.
func (s *sandbox) count(v cty.Value, weight float64) error {
	u, _ := v.Unmark()
	if !u.IsKnown() || u.IsNull() {
		return s.b.add(1)
	}
	switch t := u.Type(); {
	case t == cty.String:
		if len(u.AsString()) > MaxStringBytes {
			return s.b.fail(tooLong())
		}
		return s.b.add(1 + int64(len(u.AsString()))/64)
	case u.CanIterateElements():
		n := u.LengthInt()
		if n > MaxCollection {
			return s.b.fail(tooManyElements())
		}
		return s.b.add(1 + int64(float64(n)*weight))
	}
	return s.b.add(1)
}

// instrument rewrites the syntax tree below n so that HCL's own iteration
// spends into the budget: the collection of each for expression and the
// source of each splat go through countFunc with the size of the body
// they repeat (forNodeWeight per node) as the weight, and each part of a template that is not a
// literal goes through it with weight 1. The tree is no deeper than
// MaxNesting (scanNesting ran first).
func instrument(n hclsyntax.Node) {
	hclsyntax.VisitAll(n, func(n hclsyntax.Node) hcl.Diagnostics {
		switch x := n.(type) {
		case *hclsyntax.ForExpr:
			w := 1 + forNodeWeight*(syntaxNodes(x.KeyExpr)+syntaxNodes(x.ValExpr)+syntaxNodes(x.CondExpr))
			x.CollExpr = counter(x.CollExpr, w)
		case *hclsyntax.SplatExpr:
			x.Source = counter(x.Source, 1+forNodeWeight*syntaxNodes(x.Each))
		case *hclsyntax.FunctionCallExpr:
			providerCall(x)
		case *hclsyntax.TemplateExpr:
			for i, p := range x.Parts {
				if _, lit := p.(*hclsyntax.LiteralValueExpr); !lit {
					x.Parts[i] = counter(p, 1)
				}
			}
		}
		return nil
	})
}

// providerFunc is the sandbox's one function for every provider function
// (provider::NAME::FUNC), whose value is known only when the provider runs.
const providerFunc = "gpuctl_provider_function"

// providerCall makes call c of a provider function a call of providerFunc
// with the function's name first.
func providerCall(c *hclsyntax.FunctionCallExpr) {
	if strings.HasPrefix(c.Name, "provider::") {
		name := &hclsyntax.LiteralValueExpr{Val: cty.StringVal(c.Name), SrcRange: c.NameRange}
		c.Name, c.Args = providerFunc, append([]hclsyntax.Expression{name}, c.Args...)
	}
}

// counter is expr wrapped in a call of countFunc with weight w.
func counter(expr hclsyntax.Expression, w int) hclsyntax.Expression {
	if c, ok := expr.(*hclsyntax.FunctionCallExpr); ok && c.Name == countFunc {
		return expr
	}
	rng := expr.Range()
	weight := &hclsyntax.LiteralValueExpr{Val: cty.NumberVal(new(big.Float).SetInt64(int64(w))), SrcRange: rng}
	return &hclsyntax.FunctionCallExpr{Name: countFunc, Args: []hclsyntax.Expression{expr, weight}, NameRange: rng, OpenParenRange: rng, CloseParenRange: rng}
}

// nodeCount is the number of syntax nodes below n (0 for nil).
func syntaxNodes(n hclsyntax.Expression) int {
	if n == nil {
		return 0
	}
	c := 0
	hclsyntax.VisitAll(n, func(hclsyntax.Node) hcl.Diagnostics { c++; return nil })
	return c
}
