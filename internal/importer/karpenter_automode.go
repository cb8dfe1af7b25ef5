package importer

import (
	"math"
	"strings"
)

// EKS Auto Mode runs Karpenter for the cluster: its NodePools are
// karpenter.sh/v1 NodePools whose nodeClassRef names an
// eks.amazonaws.com/v1 NodeClass (group eks.amazonaws.com, kind
// NodeClass; "default" is the one Auto Mode creates), and whose
// requirements use Auto Mode's well-known labels, eks.amazonaws.com/
// instance-*, for what Karpenter's AWS provider calls karpenter.k8s.aws/
// instance-*.
//
// Auto Mode picks the AMI itself: a Bottlerocket-based image AWS manages,
// which on NVIDIA instances carries the NVIDIA driver and the NVIDIA device
// plugin (running, but not as a DaemonSet one can see). gpuctl holds that
// as the OS image whose facts are the same, BOTTLEROCKET_x86_64_NVIDIA or
// BOTTLEROCKET_ARM_64_NVIDIA, with the origin note "EKS Auto Mode", so the
// rules count the built-in device plugin and the driver it ships. A
// NodeClass's ephemeralStorage size (the node's data volume) is diskSizeGB;
// its capacityReservationSelectorTerms are read as an EC2NodeClass's; its
// other keys have no spec field and are listed as skipped.
//
// Sources (2026-12-02):
// https://docs.aws.amazon.com/eks/latest/userguide/auto-accelerated.html
// (drivers and device plugins included; the NVIDIA device plugin runs but
// is not visible as a DaemonSet),
// https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html
// (the eks.amazonaws.com/ labels of NodePool requirements),
// https://docs.aws.amazon.com/eks/latest/userguide/create-node-class.html
// (NodeClass eks.amazonaws.com/v1: ephemeralStorage, subnet, security group
// and role settings), https://docs.aws.amazon.com/eks/latest/best-practices/automode.html
// (Auto Mode instances run on Bottlerocket AMIs).

const (
	kpAutoGroup = "eks.amazonaws.com"
	kpAutoKind  = "NodeClass"
	// kpAutoNote is the origin note of the OS image of an Auto Mode pool.
	kpAutoNote = "EKS Auto Mode: an AWS-managed Bottlerocket AMI with the NVIDIA driver and device plugin"
)

// kpAutoKeys are Auto Mode's requirement labels for the karpenter.k8s.aws
// ones gpuctl reads.
var kpAutoKeys = map[string]string{
	kpAutoGroup + "/instance-family":           kpFamily,
	kpAutoGroup + "/instance-category":         kpCategory,
	kpAutoGroup + "/instance-generation":       kpGeneration,
	kpAutoGroup + "/instance-size":             kpSize,
	kpAutoGroup + "/instance-gpu-name":         kpGPUName,
	kpAutoGroup + "/instance-gpu-count":        kpGPUCount,
	kpAutoGroup + "/instance-gpu-manufacturer": kpGPUMaker,
}

// kpAutoAMI are the AMI types whose facts are those of Auto Mode's image on
// NVIDIA instances, by architecture.
var kpAutoAMI = map[string]string{"amd64": "BOTTLEROCKET_x86_64_NVIDIA", "arm64": "BOTTLEROCKET_ARM_64_NVIDIA"}

// kpAutoMode imports the EKS Auto Mode NodeClass that ref names into the
// pool: the OS image for arch (else the pool's first instance type's, else
// amd64) and, when the class c was read (ok), its ephemeral storage.
func kpAutoMode(b *builder, pb *poolB, ref *ynode, c kpDoc, ok bool, arch string) {
	if arch == "" {
		arch = kpPoolArch(&pb.p)
	}
	at := ref.at
	at.Note = kpAutoNote
	if ami, found := kpAutoAMI[arch]; found {
		pb.p.OSImage = ami
		pb.at(".osImage", at)
	} else {
		b.skip("NodePool "+pb.p.Name+" EKS Auto Mode AMI", "no Auto Mode NVIDIA image gpuctl knows for architecture "+arch, ref.at)
	}
	if ok {
		kpAutoClass(b, pb, c)
	}
}

// kpAutoClass reads an Auto Mode NodeClass c: ephemeralStorage size as
// diskSizeGB, capacityReservationSelectorTerms as an EC2NodeClass's;
// every other key is a skip.
func kpAutoClass(b *builder, pb *poolB, c kpDoc) {
	what := kpAutoKind + " " + c.name
	sp := c.n.get("spec")
	es := sp.get("ephemeralStorage")
	if size := es.get("size"); size != nil {
		if n, err := quantity(size.str()); err == nil {
			pb.p.DiskSizeGB = int(math.Ceil(n / (1 << 30)))
			pb.at(".diskSizeGB", size.at)
		} else {
			b.skip(what+" ephemeralStorage size", err.Error(), size.at)
		}
	}
	kpUnread(b, what+" ephemeralStorage", es, "size")
	kpReservation(pb, what, sp)
	kpUnread(b, what+" spec", sp, "ephemeralStorage", "capacityReservationSelectorTerms")
}

// kpReqKey is the key a requirement is read under: Auto Mode's label for
// one of karpenter.k8s.aws's is read as that one.
func kpReqKey(k string) string {
	if v, ok := kpAutoKeys[k]; ok {
		return v
	}
	return k
}

// kpReadKeys are the requirement keys gpuctl reads.
var kpReadKeys = []string{kpInstanceType, kpCapacityType, kpReservationType, kpZone, kpArch, kpFamily, kpCategory, kpGeneration, kpSize, kpGPUName, kpGPUCount, kpGPUMaker}

// kpUnreadReqs lists the requirement keys of the template spec ts gpuctl
// does not read as one skip.
func kpUnreadReqs(b *builder, what string, ts *ynode) {
	rs := ts.get("requirements")
	if rs == nil {
		return
	}
	var ks []string
	for _, r := range rs.items {
		if k := r.get("key").str(); k != "" && !contains(kpReadKeys, kpReqKey(k)) && !contains(ks, k) {
			ks = append(ks, k)
		}
	}
	if len(ks) > 0 {
		b.skip(what+" requirements "+strings.Join(ks, ", "), "no gpuctl spec field, and not applied to the instance types derived from the requirements", rs.at)
	}
}
