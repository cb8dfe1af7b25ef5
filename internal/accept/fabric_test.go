package accept

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// fabricNode is an 8-GPU node of machine that advertises efa EFA
// interfaces (with EFA's huge pages) and is attached to the GKE networks.
func fabricNode(name, provider, machine string, efa int, networks ...string) *corev1.Node {
	n := gpuNode(name, 8)
	n.Labels[LabelInstanceType] = machine
	n.Spec.ProviderID = map[string]string{spec.ProviderEKS: "aws:///us-east-1a/i-0123", spec.ProviderGKE: "gce://proj/us-central1-a/" + name}[provider]
	if efa > 0 {
		n.Status.Allocatable[fabric.ResourceEFA] = *resource.NewQuantity(int64(efa), resource.DecimalSI)
		n.Status.Allocatable[fabric.ResourceHugePages2Mi] = resource.MustParse("10Gi")
	}
	for _, net := range networks {
		n.Status.Capacity[fabric.NetworkResource(net)] = resource.MustParse("1")
		n.Status.Capacity[fabric.NetworkResource(net+".IP")] = resource.MustParse("1")
	}
	return n
}

func planFor(t *testing.T, nodes ...*corev1.Node) *MultiPlan {
	t.Helper()
	mp, err := PlanMulti(MultiRun{RunID: "r1", Namespace: testNS, Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	return mp
}

// TestPlanMultiEFA: p5.48xlarge nodes that advertise their 32 EFA
// interfaces get EFA rank pods; a node without the EFA device plugin, or
// with an interface missing, makes the stage INCONCLUSIVE (cause cluster)
// naming the resource, before any pod is created.
func TestPlanMultiEFA(t *testing.T) {
	mp := planFor(t, fabricNode("a", spec.ProviderEKS, "p5.48xlarge", 32), fabricNode("b", spec.ProviderEKS, "p5.48xlarge", 32))
	if mp.Problem != "" || mp.Fabric.Fabric != matrix.FabricEFA {
		t.Fatalf("plan: %q %+v", mp.Problem, mp.Fabric)
	}
	job, _ := BuildMultiNode(mp.Rounds[0][0])
	c := job.Spec.Template.Spec.Containers[0]
	if q := c.Resources.Limits[fabric.ResourceEFA]; q.Value() != 32 {
		t.Errorf("efa limit %v", c.Resources.Limits)
	}
	if q := c.Resources.Requests[fabric.ResourceHugePages2Mi]; q.Cmp(resource.MustParse("5120Mi")) != 0 {
		t.Errorf("huge pages request %v", c.Resources.Requests)
	}
	mp = planFor(t, fabricNode("a", spec.ProviderEKS, "p5.48xlarge", 32), fabricNode("b", spec.ProviderEKS, "p5.48xlarge", 0))
	if mp.ProblemCause != CauseCluster || !strings.Contains(mp.Problem, "node b advertises no vpc.amazonaws.com/efa") || len(mp.Rounds) != 0 {
		t.Errorf("no EFA: %q (%s)", mp.Problem, mp.ProblemCause)
	}
	mp = planFor(t, fabricNode("a", spec.ProviderEKS, "p5.48xlarge", 31), fabricNode("b", spec.ProviderEKS, "p5.48xlarge", 32))
	if !strings.Contains(mp.Problem, "node a advertises 31 of the 32 vpc.amazonaws.com/efa of p5.48xlarge") {
		t.Errorf("31 EFA: %q", mp.Problem)
	}
}

// TestPlanMultiGKE: A3 Mega nodes attached to their 8 GPU networks get
// TCPXO rank pods that need --allow-privileged; nodes without the networks
// make the stage INCONCLUSIVE naming them; A3 Ultra nodes attach their RDMA
// networks and not the extra gVNIC.
func TestPlanMultiGKE(t *testing.T) {
	vpcs := []string{"vpc1", "vpc2", "vpc3", "vpc4", "vpc5", "vpc6", "vpc7", "vpc8"}
	mp := planFor(t, fabricNode("a", spec.ProviderGKE, "a3-megagpu-8g", 0, vpcs...), fabricNode("b", spec.ProviderGKE, "a3-megagpu-8g", 0, vpcs...))
	if mp.Problem != "" || mp.Fabric.Fabric != matrix.FabricTCPXO || len(mp.Fabric.Privileged) == 0 {
		t.Fatalf("tcpxo plan: %q %+v", mp.Problem, mp.Fabric)
	}
	if r := privilegedReason(mp.Fabric); !strings.Contains(r, "--allow-privileged") || !strings.Contains(r, "/dev/aperture_devices") {
		t.Errorf("privileged reason: %s", r)
	}
	job, _ := BuildMultiNode(mp.Rounds[0][0])
	ps := job.Spec.Template.Spec
	if len(ps.InitContainers) != 1 || ps.InitContainers[0].Name != "tcpxo-daemon" || job.Spec.Template.Annotations["networking.gke.io/default-interface"] != "eth0" {
		t.Errorf("tcpxo pod: init %+v annotations %v", ps.InitContainers, job.Spec.Template.Annotations)
	}
	mp = planFor(t, fabricNode("a", spec.ProviderGKE, "a3-megagpu-8g", 0), fabricNode("b", spec.ProviderGKE, "a3-megagpu-8g", 0))
	if mp.ProblemCause != CauseCluster || !strings.Contains(mp.Problem, "node a: the node is attached to 0 GPU network(s)") {
		t.Errorf("no networks: %q", mp.Problem)
	}
	ultra := []string{"gvnic-1", "rdma-0", "rdma-1", "rdma-2", "rdma-3", "rdma-4", "rdma-5", "rdma-6", "rdma-7"}
	mp = planFor(t, fabricNode("a", spec.ProviderGKE, "a3-ultragpu-8g", 0, ultra...), fabricNode("b", spec.ProviderGKE, "a3-ultragpu-8g", 0, ultra...))
	if mp.Problem != "" || mp.Fabric.Fabric != matrix.FabricRoCE || strings.Contains(mp.Fabric.Annotations["networking.gke.io/interfaces"], "gvnic-1") {
		t.Errorf("rdma plan: %q %v", mp.Problem, mp.Fabric.Annotations)
	}
	job, _ = BuildMultiNode(mp.Rounds[0][0])
	c := job.Spec.Template.Spec.Containers[0]
	// The library path goes before the image's own, then gIB's environment, then torchrun.
	if cmd := c.Command[2]; !strings.HasPrefix(cmd, `export LD_LIBRARY_PATH="/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}"`+"\nif [ -f /usr/local/gib/scripts/set_nccl_env.sh ]") {
		t.Errorf("rdma command does not start with the library path and gIB's environment: %.160s", cmd)
	}
	for _, e := range c.Env {
		if e.Name == "LD_LIBRARY_PATH" {
			t.Errorf("LD_LIBRARY_PATH=%s replaces the image's own", e.Value)
		}
	}
	if sc := c.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 0 || sc.Capabilities == nil || len(sc.Capabilities.Add) != 1 || sc.Capabilities.Add[0] != "IPC_LOCK" {
		t.Errorf("rdma workload security context %+v", sc)
	}
}

// TestPlanMultiNoFabric: nodes of a machine without a GPU fabric run the
// plain rank pods (NCCL over the pod network), which need no privilege.
func TestPlanMultiNoFabric(t *testing.T) {
	mp := planFor(t, fabricNode("a", spec.ProviderEKS, "g6.48xlarge", 0), fabricNode("b", spec.ProviderEKS, "g6.48xlarge", 0))
	if mp.Problem != "" || mp.Fabric.Fabric != "" {
		t.Errorf("g6: %q %+v", mp.Problem, mp.Fabric)
	}
}

// TestJudgeMultiGroupTransport: a group judged for a fabric must show that
// NCCL used it. The EKS Blueprints EFA run names "AWS Libfabric" and the
// efa provider (then its 1 GiB result is below the EFA baseline's 2 GiB and
// not judged); the same output with NCCL on sockets (derived: the network
// lines replaced) is INCONCLUSIVE, cause cluster, naming aws-ofi-nccl; an
// output that names no network is INCONCLUSIVE.
func TestJudgeMultiGroupTransport(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "probe", "testdata", "nccl", "allreduce-2node-t4-efa-eks-blueprints.log"))
	if err != nil {
		t.Fatal(err)
	}
	efaPod := testFabric(t, spec.ProviderEKS, "p5.48xlarge")
	bl, _ := matrix.MultiNodeBaseline("p5.48xlarge")
	group := func(log []byte) MultiGroupResult {
		return MultiGroupResult{Group: "r-m0", Nodes: []string{"n1", "n2"}, Ranks: []MultiRank{{Index: 0, Node: "n1", Log: log}, {Index: 1, Node: "n2", Log: log}}}
	}
	r := JudgeMultiGroupOn(group(data), 1, ProbeParser(), &bl, "p5.48xlarge", efaPod)
	if r.Transport != "AWS Libfabric" || r.Verdict != diag.Inconclusive || !strings.Contains(r.Reason, "below 2 GiB") {
		t.Errorf("efa: %s %q transport %q", r.Verdict, r.Reason, r.Transport)
	}
	sock := strings.ReplaceAll(string(data), "Using network AWS Libfabric", "Using network Socket")
	r = JudgeMultiGroupOn(group([]byte(sock)), 1, ProbeParser(), &bl, "p5.48xlarge", efaPod)
	if r.Verdict != diag.Inconclusive || r.Cause != CauseCluster || !strings.Contains(r.Reason, "NCCL used network Socket, not EFA's AWS Libfabric") || !strings.Contains(r.Reason, "aws-ofi-nccl") {
		t.Errorf("socket: %s %s %q", r.Verdict, r.Cause, r.Reason)
	}
	tcp := strings.ReplaceAll(string(data), "Selected Provider is efa", "Selected Provider is tcp")
	r = JudgeMultiGroupOn(group([]byte(tcp)), 1, ProbeParser(), &bl, "p5.48xlarge", efaPod)
	if r.Verdict != diag.Inconclusive || !strings.Contains(r.Reason, "selected the libfabric provider tcp") {
		t.Errorf("tcp provider: %s %q", r.Verdict, r.Reason)
	}
	roce, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "nccl-tests", "a100-40g-2node-16gpu-allreduce-10G-roce.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rbl, _ := matrix.MultiNodeBaseline("a3-ultragpu-8g")
	r = JudgeMultiGroupOn(group(roce), 8, ProbeParser(), &rbl, "a3-ultragpu-8g", testFabric(t, spec.ProviderGKE, "a3-ultragpu-8g"))
	if r.Verdict != diag.Inconclusive || !strings.Contains(r.Reason, "names no NCCL network") {
		t.Errorf("no network line: %s %q", r.Verdict, r.Reason)
	}
}
