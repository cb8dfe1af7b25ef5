package fabric

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// EFA pods. Sources: the worker of awsome-distributed-training's EFA
// nccl-tests MPIJob (requests and limits nvidia.com/gpu 8,
// vpc.amazonaws.com/efa 32, hugepages-2Mi 5120Mi, memory 32000Mi on
// p5.48xlarge; /dev/shm mounted):
// https://github.com/aws-samples/awsome-distributed-training/blob/7217859f67bc693c52ff175ccc6082c41dbd7a1b/micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml
// (2026-02-21), and the same request in
// https://docs.aws.amazon.com/eks/latest/userguide/node-efa.html (read
// 2026-12-02). Neither adds a capability (IPC_LOCK) or a host path, so the
// pod stays within the restricted Pod Security level.
const (
	// EFAHugePages is the 2 MiB huge pages an EFA pod requests, and
	// EFAMemory the memory request that Kubernetes needs beside huge pages.
	EFAHugePages = "5120Mi"
	EFAMemory    = "32000Mi"
	srcEFATests  = "https://github.com/aws-samples/awsome-distributed-training/blob/7217859f67bc693c52ff175ccc6082c41dbd7a1b/micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml"
	srcEKSEFA    = "https://docs.aws.amazon.com/eks/latest/userguide/node-efa.html"
	// srcFIEFA documents FI_EFA_USE_HUGE_PAGE (libfabric's EFA provider).
	srcFIEFA = "https://ofiwg.github.io/libfabric/main/man/fi_efa.7.html"
)

// efaPod is the pod side of EFA: every EFA interface of the node, huge
// pages where the node has them (else libfabric is told to use none), the
// transport's variables.
func efaPod(p Params, env map[string]string) (Pod, error) {
	if p.EFA <= 0 {
		return Pod{}, fmt.Errorf("%s: the number of EFA interfaces is unknown", p.Machine)
	}
	pod := Pod{
		Fabric: matrix.FabricEFA, Name: matrix.FabricName(matrix.FabricEFA),
		// aws-ofi-nccl names its plugin "AWS Libfabric" (1.x) or
		// "Libfabric" (newer); NCCL prints "Using network AWS Libfabric".
		NCCLNets:  []string{"AWS Libfabric", "Libfabric"},
		Env:       maps.Clone(env),
		Resources: corev1.ResourceList{ResourceEFA: quantity(strconv.Itoa(p.EFA))},
		Sources:   []string{srcEFATests, srcEKSEFA},
	}
	if pod.Env == nil {
		pod.Env = map[string]string{}
	}
	// aws-ofi-nccl and libfabric where AWS's EFA installer and the
	// reference image put them, ahead of the image's own libraries, and the
	// fork safety the reference's mpirun passes every rank.
	pod.Env["FI_EFA_FORK_SAFE"] = "1"
	pod.Prelude = `export LD_LIBRARY_PATH="/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/opt/amazon/ofi-nccl/lib:${LD_LIBRARY_PATH:-}"; export PATH="/opt/amazon/efa/bin:${PATH}"`
	pod.ImageNeeds = "aws-ofi-nccl and libfabric with the EFA provider (AWS's EFA installer, as the image of awsome-distributed-training's nccl-tests has them under /opt/amazon); NGC's PyTorch images are not known to ship them, so give --image STAGE=REF with such an image"
	if p.HugePages {
		pod.Resources[ResourceHugePages2Mi] = quantity(EFAHugePages)
		pod.Resources[corev1.ResourceMemory] = quantity(EFAMemory)
	} else {
		pod.Env["FI_EFA_USE_HUGE_PAGE"] = "0"
		pod.Sources = append(pod.Sources, srcFIEFA)
	}
	return pod, nil
}

// rxdmImage is the receive-path (RxDM) sidecar image of GPUDirect-TCPX or
// -TCPXO: the matrix's row of the fabric (matrix.FabricImages), which pins
// it beside the NCCL plugin installer of the same release that generate's
// installer DaemonSet runs (Google couples the two versions).
func rxdmImage(f string) (string, []string, error) {
	im, ok := matrix.FabricImages(f)
	if !ok || im.RxDM == "" {
		return "", nil, fmt.Errorf("the matrix pins no receive-path sidecar image for %s", matrix.FabricName(f))
	}
	return im.RxDM, im.Sources, nil
}

// Sources of the GKE fabric pods.
const (
	srcTCPXTest  = "https://github.com/GoogleCloudPlatform/container-engine-accelerators/blob/992db81257553607f1477945f1b3219632991829/gpudirect-tcpx/nccl-test-latest.yaml"
	srcTCPXOTest = "https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/1047080375afbb44da4b596be314634e7486af4a/examples/gke-a3-megagpu/nccl-test-latest.yaml"
	// srcTCPXOLatest is Google's TCPXO nccl-test of the pinned release (the
	// sidecar's command without the deprecated --num_nics).
	srcTCPXOLatest = "https://github.com/GoogleCloudPlatform/container-engine-accelerators/blob/992db81257553607f1477945f1b3219632991829/gpudirect-tcpxo/nccl-test-latest.yaml"
	srcRDMATest    = "https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/1047080375afbb44da4b596be314634e7486af4a/examples/gke-a3-ultragpu/nccl-jobset-example.yaml"
	srcRDMATest2   = "https://github.com/GoogleCloudPlatform/container-engine-accelerators/blob/992db81257553607f1477945f1b3219632991829/gpudirect-rdma/nccl-test.yaml"
)

// Host paths of GKE's GPU nodes: the driver's libraries (where the NCCL
// plugin installers put the plugin), gIB, the TCPX socket directory, the
// TCPXO aperture devices.
const (
	hostNvidia     = "/home/kubernetes/bin/nvidia"
	hostNvidiaLib  = "/home/kubernetes/bin/nvidia/lib64"
	hostGIB        = "/home/kubernetes/bin/gib"
	hostTCPXSocket = "/run/tcpx"
	hostAperture   = "/dev/aperture_devices"
)

// AnnotationDevicesPrefix is the GKE NRI device injector's annotation
// prefix: devices.gke.io/container.NAME lists the devices injected into
// container NAME (the RxDM sidecar gets the GPUs without requesting them).
const AnnotationDevicesPrefix = "devices.gke.io/container."

// tcpxPod is the pod side of GPUDirect-TCPX and -TCPXO: the GPU NICs'
// networks, the RxDM sidecar with the GPUs injected, the plugin's
// libraries from the host and, for TCPXO, the aperture devices.
func tcpxPod(p Params, m matrix.Machine, env map[string]string) (Pod, error) {
	if len(p.Networks) == 0 {
		return Pod{}, fmt.Errorf("%s: the GPU NICs' GKE networks are unknown", p.Machine)
	}
	if p.GPUs <= 0 {
		return Pod{}, fmt.Errorf("%s: the GPU count is unknown", p.Machine)
	}
	pod := Pod{
		Fabric: m.Fabric, Name: matrix.FabricName(m.Fabric), Env: maps.Clone(env), Annotations: map[string]string{},
		Volumes: []corev1.Volume{hostPathVolume("nvidia-lib64", hostNvidiaLib), hostPathVolume("sys", "/sys"), hostPathVolume("proc-sys", "/proc/sys")},
		Mounts:  []corev1.VolumeMount{{Name: "nvidia-lib64", MountPath: "/usr/local/nvidia/lib64"}},
		Privileged: []string{
			"host paths " + hostNvidiaLib + ", /sys and /proc/sys",
			"NET_ADMIN for the receive-path (RxDM) sidecar",
		},
	}
	pod.podNetworks(p.Networks)
	sidecar := corev1.Container{
		ImagePullPolicy: corev1.PullIfNotPresent,
		RestartPolicy:   ptr(corev1.ContainerRestartPolicyAlways),
		Env:             []corev1.EnvVar{{Name: "LD_LIBRARY_PATH", Value: "/usr/local/nvidia/lib64"}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "nvidia-lib64", MountPath: "/usr/local/nvidia/lib64"},
			{Name: "sys", MountPath: "/hostsysfs"},
			{Name: "proc-sys", MountPath: "/hostprocsysfs"},
		},
	}
	image, imageSources, err := rxdmImage(m.Fabric)
	if err != nil {
		return Pod{}, err
	}
	devices := gpuDevices(p.GPUs)
	if m.Fabric == matrix.FabricTCPX {
		pod.NCCLNets = []string{"GPUDirectTCPX"}
		pod.Sources = []string{srcTCPXTest}
		sidecar.Name, sidecar.Image = "tcpx-daemon", image
		sidecar.Command = []string{"/tcpgpudmarxd/build/app/tcpgpudmarxd", "--gpu_nic_preset", "a3vm", "--gpu_shmem_type", "fd", "--uds_path", hostTCPXSocket, "--setup_param", `\"--verbose 128 2 0 \"`}
		sidecar.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}
		sidecar.VolumeMounts = append(sidecar.VolumeMounts, corev1.VolumeMount{Name: "tcpx-socket", MountPath: hostTCPXSocket})
		pod.Volumes = append(pod.Volumes, hostPathVolume("tcpx-socket", hostTCPXSocket))
		pod.Mounts = append(pod.Mounts, corev1.VolumeMount{Name: "tcpx-socket", MountPath: hostTCPXSocket})
		pod.Privileged[0] += ", " + hostTCPXSocket
	} else {
		pod.NCCLNets = []string{"FasTrak"}
		pod.Sources = []string{srcTCPXOTest, srcTCPXOLatest}
		sidecar.Name, sidecar.Image = "tcpxo-daemon", image
		// --num_hops=2 alone: container-engine-accelerators dropped
		// --num_nics from every TCPXO manifest (abbe8ddf, 2026-04-20) and
		// calls it deprecated with tcpgpudmarxd-dev v1.0.21 (992db81);
		// cluster-toolkit's nccl-test-latest.yaml (1047080) still passes
		// --num_nics=8.
		sidecar.Command = []string{"/bin/sh", "-c", "set -ex\nchmod 755 /fts/entrypoint_rxdm_container.sh\n/fts/entrypoint_rxdm_container.sh --num_hops=2"}
		sidecar.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN", "NET_BIND_SERVICE"}}}
		devices += "- path: /dev/dmabuf_import_helper\n"
		pod.Volumes = append(pod.Volumes, hostPathVolume("aperture-devices", hostAperture))
		pod.Mounts = append(pod.Mounts, corev1.VolumeMount{Name: "aperture-devices", MountPath: hostAperture})
		pod.Privileged[0] += ", " + hostAperture
	}
	pod.Sources = append(pod.Sources, imageSources...)
	pod.Annotations[AnnotationDevicesPrefix+sidecar.Name] = devices
	pod.Sidecars = []corev1.Container{sidecar}
	pod.Workload = gkeWorkload()
	return pod, nil
}

// gpuDevices is the device list of the NRI device injector's annotation:
// every GPU, nvidiactl and nvidia-uvm, as Google's manifests list them.
func gpuDevices(gpus int) string {
	s := ""
	for i := range gpus {
		s += fmt.Sprintf("- path: /dev/nvidia%d\n", i)
	}
	return s + "- path: /dev/nvidiactl\n- path: /dev/nvidia-uvm\n"
}

// rdmaPod is the pod side of GPUDirect RDMA with gIB (A3 Ultra, A4): the
// RDMA NICs' networks, the driver and gIB directories from the host, and
// gIB's set_nccl_env.sh before NCCL starts.
func rdmaPod(p Params, m matrix.Machine, env map[string]string) (Pod, error) {
	if m.RDMANICs == 0 {
		return Pod{}, fmt.Errorf("%s: gpuctl does not build GPUDirect RDMA pods for a machine whose RDMA NICs the matrix does not count (A4X attaches them through DRANET resource claims)", p.Machine)
	}
	if len(p.Networks) == 0 {
		return Pod{}, fmt.Errorf("%s: the RDMA NICs' GKE networks are unknown", p.Machine)
	}
	pod := Pod{
		Fabric: m.Fabric, Name: matrix.FabricName(m.Fabric), NCCLNets: []string{"gIB"}, Env: maps.Clone(env), Annotations: map[string]string{},
		Volumes: []corev1.Volume{hostPathVolume("nvidia", hostNvidia), hostPathVolume("gib", hostGIB)},
		Mounts:  []corev1.VolumeMount{{Name: "nvidia", MountPath: "/usr/local/nvidia"}, {Name: "gib", MountPath: "/usr/local/gib"}},
		// The variables gIB wants come from its own script on the node
		// (Google: "source /usr/local/gib/scripts/set_nccl_env.sh"), and its
		// libraries must be on LD_LIBRARY_PATH.
		Prelude:    `if [ -f /usr/local/gib/scripts/set_nccl_env.sh ]; then . /usr/local/gib/scripts/set_nccl_env.sh; fi; export LD_LIBRARY_PATH="/usr/local/gib/lib64:${LD_LIBRARY_PATH:-}"`,
		Privileged: []string{"host paths " + hostNvidia + " and " + hostGIB},
		Sources:    []string{srcRDMATest, srcRDMATest2},
		Workload:   gkeWorkload(),
	}
	pod.podNetworks(p.Networks)
	return pod, nil
}

// gkeWorkload is the workload container's security context on the GKE
// fabrics: root (the references' workloads run as their image's root user:
// Google's TCPXO and RDMA nccl-tests; cluster-toolkit's A3 Ultra JobSet even
// privileged) with IPC_LOCK, which Google's TCPX nccl-test adds, so that the
// NCCL plugins may pin memory and read the host-owned plugin and aperture
// paths. The pod needs the privileged level for its host paths already.
func gkeWorkload() *corev1.SecurityContext {
	return &corev1.SecurityContext{RunAsUser: ptr(int64(0)), RunAsNonRoot: ptr(false), AllowPrivilegeEscalation: ptr(false),
		Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"IPC_LOCK"}}}
}

func hostPathVolume(name, path string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}}
}

// Apply adds the fabric to a pod: the workload container c (a container of
// ps) gets the resources, variables (in sorted order, after c's own unless c
// sets the same name) and mounts; the pod gets the annotations (into
// annotations, which may be nil: the merged map is returned), volumes and
// sidecars.
func (pod *Pod) Apply(ps *corev1.PodSpec, c *corev1.Container, annotations map[string]string) map[string]string {
	if pod.Fabric == "" {
		return annotations
	}
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	for r, q := range pod.Resources {
		c.Resources.Limits[r] = q
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		c.Resources.Requests[r] = q
	}
	have := map[string]bool{}
	for _, e := range c.Env {
		have[e.Name] = true
	}
	for _, k := range sortedKeys(pod.Env) {
		if !have[k] {
			c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: pod.Env[k]})
		}
	}
	c.VolumeMounts = append(c.VolumeMounts, pod.Mounts...)
	if pod.Workload != nil {
		c.SecurityContext = pod.Workload.DeepCopy()
	}
	ps.Volumes = append(ps.Volumes, pod.Volumes...)
	ps.InitContainers = append(ps.InitContainers, pod.Sidecars...)
	if len(pod.Annotations) > 0 && annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, pod.Annotations)
	return annotations
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
