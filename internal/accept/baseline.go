package accept

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/safefs"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Baselines is a baselines file: gpuctl's embedded one or --baselines FILE.
type Baselines struct {
	FormatVersion string     `json:"formatVersion"`
	AsOf          string     `json:"as_of"`
	Baselines     []Baseline `json:"baselines"`
	// Origin says where the set was loaded from ("embedded" or a file path).
	Origin string `json:"-"`
	// gpuLink, when set (WithGPULink), is the GPU link class Lookup gives
	// every SKU; gpuLinkSource names where it came from.
	gpuLink, gpuLinkSource string
}

// DefaultBaselines returns the baselines that ship with gpuctl: the NCCL
// baselines of package matrix, in the --baselines file format.
func DefaultBaselines() *Baselines {
	asOf, skus := matrix.NCCLBaselines()
	b := &Baselines{FormatVersion: "1", AsOf: asOf, Origin: "embedded"}
	for _, s := range skus {
		exp := s.Expected()
		b.Baselines = append(b.Baselines, Baseline{SKU: s.SKU, Description: s.Description, GPU: s.GPU,
			GPUMatch: s.GPUMatch, GPUs: s.GPUs, GPULink: s.GPULink, ExpectedBusBW: s.ExpectedText(),
			ExpectedBusBandwidthGBps: exp.MinBusBandwidthGBps, ExpectedAlgo: exp.Algo,
			MinBusBandwidthGBps: s.MinBusBandwidthGBps, MinAlgo: s.MinAlgo, MinBytes: s.MinBytes,
			Confidence: s.Confidence, NoFigure: s.NoFigure, Sources: s.Sources})
	}
	return b
}

// BaselinesFile is a --baselines file as safefs reads it: a regular file of
// at most 1 MiB (the embedded set is a few KiB).
var BaselinesFile = safefs.Kind{Name: "baselines file", Max: 1 << 20}

// LoadBaselines reads a baselines file (formatVersion "1": baselines[] with
// sku, gpu_match, gpus, gpu_link, min_busbw_gbps, min_bytes, sources, ...):
// a regular file of at most 1 MiB, held to the spec's YAML limits
// (spec.CheckYAML: depth, nodes, aliases) before it is parsed. Errors name
// the path, never the content.
func LoadBaselines(path string) (*Baselines, error) {
	data, err := safefs.ReadFile(path, BaselinesFile)
	if err != nil {
		return nil, err
	}
	return parseBaselines(data, path)
}

func parseBaselines(data []byte, origin string) (*Baselines, error) {
	if err := spec.CheckYAML(origin, data, spec.SpecLimits); err != nil {
		return nil, fmt.Errorf("baselines %s: %w", origin, err)
	}
	var b Baselines
	if err := yaml.UnmarshalStrict(data, &b); err != nil {
		return nil, fmt.Errorf("baselines %s: %w", origin, err)
	}
	if b.FormatVersion != "1" {
		return nil, fmt.Errorf("baselines %s: formatVersion %q, want \"1\"", origin, b.FormatVersion)
	}
	if err := checkEntries(b.Baselines, origin); err != nil {
		return nil, err
	}
	b.Origin = origin
	return &b, nil
}

// checkEntries holds each baseline of the file origin to the fields it
// needs: a figure with its sources, or a no_figure entry without one.
func checkEntries(bls []Baseline, origin string) error {
	for i, bl := range bls {
		if bl.NoFigure != "" {
			if bl.SKU == "" || len(bl.GPUMatch) == 0 || bl.GPUs < 0 || bl.MinBusBandwidthGBps != 0 || len(bl.Sources) == 0 {
				return fmt.Errorf("baselines %s: entry %d (%q) with no_figure needs sku, gpu_match and sources, and no min_busbw_gbps", origin, i, bl.SKU)
			}
			continue
		}
		if bl.SKU == "" || len(bl.GPUMatch) == 0 || bl.GPUs <= 0 || bl.MinBusBandwidthGBps <= 0 || len(bl.Sources) == 0 {
			return fmt.Errorf("baselines %s: entry %d (%q) needs sku, gpu_match, gpus, min_busbw_gbps and sources", origin, i, bl.SKU)
		}
	}
	return nil
}

// Lookup returns the baseline for a node with gpus GPUs of the given product
// name, or nil. The name is matched with matrix.GPUNameContains against each
// baseline's gpu_match; a baseline of gpus 0 (a no_figure entry) matches any
// GPU count. After WithGPULink every lookup has a baseline, with that GPU
// link class.
func (b *Baselines) Lookup(product string, gpus int) *Baseline {
	if b == nil {
		return nil
	}
	found := b.lookup(product, gpus)
	if b.gpuLink != "" {
		return b.linkOverride(found)
	}
	return found
}

func (b *Baselines) lookup(product string, gpus int) *Baseline {
	for i := range b.Baselines {
		bl := &b.Baselines[i]
		if bl.GPUs != gpus && bl.GPUs != 0 {
			continue
		}
		for _, m := range bl.GPUMatch {
			if matrix.GPUNameContains(product, m) {
				return bl
			}
		}
	}
	return nil
}
