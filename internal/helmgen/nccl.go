package helmgen

import (
	"slices"
	"strings"

	networkv1 "github.com/GoogleCloudPlatform/gke-networking-api/apis/network/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// The NCCL layer of each pool: a ConfigMap of its NCCL environment for the
// workloads (envFrom), and the components its transport needs in the
// cluster (on GKE the NCCL plugin installer and device injector
// DaemonSets; on EKS the EFA device plugin, a chart: values.go).

// NCCLConfigMapPrefix names each pool's NCCL ConfigMap: nccl-<pool>.
const NCCLConfigMapPrefix = "nccl-"

// ncclConfigMaps are the NCCL ConfigMaps of every pool with an NCCL
// environment (nccl.env, or a transport that needs variables): in each team
// namespace whose team may use the pool (ConfigMaps are namespaced, and
// envFrom reads only the pod's own namespace), or in default when the spec
// has no team. The transport's
// variables come from the matrix (matrix.PoolTransport); nccl.env wins
// over them.
func ncclConfigMaps(s *spec.Spec) []corev1.ConfigMap {
	teams := s.Teams
	if len(teams) == 0 {
		teams = []spec.Team{{Name: "default"}}
	}
	var out []corev1.ConfigMap
	for _, t := range teams {
		ns := t.Name
		for i := range s.NodePools {
			p := &s.NodePools[i]
			if !t.Uses(p.Name) {
				continue // not one of the team's pools (spec.teams[].pools)
			}
			env := fabric.PoolEnv(s.Provider, p)
			ann := map[string]string{}
			if t, ok := matrix.PoolTransport(s.Provider, p); ok {
				ann[AnnotationTransport] = t.Fabric
				ann[AnnotationSource] = t.Source
			}
			if len(env) == 0 {
				continue
			}
			if nets := fabric.SpecNetworks(s, p); len(nets) > 0 {
				ann[AnnotationPodInterfaces] = fabric.PodInterfaces(nets)
			}
			out = append(out, corev1.ConfigMap{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{
					Name: NCCLConfigMapPrefix + objectName(p.Name), Namespace: ns,
					Labels:      map[string]string{spec.LabelPool: p.Name},
					Annotations: nilIfEmpty(ann),
				},
				Data: env,
			})
		}
	}
	return out
}

// Annotations of the NCCL ConfigMaps.
const (
	// AnnotationTransport is the pool's NCCL transport (efa, tcpx, tcpxo,
	// roce), where it has one.
	AnnotationTransport = "gpuctl.dev/nccl-transport"
	// AnnotationSource documents the transport's variables.
	AnnotationSource = "gpuctl.dev/source"
	// AnnotationPodInterfaces is, on the NCCL ConfigMap of a
	// GPUDirect-TCPX/TCPXO or RDMA pool, the value the workload pods set as
	// their networking.gke.io/interfaces annotation (with
	// networking.gke.io/default-interface: eth0) to attach the pool's GPU
	// NICs (RDMA NICs) through its GKE Network objects.
	AnnotationPodInterfaces = "gpuctl.dev/pod-interfaces"
)

// Source of the GKE multi-networking objects of the GPU NICs and of the
// pod annotations that use them.
const (
	srcGPUNICNetworks  = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx"
	srcRDMANICNetworks = "https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/1047080375afbb44da4b596be314634e7486af4a/modules/scheduler/gke-cluster/main.tf (2026-06-25)"
)

// gpuNICNetwork is the pair of GKE multi-networking objects of one NIC: a
// GKENetworkParamSet that names its VPC network and subnetwork and how the
// NIC reaches the pod (deviceMode NetDevice: as a kernel network device, as
// GPUDirect-TCPX/TCPXO and the extra gVNIC need; RDMA: as an RDMA device,
// as GPUDirect RDMA needs) and a Network of type Device that refers to it,
// which pods name in networking.gke.io/interfaces. Both are
// cluster-scoped, networking.gke.io/v1.
type gpuNICNetwork struct {
	pool string
	// rdma: the pool's NICs are those of GPUDirect RDMA.
	rdma   bool
	params networkv1.GKENetworkParamSet
	net    networkv1.Network
}

// gpuNICNetworks are the GKE Network objects of every GPUDirect-TCPX/TCPXO
// and RDMA pool, one pair per NIC, in pool and NIC order.
// Sources: https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx
// (create the GKENetworkParamSet and Network objects); for RDMA the objects
// Google's GKE blueprints apply, deviceMode RDMA for the RDMA NICs and
// NetDevice for the gVNIC:
// https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/1047080375afbb44da4b596be314634e7486af4a/modules/scheduler/gke-cluster/main.tf
// (2026-06-25; templates/gke-network-paramset.yaml.tftpl and
// network-object.yaml.tftpl beside it); field names:
// https://github.com/GoogleCloudPlatform/gke-networking-api/tree/v0.2.11/apis/network/v1
func gpuNICNetworks(s *spec.Spec) []gpuNICNetwork {
	var out []gpuNICNetwork
	for i := range s.NodePools {
		p := &s.NodePools[i]
		nics := fabric.SpecNICs(s, p)
		rdma := slices.ContainsFunc(nics, func(n spec.GPUNIC) bool { return n.Kind == spec.NICRDMA })
		for _, n := range nics {
			meta := metav1.ObjectMeta{Name: n.Object, Labels: map[string]string{spec.LabelPool: p.Name, "app.kubernetes.io/managed-by": "gpuctl"}}
			mode := networkv1.NetDevice
			if n.Kind == spec.NICRDMA {
				mode = networkv1.RDMA
			}
			out = append(out, gpuNICNetwork{
				pool: p.Name, rdma: rdma,
				params: networkv1.GKENetworkParamSet{
					TypeMeta:   metav1.TypeMeta{APIVersion: networkv1.GroupVersion.String(), Kind: "GKENetworkParamSet"},
					ObjectMeta: meta,
					Spec:       networkv1.GKENetworkParamSetSpec{VPC: n.Network, VPCSubnet: n.Subnetwork, DeviceMode: mode},
				},
				net: networkv1.Network{
					TypeMeta:   metav1.TypeMeta{APIVersion: networkv1.GroupVersion.String(), Kind: "Network"},
					ObjectMeta: meta,
					Spec: networkv1.NetworkSpec{
						Type:          networkv1.DeviceNetworkType,
						ParametersRef: &networkv1.NetworkParametersReference{Group: networkv1.GroupName, Kind: "GKENetworkParamSet", Name: n.Object},
					},
				},
			})
		}
	}
	return out
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// Images of Google's GPUDirect components, pinned as Google's manifests pin
// them. Source: the manifests that
// https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx
// and https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-rdma
// apply, read at
// https://github.com/GoogleCloudPlatform/container-engine-accelerators/tree/992db81257553607f1477945f1b3219632991829
// (commit of 2026-06-11): gpudirect-tcpx/nccl-tcpx-installer.yaml,
// gpudirect-tcpxo/nccl-tcpxo-installer.yaml,
// gpudirect-rdma/nccl-rdma-installer.yaml and
// nri_device_injector/nri-device-injector.yaml.
// The NCCL plugin installers' images are the matrix's
// (matrix.FabricImages), which pins each beside the receive-path sidecar of
// its release that the workload pods run (internal/fabric).
const (
	// ImageTCPXOPreInstall runs the TCPXO host preparation through
	// nsenter; Google's manifest names the image without a tag or digest.
	ImageTCPXOPreInstall = "ubuntu"
	ImageDeviceInjector  = "gcr.io/gke-release/nri-device-injector@sha256:6e79483d52abdc28454bf186320b10a56b0f117a10e8d65d5c74dbb821a76970"
	ImagePause           = "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"
)

// tcpxoPreInstall is the host preparation of Google's TCPXO installer: open
// the TCP input chain, load the import-helper module and expose the
// aperture devices of the GPU NICs (PCI 1ae0:0084) under /dev/aperture_devices.
const tcpxoPreInstall = `/sbin/iptables -I INPUT -p tcp -m tcp -j ACCEPT && modprobe import-helper
sudo mkdir -p /dev/aperture_devices
while IFS= read -r line; do
  BDF=$( echo "$line" | awk '{print $1}' );
  target_aperture_path="/dev/aperture_devices/$BDF"
  host_aperture_device=$(readlink -f "/sys/bus/pci/devices/$BDF");
  sudo mkdir -p $target_aperture_path;
  sudo umount -R $target_aperture_path;
  sudo mount --bind $host_aperture_device $target_aperture_path;
done < <(lspci -nn -D | grep '1ae0:0084')
if [ -d /dev/aperture_devices ]; then
    chmod -R a+r /dev/aperture_devices/
    chmod a+rw /dev/aperture_devices/*/resource*
fi
`

// gkeGPUTaint is the taint GKE puts on GPU nodes itself (in every cluster
// with a non-GPU pool), whether or not the spec lists it.
// Source: https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#create
var gkeGPUTaint = spec.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}

// transportPools returns the pools of each GKE transport (fabric -> pools),
// in spec order.
func transportPools(s *spec.Spec) map[string][]spec.NodePool {
	out := map[string][]spec.NodePool{}
	if s.Provider != spec.ProviderGKE {
		return out
	}
	for _, p := range s.NodePools {
		if p.AutoProvisioned {
			continue // no gpuctl.dev/pool label from gpuctl's Terraform
		}
		if t, ok := matrix.PoolTransport(s.Provider, &p); ok {
			out[t.Fabric] = append(out[t.Fabric], withGKEGPUTaint(p))
		}
	}
	return out
}

// transportDaemonSets are the GPUDirect components of the GKE pools, one
// DaemonSet per component for all pools that need it, each selecting
// those pools' nodes (gpuctl.dev/pool) and tolerating their taints (Google's
// manifests select by accelerator and tolerate every taint): the NCCL
// plugin installer of GPUDirect-TCPX, -TCPXO and RDMA (gIB), and the NRI
// device injector that TCPX and TCPXO workloads use to reach the GPUs from
// the RxDM sidecar without privilege.
func transportDaemonSets(s *spec.Spec) []appsv1.DaemonSet {
	tp := transportPools(s)
	var out []appsv1.DaemonSet
	varLib := hostPathVolume("var-lib", "/var/lib", nil)
	libDir := hostPathVolume("library-dir-host", "/home/kubernetes/bin", nil)
	installMounts := []corev1.VolumeMount{{Name: "var-lib", MountPath: "/var/lib"}, {Name: "library-dir-host", MountPath: "/usr/local"}}
	if pools := tp[matrix.FabricTCPX]; len(pools) > 0 {
		out = append(out, installerDaemonSet("nccl-tcpx-installer", pools,
			[]corev1.Volume{varLib, hostPathVolume("tcpx", "/var/lib/tcpx", nil), libDir},
			[]corev1.Container{installer("nccl-tcpx-installer", installerImage(matrix.FabricTCPX), installMounts,
				"set -ex\n/scripts/container_entry.sh install --install-nccl\nmkdir -p /usr/local/nvidia/lib64\ncp -r /var/lib/tcpx/lib64/. /usr/local/nvidia/lib64\necho \"installation finishes\"\n")}))
	}
	if pools := tp[matrix.FabricTCPXO]; len(pools) > 0 {
		pre := corev1.Container{
			Name: "pre-installation", Image: ImageTCPXOPreInstall,
			Command:         []string{"nsenter", "-at", "1", "--", "sh", "-c", tcpxoPreInstall},
			SecurityContext: &corev1.SecurityContext{Privileged: ptrTo(true)},
		}
		out = append(out, installerDaemonSet("nccl-tcpxo-installer", pools,
			[]corev1.Volume{varLib, hostPathVolume("tcpxo", "/var/lib/tcpxo", nil), libDir},
			[]corev1.Container{pre, installer("nccl-tcpxo-installer", installerImage(matrix.FabricTCPXO), installMounts,
				"set -ex\nchmod 755 /scripts/container_entry.sh\n/scripts/container_entry.sh install --install-nccl\nmkdir -p /usr/local/nvidia/lib64\ncp -r /var/lib/tcpxo/lib64/. /usr/local/nvidia/lib64\necho \"installation finishes\"\n")}))
	}
	if pools := tp[matrix.FabricRoCE]; len(pools) > 0 {
		dirOrCreate := corev1.HostPathDirectoryOrCreate
		out = append(out, installerDaemonSet("nccl-rdma-installer", pools,
			[]corev1.Volume{hostPathVolume("library-dir-host", "/home/kubernetes/bin/nvidia/lib64", &dirOrCreate), hostPathVolume("gib", "/home/kubernetes/bin/gib", nil)},
			[]corev1.Container{installer("nccl-rdma-installer", installerImage(matrix.FabricRoCE),
				[]corev1.VolumeMount{{Name: "library-dir-host", MountPath: "/usr/local/home/kubernetes/bin/nvidia/lib64"}, {Name: "gib", MountPath: "/usr/local/home/kubernetes/bin/gib"}},
				"set -ex\n/scripts/container_entry.sh install\ncp -r /var/lib/gib/lib64/. /usr/local/home/kubernetes/bin/nvidia/lib64\ncp -r /var/lib/gib/. /usr/local/home/kubernetes/bin/gib\necho \"installation finishes\"\n")}))
	}
	if pools := append(append([]spec.NodePool(nil), tp[matrix.FabricTCPX]...), tp[matrix.FabricTCPXO]...); len(pools) > 0 {
		ds := daemonSet("device-injector", pools, []corev1.Volume{hostPathVolume("nri", "/var/run/nri", nil), hostPathVolume("dev", "/dev", nil)})
		ds.Spec.Template.Spec.Containers = []corev1.Container{{
			Name: "device-injector", Image: ImageDeviceInjector,
			Resources:       corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("150m")}},
			SecurityContext: &corev1.SecurityContext{Privileged: ptrTo(true)},
			VolumeMounts:    []corev1.VolumeMount{{Name: "dev", MountPath: "/dev"}, {Name: "nri", MountPath: "/var/run/nri"}},
		}}
		out = append(out, ds)
	}
	return out
}

// TransportComponentNamespace is where the GPUDirect DaemonSets run, as in
// Google's manifests.
const TransportComponentNamespace = "kube-system"

// daemonSet is the frame of a GPUDirect DaemonSet: kube-system,
// system-node-critical, host network and PID namespace, on the pools'
// nodes only and tolerating their taints.
func daemonSet(name string, pools []spec.NodePool, volumes []corev1.Volume) appsv1.DaemonSet {
	names := make([]string, len(pools))
	for i, p := range pools {
		names[i] = p.Name
	}
	sel := map[string]string{"k8s-app": name}
	return appsv1.DaemonSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: TransportComponentNamespace,
			Labels: map[string]string{"k8s-app": name, "app.kubernetes.io/managed-by": "gpuctl"}},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: sel},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"k8s-app": name, "name": name}},
				Spec: corev1.PodSpec{
					PriorityClassName: "system-node-critical",
					Affinity:          poolAffinity(names),
					Tolerations:       tolerationsFor(pools, true),
					HostNetwork:       true,
					HostPID:           true,
					Volumes:           volumes,
				},
			},
		},
	}
}

// installerDaemonSet runs the install steps as init containers, then a
// pause container that keeps the pod (and so the installation) in place.
func installerDaemonSet(name string, pools []spec.NodePool, volumes []corev1.Volume, inits []corev1.Container) appsv1.DaemonSet {
	ds := daemonSet(name, pools, volumes)
	ds.Spec.Template.Spec.InitContainers = inits
	ds.Spec.Template.Spec.Containers = []corev1.Container{{Name: "pause", Image: ImagePause}}
	return ds
}

// installerImage is the NCCL plugin installer image the matrix pins for
// GKE fabric f; every GKE GPUDirect fabric has a row (matrix's index holds
// the rows, TestFabricImages each fabric's).
func installerImage(f string) string {
	im, _ := matrix.FabricImages(f)
	return im.Installer
}

func installer(name, image string, mounts []corev1.VolumeMount, script string) corev1.Container {
	return corev1.Container{
		Name: name, Image: image,
		Command:         []string{"/bin/sh", "-c"},
		Args:            []string{script},
		Resources:       corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("150m")}},
		SecurityContext: &corev1.SecurityContext{Privileged: ptrTo(true)},
		VolumeMounts:    mounts,
	}
}

func hostPathVolume(name, path string, typ *corev1.HostPathType) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: typ}}}
}

func ptrTo[T any](v T) *T { return &v }

// efaPools are the EKS pools with EFA interfaces, whose pods request
// vpc.amazonaws.com/efa from the EFA device plugin.
func efaPools(s *spec.Spec) []*spec.NodePool {
	if s.Provider != spec.ProviderEKS {
		return nil
	}
	return poolsWhere(s, func(p *spec.NodePool) bool { return p.EFA.Enabled })
}

// efaDevicePluginValues select the EFA pools by their gpuctl.dev/pool label
// (the chart's supportedInstanceLabels become its node affinity: one term
// per key, each "key In values") and tolerate their taints.
func efaDevicePluginValues(pools []*spec.NodePool) EFADevicePluginValues {
	names := make([]string, len(pools))
	ps := make([]spec.NodePool, len(pools))
	for i, p := range pools {
		names[i] = p.Name
		ps[i] = *p
	}
	slices.Sort(names)
	return EFADevicePluginValues{
		SupportedInstanceLabels: EFAInstanceLabels{Keys: []string{spec.LabelPool}, Values: names},
		Tolerations:             tolerationsFor(ps, true),
	}
}

// EFADevicePluginValues are the values gpuctl sets on the
// aws-efa-k8s-device-plugin chart.
// Source: https://github.com/aws/eks-charts/tree/master/stable/aws-efa-k8s-device-plugin
type EFADevicePluginValues struct {
	SupportedInstanceLabels EFAInstanceLabels   `json:"supportedInstanceLabels"`
	Tolerations             []corev1.Toleration `json:"tolerations"`
}

// EFAInstanceLabels are the node labels the chart's DaemonSet requires:
// for each key, a node affinity term "key In values".
type EFAInstanceLabels struct {
	Keys   []string `json:"keys"`
	Values []string `json:"values"`
}

// podSecurityLevel is the Pod Security level of team t's namespace and
// why: restricted, unless the NCCL transport of a pool the team may use
// (spec.teams[].pools; every pool when it lists none) needs workloads that
// restricted (and baseline) reject; the most permissive level any of its
// pools needs applies.
//   - GPUDirect-TCPX and -TCPXO: the workload pod runs the RxDM sidecar
//     (tcpgpudmarxd) with NET_ADMIN (TCPX: privileged), the NCCL container
//     needs IPC_LOCK, and both mount the plugin libraries from the host
//     (hostPath); baseline allows none of these.
//   - GPUDirect RDMA (gIB): the workload mounts the gIB plugin and the
//     driver libraries from the host (hostPath), which baseline rejects.
//   - EFA: the EFA device plugin hands the devices to the pod; restricted
//     is enough.
//
// Sources: https://kubernetes.io/docs/concepts/security/pod-security-standards/,
// https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx,
// https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-rdma
func podSecurityLevel(s *spec.Spec, t spec.Team) (level, reason string) {
	var why, others []string
	tp := transportPools(s)
	for _, f := range []struct{ fabric, what string }{
		{matrix.FabricTCPX, "GPUDirect-TCPX runs the RxDM sidecar privileged and the NCCL container with IPC_LOCK, both with host paths"},
		{matrix.FabricTCPXO, "GPUDirect-TCPXO runs the RxDM sidecar with NET_ADMIN and host paths"},
		{matrix.FabricRoCE, "GPUDirect RDMA (gIB) mounts the NCCL plugin and driver libraries from host paths"},
	} {
		for _, p := range tp[f.fabric] {
			if !t.Uses(p.Name) {
				others = append(others, p.Name)
				continue
			}
			why = append(why, "pool "+p.Name+": "+f.what)
		}
	}
	if len(why) > 0 {
		return "privileged", "Pod Security privileged, not restricted: " + strings.Join(why, "; ") + ", which restricted and baseline reject."
	}
	if len(t.Pools) == 0 {
		return "restricted", "Pod Security restricted: no pool's NCCL transport needs more."
	}
	reason = "Pod Security restricted: the NCCL transports of the team's pools (" + strings.Join(t.Pools, ", ") + ") need no more"
	if len(others) > 0 {
		reason += "; " + strings.Join(others, ", ") + ", whose transport needs privileged, is not among them (spec teams[].pools)"
	}
	return "restricted", reason + "."
}
