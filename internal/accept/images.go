package accept

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

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
	// SourceURL and AsOf are the page a default image comes from and the
	// date it was checked (empty for --image overrides).
	SourceURL string `json:"sourceURL,omitempty"`
	AsOf      string `json:"asOf,omitempty"`
}

// The default images live in data/images.yaml with their sources.
//
//go:embed data/images.yaml
var embeddedImages []byte

type imagesFile struct {
	FormatVersion string             `json:"formatVersion"`
	Stages        map[Stage][]string `json:"stages"`
	Images        []struct {
		ID     string `json:"id"`
		Ref    string `json:"ref"`
		CUDA   string `json:"cuda"`
		Note   string `json:"note"`
		Source string `json:"source"`
		AsOf   string `json:"as_of"`
	} `json:"images"`
}

// defaultImages lists, per stage, the default images in ascending CUDA
// order, from data/images.yaml. It is read on first use, once the stage
// table it is checked against is filled in (init).
var defaultImages = sync.OnceValue(func() map[Stage][]Image {
	m, err := parseImages(embeddedImages)
	if err != nil {
		panic(err) // covered by tests
	}
	return m
})

func parseImages(data []byte) (map[Stage][]Image, error) {
	var f imagesFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("images: %w", err)
	}
	if f.FormatVersion != "1" {
		return nil, fmt.Errorf("images: formatVersion %q, want \"1\"", f.FormatVersion)
	}
	byID := map[string]Image{}
	for _, im := range f.Images {
		if im.ID == "" || im.Ref == "" || !strings.HasPrefix(im.Source, "https://") || im.AsOf == "" {
			return nil, fmt.Errorf("images: %q needs id, ref, an https source and as_of", im.ID)
		}
		byID[im.ID] = Image{Ref: im.Ref, CUDA: im.CUDA, Pinned: strings.Contains(im.Ref, "@sha256:"), Source: im.Note, SourceURL: im.Source, AsOf: im.AsOf}
	}
	out := map[Stage][]Image{}
	for st, ids := range f.Stages {
		if !RunsImage(st) {
			return nil, fmt.Errorf("images: stage %q runs no image", st)
		}
		for i, id := range ids {
			im, ok := byID[id]
			if !ok {
				return nil, fmt.Errorf("images: stage %s: unknown image %q", st, id)
			}
			if i > 0 && CompareVersions(out[st][i-1].CUDA, im.CUDA) > 0 {
				return nil, fmt.Errorf("images: stage %s: %s is not in ascending CUDA order", st, id)
			}
			out[st] = append(out[st], im)
		}
	}
	return out, nil
}

// DefaultImages returns the default candidates of a stage, ascending by CUDA.
func DefaultImages(st Stage) []Image { return append([]Image(nil), defaultImages()[st]...) }

// ChooseImage returns the image a stage uses on a node whose driver supports
// CUDA up to driverCUDA ("12.2"; "" when not known yet). An override (from
// --image STAGE=REF) always wins; its CUDA is read from the tag when the tag
// says it (ImageCUDA). Otherwise the newest default whose CUDA is at most
// driverCUDA is chosen, or the oldest default when driverCUDA is unknown.
func ChooseImage(st Stage, override, driverCUDA string) (Image, error) {
	if override != "" {
		return Image{Ref: override, CUDA: ImageCUDA(override), Pinned: strings.Contains(override, "@sha256:"), Source: "--image"}, nil
	}
	cands := defaultImages()[st]
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
		if !RunsImage(st) {
			return nil, fmt.Errorf("--image %q: the %s stage runs no image", v, st)
		}
		out[st] = ref
	}
	return out, nil
}
