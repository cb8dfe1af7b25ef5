package plan

import (
	"strings"
	"testing"
)

// TestObjectsOfHostileFiles: a file of the --out tree that nests deeply,
// holds a billion laughs or far more tokens than gpuctl writes is compared
// as text, without parsing it into objects (the parse would run out of
// memory); a diff past MaxDiffLines is summarised, not computed.
func TestObjectsOfHostileFiles(t *testing.T) {
	laughs := "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
	for _, c := range "bcdefghi" {
		prev := string(c - 1)
		laughs += string(c) + ": &" + string(c) + " [*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + "]\n"
	}
	deep := "locals { x = " + strings.Repeat("[", 200_000) + strings.Repeat("]", 200_000) + " }\n"
	many := strings.Repeat("a\n", 500_000)
	if got := yamlObjects([]byte(laughs)); len(got) != 0 {
		t.Errorf("billion laughs parsed into %d objects", len(got))
	}
	for name, src := range map[string]string{"deep": deep, "many": many} {
		if got := hclBlocks([]byte(src)); len(got) != 0 {
			t.Errorf("%s: parsed into %d blocks", name, len(got))
		}
	}
	if got := hclBlocks([]byte("resource \"a\" \"b\" {\n  x = [[1]]\n}\n")); len(got) != 1 {
		t.Errorf("a plain file: %d blocks, want 1", len(got))
	}
	d := UnifiedDiff("a/x.tf", "b/x.tf", strings.Repeat("a\n", MaxDiffLines), "b\n")
	if !strings.Contains(d, "not shown: more than") || len(d) > 200 {
		t.Errorf("a diff past MaxDiffLines: %d bytes: %.200s", len(d), d)
	}
}
