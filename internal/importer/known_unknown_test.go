package importer

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestKnownIsNotUnknown: an imported spec does not list a field among its
// unknown values when it holds a value for the field, in any fixture
// (eks-kubectl-manifest-karpenter: a label whose value is unknown is that
// label's, not the labels' the spec holds). A pool's name is the one
// exception: a pool needs one, so import stands one in and lists the
// source's as unknown, saying so.
func TestKnownIsNotUnknown(t *testing.T) {
	for _, name := range fixtures(t) {
		dir := fixtureRoot + "/" + name
		res, err := Import(fixturePaths(dir), fixtureOptions(dir))
		if err != nil {
			continue // an error fixture
		}
		doc := specTree(t, res)
		for _, u := range res.Unknowns {
			if strings.HasSuffix(u.Path, ".name") && strings.HasPrefix(u.Path, "spec.nodePools[") {
				continue
			}
			if v, ok := atPath(doc, u.Path); ok && v != nil {
				t.Errorf("%s: %s holds %v and is listed as unknown (%s)", name, u.Path, v, u.What)
			}
		}
	}
}

// specTree is the imported spec as import writes it, as a tree.
func specTree(t *testing.T, res *Result) any {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal(res.YAML(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

var pathStep = regexp.MustCompile(`\.?([A-Za-z0-9_]+)|\[(\d+)\]|\["([^"]*)"\]`)

// atPath is the value at a spec path ("spec.nodePools[0].gpu.type") in a
// YAML tree, and whether the path leads anywhere.
func atPath(doc any, path string) (any, bool) {
	cur := doc
	for _, m := range pathStep.FindAllStringSubmatch(path, -1) {
		switch {
		case m[2] != "":
			l, ok := cur.([]any)
			i, _ := strconv.Atoi(m[2])
			if !ok || i >= len(l) {
				return nil, false
			}
			cur = l[i]
		default:
			key := m[1] + m[3]
			o, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = o[key]; !ok {
				return nil, false
			}
		}
	}
	return cur, true
}
