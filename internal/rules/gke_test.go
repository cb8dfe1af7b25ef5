package rules

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
	"github.com/gpuctl/gpuctl/internal/spec/spectest"
)

func TestParseKubernetesVersion(t *testing.T) {
	for _, c := range []struct {
		in    string
		minor string
		full  string
		gke   bool
		bad   bool
	}{
		{in: "1.33", minor: "1.33", full: "1.33"},
		{in: "v1.33.5", minor: "1.33", full: "1.33.5"},
		{in: "1.33.5-gke.1080000", minor: "1.33", full: "1.33.5.1080000", gke: true},
		{in: " v1.30.1-gke.1156000 ", minor: "1.30", full: "1.30.1.1156000", gke: true},
		{in: "1.33-gke.100", bad: true},   // a build needs a patch
		{in: "1.33.5-gke", bad: true},     // no build number
		{in: "1.33.5-eks-113", bad: true}, // not a GKE build
		{in: "2.0", bad: true},            // major must be 1
		{in: "1", bad: true},              // no minor
		{in: "1.33.5.1", bad: true},       // four numeric components
		{in: "1.33.5-gke.+1", bad: true},  // sign
		{in: "1.x", bad: true},
	} {
		k, err := matrix.ParseKubernetesVersion(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("%q: want an error, got %v", c.in, k.Full)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if k.MinorString() != c.minor || k.Full.String() != c.full || k.GKE != c.gke {
			t.Errorf("%q = minor %s full %s gke %v, want %s %s %v", c.in, k.MinorString(), k.Full, k.GKE, c.minor, c.full, c.gke)
		}
	}
	// Numeric, not lexical: 1.30.10 is after 1.30.9, the gke build counts.
	a, _ := matrix.ParseKubernetesVersion("1.30.9-gke.2000000")
	b, _ := matrix.ParseKubernetesVersion("1.30.10-gke.100")
	c, _ := matrix.ParseKubernetesVersion("1.30.1-gke.1156000")
	d, _ := matrix.ParseKubernetesVersion("1.30.1-gke.1155999")
	if !a.Full.Less(b.Full) || !d.Full.Less(c.Full) {
		t.Errorf("GKE versions do not compare numerically")
	}
}

// gkeCase is one GKE spec and the finding it must (or must not) yield.
type gkeCase struct {
	name string
	asOf string // default 2026-12-01
	mod  func(cs *spec.ClusterSpec, p *spec.NodePool)
	rule string
	sev  diag.Severity // "" with bad false: the rule must not fire above info
	bad  bool
	path string
	msg  string // substring of message or fix
	not  string // substring no finding of the rule may carry
}

func runGKECases(t *testing.T, cases []gkeCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			at := mustDate("2026-12-01")
			if c.asOf != "" {
				at = mustDate(c.asOf)
			}
			cs := spectest.GKE()
			c.mod(cs, &cs.Spec.NodePools[0])
			fs := Validate(cs, Options{AsOf: at})
			var got []diag.Finding
			for _, f := range fs {
				if f.Rule == c.rule {
					got = append(got, f)
					if c.not != "" && strings.Contains(f.Message, c.not) {
						t.Errorf("%s carries %q: %s", f.Rule, c.not, f.Message)
					}
				}
			}
			if !c.bad {
				for _, f := range got {
					if f.Severity != diag.SeverityInfo {
						t.Errorf("unexpected %s %s at %s: %s", f.Severity, f.Rule, f.Path, f.Message)
					}
				}
				if c.msg != "" {
					for _, f := range got {
						if strings.Contains(f.Message+" "+f.Fix, c.msg) {
							return
						}
					}
					t.Errorf("want an info %s with %q, got:\n%s", c.rule, c.msg, dump(fs))
				}
				return
			}
			for _, f := range got {
				if f.Severity == c.sev && (c.path == "" || f.Path == c.path) && strings.Contains(f.Message+" "+f.Fix, c.msg) {
					return
				}
			}
			t.Errorf("want %s %s (path %q, with %q), got:\n%s", c.sev, c.rule, c.path, c.msg, dump(fs))
		})
	}
}

func TestGKEVersionSupport(t *testing.T) {
	k8s := func(v string) func(cs *spec.ClusterSpec, p *spec.NodePool) {
		return func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = v }
	}
	const path = "spec.kubernetesVersion"
	runGKECases(t, []gkeCase{
		{name: "1.35 in standard support", mod: k8s("1.35"), rule: RuleGKEK8sSupport},
		{name: "1.35 patch with gke build", mod: k8s("1.35.0-gke.3047000"), rule: RuleGKEK8sSupport},
		{name: "1.34 past standard support", mod: k8s("v1.34.4"), rule: RuleGKEK8sSupport, sev: diag.SeverityWarning, bad: true, path: path,
			msg: "GKE 1.34 left standard support on 2026-10-01", not: "v1.34.4"},
		{name: "1.33 past standard support, Extended would hold it", mod: k8s("1.33.5-gke.1080000"), rule: RuleGKEK8sSupport, sev: diag.SeverityWarning, bad: true,
			msg: "Extended release channel would keep it in (paid) extended support until at most 2027-06-03", not: "gke.1080000"},
		{name: "1.33 on the Extended channel", mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
			cs.Spec.KubernetesVersion, cs.Spec.ReleaseChannel = "1.33", "EXTENDED"
		}, rule: RuleGKEK8sSupport, msg: "extended support on the Extended channel until at most 2027-06-03"},
		{name: "1.33 on the Extended channel past extended support", asOf: "2027-06-04", mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
			cs.Spec.KubernetesVersion, cs.Spec.ReleaseChannel = "1.33", "EXTENDED"
		}, rule: RuleGKEK8sSupport, sev: diag.SeverityWarning, bad: true, msg: "past end of extended support"},
		{name: "1.33 on the Extended channel, last day", asOf: "2027-06-03", mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
			cs.Spec.KubernetesVersion, cs.Spec.ReleaseChannel = "1.33", "EXTENDED"
		}, rule: RuleGKEK8sSupport},
		{name: "1.26 predates extended support", mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
			cs.Spec.KubernetesVersion, cs.Spec.ReleaseChannel = "1.26", "EXTENDED"
		}, rule: RuleGKEK8sSupport, sev: diag.SeverityWarning, bad: true, msg: "left standard support on 2024-06-30", not: "extended support until"},
		{name: "1.20 long gone", mod: k8s("1.20"), rule: RuleGKEK8sSupport, sev: diag.SeverityWarning, bad: true, msg: "GKE 1.20 left standard support on 2022-08-01"},
		{name: "older than the schedule", mod: k8s("1.12"), rule: RuleGKEK8sSupport, sev: diag.SeverityWarning, bad: true, msg: "older than 1.17"},
		{name: "1.99 is newer than the matrix", mod: k8s("1.99"), rule: RuleGKEK8sSupport, sev: diag.SeverityWarning, bad: true, msg: "the matrix is older than the cluster"},
		{name: "malformed build", mod: k8s("1.33.5-gke"), rule: RuleSpecVersion, sev: diag.SeverityError, bad: true, path: path},
		{name: "build without patch", mod: k8s("1.33-gke.100"), rule: RuleSpecVersion, sev: diag.SeverityError, bad: true, path: path},
		{name: "major 2", mod: k8s("2.1"), rule: RuleSpecVersion, sev: diag.SeverityError, bad: true, path: path},
		{name: "operator message names the minor", mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
			cs.Spec.KubernetesVersion = "v1.35.0-gke.3047000"
			cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0"}
		}, rule: RuleOperatorGKEKit, sev: diag.SeverityError, bad: true, msg: "GKE 1.35:", not: "gke.3047000"},
	})
	// autoProvisioned is a GKE field.
	cs0 := spectest.EKS()
	cs0.Spec.NodePools[0].AutoProvisioned = true
	if fs := Validate(cs0, Options{AsOf: asOf20261129}); !hasFinding(fs, RuleSpecProviderField, diag.SeverityWarning) {
		t.Errorf("EKS with autoProvisioned: want SPEC-PROVIDER-FIELD, got:\n%s", dump(fs))
	}
	// A GKE build on EKS is not an EKS version.
	cs := spectest.EKS()
	cs.Spec.KubernetesVersion = "1.33.5-gke.1080000"
	if fs := Validate(cs, Options{AsOf: asOf20261129}); !hasFinding(fs, RuleSpecVersion, diag.SeverityError) {
		t.Errorf("EKS with a GKE version: want SPEC-VERSION, got:\n%s", dump(fs))
	}
}

func TestGKEDriverSemantics(t *testing.T) {
	pool := func(k8s, machine, image, driver string) func(cs *spec.ClusterSpec, p *spec.NodePool) {
		return func(cs *spec.ClusterSpec, p *spec.NodePool) {
			cs.Spec.KubernetesVersion, p.MachineType, p.OSImage, p.GPU.Driver = k8s, machine, image, driver
		}
	}
	const drv = "spec.nodePools[0].gpu.driver"
	runGKECases(t, []gkeCase{
		// The known failure: GKE 1.27's DEFAULT R470 does not support L4.
		{name: "L4 on GKE 1.27 DEFAULT", mod: pool("1.27", "g2-standard-8", "COS_CONTAINERD", "DEFAULT"), rule: RuleGPUDriverBranch, sev: diag.SeverityError, bad: true, path: drv,
			msg: "driver branch R470 (GKE 1.27 DEFAULT on COS_CONTAINERD) is older"},
		{name: "L4 on GKE 1.27 DEFAULT: the fix is LATEST", mod: pool("1.27.3-gke.100", "g2-standard-8", "COS_CONTAINERD", "DEFAULT"), rule: RuleGPUDriverBranch, sev: diag.SeverityError, bad: true,
			msg: "Set gpu.driver: LATEST (R550 on GKE 1.27 COS)"},
		{name: "L4 on GKE 1.27 LATEST is R550", mod: pool("1.27", "g2-standard-8", "COS_CONTAINERD", "LATEST"), rule: RuleGPUDriverBranch},
		{name: "L4 on GKE 1.33 DEFAULT is R535", mod: pool("1.33", "g2-standard-8", "COS_CONTAINERD", "DEFAULT"), rule: RuleGPUDriverBranch},
		// DEFAULT R535 and CUDA 12.4 (needs 550.54.14): minor-version compatibility.
		{name: "DEFAULT R535 and CUDA 12.4", mod: pool("1.33", "a3-highgpu-8g", "COS_CONTAINERD", "DEFAULT"), rule: RuleCUDAMinorCompat, sev: diag.SeverityWarning, bad: true, path: drv},
		{name: "LATEST R580 and CUDA 12.4", mod: pool("1.33", "a3-highgpu-8g", "COS_CONTAINERD", "LATEST"), rule: RuleCUDAMinorCompat},
		{name: "DEFAULT R535 past end of life", mod: pool("1.33", "a3-highgpu-8g", "COS_CONTAINERD", "DEFAULT"), rule: RuleDriverEOL, sev: diag.SeverityWarning, bad: true, path: drv, msg: "R535"},
		{name: "LATEST includes the R575 NFB but picks R580", mod: pool("1.32", "a3-highgpu-8g", "COS_CONTAINERD", "LATEST"), rule: RuleDriverNFBProd},
		// An unset driver is GKE's DEFAULT from 1.30.1-gke.1156000 on.
		{name: "unset on 1.31 is DEFAULT R535", mod: pool("1.31", "a3-highgpu-8g", "COS_CONTAINERD", ""), rule: RuleCUDAMinorCompat, sev: diag.SeverityWarning, bad: true,
			msg: "GKE 1.31 DEFAULT (gpu.driver unset) on COS_CONTAINERD"},
		{name: "unset on 1.31 is not 'no driver'", mod: pool("1.31", "g2-standard-8", "COS_CONTAINERD", ""), rule: RuleGKEDriverOption},
		{name: "unset at 1.30.1-gke.1156000", mod: pool("1.30.1-gke.1156000", "g2-standard-8", "COS_CONTAINERD", ""), rule: RuleGKEDriverOption},
		{name: "unset before 1.30.1-gke.1156000", mod: pool("1.30.1-gke.1155999", "g2-standard-8", "COS_CONTAINERD", ""), rule: RuleGKEDriverOption, sev: diag.SeverityError, bad: true, path: drv,
			msg: "installs no driver before GKE 1.30.1-gke.1156000"},
		{name: "unset on 1.29", mod: pool("1.29", "g2-standard-8", "COS_CONTAINERD", ""), rule: RuleGKEDriverOption, sev: diag.SeverityError, bad: true},
		{name: "unset on minor 1.30 takes its newest patch", mod: pool("1.30", "g2-standard-8", "COS_CONTAINERD", ""), rule: RuleGKEDriverOption},
		{name: "unset without a version", mod: pool("", "g2-standard-8", "COS_CONTAINERD", ""), rule: RuleUnknownFact, msg: "spec.kubernetesVersion is not set"},
		// Node auto-provisioning: DEFAULT only from 1.32.2-gke.1297000 on.
		{name: "unset on a NAP pool on 1.31", mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
			pool("1.31", "g2-standard-8", "COS_CONTAINERD", "")(cs, p)
			p.AutoProvisioned = true
		}, rule: RuleGKEDriverOption, sev: diag.SeverityError, bad: true, msg: "node auto-provisioning pool installs no driver before GKE 1.32.2-gke.1297000"},
		{name: "unset on a NAP pool on 1.32.2-gke.1297000", mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
			pool("1.32.2-gke.1297000", "g2-standard-8", "COS_CONTAINERD", "")(cs, p)
			p.AutoProvisioned = true
		}, rule: RuleGKEDriverOption},
		{name: "NAP pool with LATEST", mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
			pool("1.31", "g2-standard-8", "COS_CONTAINERD", "LATEST")(cs, p)
			p.AutoProvisioned = true
		}, rule: RuleGKEDriverOption},
		// Two drivers: GKE's (unset = DEFAULT) and the Operator's.
		{name: "unset driver and the Operator's driver", mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
			pool("1.33", "g2-standard-8", "UBUNTU_CONTAINERD", "")(cs, p)
			cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true)},
				Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
		}, rule: RuleDriverOwner, sev: diag.SeverityError, bad: true, path: drv, msg: "GKE installs the DEFAULT driver"},
		{name: "old unset driver and the Operator's driver", mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
			pool("1.29", "g2-standard-8", "UBUNTU_CONTAINERD", "")(cs, p)
			cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true)}}
		}, rule: RuleDriverOwner},
		// Ubuntu: DEFAULT per minor; LATEST does not exist there.
		{name: "Ubuntu DEFAULT on 1.33 is R535", mod: pool("1.33", "g2-standard-8", "UBUNTU_CONTAINERD", "DEFAULT"), rule: RuleUnknownFact, not: "driver table"},
		{name: "B200 on Ubuntu DEFAULT R535", mod: pool("1.33", "a4-highgpu-8g", "UBUNTU_CONTAINERD", "DEFAULT"), rule: RuleGPUDriverBranch, sev: diag.SeverityError, bad: true,
			msg: "install a supported driver manually"},
		{name: "Ubuntu 1.30 marks no DEFAULT", mod: pool("1.30", "g2-standard-8", "UBUNTU_CONTAINERD", "DEFAULT"), rule: RuleUnknownFact, msg: "offers R470, R535 on UBUNTU_CONTAINERD for GKE 1.30 and marks none as DEFAULT"},
		// COS labels drivers per GPU where the minor's DEFAULT is too old.
		{name: "B200 on COS DEFAULT is per GPU", mod: pool("1.33", "a4-highgpu-8g", "COS_CONTAINERD", "DEFAULT"), rule: RuleGPUDriverBranch},
		{name: "B200 on COS DEFAULT: noted", mod: pool("1.33", "a4-highgpu-8g", "COS_CONTAINERD", "DEFAULT"), rule: RuleUnknownFact, msg: "COS labels its drivers per GPU type"},
		{name: "B200 on COS LATEST is R580", mod: pool("1.33", "a4-highgpu-8g", "COS_CONTAINERD", "LATEST"), rule: RuleGPUDriverBranch},
		// No row in GKE's table: say so.
		// COS milestone vs machine type (GKE-NODE-IMAGE).
		{name: "a3-highgpu-8g on 1.35 COS: COS 125 fails", mod: pool("1.35", "a3-highgpu-8g", "COS_CONTAINERD", "DEFAULT"), rule: RuleGKENodeImage, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].machineType", msg: "GKE 1.35 nodes run COS 125"},
		{name: "a3-highgpu-8g on 1.34.10 (COS 125) fails", mod: pool("1.34.10-gke.1236000", "a3-highgpu-8g", "", "DEFAULT"), rule: RuleGKENodeImage, sev: diag.SeverityError, bad: true, msg: "works on COS 121 or older"},
		{name: "a3-highgpu-8g on 1.33 COS (COS 121) is fine", mod: pool("1.33", "a3-highgpu-8g", "COS_CONTAINERD", "LATEST"), rule: RuleGKENodeImage},
		{name: "a3-highgpu-8g on 1.35 Ubuntu: not this rule", mod: pool("1.35", "a3-highgpu-8g", "UBUNTU_CONTAINERD", "DEFAULT"), rule: RuleGKENodeImage},
		{name: "a3-megagpu-8g on 1.35 COS: not named", mod: pool("1.35", "a3-megagpu-8g", "COS_CONTAINERD", "DEFAULT"), rule: RuleGKENodeImage},
		{name: "a3-highgpu-8g on 1.32 (COS milestone unknown): not judged", mod: pool("1.32", "a3-highgpu-8g", "COS_CONTAINERD", "DEFAULT"), rule: RuleGKENodeImage},
		// Past the table's newest row: a warning naming the table and its date.
		{name: "LATEST on 1.37 is beyond the table", mod: pool("1.37", "g2-standard-8", "COS_CONTAINERD", "LATEST"), rule: RuleBeyondTable, sev: diag.SeverityWarning, bad: true, path: "spec.nodePools[0].gpu.driver", msg: "newer than GKE's GPU driver table (as of 2026-08-20, newest row 1.36)"},
		// 1.34-1.36 rows from COS 125/129 release notes: R580 on COS, judged.
		{name: "DEFAULT on 1.35 COS is R580 for B200", mod: pool("1.35", "a4-highgpu-8g", "COS_CONTAINERD", "DEFAULT"), rule: RuleUnknownFact, not: "cannot be judged"},
		{name: "DEFAULT on 1.34 COS with CUDA 13.0 runs", mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
			pool("1.34", "a3-megagpu-8g", "COS_CONTAINERD", "DEFAULT")(cs, p)
			cs.Spec.CUDA = "13.0"
		}, rule: RuleCUDADriverMin},
		{name: "unset driver on 1.36 COS is DEFAULT R580", mod: pool("1.36", "g2-standard-8", "COS_CONTAINERD", ""), rule: RuleUnknownFact, not: "cannot be judged"},
		{name: "Ubuntu DEFAULT on 1.35: COS-only row, noted", mod: pool("1.35", "g2-standard-8", "UBUNTU_CONTAINERD", "DEFAULT"), rule: RuleUnknownFact, msg: "on COS only (from COS 125's release notes)"},
		// MIG on the driver GKE installs.
		{name: "MIG on A100 with GKE 1.27 DEFAULT R470", mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
			pool("1.27", "a2-highgpu-1g", "COS_CONTAINERD", "DEFAULT")(cs, p)
			cs.Spec.CUDA = "11.4"
			p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "1g.5gb"}
		}, rule: RuleMIGDriverMin},
	})
}

func TestGKENCCLTransport(t *testing.T) {
	train := func(machine, plugin string, env map[string]string) func(cs *spec.ClusterSpec, p *spec.NodePool) {
		return func(cs *spec.ClusterSpec, p *spec.NodePool) {
			p.Role, p.MachineType, p.NCCL = "training", machine, spec.NCCL{Plugin: plugin, Env: env}
			p.Autoscaling = spec.Autoscaling{Max: 4}
		}
	}
	const env = "spec.nodePools[0].nccl.env"
	runGKECases(t, []gkeCase{
		{name: "gIB on A3 Mega", mod: train("a3-megagpu-8g", "tcpxo", map[string]string{"NCCL_NET": "gIB"}), rule: RuleNCCLGCPTransport, sev: diag.SeverityError, bad: true,
			path: env + ".NCCL_NET", msg: "a3-megagpu-8g has GPUDirect-TCPXO, not RDMA"},
		{name: "gIB on A3 High without plugin", mod: train("a3-highgpu-8g", "", map[string]string{"NCCL_NET": "gIB"}), rule: RuleNCCLGCPTransport, sev: diag.SeverityError, bad: true, path: env + ".NCCL_NET"},
		{name: "gIB on G2", mod: train("g2-standard-24", "", map[string]string{"NCCL_NET": "gIB"}), rule: RuleNCCLGCPTransport, sev: diag.SeverityError, bad: true, msg: "has no GPU network"},
		{name: "gIB on A3 Ultra", mod: train("a3-ultragpu-8g", "gib", map[string]string{"NCCL_NET": "gIB"}), rule: RuleNCCLGCPTransport},
		{name: "gIB on A4 configures the plugin", mod: train("a4-highgpu-8g", "", map[string]string{"NCCL_NET": "gIB"}), rule: RuleNCCLGCPTransport},
		// TCPX variables configure the transport; they do not install the
		// plugin: without nccl.plugin the warning stays, naming the variable.
		{name: "TCPX env without the TCPX plugin", mod: train("a3-highgpu-8g", "", map[string]string{"NCCL_GPUDIRECTTCPX_SOCKET_IFNAME": "eth1,eth2,eth3,eth4"}), rule: RuleNCCLGCPTransport, sev: diag.SeverityWarning, bad: true,
			path: "spec.nodePools[0].nccl.plugin", msg: "nccl.env NCCL_GPUDIRECTTCPX_SOCKET_IFNAME configures the tcpx plugin, but nccl.plugin names none"},
		{name: "TCPX env with the TCPX plugin", mod: train("a3-highgpu-8g", "tcpx", map[string]string{"NCCL_GPUDIRECTTCPX_SOCKET_IFNAME": "eth1,eth2,eth3,eth4"}), rule: RuleNCCLGCPTransport},
		{name: "TCPXO env without the TCPXO plugin", mod: train("a3-megagpu-8g", "", map[string]string{"NCCL_FASTRAK_IFNAME": "eth1"}), rule: RuleNCCLGCPTransport, sev: diag.SeverityWarning, bad: true, msg: "configures the tcpxo plugin"},
		{name: "no plugin and no env", mod: train("a3-highgpu-8g", "", nil), rule: RuleNCCLGCPTransport, sev: diag.SeverityWarning, bad: true, msg: "without the tcpx plugin"},
		{name: "FasTrak env on A3 High", mod: train("a3-highgpu-8g", "", map[string]string{"NCCL_FASTRAK_IFNAME": "eth1"}), rule: RuleNCCLGCPTransport, sev: diag.SeverityWarning, bad: true,
			path: env + ".NCCL_FASTRAK_IFNAME", msg: "needs the tcpx plugin, not tcpxo"},
		{name: "TCPX env on G2", mod: train("g2-standard-24", "", map[string]string{"NCCL_GPUDIRECTTCPX_FORCE_ACK": "0"}), rule: RuleNCCLGCPTransport, sev: diag.SeverityWarning, bad: true, msg: "has no GPUDirect network"},
		// Interface prefixes: no GCP machine type has eth10 or mlx5_10.
		{name: "eth1 on A3 Mega", mod: train("a3-megagpu-8g", "tcpxo", map[string]string{"NCCL_SOCKET_IFNAME": "eth0"}), rule: RuleNCCLPrefix},
		{name: "eth1 on G2", mod: train("g2-standard-24", "", map[string]string{"NCCL_SOCKET_IFNAME": "eth1"}), rule: RuleNCCLPrefix},
		{name: "mlx5_1 on A3 Ultra", mod: train("a3-ultragpu-8g", "gib", map[string]string{"NCCL_IB_HCA": "mlx5_1,mlx5_2"}), rule: RuleNCCLPrefix},
	})
	// The prefix clash where one exists, from the same data.
	m := matrix.Machine{Name: "test-16nic", NICs: 16, RDMANICs: 12}
	v := newValidator(Options{AsOf: asOf20261129})
	cs := spectest.GKE()
	v.cs, v.s = cs, &cs.Spec
	pc := &matrix.PoolFacts{Pool: &cs.Spec.NodePools[0], Machine: &m}
	v.checkGCPInterfaceFilter(pc, "NCCL_SOCKET_IFNAME", "eth1", "p")
	v.checkGCPInterfaceFilter(pc, "NCCL_IB_HCA", "mlx5_1", "q")
	v.checkGCPInterfaceFilter(pc, "NCCL_SOCKET_IFNAME", "=eth1", "r")
	v.checkGCPInterfaceFilter(pc, "NCCL_SOCKET_IFNAME", "eth", "s")
	fs := v.result()
	if len(fs) != 2 || !strings.Contains(fs[0].Message, `"eth1" also selects eth10, eth11, eth12, eth13, eth14, eth15`) || !strings.Contains(fs[1].Message, `"mlx5_1" also selects mlx5_10, mlx5_11`) {
		t.Errorf("clashing prefixes:\n%s", dump(fs))
	}
}
