package accept

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// Image is a probe image and the CUDA version (major.minor) its user-space
// libraries need from the node's driver. CUDA is empty when the image uses no
// CUDA runtime (nvidia-smi only) or when it is not known.
type Image struct {
	Ref  string `json:"ref"`
	CUDA string `json:"cuda,omitempty"`
	// Pinned says whether Ref carries a digest (@sha256:...).
	Pinned bool `json:"pinned"`
	// Source says where the reference, and its digest when pinned, come from.
	Source string `json:"source,omitempty"`
}

// defaultImages lists, per stage, NVIDIA's public images in ascending CUDA
// order. ChooseImage takes the newest one whose CUDA the node's driver
// supports. Digests are given only where one was found in public material;
// the others are pinned by tag (see the README, "Accepting GPU nodes") and should be pinned by
// the operator with --image STAGE=REF@sha256:....
var defaultImages = map[Stage][]Image{
	// nvidia-smi comes from the host driver (the toolkit mounts it); the image
	// only provides a shell, so its CUDA requirement is disabled in the Job.
	StageInventory: {smiImage},
	StageTopology:  {smiImage},
	StageCUDA: {
		{Ref: "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda11.7.1-ubuntu20.04", CUDA: "11.7",
			Source: "NVIDIA GPU Operator docs (sample workload); pinned by tag"},
		{Ref: "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04", CUDA: "12.5",
			Source: "NGC catalog nvidia/k8s/cuda-sample; pinned by tag"},
	},
	StageNCCL: {
		{Ref: "nvcr.io/nvidia/pytorch:23.10-py3", CUDA: "12.2",
			Source: "NGC PyTorch (CUDA 12.2.2); needs all_reduce_perf on PATH; pinned by tag"},
		{Ref: "nvcr.io/nvidia/pytorch:25.01-py3", CUDA: "12.8",
			Source: "NGC PyTorch (CUDA 12.8.0, ships /usr/local/bin/all_reduce_perf_mpi); pinned by tag"},
	},
	StageDCGM: {
		{Ref: "nvcr.io/nvidia/cloud-native/dcgm:3.3.9-1-ubuntu22.04",
			Source: "NGC nvidia/cloud-native/dcgm; pinned by tag"},
	},
}

var smiImage = Image{
	Ref:    "docker.io/nvidia/cuda:12.1.0-base-ubuntu22.04@sha256:40042016a816cbbe0504dd0a396e7cfc036a8aa43f5694af60dd6f8f87d24e52",
	Pinned: true,
	Source: "NVIDIA's nvidia/cuda base image; digest as resolved in a public BuildKit log, verify with `crane digest` before relying on it",
}

// DefaultImages returns the default candidates of a stage, ascending by CUDA.
func DefaultImages(st Stage) []Image { return append([]Image(nil), defaultImages[st]...) }

// ChooseImage returns the image a stage uses on a node whose driver supports
// CUDA up to driverCUDA ("12.2"; "" when not known yet). An override (from
// --image STAGE=REF) always wins; its CUDA is read from the tag when the tag
// says it (ImageCUDA). Otherwise the newest default whose CUDA is at most
// driverCUDA is chosen, or the oldest default when driverCUDA is unknown.
func ChooseImage(st Stage, override, driverCUDA string) (Image, error) {
	if override != "" {
		return Image{Ref: override, CUDA: ImageCUDA(override), Pinned: strings.Contains(override, "@sha256:"), Source: "--image"}, nil
	}
	cands := defaultImages[st]
	if len(cands) == 0 {
		return Image{}, fmt.Errorf("no image for stage %s", st)
	}
	if driverCUDA == "" {
		return cands[0], nil
	}
	best := -1
	for i, c := range cands {
		if c.CUDA == "" || CompareVersions(c.CUDA, driverCUDA) <= 0 {
			best = i
		}
	}
	if best < 0 {
		return cands[0], nil // CheckImageCUDA reports the mismatch
	}
	return cands[best], nil
}

// CheckImageCUDA returns a non-nil error when the image needs a newer CUDA
// than the driver supports. That is a harness problem (INCONCLUSIVE), not a
// node failure.
func CheckImageCUDA(img Image, driverCUDA string) error {
	if img.CUDA == "" || driverCUDA == "" {
		return nil
	}
	if CompareVersions(img.CUDA, driverCUDA) > 0 {
		return fmt.Errorf("image %s needs CUDA %s but the node's driver supports CUDA %s at most", img.Ref, img.CUDA, driverCUDA)
	}
	return nil
}

var cudaTagRE = regexp.MustCompile(`(?i)cuda-?v?(\d+)\.(\d+)`)

// ImageCUDA reads a CUDA major.minor from an image reference's tag, as in
// "vectoradd-cuda12.5.0" or "nvidia/cuda:12.4.1-base" ("" when the tag does
// not say).
func ImageCUDA(ref string) string {
	name, tag := ref, ""
	if i := strings.Index(name, "@"); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndex(name, ":"); i >= 0 && !strings.Contains(name[i:], "/") {
		name, tag = name[:i], name[i+1:]
	}
	if m := cudaTagRE.FindStringSubmatch(tag); m != nil {
		return m[1] + "." + m[2]
	}
	if strings.HasSuffix(name, "/cuda") {
		if m := regexp.MustCompile(`^(\d+)\.(\d+)`).FindStringSubmatch(tag); m != nil {
			return m[1] + "." + m[2]
		}
	}
	return ""
}

// CompareVersions compares dotted numeric versions as matrix.Version does
// ("535.161.08" > "535.54.03", "12.4" == "12.4.0"). It returns -1, 0 or 1;
// when either side is not such a version the two compare as text.
func CompareVersions(a, b string) int {
	va, erra := matrix.ParseVersion(a)
	vb, errb := matrix.ParseVersion(b)
	if erra != nil || errb != nil {
		return strings.Compare(a, b)
	}
	return va.Compare(vb)
}

// ImageOverrides parses --image values of the form STAGE=REF.
func ImageOverrides(values []string) (map[Stage]string, error) {
	out := map[Stage]string{}
	for _, v := range values {
		k, ref, ok := strings.Cut(v, "=")
		if !ok || ref == "" {
			return nil, fmt.Errorf("--image %q: want STAGE=IMAGE", v)
		}
		st, err := ParseStage(k)
		if err != nil {
			return nil, fmt.Errorf("--image %q: %w", v, err)
		}
		if st == StageKubernetes {
			return nil, fmt.Errorf("--image %q: the kubernetes stage runs no image", v)
		}
		out[st] = ref
	}
	return out, nil
}

// sortedStages returns the keys of m in run order.
func sortedStages[V any](m map[Stage]V) []Stage {
	var out []Stage
	for st := range m {
		out = append(out, st)
	}
	order := map[Stage]int{}
	for i, st := range AllStages {
		order[st] = i
	}
	sort.Slice(out, func(i, j int) bool { return order[out[i]] < order[out[j]] })
	return out
}
