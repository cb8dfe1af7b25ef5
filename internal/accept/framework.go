package accept

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// The framework stage (layer 5, "the real framework"): the node's PyTorch
// image does real work on every GPU. One pod runs torchrun --standalone with
// one process per GPU; the processes run data/framework.py (written for
// gpuctl), which prints one GPUCTL-FRAMEWORK JSON line per check and a
// summary, read by probe's framework parser. The script works across nodes
// as well (WORLD_SIZE > LOCAL_WORLD_SIZE), for a fleet stage to reuse.

//go:embed data/framework.py
var frameworkScript string

// ContainerFramework is the framework stage's container.
const ContainerFramework = "framework"

// FrameworkCommand is the shell command of a framework pod with gpus GPUs:
// write the script to /tmp and run it under torchrun, one process per GPU,
// on CUDA. The checkpoint file goes to /tmp (the container's own disk).
// torchrun's --nproc_per_node spelling is the one every torch from 1.13 on
// accepts.
func FrameworkCommand(gpus int) string {
	return "cat > /tmp/gpuctl-framework.py <<'GPUCTL_EOF'\n" + frameworkScript + "GPUCTL_EOF\n" +
		fmt.Sprintf("exec torchrun --standalone --nnodes=1 --nproc_per_node=%d /tmp/gpuctl-framework.py --device cuda --dir /tmp\n", gpus)
}

// frameworkContainers: the checks under torchrun with every GPU of the node,
// as nobody, with a memory-backed /dev/shm (NCCL's shared-memory transport
// between the processes). TORCH_ALLOW_TF32_CUBLAS_OVERRIDE, torch's switch
// that forces TF32 in cuBLAS whatever allow_tf32 says, is set to 0 in case
// the image sets it (NGC images are said to; not confirmed from here): the
// fp32 matmul check would measure TF32's ~1e-3 error instead (PyTorch's
// "TensorFloat-32 (TF32) on Ampere devices" note,
// https://pytorch.org/docs/stable/notes/cuda.html).
func frameworkContainers(s JobSpec) ([]corev1.Container, []corev1.Volume) {
	env := []corev1.EnvVar{
		{Name: "HOME", Value: "/tmp"},
		{Name: "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", Value: "0"},
		{Name: "PYTHONUNBUFFERED", Value: "1"},
	}
	c := container(ContainerFramework, s.Image.Ref, []string{"sh", "-c", FrameworkCommand(s.GPUs)}, env, gpuLimit(s.GPUs), asNobody)
	c.VolumeMounts = []corev1.VolumeMount{{Name: "dshm", MountPath: "/dev/shm"}}
	return []corev1.Container{c}, []corev1.Volume{{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}}
}

func judgeFrameworkStage(in judgeInput) StageResult { return judgeFramework(in.parsed, in.exp, in.obs) }

// frameworkReport is the framework report among a stage's parsed outputs.
func frameworkReport(parsed map[string]*Output) *probe.FrameworkReport {
	if o := only(parsed); o != nil {
		return o.Framework
	}
	return nil
}

// judgeFramework decides a framework run whose checks the parser found all
// ok: they ran on the GPUs, one rank per GPU of the node. The reason quotes
// each check's numbers against its threshold.
func judgeFramework(parsed map[string]*Output, exp Expectations, obs *Observed) StageResult {
	r := frameworkReport(parsed)
	if r == nil {
		return result(StageFramework, diag.Inconclusive, "the framework checks printed no result")
	}
	_, n := sku(exp, obs)
	switch {
	case r.Device != "cuda":
		return result(StageFramework, diag.Inconclusive, "the framework checks ran on %s, not on the GPUs", orDashStr(r.Device))
	case n > 0 && r.World != n:
		return result(StageFramework, diag.Inconclusive, "the framework checks ran on %d ranks, the node has %d GPUs", r.World, n)
	}
	return result(StageFramework, diag.Pass, "torch %s (CUDA %s) on %d GPUs: %s", r.Torch, orDashStr(r.CUDA), r.World, frameworkPassText(r))
}

// frameworkPassText says what each check showed, with its threshold.
func frameworkPassText(r *probe.FrameworkReport) string {
	var parts []string
	for _, c := range r.Checks {
		parts = append(parts, c.Name+" "+frameworkCheckText(c))
	}
	return strings.Join(parts, "; ")
}

// frameworkCheckTexts say what a passed check of each name showed.
var frameworkCheckTexts = map[string]func(c probe.FrameworkCheck) string{
	"matmul": func(c probe.FrameworkCheck) string {
		return fmt.Sprintf("max rel err %s <= %s (n %s)", num(c, "maxRelErr"), thr(c, "maxRelErr"), num(c, "n"))
	},
	"all-reduce": func(c probe.FrameworkCheck) string {
		return fmt.Sprintf("%s wrong of %s elements", num(c, "wrong"), num(c, "elements"))
	},
	"training": func(c probe.FrameworkCheck) string {
		return fmt.Sprintf("loss %s -> %s in %s steps (ratio %s <= %s, %s ms/step)", num(c, "initialLoss"), num(c, "finalLoss"), num(c, "steps"), num(c, "lossRatio"), thr(c, "maxLossRatio"), num(c, "msPerStep"))
	},
	"checkpoint": func(c probe.FrameworkCheck) string {
		return fmt.Sprintf("%s tensors bit-equal after save and load, same loss one step on", num(c, "tensors"))
	},
	"inference": func(c probe.FrameworkCheck) string {
		return fmt.Sprintf("finite and identical twice, %s ms", num(c, "latencyMs"))
	},
}

func frameworkCheckText(c probe.FrameworkCheck) string {
	if f := frameworkCheckTexts[c.Name]; f != nil {
		return f(c)
	}
	return "ok"
}

func num(c probe.FrameworkCheck, key string) string { return frameworkNumber(c.Values[key]) }
func thr(c probe.FrameworkCheck, key string) string { return frameworkNumber(c.Thresholds[key]) }

// frameworkNumber prints a check's value: integers as such, others in %.3g.
func frameworkNumber(v any) string {
	f, ok := v.(float64)
	if !ok {
		return fmt.Sprint(v)
	}
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 3, 64)
}

func orDashStr(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// observeFramework keeps the checks for the record, whatever the verdict.
func observeFramework(parsed map[string]*Output, obs *Observed) {
	r := frameworkReport(parsed)
	if r == nil {
		return
	}
	f := &FrameworkSummary{Torch: r.Torch, CUDA: r.CUDA, Device: r.Device, Backend: r.Backend, World: r.World, Nodes: r.Nodes, Checks: []FrameworkCheck{}}
	for _, c := range r.Checks {
		fc := FrameworkCheck{Name: c.Name, OK: c.OK, Device: c.Device, DurationMs: c.DurationMs, Measurements: numbers(c.Values), Thresholds: numbers(c.Thresholds)}
		if c.Error != nil {
			fc.Error = c.Error.Class + ": " + c.Error.Message
		}
		f.Checks = append(f.Checks, fc)
	}
	obs.Framework = f
}

// numbers keeps the numeric and boolean (1 or 0) values of m.
func numbers(m map[string]any) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		switch x := v.(type) {
		case float64:
			out[k] = x
		case bool:
			out[k] = 0
			if x {
				out[k] = 1
			}
		}
	}
	return out
}

// recordFramework puts the framework stage's checks, verdict and reason
// into the record, and the thresholds the checks used into its thresholds
// ("CHECK.KEY").
func recordFramework(p *Predicate, r StageResult, s *runState) {
	f := &FrameworkSummary{Checks: []FrameworkCheck{}}
	if s.obs.Framework != nil {
		c := *s.obs.Framework
		f = &c
	}
	f.Verdict, f.Reason = r.Verdict, r.Reason
	p.Framework = f
	t := map[string]float64{}
	for _, c := range f.Checks {
		for _, k := range sortedKeys(c.Thresholds) {
			t[c.Name+"."+k] = c.Thresholds[k]
		}
	}
	if len(t) > 0 {
		p.Thresholds.Framework = t
	}
}
