package probe

import (
	"strings"
	"testing"
)

// TestSMIXMLTooDeep: nvidia-smi XML of millions of nested elements is
// unusable (a finding), not read element by element.
func TestSMIXMLTooDeep(t *testing.T) {
	doc := "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>" + strings.Repeat("<a>", 1_000_000)
	if d := xmlDepth([]byte(doc)); d != 1_000_001 {
		t.Fatalf("xmlDepth = %d", d)
	}
	if d := xmlDepth([]byte(`<?xml?><!-- c --><a><b/><c>x</c></a>`)); d != 2 {
		t.Errorf("xmlDepth of a shallow document = %d, want 2", d)
	}
}
