package helmgen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// The preflight snippet (spec.acceptance.preflight): per pool,
// manifests/<env>/workload/<pool>-preflight.yaml, a PodTemplateSpec whose
// init container runs `gpuctl preflight` with the pool's expectations as
// flags before the training container starts, to copy into the pool's
// workloads.
const (
	// PreflightContainer is the init container's name.
	PreflightContainer = "gpuctl-preflight"
	// PreflightFileSuffix ends the snippet's file name (<pool> before it).
	PreflightFileSuffix = "-preflight.yaml"
	// PreflightEvidenceDir is where the init container keeps what it read
	// (--evidence-dir), an emptyDir the training container mounts
	// read-only.
	PreflightEvidenceDir = "/var/lib/gpuctl/preflight"
	preflightVolume      = "gpuctl-preflight"
)

// cudaImagePath and cudaImageLibraryPath are PATH and LD_LIBRARY_PATH as
// NVIDIA's CUDA base images set them: the driver's nvidia-smi and
// libnvidia-ml are found where the NVIDIA Container Toolkit puts them
// (/usr/bin, the library path) and where GKE mounts the node's driver
// (/usr/local/nvidia/bin and lib64). Sources:
// https://gitlab.com/nvidia/container-images/cuda/-/blob/master/dist/12.4.1/ubuntu2204/base/Dockerfile
// (ENV PATH, LD_LIBRARY_PATH) and
// https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#cuda (the
// driver's libraries under /usr/local/nvidia/lib64), both 2026-12-03.
const (
	cudaImagePath        = "/usr/local/nvidia/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	cudaImageLibraryPath = "/usr/local/nvidia/lib:/usr/local/nvidia/lib64"
)

// preflightPool is one pool's preflight snippet.
type preflightPool struct {
	pool     *spec.NodePool
	gpus     int
	args     []string
	template corev1.PodTemplateSpec
}

// preflightPools are the snippets of the pools spec.acceptance.preflight
// names, in spec order; every GPU pool when it names none; nil without
// spec.acceptance.preflight. Errors: a name that is no pool of the spec, a
// pool without GPUs, a pool whose GPUs are shared (preflight checks whole
// GPUs, as accept does).
func preflightPools(s *spec.Spec) ([]preflightPool, error) {
	if s.Acceptance == nil || s.Acceptance.Preflight == nil {
		return nil, nil
	}
	names := s.Acceptance.Preflight.Pools
	for _, n := range names {
		if !slices.ContainsFunc(s.NodePools, func(p spec.NodePool) bool { return p.Name == n }) {
			return nil, fmt.Errorf("acceptance.preflight.pools: no node pool %q", n)
		}
	}
	var out []preflightPool
	for i := range s.NodePools {
		p := &s.NodePools[i]
		if len(names) > 0 && !slices.Contains(names, p.Name) {
			continue
		}
		pp, ok, err := preflightFor(s, p, len(names) > 0)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, pp)
		}
	}
	return out, nil
}

// preflightFor is pool p's snippet; false for a pool without whole GPUs
// when it was not named (named: an error).
func preflightFor(s *spec.Spec, p *spec.NodePool, named bool) (preflightPool, bool, error) {
	gpus, _ := matrix.PoolGPUsPerNode(s.Provider, p)
	var why string
	switch {
	case gpus <= 0:
		why = "has no GPUs gpuctl can count"
	case p.SharingStrategy() != spec.SharingNone:
		why = fmt.Sprintf("shares its GPUs (sharing.strategy %s); preflight checks whole GPUs", p.SharingStrategy())
	}
	if why != "" {
		if named {
			return preflightPool{}, false, fmt.Errorf("acceptance.preflight.pools: pool %s %s", p.Name, why)
		}
		return preflightPool{}, false, nil
	}
	args := PreflightArgs(p, gpus)
	return preflightPool{pool: p, gpus: gpus, args: args, template: preflightTemplate(s, p, gpus, args)}, true, nil
}

// PreflightArgs are `gpuctl preflight`'s arguments for a node of pool p
// with gpus GPUs: the pool's expectations (accept.PoolExpectations, what
// `gpuctl accept --spec` holds its nodes to) as flags, and the evidence
// folder.
func PreflightArgs(p *spec.NodePool, gpus int) []string {
	e := accept.PoolExpectations(p, accept.MatrixCatalogue)
	args := []string{"preflight", "--gpus", strconv.Itoa(gpus)}
	if e.GPUProduct != "" {
		args = append(args, "--product", e.GPUProduct)
	}
	if e.DriverVersion != "" {
		args = append(args, "--driver", e.DriverVersion)
	}
	return append(args, "--evidence-dir", PreflightEvidenceDir)
}

// preflightTemplate is pool p's PodTemplateSpec: placed on the pool
// (its label and taints), the preflight init container and the training
// container, each with a limit of the node's gpus GPUs. A pod's effective
// request of a resource is the larger of its largest init container's and
// the sum of its app containers'
// (https://kubernetes.io/docs/concepts/workloads/pods/init-containers/#resource-sharing-within-containers,
// 2026-12-03), and the kubelet's device manager hands the devices an init
// container had to the app containers (devicesToReuse,
// https://github.com/kubernetes/kubernetes/blob/v1.33.0/pkg/kubelet/cm/devicemanager/manager.go,
// 2026-12-03): the pod holds the node's GPUs once, and the init container
// checks the very GPUs the training container gets.
func preflightTemplate(s *spec.Spec, p *spec.NodePool, gpus int, args []string) corev1.PodTemplateSpec {
	limit := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceName(gpuResource): resource.MustParse(strconv.Itoa(gpus))}}
	init := corev1.Container{
		Name: PreflightContainer, Image: s.Acceptance.Image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{SweepBinary}, Args: args,
		Env: []corev1.EnvVar{
			// utility mounts nvidia-smi and NVML, compute libcuda.so.1 for
			// the CUDA sample (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html#driver-capabilities,
			// 2026-12-03).
			{Name: "NVIDIA_DRIVER_CAPABILITIES", Value: "compute,utility"},
			{Name: "PATH", Value: cudaImagePath},
			{Name: "LD_LIBRARY_PATH", Value: cudaImageLibraryPath},
		},
		Resources:    limit,
		VolumeMounts: []corev1.VolumeMount{{Name: preflightVolume, MountPath: PreflightEvidenceDir}},
		SecurityContext: &corev1.SecurityContext{
			Privileged: ptrTo(false), AllowPrivilegeEscalation: ptrTo(false), ReadOnlyRootFilesystem: ptrTo(true),
			RunAsNonRoot: ptrTo(true), RunAsUser: ptrTo(int64(sweepUID)), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	training := corev1.Container{
		Name: WorkloadContainer, Resources: *limit.DeepCopy(),
		VolumeMounts: []corev1.VolumeMount{{Name: preflightVolume, MountPath: PreflightEvidenceDir, ReadOnly: true}},
	}
	pool := *p
	if s.Provider == spec.ProviderGKE {
		pool = withGKEGPUTaint(pool)
	}
	tpl := corev1.PodTemplateSpec{}
	tpl.Labels = map[string]string{spec.LabelPool: p.Name}
	tpl.Spec.NodeSelector = map[string]string{spec.LabelPool: p.Name}
	tpl.Spec.Tolerations = tolerationsFor([]spec.NodePool{pool}, false)
	tpl.Spec.InitContainers = []corev1.Container{init}
	tpl.Spec.Containers = []corev1.Container{training}
	tpl.Spec.Volumes = []corev1.Volume{{Name: preflightVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	return tpl
}

// preflightFiles are the snippet files (names relative to
// manifests/<env>/).
func preflightFiles(cs *spec.ClusterSpec, ps []preflightPool, opts Options) ([]File, error) {
	var out []File
	for _, pp := range ps {
		data, err := marshalWorkload(pp.template)
		if err != nil {
			return nil, err
		}
		notes := []string{
			fmt.Sprintf("gpuctl preflight for pool %s (spec.acceptance.preflight): a PodTemplateSpec whose init container %s runs", pp.pool.Name, PreflightContainer),
			"accept's inventory, topology and cuda stages on the pod's own GPUs before the training container starts: on a FAIL (exit 3)",
			"or INCONCLUSIVE (exit 4) the init container fails and the training container does not start there (the pod is retried",
			"as its restartPolicy says). Copy initContainers, the volume and the training container's mount into the pod template of",
			"the pool's workloads (the training container is " + WorkloadContainer + "); it runs as the restricted Pod Security Standard allows.",
			"The init container asks for the GPUs the training container has (" + gpuResource + ": " + strconv.Itoa(pp.gpus) + "): a pod holds the larger of its",
			"init and app containers' requests, so no GPU more, and the kubelet gives the training container the GPUs the init container checked.",
			"Its reading is kept in " + PreflightEvidenceDir + " (preflight.json and the tools' outputs). " + trainingImageNote,
			"Command: " + strings.Join(append([]string{"gpuctl"}, pp.args...), " "),
		}
		out = append(out, File{Name: WorkloadDir + "/" + objectName(pp.pool.Name) + PreflightFileSuffix, Data: append(header(cs, opts, notes...), data...)})
	}
	return out, nil
}
