package importer

import (
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
)

// Terraform 1.11's built-in functions that go-cty's library does not have,
// each written against Terraform's documentation of it,
// https://developer.hashicorp.com/terraform/language/functions/NAME
// (2026-12-02); the tests hold each to the page's examples.

// strFunc is a function of string arguments (names) that returns a
// string.
func strFunc(names []string, ret cty.Type, impl func(args []string) (cty.Value, error)) function.Function {
	params := make([]function.Parameter, len(names))
	for i, n := range names {
		params[i] = function.Parameter{Name: n, Type: cty.String}
	}
	return function.New(&function.Spec{
		Params: params,
		Type:   function.StaticReturnType(ret),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			s := make([]string, len(args))
			for i, a := range args {
				s[i] = a.AsString()
			}
			return impl(s)
		},
	})
}

// strOf is a function of one string that returns a string.
func strOf(fn func(string) string) function.Function {
	return strFunc([]string{"str"}, cty.String, func(a []string) (cty.Value, error) { return cty.StringVal(fn(a[0])), nil })
}

// strTest is a function of two strings that returns a bool.
func strTest(fn func(string, string) bool) function.Function {
	return strFunc([]string{"str", "substr"}, cty.Bool, func(a []string) (cty.Value, error) { return cty.BoolVal(fn(a[0], a[1])), nil })
}

func digestHex(h func([]byte) []byte) function.Function {
	return strOf(func(s string) string { return hex.EncodeToString(h([]byte(s))) })
}

func digestBase64(h func([]byte) []byte) function.Function {
	return strOf(func(s string) string { return base64.StdEncoding.EncodeToString(h([]byte(s))) })
}

// laterFunc is a function whose value Terraform knows only when it runs
// (the clock, randomness, a provider): a call is unknown, and why.
func laterFunc(name, why string) function.Function {
	return function.New(&function.Spec{
		VarParam: &function.Parameter{Name: "args", Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true, AllowDynamicType: true},
		Type:     function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
			return cty.NilVal, &callError{name + "() is " + why}
		},
	})
}

// providerFunction stands for every provider::NAME::FUNC (its name the
// first argument): known only when Terraform runs the provider.
var providerFunction = function.New(&function.Spec{
	Params:   []function.Parameter{{Name: "name", Type: cty.String}},
	VarParam: &function.Parameter{Name: "args", Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true, AllowDynamicType: true},
	Type:     function.StaticReturnType(cty.DynamicPseudoType),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return cty.NilVal, &callError{shownName(args[0].AsString()) + "() is known only when Terraform runs its provider"}
	},
})

// laterFunctions are the functions whose value is known only when
// Terraform runs.
var laterFunctions = map[string]string{
	"timestamp":     "known only when Terraform applies (it reads the clock)",
	"plantimestamp": "known only when Terraform plans (it reads the clock)",
	"uuid":          "known only when Terraform applies (it is random)",
	"bcrypt":        "known only when Terraform applies (its salt is random)",
	"rsadecrypt":    "not evaluated: it decrypts with a private key gpuctl does not read",
	"issensitive":   "not judged: gpuctl does not track which values are sensitive",
}

// moreFunctions are the pure functions of Terraform 1.11 that go-cty's
// stdlib does not have.
var moreFunctions = map[string]function.Function{
	"basename":    strOf(path.Base),
	"dirname":     strOf(path.Dir),
	"startswith":  strTest(strings.HasPrefix),
	"endswith":    strTest(strings.HasSuffix),
	"strcontains": strTest(strings.Contains),
	"urlencode":   strOf(url.QueryEscape),
	"md5":         digestHex(func(b []byte) []byte { s := md5.Sum(b); return s[:] }),
	"sha1":        digestHex(func(b []byte) []byte { s := sha1.Sum(b); return s[:] }),
	"sha256":      digestHex(func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }),
	"sha512":      digestHex(func(b []byte) []byte { s := sha512.Sum512(b); return s[:] }),
	"base64sha256": digestBase64(func(b []byte) []byte {
		s := sha256.Sum256(b)
		return s[:]
	}),
	"base64sha512": digestBase64(func(b []byte) []byte {
		s := sha512.Sum512(b)
		return s[:]
	}),
	"base64gzip":       strFunc([]string{"str"}, cty.String, base64Gzip),
	"textencodebase64": strFunc([]string{"string", "encoding_name"}, cty.String, textEncodeBase64),
	"textdecodebase64": strFunc([]string{"source", "encoding_name"}, cty.String, textDecodeBase64),
	"uuidv5":           strFunc([]string{"namespace", "name"}, cty.String, uuidV5),
	"timecmp":          strFunc([]string{"timestamp_a", "timestamp_b"}, cty.Number, timeCmp),
	"cidrhost":         cidrHostFunc,
	"cidrnetmask":      strFunc([]string{"prefix"}, cty.String, cidrNetmask),
	"cidrsubnet":       cidrSubnetFunc,
	"cidrsubnets":      cidrSubnetsFunc,
	"alltrue":          boolsFunc(true),
	"anytrue":          boolsFunc(false),
	"sum":              sumFunc,
	"one":              oneFunc,
	"transpose":        transposeFunc,
	"matchkeys":        matchKeysFunc,
	"sensitive":        identityFunc,
	"nonsensitive":     identityFunc,
	"ephemeralasnull":  identityFunc,
	"replace":          replaceFunc,
	"length":           lengthFunc,
}

// lengthFunc is Terraform's length(): of a list, set, tuple, map or object
// (its attributes: length(module.X) of a module with for_each), or the
// characters of a string; go-cty's LengthFunc takes no object.
var lengthFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType, AllowDynamicType: true, AllowUnknown: true}},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v := args[0]
		switch ty := v.Type(); {
		case ty == cty.String:
			return stdlib.StrlenFunc.Call(args)
		case ty.IsObjectType():
			return cty.NumberIntVal(int64(len(ty.AttributeTypes()))), nil
		case ty.IsTupleType():
			return cty.NumberIntVal(int64(len(ty.TupleElementTypes()))), nil
		}
		return stdlib.LengthFunc.Call(args)
	},
})

// replaceFunc is Terraform's replace(): a substring wrapped in forward
// slashes is a regular expression (with $n in the replacement), any
// other a plain string; go-cty's ReplaceFunc has the plain form only.
var replaceFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "str", Type: cty.String}, {Name: "substr", Type: cty.String}, {Name: "replace", Type: cty.String}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if p := args[1].AsString(); len(p) > 1 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/") {
			return stdlib.RegexReplaceFunc.Call([]cty.Value{args[0], cty.StringVal(p[1 : len(p)-1]), args[2]})
		}
		return stdlib.ReplaceFunc.Call(args)
	},
})

// identityFunc is sensitive(), nonsensitive() and ephemeralasnull(): gpuctl
// carries no sensitive or ephemeral marks, so each returns its argument
// (ephemeralasnull returns a value that is not ephemeral unchanged).
var identityFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true, AllowDynamicType: true}},
	Type:   func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
	Impl:   func(args []cty.Value, _ cty.Type) (cty.Value, error) { return args[0], nil },
})

func base64Gzip(a []string) (cty.Value, error) {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write([]byte(a[0])); err != nil {
		return cty.NilVal, err
	}
	if err := w.Close(); err != nil {
		return cty.NilVal, err
	}
	return cty.StringVal(base64.StdEncoding.EncodeToString(buf.Bytes())), nil
}

// textEncoding is the IANA character encoding of that name.
func textEncoding(name string) (encoding.Encoding, error) {
	switch strings.ToUpper(name) {
	case "UTF-8", "UTF8":
		return unicode.UTF8, nil
	}
	e, err := ianaindex.IANA.Encoding(name)
	if err != nil || e == nil {
		return nil, fmt.Errorf("%q is not an encoding gpuctl knows", shownName(name))
	}
	return e, nil
}

func textEncodeBase64(a []string) (cty.Value, error) {
	e, err := textEncoding(a[1])
	if err != nil {
		return cty.NilVal, err
	}
	b, err := e.NewEncoder().Bytes([]byte(a[0]))
	if err != nil {
		return cty.NilVal, errors.New("the string has characters the encoding cannot write")
	}
	return cty.StringVal(base64.StdEncoding.EncodeToString(b)), nil
}

func textDecodeBase64(a []string) (cty.Value, error) {
	e, err := textEncoding(a[1])
	if err != nil {
		return cty.NilVal, err
	}
	raw, err := base64.StdEncoding.DecodeString(a[0])
	if err != nil {
		return cty.NilVal, errors.New("the argument is not base64")
	}
	b, err := e.NewDecoder().Bytes(raw)
	if err != nil {
		return cty.NilVal, errors.New("the bytes are not text in that encoding")
	}
	return cty.StringVal(string(b)), nil
}

// uuidNamespaces are uuidv5's named namespaces (RFC 4122 appendix C).
var uuidNamespaces = map[string]string{
	"dns":  "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
	"url":  "6ba7b811-9dad-11d1-80b4-00c04fd430c8",
	"oid":  "6ba7b812-9dad-11d1-80b4-00c04fd430c8",
	"x500": "6ba7b814-9dad-11d1-80b4-00c04fd430c8",
}

// uuidV5 is the name-based (SHA-1) UUID of name in a namespace ("dns",
// "url", "oid", "x500" or a UUID).
func uuidV5(a []string) (cty.Value, error) {
	ns := a[0]
	if n, ok := uuidNamespaces[ns]; ok {
		ns = n
	}
	nsb, err := hex.DecodeString(strings.ReplaceAll(ns, "-", ""))
	if err != nil || len(nsb) != 16 {
		return cty.NilVal, errors.New(`the namespace is not "dns", "url", "oid", "x500" or a UUID`)
	}
	h := sha1.Sum(append(nsb, a[1]...))
	u := h[:16]
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	x := hex.EncodeToString(u)
	return cty.StringVal(x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]), nil
}

func timeCmp(a []string) (cty.Value, error) {
	ta, err := time.Parse(time.RFC3339, a[0])
	if err != nil {
		return cty.NilVal, errors.New("argument 1 is not an RFC 3339 timestamp")
	}
	tb, err := time.Parse(time.RFC3339, a[1])
	if err != nil {
		return cty.NilVal, errors.New("argument 2 is not an RFC 3339 timestamp")
	}
	return cty.NumberIntVal(int64(ta.Compare(tb))), nil
}

// ---- IP networks (cidrhost, cidrnetmask, cidrsubnet, cidrsubnets) ----

// network is a parsed CIDR prefix: its first address as a number, its
// prefix length and its family's bits (32 or 128).
type network struct {
	base       *big.Int
	bits, size int
}

func parseNetwork(s string) (network, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return network{}, fmt.Errorf("%q is not a CIDR prefix", shownName(s))
	}
	p = p.Masked()
	return network{base: new(big.Int).SetBytes(p.Addr().AsSlice()), bits: p.Bits(), size: p.Addr().BitLen()}, nil
}

// addr is the address at number n of the family.
func (n network) addr(x *big.Int) string {
	b := make([]byte, n.size/8)
	x.FillBytes(b)
	a, _ := netip.AddrFromSlice(b)
	return a.String()
}

// hostCount is 2^(size-bits).
func (n network) span(bits int) *big.Int {
	return new(big.Int).Lsh(big.NewInt(1), uint(n.size-bits))
}

var cidrHostFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "prefix", Type: cty.String}, {Name: "hostnum", Type: cty.Number}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		n, err := parseNetwork(args[0].AsString())
		if err != nil {
			return cty.NilVal, err
		}
		h, acc := args[1].AsBigFloat().Int(nil)
		if acc != big.Exact {
			return cty.NilVal, errors.New("hostnum is not a whole number")
		}
		span := n.span(n.bits)
		if h.Sign() < 0 {
			h.Add(h, span) // a negative number counts from the end
		}
		if h.Sign() < 0 || h.Cmp(span) >= 0 {
			return cty.NilVal, errors.New("hostnum is outside the prefix")
		}
		return cty.StringVal(n.addr(h.Add(h, n.base))), nil
	},
})

func cidrNetmask(a []string) (cty.Value, error) {
	n, err := parseNetwork(a[0])
	if err != nil {
		return cty.NilVal, err
	}
	if n.size != 32 {
		return cty.NilVal, errors.New("only IPv4 prefixes have a netmask")
	}
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 32), n.span(n.bits))
	return cty.StringVal(n.addr(mask)), nil
}

// subnet is network n's netnum-th subnet newbits longer.
func (n network) subnet(newbits int, netnum *big.Int) (string, error) {
	if newbits < 0 || n.bits+newbits > n.size {
		return "", fmt.Errorf("newbits %d makes a prefix longer than %d bits", newbits, n.size)
	}
	if netnum.Sign() < 0 || netnum.Cmp(new(big.Int).Lsh(big.NewInt(1), uint(newbits))) >= 0 {
		return "", fmt.Errorf("netnum does not fit in %d new bits", newbits)
	}
	b := new(big.Int).Add(n.base, new(big.Int).Mul(netnum, n.span(n.bits+newbits)))
	return fmt.Sprintf("%s/%d", n.addr(b), n.bits+newbits), nil
}

var cidrSubnetFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "prefix", Type: cty.String}, {Name: "newbits", Type: cty.Number}, {Name: "netnum", Type: cty.Number}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		n, err := parseNetwork(args[0].AsString())
		if err != nil {
			return cty.NilVal, err
		}
		nb, acc := args[1].AsBigFloat().Int64()
		num, acc2 := args[2].AsBigFloat().Int(nil)
		if acc != big.Exact || acc2 != big.Exact || nb > 128 || nb < -1 {
			return cty.NilVal, errors.New("newbits and netnum must be whole numbers")
		}
		s, err := n.subnet(int(nb), num)
		if err != nil {
			return cty.NilVal, err
		}
		return cty.StringVal(s), nil
	},
})

// cidrSubnetsFunc is cidrsubnets(prefix, newbits...): consecutive subnets,
// each aligned to its own size after the one before.
var cidrSubnetsFunc = function.New(&function.Spec{
	Params:   []function.Parameter{{Name: "prefix", Type: cty.String}},
	VarParam: &function.Parameter{Name: "newbits", Type: cty.Number},
	Type:     function.StaticReturnType(cty.List(cty.String)),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		n, err := parseNetwork(args[0].AsString())
		if err != nil {
			return cty.NilVal, err
		}
		if len(args) == 1 {
			return cty.ListValEmpty(cty.String), nil
		}
		next := new(big.Int).Set(n.base)
		end := new(big.Int).Add(n.base, n.span(n.bits))
		var out []cty.Value
		for i, a := range args[1:] {
			nb, acc := a.AsBigFloat().Int64()
			if acc != big.Exact || nb < 1 || int(nb)+n.bits > n.size {
				return cty.NilVal, fmt.Errorf("newbits %d: not a whole number from 1 to %d", i+1, n.size-n.bits)
			}
			sz := n.span(n.bits + int(nb))
			if r := new(big.Int).Mod(new(big.Int).Sub(next, n.base), sz); r.Sign() != 0 {
				next.Add(next, new(big.Int).Sub(sz, r))
			}
			if new(big.Int).Add(next, sz).Cmp(end) > 0 {
				return cty.NilVal, fmt.Errorf("newbits %d: not enough room left in the prefix", i+1)
			}
			out = append(out, cty.StringVal(fmt.Sprintf("%s/%d", n.addr(next), n.bits+int(nb))))
			next.Add(next, sz)
		}
		return cty.ListVal(out), nil
	},
})

// ---- collections ----

// boolsFunc is alltrue (all true; true when empty) or anytrue (one true;
// false when empty); "true" and "false" strings convert as Terraform's
// list(bool) does.
func boolsFunc(all bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Bool)}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			for it := args[0].ElementIterator(); it.Next(); {
				_, v := it.Element()
				if v.IsNull() {
					if all {
						return cty.False, nil
					}
					continue
				}
				if v.True() != all {
					return cty.BoolVal(!all), nil
				}
			}
			return cty.BoolVal(all), nil
		},
	})
}

var sumFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Number)}},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if args[0].LengthInt() == 0 {
			return cty.NilVal, errors.New("cannot sum an empty list")
		}
		total := cty.Zero
		for it := args[0].ElementIterator(); it.Next(); {
			_, v := it.Element()
			if v.IsNull() {
				return cty.NilVal, errors.New("the list holds a null")
			}
			total = total.Add(v)
		}
		return total, nil
	},
})

// oneFunc is one(list): null for no element, the element for one, an
// error for more.
var oneFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}},
	Type: func(args []cty.Value) (cty.Type, error) {
		ty := args[0].Type()
		switch {
		case ty.IsListType() || ty.IsSetType():
			return ty.ElementType(), nil
		case ty.IsTupleType() || ty == cty.DynamicPseudoType:
			return cty.DynamicPseudoType, nil
		}
		return cty.NilType, errors.New("one() takes a list, set or tuple")
	},
	Impl: func(args []cty.Value, ret cty.Type) (cty.Value, error) {
		switch l := args[0]; l.LengthInt() {
		case 0:
			return cty.NullVal(ret), nil
		case 1:
			it := l.ElementIterator()
			it.Next()
			_, v := it.Element()
			return v, nil
		}
		return cty.NilVal, errors.New("the list has more than one element")
	},
})

// transposeFunc swaps the keys and the values of a map of lists of
// strings.
var transposeFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "values", Type: cty.Map(cty.List(cty.String))}},
	Type:   function.StaticReturnType(cty.Map(cty.List(cty.String))),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		out := map[string][]cty.Value{}
		for it := args[0].ElementIterator(); it.Next(); {
			k, l := it.Element()
			if l.IsNull() {
				return cty.NilVal, errors.New("the map holds a null list")
			}
			for lit := l.ElementIterator(); lit.Next(); {
				_, v := lit.Element()
				if v.IsNull() {
					return cty.NilVal, errors.New("a list holds a null")
				}
				out[v.AsString()] = append(out[v.AsString()], k)
			}
		}
		if len(out) == 0 {
			return cty.MapValEmpty(cty.List(cty.String)), nil
		}
		m := make(map[string]cty.Value, len(out))
		for k, vs := range out {
			m[k] = cty.ListVal(vs)
		}
		return cty.MapVal(m), nil
	},
})

// matchKeysFunc is matchkeys(values, keys, searchset): the values whose
// key (at the same index) is in searchset.
var matchKeysFunc = function.New(&function.Spec{
	Params: []function.Parameter{
		{Name: "values", Type: cty.List(cty.DynamicPseudoType)},
		{Name: "keys", Type: cty.List(cty.DynamicPseudoType)},
		{Name: "searchset", Type: cty.List(cty.DynamicPseudoType)},
	},
	Type: func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
	Impl: func(args []cty.Value, ret cty.Type) (cty.Value, error) {
		vals, keys, search := args[0].AsValueSlice(), args[1].AsValueSlice(), args[2].AsValueSlice()
		if len(vals) != len(keys) {
			return cty.NilVal, errors.New("values and keys are not the same length")
		}
		var out []cty.Value
		for i, k := range keys {
			for _, s := range search {
				if k.Type().Equals(s.Type()) && k.Equals(s).True() {
					out = append(out, vals[i])
					break
				}
			}
		}
		if len(out) == 0 {
			return cty.ListValEmpty(ret.ElementType()), nil
		}
		return cty.ListVal(out), nil
	},
})

// ---- functions of the sandbox (the folder, the budget) ----

// pathExpandFunc is pathexpand(): a path that starts with "~" names the
// home folder of whoever runs Terraform, which gpuctl does not read;
// other paths are returned unchanged.
func pathExpandFunc() function.Function {
	return strFunc([]string{"path"}, cty.String, func(a []string) (cty.Value, error) {
		if strings.HasPrefix(a[0], "~") {
			return cty.NilVal, &callError{"pathexpand(): a path from the home folder is known only where Terraform runs"}
		}
		return cty.StringVal(a[0]), nil
	})
}

// templateStringFunc is templatestring(template, vars): the template
// string, scanned and counted as templatefile's are, rendered with vars
// and this table.
func (s *sandbox) templateStringFunc() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "template", Type: cty.String}, {Name: "vars", Type: cty.DynamicPseudoType}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			data := []byte(args[0].AsString())
			if len(s.templates) >= MaxTemplateDepth {
				return cty.NilVal, s.b.fail(capErr("templatestring(): templates nested deeper than %d (MaxTemplateDepth)", MaxTemplateDepth))
			}
			const name = "templatestring()"
			if err := scanNesting(s.b, data, name, hcl.InitialPos, scanTemplate); err != nil {
				return cty.NilVal, s.b.fail(err)
			}
			t, d := hclsyntax.ParseTemplate(data, name, hcl.InitialPos)
			if d.HasErrors() {
				return cty.NilVal, errors.New("templatestring(): the template does not parse")
			}
			instrument(t)
			return s.renderParsed("templatestring", name, t, args[1])
		},
	})
}
