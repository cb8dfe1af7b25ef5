package importer

import (
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// fixedObj is an obj of fixed string values.
type fixedObj map[string]string

func (o fixedObj) get(k string) val {
	if v, ok := o[k]; ok {
		return val{v: cty.StringVal(v), what: k}
	}
	return val{what: k}
}
func (o fixedObj) blocks(string) []obj { return nil }
func (o fixedObj) origin() Origin      { return Origin{} }
func (o fixedObj) name() string        { return "module.eks" }

// TestEKSModuleVersionOf: the release a version constraint selects is the
// newest that matches, which decides the module's EFA defaults.
func TestEKSModuleVersionOf(t *testing.T) {
	for _, c := range []struct {
		constraint         string
		major, minor       int
		placement, efaOnly bool
	}{
		{"~> 19.15", 19, 21, false, false},
		{"~> 20.0", 20, 37, true, true},
		{"~> 20.5.0", 20, 5, false, false},
		{"20.30.1", 20, 30, true, true},
		{"~> 21.0", 21, 19, true, true},
		{"", 21, 19, true, true},
		{">= 20.0", 21, 19, true, true},
	} {
		o := fixedObj{}
		if c.constraint != "" {
			o["version"] = c.constraint
		}
		v := eksModuleVersionOf(o)
		if v.major != c.major || v.minor != c.minor {
			t.Errorf("%q: v%d.%d, want v%d.%d", c.constraint, v.major, v.minor, c.major, c.minor)
		}
		if v.atLeast(20, 7) != c.placement || v.atLeast(20, 28) != c.efaOnly {
			t.Errorf("%q: placement group %v, enable_efa_only %v; want %v, %v", c.constraint, v.atLeast(20, 7), v.atLeast(20, 28), c.placement, c.efaOnly)
		}
	}
}

// TestNodeadmStrategy reads the strategy of a NodeConfig in plain YAML
// documents and in a MIME multipart user data; other documents say none.
func TestNodeadmStrategy(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  instance:\n    localStorage:\n      strategy: RAID0\n", "RAID0"},
		{eksMIME, "RAID0"},
		{"---\nkind: Other\nspec:\n  instance:\n    localStorage:\n      strategy: RAID0\n", ""},
		{"#!/bin/bash\necho hi\n", ""},
	} {
		if got := nodeadmStrategy(c.text); got != c.want {
			t.Errorf("nodeadmStrategy(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

const eksMIME = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: application/node.eks.aws\n\n---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  instance:\n    localStorage:\n      strategy: RAID0\n\n--B--\n"
