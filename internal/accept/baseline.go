package accept

import (
	_ "embed"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

//go:embed baselines.yaml
var embeddedBaselines []byte

// Baseline is the expected single-node NCCL all_reduce_perf result and the
// GPU link class of one GPU SKU.
type Baseline struct {
	SKU         string `json:"sku"`
	Description string `json:"description,omitempty"`
	// GPUMatch lists substrings of the GPU product name (as nvidia-smi or the
	// GFD label prints it; '-' and ' ' are treated alike) that identify the SKU.
	GPUMatch []string `json:"gpu_match"`
	// GPUs is the GPU count of the node the baseline applies to.
	GPUs int `json:"gpus"`
	// GPULink is the GPU<->GPU link class topo -m shows on every pair ("NV18");
	// empty when not fixed for the SKU.
	GPULink string `json:"gpu_link,omitempty"`
	// ExpectedBusBW describes the published figures, for people.
	ExpectedBusBW string `json:"expected_busbw,omitempty"`
	// MinBusBandwidthGBps is the lowest acceptable busbw (GB/s) at the largest
	// message size.
	MinBusBandwidthGBps float64 `json:"min_busbw_gbps"`
	// MinBytes is the smallest largest-message size (bytes) that is judged.
	MinBytes   int64    `json:"min_bytes"`
	Confidence string   `json:"confidence,omitempty"`
	Sources    []string `json:"sources"`
}

// Baselines is a baselines file: gpuctl's embedded one or --baselines FILE.
type Baselines struct {
	FormatVersion string     `json:"formatVersion"`
	AsOf          string     `json:"as_of"`
	Baselines     []Baseline `json:"baselines"`
	// Origin says where the set was loaded from ("embedded" or a file path).
	Origin string `json:"-"`
}

// DefaultBaselines returns the baselines that ship with gpuctl.
func DefaultBaselines() *Baselines {
	b, err := parseBaselines(embeddedBaselines, "embedded")
	if err != nil {
		panic(err) // covered by tests
	}
	return b
}

// LoadBaselines reads a baselines file in the embedded file's format.
func LoadBaselines(path string) (*Baselines, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseBaselines(data, path)
}

func parseBaselines(data []byte, origin string) (*Baselines, error) {
	var b Baselines
	if err := yaml.UnmarshalStrict(data, &b); err != nil {
		return nil, fmt.Errorf("baselines %s: %w", origin, err)
	}
	if b.FormatVersion != "1" {
		return nil, fmt.Errorf("baselines %s: formatVersion %q, want \"1\"", origin, b.FormatVersion)
	}
	for i, bl := range b.Baselines {
		if bl.SKU == "" || len(bl.GPUMatch) == 0 || bl.GPUs <= 0 || bl.MinBusBandwidthGBps <= 0 || len(bl.Sources) == 0 {
			return nil, fmt.Errorf("baselines %s: entry %d (%q) needs sku, gpu_match, gpus, min_busbw_gbps and sources", origin, i, bl.SKU)
		}
	}
	b.Origin = origin
	return &b, nil
}

// Lookup returns the baseline for a node with gpus GPUs of the given product
// name, or nil.
func (b *Baselines) Lookup(product string, gpus int) *Baseline {
	if b == nil {
		return nil
	}
	p := normProduct(product)
	for i := range b.Baselines {
		bl := &b.Baselines[i]
		if bl.GPUs != gpus {
			continue
		}
		for _, m := range bl.GPUMatch {
			if m != "" && strings.Contains(p, normProduct(m)) {
				return bl
			}
		}
	}
	return nil
}

// normProduct folds a GPU product name for matching: GFD writes
// "NVIDIA-H100-80GB-HBM3" where nvidia-smi prints "NVIDIA H100 80GB HBM3".
func normProduct(s string) string {
	return strings.ToLower(strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == ' ' || r == '_' }), " "))
}

// SameProduct reports whether an observed GPU product name is the expected
// one: every word of the expected name, less "NVIDIA" and "Tesla", is a word
// of the observed name, with GFD's dashes read as spaces. So "H100",
// "nvidia-h100-80gb" (a GKE accelerator type) and "NVIDIA-H100-80GB-HBM3"
// (a GFD label) all match "NVIDIA H100 80GB HBM3", and "L4" does not match
// "NVIDIA L40".
func SameProduct(expected, observed string) bool {
	words := map[string]bool{}
	for _, w := range strings.Fields(normProduct(observed)) {
		words[w] = true
	}
	n := 0
	for _, w := range strings.Fields(normProduct(expected)) {
		if w == "nvidia" || w == "tesla" {
			continue
		}
		if !words[w] {
			return false
		}
		n++
	}
	return n > 0
}
