package hclgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// GKE driver installation values of guest_accelerator.gpu_driver_installation_config.
// Source: https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#installing_drivers
// GPU_DRIVER_VERSION_UNSPECIFIED, GKE's version-dependent default, is
// allowed only for pools whose spec gives neither a driver nor a
// kubernetesVersion.
var gkeDriverVersions = []string{"DEFAULT", "LATEST", "INSTALLATION_DISABLED"}

// taintEffects maps Kubernetes taint effects to the GKE and EKS APIs' (both
// spell them the same way).
var taintEffects = map[string]string{"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}

// gkeGVNICPrefixes are the machine series that need gVNIC (A3/A4 GPUDirect
// networking and G4); other pools get it when their NCCL plugin needs it.
// Source: https://cloud.google.com/compute/docs/networking/using-gvnic
var gkeGVNICPrefixes = []string{"a3-", "a4-", "a4x-", "g4-"}

func (g *gen) gke() error {
	g.requiredProviders("google", "hashicorp/google", GoogleProviderVersion)
	g.commonVariables()
	v := g.variables()
	variable(v, "project_id", "Project of the cluster; null uses the provider's project.", "string", cty.NullVal(cty.String))
	variable(v, "location", "Location (region or zone) of the cluster.", "string", cty.StringVal(g.s.Region),
		[2]string{`length(var.location) > 0`, "location must not be empty."})
	variable(v, "node_service_account", "Service account of the GPU nodes; null uses the Compute Engine default (give nodes a dedicated, least-privilege one).", "string", cty.NullVal(cty.String))

	var created []*pool
	for _, p := range g.ps {
		if p.AutoProvisioned {
			// Node auto-provisioning creates this pool; Terraform must not.
			comment(g.nodePools(), fmt.Sprintf("Pool %s is created by GKE node auto-provisioning (autoProvisioned: true): no google_container_node_pool.", p.Name))
			g.nodePools().AppendNewline()
			continue
		}
		if err := g.gkePool(p); err != nil {
			return err
		}
		created = append(created, p)
		g.flush()
	}

	names := g.outputs().AppendNewBlock("output", []string{"node_pool_names"}).Body()
	names.SetAttributeValue("description", cty.StringVal("Names of the GPU node pools, by spec pool name."))
	names.SetAttributeRaw("value", poolMapExpr(created, func(p *pool) string { return "google_container_node_pool." + p.id + ".name" }))
	g.outputs().AppendNewline()
	g.maintenanceOutput("Maintenance windows the spec asks for. On GKE a maintenance window is a cluster setting (google_container_cluster.maintenance_policy), not a node pool one: the cluster's owners must set it there.")
	return nil
}

// poolMapExpr is `{ "pool-name" = <ref>, ... }` over every pool.
func (g *gen) poolMapExpr(ref func(*pool) string) raw { return poolMapExpr(g.ps, ref) }

// poolMapExpr is `{ "pool-name" = <ref>, ... }` in pool order.
func poolMapExpr(ps []*pool, ref func(*pool) string) raw {
	keys, vals := make([]string, len(ps)), make([]string, len(ps))
	for i, p := range ps {
		keys[i], vals[i] = quote(p.Name), ref(p)
	}
	return mapRaw(keys, vals)
}

// gkePool writes pool p: its accelerator and driver variables and its
// google_container_node_pool.
func (g *gen) gkePool(p *pool) error {
	if p.gpuCount <= 0 {
		return fmt.Errorf("pool %s: GPU count unknown for machine type %q; set gpu.count", p.Name, p.MachineType)
	}
	if p.gpuType == "" {
		return fmt.Errorf("pool %s: accelerator type unknown for machine type %q; set gpu.type to the GKE accelerator type (nvidia-...)", p.Name, p.MachineType)
	}
	vars := gkePoolVars{typ: p.id + "_gpu_type", count: p.id + "_gpu_count", driver: p.id + "_gpu_driver_version"}
	g.gkeAcceleratorVariables(p, vars)
	driver := g.gkeDriverVariable(p, vars.driver)
	body := g.nodePools()
	if p.MaintenanceWindow != "" {
		comment(body, fmt.Sprintf("Maintenance window %q: a cluster setting on GKE, see output maintenance_windows.", p.MaintenanceWindow))
	}
	r := body.AppendNewBlock("resource", []string{"google_container_node_pool", p.id}).Body()
	g.gkePoolPlacement(r, p)
	g.gkeScaling(r, p)
	if err := g.gkeNodeConfig(r, p, vars, driver); err != nil {
		return err
	}
	if gkeCompactPlacement(p) {
		// Multi-node training: keep the nodes close for NCCL.
		pp := r.AppendNewBlock("placement_policy", nil).Body()
		pp.SetAttributeValue("type", cty.StringVal("COMPACT"))
	}
	if p.Capacity == spec.CapacityQueued {
		// Nodes only for ProvisioningRequests (Kueue's admission check).
		qp := r.AppendNewBlock("queued_provisioning", nil).Body()
		qp.SetAttributeValue("enabled", cty.True)
	}
	lc := r.AppendNewBlock("lifecycle", nil).Body()
	if g.s.KubernetesVersion != "" && g.gkeAutoUpgrade(p) {
		lc.SetAttributeRaw("ignore_changes", expr("[version]"))
	}
	if err := g.driverGuard(p, lc); err != nil {
		return err
	}
	if lc.empty() {
		r.removeLast() // the lifecycle block
	}
	body.AppendNewline()
	return nil
}

// gkeFlexCompactPrefixes are the machine types on which a flex-start pool
// may have a COMPACT placement policy (A3 Ultra, A4, H4D), as
// cluster-toolkit's gke-node-pool module allows.
// Source: https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/1047080375afbb44da4b596be314634e7486af4a/modules/compute/gke-node-pool/main.tf
// ("Compact placement with DWS Flex start is only supported for A3 Ultra,
// A4, and H4D machine types"), checked 2026-12-03.
var gkeFlexCompactPrefixes = []string{"a3-ultragpu-", "a4-", "h4d-"}

// gkeCompactPlacement reports whether the pool gets a COMPACT placement
// policy: a multi-node training pool in one zone whose capacity allows it.
// Not with a reservation (the reservation fixes where its VMs are; Google's
// A3 Mega, A3 Ultra and A4 blueprints consume their reservation without a
// placement policy), not with queued provisioning (GKE rejects COMPACT
// there for GPUs), and with flex-start only on gkeFlexCompactPrefixes.
// Sources: cluster-toolkit examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml and
// modules/compute/gke-node-pool/main.tf at 1047080375afbb44da4b596be314634e7486af4a.
func gkeCompactPlacement(p *pool) bool {
	if p.Role != spec.RoleTraining || p.Autoscaling.Max <= 1 || len(p.Zones) > 1 {
		return false
	}
	switch p.Capacity {
	case spec.CapacityReservation, spec.CapacityQueued:
		return false
	case spec.CapacityFlexStart:
		return slices.ContainsFunc(gkeFlexCompactPrefixes, func(pre string) bool { return strings.HasPrefix(p.MachineType, pre) })
	}
	return true
}

// gkePoolVars are the names of a GKE pool's variables: <pool>_gpu_type,
// <pool>_gpu_count and <pool>_gpu_driver_version.
type gkePoolVars struct{ typ, count, driver string }

// gkeAcceleratorVariables writes the accelerator type and count variables,
// held to the machine type's accelerator where the catalogue knows it.
func (g *gen) gkeAcceleratorVariables(p *pool, vars gkePoolVars) {
	v := g.variables()
	typeVar, countVar := vars.typ, vars.count
	typeChecks := [][2]string{{fmt.Sprintf(`can(regex("^nvidia-[a-z0-9-]+$", var.%s))`, typeVar), typeVar + " must be a GKE accelerator type such as nvidia-l4."}}
	countChecks := [][2]string{{fmt.Sprintf("var.%s >= 1 && floor(var.%[1]s) == var.%[1]s", countVar), countVar + " must be a whole number of GPUs, at least 1."}}
	if p.known && p.machine.AcceleratorType != "" {
		typeChecks = append(typeChecks, [2]string{fmt.Sprintf("var.%s == %s", typeVar, quote(p.machine.AcceleratorType)),
			fmt.Sprintf("Machine type %s comes with %s GPUs only.", p.MachineType, p.machine.AcceleratorType)})
		if p.machine.GPUCount > 0 {
			countChecks = append(countChecks, [2]string{fmt.Sprintf("var.%s == %d", countVar, p.machine.GPUCount),
				fmt.Sprintf("Machine type %s has exactly %d GPUs.", p.MachineType, p.machine.GPUCount)})
		}
	}
	variable(v, typeVar, fmt.Sprintf("GKE accelerator type of pool %s.", p.Name), "string", cty.StringVal(p.gpuType), typeChecks...)
	variable(v, countVar, fmt.Sprintf("GPUs per node of pool %s.", p.Name), "number", cty.NumberIntVal(int64(p.gpuCount)), countChecks...)
}

// gkeDriverVariable writes the driver installation variable driverVar
// (<pool>_gpu_driver_version) and returns its default. An exact version is installed by someone else (GPU Operator,
// Google's installer DaemonSet): GKE must not install one too. Unset: what
// GKE installs by default for the cluster's version, as validate judges it
// (DEFAULT from 1.30.1-gke.1156000 on, none before), written out so the
// Terraform says what validate judged. Plan compares the same value: a
// change replaces the pool.
func (g *gen) gkeDriverVariable(p *pool, driverVar string) string {
	driver := matrix.GKEDriverInstallation(g.s.KubernetesVersion, p.GPU.Driver)
	allowed, allowedText := gkeDriverVersions, "DEFAULT, LATEST or INSTALLATION_DISABLED"
	if driver == "GPU_DRIVER_VERSION_UNSPECIFIED" {
		allowed, allowedText = append(allowed[:len(allowed):len(allowed)], driver), "DEFAULT, LATEST, INSTALLATION_DISABLED or GPU_DRIVER_VERSION_UNSPECIFIED"
	}
	driverChecks := [][2]string{{fmt.Sprintf("contains([%s], var.%s)", quoteList(allowed), driverVar), driverVar + " must be " + allowedText + "."}}
	if p.OSImage != "" && !strings.HasPrefix(p.OSImage, "COS") { // unset: GKE's default image, COS_CONTAINERD
		driverChecks = append(driverChecks, [2]string{fmt.Sprintf(`var.%s != "LATEST"`, driverVar), "LATEST is a COS-only driver version; this pool's image is " + p.OSImage + "."})
	}
	if g.s.NVIDIAPlugin(p.NodePool) {
		driverChecks = append(driverChecks, [2]string{fmt.Sprintf(`var.%s == "INSTALLATION_DISABLED"`, driverVar),
			"Pool " + p.Name + " runs NVIDIA's device plugin: GKE must not install the driver and its own plugin (set INSTALLATION_DISABLED)."})
	}
	variable(g.variables(), driverVar, fmt.Sprintf("How GKE installs the NVIDIA driver on pool %s.", p.Name), "string", cty.StringVal(driver), driverChecks...)
	return driver
}

// gkePoolPlacement writes a node pool's name, cluster, locations and
// version.
func (g *gen) gkePoolPlacement(r *body, p *pool) {
	r.SetAttributeValue("name", cty.StringVal(p.Name))
	r.SetAttributeTraversal("project", varRef("project_id"))
	r.SetAttributeTraversal("cluster", varRef("cluster_name"))
	r.SetAttributeTraversal("location", varRef("location"))
	if len(p.Zones) > 0 {
		r.SetAttributeValue("node_locations", stringList(p.Zones))
	}
	if g.s.KubernetesVersion != "" {
		// The node version binds where nothing else moves it: without
		// auto-upgrade Terraform keeps the nodes at kubernetes_version. With
		// auto-upgrade (always on in a release channel) GKE moves the nodes
		// within the channel, so the version is where the pool starts and
		// Terraform ignores later drift instead of fighting the upgrades.
		// Source: https://registry.terraform.io/providers/hashicorp/google/latest/docs/resources/container_node_pool#version
		r.SetAttributeTraversal("version", varRef("kubernetes_version"))
	}
}

// gkeScaling writes a node pool's autoscaling, management and
// upgrade_settings.
func (g *gen) gkeScaling(r *body, p *pool) {
	as := r.AppendNewBlock("autoscaling", nil).Body()
	as.SetAttributeValue("total_min_node_count", cty.NumberIntVal(int64(p.Autoscaling.Min)))
	as.SetAttributeValue("total_max_node_count", cty.NumberIntVal(int64(p.Autoscaling.Max)))
	policy := "BALANCED"
	if p.Capacity == spec.CapacitySpot || p.FlexStart() {
		// spot and flex-start capacity: take whichever zone has it
		// (GKE's flex-start guides create the pools with
		// --location-policy=ANY).
		policy = "ANY"
	}
	as.SetAttributeValue("location_policy", cty.StringVal(policy))

	mg := r.AppendNewBlock("management", nil).Body()
	// Flex-start nodes cannot be auto-repaired (GKE: --no-enable-autorepair;
	// validate's GKE-FLEX-START refuses autoRepair: true).
	mg.SetAttributeValue("auto_repair", cty.BoolVal(!p.FlexStart() && spec.EnabledOr(p.AutoRepair, true)))
	mg.SetAttributeValue("auto_upgrade", cty.BoolVal(g.gkeAutoUpgrade(p)))

	// Surge upgrade: a training pool's scarce GPUs are replaced in place
	// (no surge node), an inference pool's with one surge node;
	// rollout.maxUnavailable sets how many may be out of service at once
	// (matrix.PoolUpgrade, which plan's rollout steps follow too).
	up := matrix.PoolUpgrade(spec.ProviderGKE, p.NodePool)
	us := r.AppendNewBlock("upgrade_settings", nil).Body()
	us.SetAttributeValue("strategy", cty.StringVal("SURGE"))
	us.SetAttributeValue("max_surge", cty.NumberIntVal(int64(up.MaxSurge)))
	us.SetAttributeValue("max_unavailable", cty.NumberIntVal(int64(up.MaxUnavailable)))
}

// gkeLocalStorage writes the pool's effective localStorage raid0
// (matrix.EffectiveLocalStorage: asked, or a training pool on a machine
// with Local SSDs) as ephemeral_storage_local_ssd_config, which puts the
// node's Local SSDs in one RAID-0 array for the kubelet and container
// runtime: local_ssd_count is the machine's count from the matrix (as
// cluster-toolkit's A3 Mega, A3 Ultra and A4 blueprints write it); 0 on a
// machine with Local SSDs whose count the matrix lacks (GKE: all of
// them); on a machine that takes Local SSDs only when asked, a comment.
// Source: https://cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/local-ssd (2026-12-03).
func gkeLocalStorage(nc *body, p *pool) {
	if matrix.EffectiveLocalStorage(spec.ProviderGKE, p.NodePool) != spec.LocalStorageRAID0 {
		return
	}
	d, _ := matrix.LookupLocalDisks(spec.ProviderGKE, p.MachineType)
	if !d.Fixed {
		comment(nc, "localStorage raid0: "+p.MachineType+" has no Local SSDs unless the pool attaches them, and gpuctl's matrix has no count for it; set ephemeral_storage_local_ssd_config { local_ssd_count = N }.")
		return
	}
	ls := nc.AppendNewBlock("ephemeral_storage_local_ssd_config", nil).Body()
	ls.SetAttributeValue("local_ssd_count", cty.NumberIntVal(int64(d.Count)))
}

// gkeNodeConfig writes a node pool's node_config (and its additional
// networks, on r): machine, labels, capacity, identity, shielded boot,
// gVNIC, taints and the guest accelerator. driver is the pool's driver
// installation.
func (g *gen) gkeNodeConfig(r *body, p *pool, vars gkePoolVars, driver string) error {
	nc := r.AppendNewBlock("node_config", nil).Body()
	nc.SetAttributeValue("machine_type", cty.StringVal(p.MachineType))
	if p.OSImage != "" {
		nc.SetAttributeValue("image_type", cty.StringVal(p.OSImage))
	}
	if p.DiskSizeGB > 0 {
		nc.SetAttributeValue("disk_size_gb", cty.NumberIntVal(int64(p.DiskSizeGB)))
	}
	if p.DiskType != "" {
		nc.SetAttributeValue("disk_type", cty.StringVal(p.DiskType))
	}
	gkeLocalStorage(nc, p)
	g.setLabels(nc, "labels", p)
	if len(g.s.Tags) > 0 {
		nc.SetAttributeRaw("resource_labels", mapTokens(g.s.PoolTags(p.NodePool)))
	}
	gkeCapacity(nc, p)
	nc.SetAttributeTraversal("service_account", varRef("node_service_account"))
	nc.SetAttributeValue("oauth_scopes", stringList([]string{"https://www.googleapis.com/auth/cloud-platform"}))
	wm := nc.AppendNewBlock("workload_metadata_config", nil).Body()
	wm.SetAttributeValue("mode", cty.StringVal("GKE_METADATA"))
	sh := nc.AppendNewBlock("shielded_instance_config", nil).Body()
	// Secure boot only loads signed kernel modules: GKE's drivers are signed,
	// a driver built on the node (GPU Operator on Ubuntu) is not.
	sh.SetAttributeValue("enable_secure_boot", cty.BoolVal(driver != "INSTALLATION_DISABLED"))
	sh.SetAttributeValue("enable_integrity_monitoring", cty.True)
	if g.gkeNeedsGVNIC(p) {
		gv := nc.AppendNewBlock("gvnic", nil).Body()
		gv.SetAttributeValue("enabled", cty.True)
	}
	if l := nicLayout(p); l.Len() > 0 {
		g.gpuNICNetworks(r, p, l)
	}
	if err := gkeTaints(nc, p); err != nil {
		return err
	}
	g.gkeAccelerator(nc, p, vars)
	return nil
}

// gkeCapacity writes spot, flex-start (with no reservation, as GKE
// requires) or the reservation a node pool consumes.
// Sources: https://cloud.google.com/kubernetes-engine/docs/how-to/dws-flex-start-training,
// https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest (2026-12-03)
func gkeCapacity(nc *body, p *pool) {
	switch p.Capacity {
	case spec.CapacitySpot:
		nc.SetAttributeValue("spot", cty.True)
	case spec.CapacityFlexStart, spec.CapacityQueued:
		nc.SetAttributeValue("flex_start", cty.True)
		ra := nc.AppendNewBlock("reservation_affinity", nil).Body()
		ra.SetAttributeValue("consume_reservation_type", cty.StringVal("NO_RESERVATION"))
	case spec.CapacityReservation:
		ra := nc.AppendNewBlock("reservation_affinity", nil).Body()
		ra.SetAttributeValue("consume_reservation_type", cty.StringVal("SPECIFIC_RESERVATION"))
		ra.SetAttributeValue("key", cty.StringVal("compute.googleapis.com/reservation-name"))
		ra.SetAttributeValue("values", stringList([]string{p.Reservation}))
	}
}

// gkeTaints writes a node config's taint blocks.
func gkeTaints(nc *body, p *pool) error {
	for _, t := range p.Taints {
		tb := nc.AppendNewBlock("taint", nil).Body()
		tb.SetAttributeValue("key", cty.StringVal(t.Key))
		tb.SetAttributeValue("value", cty.StringVal(t.Value))
		eff, ok := taintEffects[t.Effect]
		if !ok {
			return fmt.Errorf("pool %s: taint effect %q: want NoSchedule, PreferNoSchedule or NoExecute", p.Name, t.Effect)
		}
		tb.SetAttributeValue("effect", cty.StringVal(eff))
	}
	return nil
}

// gkeSharing are GKE's GPU sharing strategies by spec strategy (MIG is a
// partition size, not a sharing strategy).
var gkeSharing = map[string]string{spec.SharingTimeSlicing: "TIME_SHARING", spec.SharingMPS: "MPS"}

// gkeAccelerator writes a node config's guest_accelerator: the type and
// count variables, the MIG partition size, the driver installation and,
// where GKE's own device plugin serves the pool, its GPU sharing.
func (g *gen) gkeAccelerator(nc *body, p *pool, vars gkePoolVars) {
	ga := nc.AppendNewBlock("guest_accelerator", nil).Body()
	ga.SetAttributeTraversal("type", varRef(vars.typ))
	ga.SetAttributeTraversal("count", varRef(vars.count))
	gkePlugin := !g.s.NVIDIAPlugin(p.NodePool)
	if gkePlugin && p.SharingStrategy() == spec.SharingMIG && p.GPU.Sharing.MIGProfile != "" {
		ga.SetAttributeValue("gpu_partition_size", cty.StringVal(p.GPU.Sharing.MIGProfile))
	}
	di := ga.AppendNewBlock("gpu_driver_installation_config", nil).Body()
	di.SetAttributeTraversal("gpu_driver_version", varRef(vars.driver))
	if strategy := gkeSharing[p.SharingStrategy()]; gkePlugin && strategy != "" {
		gs := ga.AppendNewBlock("gpu_sharing_config", nil).Body()
		gs.SetAttributeValue("gpu_sharing_strategy", cty.StringVal(strategy))
		gs.SetAttributeValue("max_shared_clients_per_gpu", cty.NumberIntVal(int64(p.GPU.Sharing.Replicas)))
	}
}

// gkeAutoUpgrade is management.auto_upgrade: the spec's autoUpgrade where
// the platform honours it, true otherwise. GKE enforces auto-upgrade on
// clusters enrolled in a release channel.
// Source: https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-upgrades
func (g *gen) gkeAutoUpgrade(p *pool) bool { return matrix.GKEAutoUpgrade(g.s, p.NodePool) }

func (g *gen) gkeNeedsGVNIC(p *pool) bool {
	for _, pre := range gkeGVNICPrefixes {
		if strings.HasPrefix(p.MachineType, pre) {
			return true
		}
	}
	switch p.NCCL.Plugin {
	case "tcpx", "tcpxo", "gib":
		return true
	}
	return false
}

// nicLayout is the additional NICs (additional node networks) a GKE pool
// needs for its GPUDirect-TCPX/TCPXO or RDMA NCCL net plugin
// (matrix.PoolNICs).
func nicLayout(p *pool) spec.NICLayout { return matrix.PoolNICs(spec.ProviderGKE, p.NodePool) }

const gpuNICSource = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx"

// Sources of the GPUDirect RDMA networks: Google's GKE blueprints for A3
// Ultra and A4 attach one extra gVNIC network (net-1) and then the 8
// subnetworks of one VPC network with the RDMA (RoCE) network profile
// (rdma-net, module gpu-rdma-vpc) to the node pool, in that order.
const (
	rdmaNICSource = "https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/1047080375afbb44da4b596be314634e7486af4a/examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml" +
		" (2026-06-25; examples/gke-a4/gke-a4.yaml and modules/network/gpu-rdma-vpc/main.tf alike)"
	rdmaProfileSource = "https://cloud.google.com/vpc/docs/rdma-network-profiles"
)

// gpuNICNetworks writes the pool's additional node networks, one
// network_config.additional_node_network_configs block per NIC in NIC
// order, from variables whose defaults are the names of the GKE Network
// objects gpuctl writes for the pool (nccl.yaml): one spec.GPUNICs for
// both. GPUDirect-TCPX/TCPXO move NCCL traffic over the GPU NICs, each in
// its own VPC network; GPUDirect RDMA over the RDMA NICs, all in one VPC
// network with the RoCE profile, after the machine's second gVNIC. Without
// them NCCL falls back to the primary NIC.
func (g *gen) gpuNICNetworks(r *body, p *pool, l spec.NICLayout) {
	nics := g.s.GPUNICs(p.NodePool, l)
	defaults := func(kind spec.NICKind) cty.Value {
		var def []cty.Value
		for _, nic := range nics {
			if nic.Kind == kind {
				def = append(def, cty.ObjectVal(map[string]cty.Value{"network": cty.StringVal(nic.Network), "subnetwork": cty.StringVal(nic.Subnetwork)}))
			}
		}
		return cty.ListVal(def)
	}
	const netType = "list(object({ network = string, subnetwork = string }))"
	gpuVar, gvnicVar := p.id+"_gpu_nic_networks", p.id+"_gvnic_networks"
	if l.GVNICs > 0 {
		variable(g.variables(), gvnicVar,
			fmt.Sprintf("The VPC networks and subnetworks of pool %s's gVNICs besides the primary one (%s on %s), one per NIC: regular VPC networks, not the RDMA one; gpuctl creates none of them. The default names are the ones the GKENetworkParamSet objects of nccl.yaml reference: a list of other names here needs the same names there. Source: %s", p.Name, interfaces(1, l.GVNICs), p.MachineType, rdmaNICSource),
			netType, defaults(spec.NICGVNIC),
			[2]string{fmt.Sprintf("length(var.%s) == %d", gvnicVar, l.GVNICs), fmt.Sprintf("%s has %d gVNIC(s) besides the primary one.", p.MachineType, l.GVNICs)})
	}
	if l.RDMA {
		first := l.GVNICs + 1
		variable(g.variables(), gpuVar,
			fmt.Sprintf("The VPC network and the %d subnetworks of pool %s's RDMA NICs (GPUDirect RDMA), one subnetwork per NIC, in NIC order (%s): one VPC network created with the RDMA network profile of the pool's zone (<zone>-vpc-roce; the profile is zonal, so the pool's nodes must all be in that zone), its subnetworks in the pool's region; gpuctl creates none of them. The default names are the ones the GKENetworkParamSet objects of nccl.yaml reference: a list of other names here needs the same names there. Sources: %s, %s", l.GPU, p.Name, interfaces(first, first+l.GPU-1), rdmaNICSource, rdmaProfileSource),
			netType, defaults(spec.NICRDMA),
			[2]string{fmt.Sprintf("length(var.%s) == %d", gpuVar, l.GPU), fmt.Sprintf("GPUDirect RDMA on %s needs exactly %d RDMA NIC subnetworks.", p.MachineType, l.GPU)},
			[2]string{fmt.Sprintf("length(distinct([for n in var.%s : n.network])) == 1", gpuVar), "The RDMA NICs of a node sit in one VPC network (with the RDMA network profile)."},
			[2]string{fmt.Sprintf("length(distinct([for n in var.%s : n.subnetwork])) == length(var.%[1]s)", gpuVar), "Each RDMA NIC needs a subnetwork of its own."})
	} else {
		variable(g.variables(), gpuVar,
			fmt.Sprintf("The %d VPC networks and subnetworks of pool %s's GPU NICs (GPUDirect-%s), one per NIC, in NIC order (eth1..eth%d); gpuctl creates none of them. The default names are the ones the GKENetworkParamSet objects of nccl.yaml reference: a list of other names here needs the same names there. Source: %s", l.GPU, p.Name, strings.ToUpper(p.NCCL.Plugin), l.GPU, gpuNICSource),
			netType, defaults(spec.NICGPU),
			[2]string{fmt.Sprintf("length(var.%s) == %d", gpuVar, l.GPU), fmt.Sprintf("GPUDirect-%s on %s needs exactly %d GPU NIC networks.", strings.ToUpper(p.NCCL.Plugin), p.MachineType, l.GPU)})
	}
	nw := r.AppendNewBlock("network_config", nil).Body()
	for i := 0; i < l.GVNICs; i++ {
		an := nw.AppendNewBlock("additional_node_network_configs", nil).Body()
		an.SetAttributeTraversal("network", indexRef(gvnicVar, i, "network"))
		an.SetAttributeTraversal("subnetwork", indexRef(gvnicVar, i, "subnetwork"))
	}
	for i := 0; i < l.GPU; i++ {
		an := nw.AppendNewBlock("additional_node_network_configs", nil).Body()
		an.SetAttributeTraversal("network", indexRef(gpuVar, i, "network"))
		an.SetAttributeTraversal("subnetwork", indexRef(gpuVar, i, "subnetwork"))
	}
}

// interfaces names the node interfaces eth<first>..eth<last>.
func interfaces(first, last int) string {
	if first == last {
		return fmt.Sprintf("eth%d", first)
	}
	return fmt.Sprintf("eth%d..eth%d", first, last)
}

// indexRef is var.NAME[i].attr.
func indexRef(name string, i int, attr string) hcl.Traversal {
	return hcl.Traversal{hcl.TraverseRoot{Name: "var"}, hcl.TraverseAttr{Name: name}, hcl.TraverseIndex{Key: cty.NumberIntVal(int64(i))}, hcl.TraverseAttr{Name: attr}}
}
