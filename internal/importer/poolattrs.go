package importer

import (
	"strings"
)

// poolAttrs say what becomes of each attribute (or nested block) of a
// node pool: read (into the spec, or listed by its reader), else skipped
// with the reason of skip, of the first rule of likeSkip it matches, else
// "no spec field".
type poolAttrs struct {
	read map[string]bool
	skip map[string]string
}

// metaArgs are Terraform's meta-arguments: they configure no node pool.
var metaArgs = map[string]bool{"count": true, "for_each": true, "depends_on": true, "lifecycle": true, "provider": true, "providers": true, "source": true, "version": true}

// likeSkip are the reasons for attributes by a part of their name.
var likeSkip = []struct{ part, reason string }{
	{"tags", "no spec field (cloud resource tags)"},
	{"iam_", "no spec field (IAM: gpuctl generate writes the node role)"},
	{"security_group", "no spec field (security groups)"},
	{"launch_template", "no spec field (launch template options: gpuctl generate writes the launch template it needs)"},
	{"user_data", "no spec field (node user data other than nodeadm's local storage)"},
	{"bootstrap", "no spec field (node bootstrap options)"},
	{"subnet", "no spec field (gpuctl does not place subnets)"},
	{"timeouts", "no spec field (Terraform timeouts)"},
	{"resource_labels", "no spec field (cloud resource labels)"},
}

func setOf(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// why is the reason attribute k is skipped.
func (a poolAttrs) why(k string) string {
	if r, ok := a.skip[k]; ok {
		return r
	}
	for _, l := range likeSkip {
		if strings.Contains(k, l.part) {
			return l.reason
		}
	}
	return "no spec field"
}

// skipAttrs lists each attribute of o that a is not read as skipped, with
// its reason (and what an unknown value depends on).
func (t *tfImport) skipAttrs(o obj, a poolAttrs) {
	if o == nil {
		return
	}
	for _, k := range objKeys(o) {
		if a.read[k] || metaArgs[k] {
			continue
		}
		x := o.get(k)
		what, at := x.what, x.at
		if x.absent() { // a nested block
			what = o.name() + " " + k
			if b := first(o.blocks(k)); b != nil {
				at = b.origin()
			}
		}
		if !strings.HasSuffix(what, k) {
			what = o.name() + " " + k
		}
		reason := a.why(k)
		if x.unknown() && len(x.why) > 0 {
			reason += "; its value is unknown until Terraform applies: it depends on " + strings.Join(x.why, ", ")
		}
		t.b.skip(what, reason, at)
	}
}

// eksGroupSkips are the reasons for node group attributes of EKS (the
// module's inputs and aws_eks_node_group's arguments) with no spec field.
var eksGroupSkips = map[string]string{
	"description":            "no spec field (a description)",
	"ebs_optimized":          "no spec field (EBS optimization: on by default on current instance types)",
	"update_config":          "no spec field (rolling update settings)",
	"metadata_options":       "no spec field (instance metadata options)",
	"ami_id":                 "no spec field (a custom AMI: the spec's osImage holds the AMI type)",
	"use_name_prefix":        "no spec field (a name prefix)",
	"placement":              "no spec field (an existing placement group named by the module's placement input)",
	"remote_access":          "no spec field (SSH access)",
	"key_name":               "no spec field (SSH key)",
	"node_role_arn":          "no spec field (IAM: gpuctl generate writes the node role)",
	"network_interfaces":     "no spec field (network interfaces other than EFA's)",
	"force_update_version":   "no spec field (update behaviour)",
	"create":                 "no spec field (whether the module creates the node group)",
	"cloudinit_post_nodeadm": "no spec field (node user data other than nodeadm's local storage)",
	"cluster_name":           "the cluster's name, read from the cluster",
}

// eksModuleGroupAttrs are the inputs of a terraform-aws-modules/eks node
// group (and of eks_managed_node_group_defaults) import reads.
var eksModuleGroupAttrs = poolAttrs{
	read: setOf("name", "ami_type", "ami_release_version", "release_version", "instance_types", "capacity_type",
		"min_size", "max_size", "desired_size", "labels", "taints", "disk_size", "block_device_mappings",
		"enable_efa_support", "enable_efa_only", "efa_indices", "create_placement_group",
		"capacity_reservation_specification", "instance_market_options", "node_repair_config", "cloudinit_pre_nodeadm"),
	skip: eksGroupSkips,
}

// eksNodeGroupAttrs are the arguments of aws_eks_node_group import reads.
var eksNodeGroupAttrs = poolAttrs{
	read: setOf("node_group_name", "node_group_name_prefix", "cluster_name", "version", "ami_type", "release_version",
		"instance_types", "capacity_type", "scaling_config", "labels", "taint", "disk_size", "node_repair_config", "launch_template"),
	skip: eksGroupSkips,
}

// gkeSkips are the reasons for GKE node pool and node_config attributes
// with no spec field.
var gkeSkips = map[string]string{
	"project":                     "no spec field (the Google Cloud project)",
	"upgrade_settings":            "no spec field (surge upgrade settings)",
	"network_config":              "no spec field (pod ranges and additional networks)",
	"max_pods_per_node":           "no spec field (pods per node)",
	"service_account":             "no spec field (the node service account)",
	"oauth_scopes":                "no spec field (OAuth scopes)",
	"metadata":                    "no spec field (instance metadata)",
	"workload_metadata_config":    "no spec field (workload metadata / Workload Identity)",
	"shielded_instance_config":    "no spec field (Shielded VM options)",
	"gvnic":                       "no spec field (gVNIC)",
	"enable_gvnic":                "no spec field (gVNIC)",
	"gcfs_config":                 "no spec field (image streaming)",
	"enable_gcfs":                 "no spec field (image streaming)",
	"local_nvme_ssd_block_config": "no spec field (local SSDs as raw block devices: the spec's localStorage holds raid0 or none)",
	"local_nvme_ssd_count":        "no spec field (local SSDs as raw block devices: the spec's localStorage holds raid0 or none)",
	"local_ssd_count":             "no spec field (local SSDs as SCSI scratch disks)",
	"min_cpu_platform":            "no spec field (minimum CPU platform)",
	"boot_disk_kms_key":           "no spec field (disk encryption key)",
	"kubelet_config":              "no spec field (kubelet settings)",
	"linux_node_config":           "no spec field (sysctls and cgroup mode)",
	"initial_node_count":          "read as the pool's size where node_count is unset",
	"cluster":                     "the cluster's name, read from the cluster",
	"location":                    "the cluster's region, read from the cluster",
}

// gkePoolAttrs are the arguments of google_container_node_pool (and of a
// node_pool block) import reads.
var gkePoolAttrs = poolAttrs{
	read: setOf("name", "name_prefix", "cluster", "location", "node_locations", "version", "autoscaling", "node_count",
		"initial_node_count", "management", "placement_policy", "node_config", "queued_provisioning"),
	skip: gkeSkips,
}

// gkeNodeConfigAttrs are the arguments of a node_config import reads.
var gkeNodeConfigAttrs = poolAttrs{
	read: setOf("machine_type", "image_type", "disk_size_gb", "disk_type", "labels", "taint", "spot", "preemptible",
		"reservation_affinity", "guest_accelerator", "ephemeral_storage_local_ssd_config", "flex_start"),
	skip: gkeSkips,
}

// gkeModulePoolAttrs are the keys of terraform-google-modules' node_pools
// items import reads.
var gkeModulePoolAttrs = poolAttrs{
	read: setOf("name", "machine_type", "node_locations", "image_type", "disk_size_gb", "disk_type", "autoscaling",
		"node_count", "total_min_count", "total_max_count", "min_count", "max_count", "auto_repair", "auto_upgrade",
		"spot", "preemptible", "placement_policy", "accelerator_type", "accelerator_count", "gpu_driver_version",
		"gpu_partition_size", "gpu_sharing_strategy", "max_shared_clients_per_gpu", "local_ssd_ephemeral_storage_count"),
	skip: gkeSkips,
}
