package accept

import (
	"strings"
	"testing"
)

// TestDefaultImages: the embedded image list gives each stage the images the
// "Images" table of docs/accept.md names, in ascending CUDA order, each with its
// source and date.
func TestDefaultImages(t *testing.T) {
	want := map[Stage][]string{
		StageInventory:   {"docker.io/nvidia/cuda:12.1.0-base-ubuntu22.04@sha256:40042016a816cbbe0504dd0a396e7cfc036a8aa43f5694af60dd6f8f87d24e52 "},
		StageTopology:    {"docker.io/nvidia/cuda:12.1.0-base-ubuntu22.04@sha256:40042016a816cbbe0504dd0a396e7cfc036a8aa43f5694af60dd6f8f87d24e52 "},
		StageCUDA:        {"nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda11.7.1-ubuntu20.04 11.7", "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04 12.5"},
		StageNCCL:        {"nvcr.io/nvidia/pytorch:23.10-py3 12.2", "nvcr.io/nvidia/pytorch:25.01-py3 12.8"},
		StageDCGM:        {"nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04 12.0"},
		StageDiagnostics: {"docker.io/nvidia/cuda:12.1.0-base-ubuntu22.04@sha256:40042016a816cbbe0504dd0a396e7cfc036a8aa43f5694af60dd6f8f87d24e52 "},
		StageNetwork:     {"nvcr.io/nvidia/pytorch:23.10-py3 12.2", "nvcr.io/nvidia/pytorch:25.01-py3 12.8"},
		StageFramework:   {"nvcr.io/nvidia/pytorch:23.10-py3 12.2", "nvcr.io/nvidia/pytorch:25.01-py3 12.8"},
	}
	for _, st := range AllStages {
		var got []string
		for _, im := range DefaultImages(st) {
			got = append(got, im.Ref+" "+im.CUDA)
			if im.Pinned != strings.Contains(im.Ref, "@sha256:") || im.Source == "" || !strings.HasPrefix(im.SourceURL, "https://") || im.AsOf == "" {
				t.Errorf("%s: %+v lacks its note, source or date", st, im)
			}
		}
		if strings.Join(got, "\n") != strings.Join(want[st], "\n") {
			t.Errorf("stage %s images:\n%s\nwant:\n%s", st, strings.Join(got, "\n"), strings.Join(want[st], "\n"))
		}
	}
	// The dcgm stage's default is DCGM 4 with the GPU Operator release that
	// pins its tag as the source; a CUDA 11 driver has no DCGM 4 package
	// (the image holds the -cuda12 and -cuda13 ones), a harness problem.
	dcgm, _ := ChooseImage(StageDCGM, "", "12.2")
	if !strings.HasPrefix(dcgm.Ref, "nvcr.io/nvidia/cloud-native/dcgm:4.") || !strings.Contains(dcgm.SourceURL, "NVIDIA/gpu-operator/blob/v26.7.0/") || !strings.Contains(dcgm.Source, "cuda13") {
		t.Errorf("dcgm default %+v, want DCGM 4 from GPU Operator v26.7.0's values", dcgm)
	}
	if err := CheckImageCUDA(dcgm, "11.8"); err == nil {
		t.Errorf("DCGM 4 accepted on a CUDA 11.8 driver")
	}
	if img, _ := ChooseImage(StageNCCL, "", "12.4"); img.Ref != "nvcr.io/nvidia/pytorch:23.10-py3" {
		t.Errorf("nccl on a CUDA 12.4 driver: %s", img.Ref)
	}
	if img, _ := ChooseImage(StageNCCL, "", ""); img.CUDA != "12.2" {
		t.Errorf("nccl with the driver's CUDA unknown: %+v, want the oldest", img)
	}
	for _, bad := range []string{
		"formatVersion: \"2\"\n",
		"formatVersion: \"1\"\nstages: {cuda: [nope]}\n",
		"formatVersion: \"1\"\nstages: {kubernetes: [a]}\nimages: [{id: a, ref: r, source: \"https://x\", as_of: \"2026-01-01\"}]\n",
		"formatVersion: \"1\"\nimages: [{id: a, ref: r}]\n",
		"formatVersion: \"1\"\nstages: {cuda: [b, a]}\nimages: [{id: a, ref: r, cuda: \"11.0\", source: \"https://x\", as_of: \"2026-01-01\"}, {id: b, ref: s, cuda: \"12.0\", source: \"https://x\", as_of: \"2026-01-01\"}]\n",
	} {
		if _, err := parseImages([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
