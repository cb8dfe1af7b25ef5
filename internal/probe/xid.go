package probe

import (
	_ "embed"
	"fmt"
	"sort"
	"sync"

	"sigs.k8s.io/yaml"
)

// XID classes: what an XID says about the node. See xid_catalogue.yaml.
const (
	XIDApplication = "application" // the application faulted; the GPU is healthy
	XIDBenign      = "benign"      // informational
	XIDReset       = "reset"       // the GPU needs a reset before more work
	XIDReboot      = "reboot"      // the node needs a reboot
	XIDHardware    = "hardware"    // hardware fault suspected
	XIDInvestigate = "investigate" // the log line alone cannot say
)

// XIDInfo is one entry of the XID catalogue.
type XIDInfo struct {
	Code        int    `json:"code"`
	Mnemonic    string `json:"mnemonic"`
	Description string `json:"description"`
	// NVIDIAAction is NVIDIA's immediate-action resolution bucket
	// (RESTART_APP, RESET_GPU, RESTART_BM, IGNORE, WORKFLOW_...).
	NVIDIAAction string `json:"nvidiaAction"`
	// Class is gpuctl's judgement, one of the XID* class constants.
	Class string `json:"class"`
	Note  string `json:"note,omitempty"`
}

// NodeProblem reports whether the XID's class makes a verdict fail.
func (x XIDInfo) NodeProblem() bool {
	switch x.Class {
	case XIDReset, XIDReboot, XIDHardware:
		return true
	}
	return false
}

// XIDCatalogueSource is the document the catalogue follows.
const XIDCatalogueSource = "https://docs.nvidia.com/deploy/xid-errors/index.html"

//go:embed xid_catalogue.yaml
var xidCatalogueYAML []byte

// xidCatalogue is decoded on first use, not when the program starts: most
// commands never look an XID up.
var xidCatalogue = sync.OnceValue(func() map[int]XIDInfo { return mustLoadXIDs(xidCatalogueYAML) })

func mustLoadXIDs(data []byte) map[int]XIDInfo {
	var list []XIDInfo
	if err := yaml.UnmarshalStrict(data, &list); err != nil {
		panic(fmt.Sprintf("probe: xid_catalogue.yaml: %v", err))
	}
	m := make(map[int]XIDInfo, len(list))
	for _, x := range list {
		switch x.Class {
		case XIDApplication, XIDBenign, XIDReset, XIDReboot, XIDHardware, XIDInvestigate:
		default:
			panic(fmt.Sprintf("probe: xid_catalogue.yaml: XID %d: unknown class %q", x.Code, x.Class))
		}
		if _, dup := m[x.Code]; dup {
			panic(fmt.Sprintf("probe: xid_catalogue.yaml: XID %d listed twice", x.Code))
		}
		m[x.Code] = x
	}
	return m
}

// LookupXID returns the catalogue entry for an XID code.
func LookupXID(code int) (XIDInfo, bool) {
	x, ok := xidCatalogue()[code]
	return x, ok
}

// XIDCatalogue returns the whole catalogue ordered by code.
func XIDCatalogue() []XIDInfo {
	cat := xidCatalogue()
	out := make([]XIDInfo, 0, len(cat))
	for _, x := range cat {
		out = append(out, x)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Code < out[k].Code })
	return out
}
