package accept

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// The framework-multi stage runs the framework stage's checks
// (data/framework.py) across the nodes of a group: the nccl-multi stage's
// Indexed Job, headless Service, torchrun static rendezvous and
// fabric-aware rank pods (fabric.Pod), with the checks' script instead of the
// all_reduce benchmark. Its DDP training, all-reduce and checkpoint span
// every GPU of every node of the group, over the nodes' GPU fabric.

// ContainerFrameworkMulti is the container of each framework-multi rank pod.
const ContainerFrameworkMulti = "framework-multi"

// FrameworkMultiCommand is the shell command of each framework-multi rank
// pod: write the checks' script, wait until the index-0 pod's name resolves,
// and start torchrun with a static rendezvous there (node rank = the
// completion index). The underscore spellings of torchrun's flags are the
// ones every torch from 1.13 on accepts.
func FrameworkMultiCommand() string {
	return "cat > /tmp/gpuctl-framework.py <<'GPUCTL_EOF'\n" + frameworkScript + "GPUCTL_EOF\n" +
		`i=0; until getent hosts "$MASTER_ADDR" >/dev/null 2>&1; do i=$((i+1)); [ $i -gt 300 ] && { echo "rendezvous: $MASTER_ADDR does not resolve" >&2; exit 1; }; sleep 1; done` + "\n" +
		`exec torchrun --nnodes="$GPUCTL_NNODES" --nproc_per_node="$GPUCTL_GPUS_PER_NODE" --node_rank="${JOB_COMPLETION_INDEX:-$GPUCTL_NODE_RANK}" ` +
		`--master_addr="$MASTER_ADDR" --master_port="$MASTER_PORT" /tmp/gpuctl-framework.py --device cuda --dir /tmp` + "\n"
}

// JudgeFrameworkGroup judges one framework-multi group from its ranks'
// outputs: every rank pod printed the checks' results (the framework
// parser's verdict: a failed check is FAIL, cause node; an output it cannot
// judge INCONCLUSIVE), on CUDA, over every GPU of every node (world = nodes
// x gpus, nodes = the group's), and, for a fabric, over its NCCL network.
func JudgeFrameworkGroup(g MultiGroupResult, gpus int, p Parser, pod fabric.Pod) MultiGroupResult {
	set := func(v diag.Verdict, cause, format string, args ...any) MultiGroupResult {
		g.Verdict, g.Cause, g.Reason = v, cause, fmt.Sprintf(format, args...)
		return g
	}
	if len(g.Ranks) != len(g.Nodes) {
		return set(diag.Inconclusive, CauseHarness, "%d of %d rank pods ran", len(g.Ranks), len(g.Nodes))
	}
	var first *probe.FrameworkReport
	for _, r := range g.Ranks {
		rep, v := judgeFrameworkRank(g, r, gpus, p)
		if v != nil {
			return set(v.verdict, v.cause, "%s", v.reason)
		}
		// NCCL's INFO lines sit among the checks' output: the NCCL parser
		// reads the network from them.
		if v := rankTransport(&g, r, probe.ParseNCCL(r.Log), pod); v != nil {
			return set(v.verdict, v.cause, "%s", v.reason)
		}
		if first == nil {
			first = rep
		}
	}
	return set(diag.Pass, CauseNode, "torch %s (CUDA %s) on %d nodes x %d GPUs (%s): %s", first.Torch, orDashStr(first.CUDA), len(g.Nodes), gpus, strings.Join(g.Nodes, ", "), frameworkPassText(first))
}

// judgeFrameworkRank parses one rank pod's output of group g and returns the
// report, or the group's verdict when the rank decides it.
func judgeFrameworkRank(g MultiGroupResult, r MultiRank, gpus int, p Parser) (*probe.FrameworkReport, *groupVerdict) {
	set := func(v diag.Verdict, cause, format string, args ...any) (*probe.FrameworkReport, *groupVerdict) {
		return nil, &groupVerdict{verdict: v, cause: cause, reason: fmt.Sprintf(format, args...)}
	}
	o, err := p.Parse(probe.KindFramework, r.Log)
	if err != nil || o == nil || o.Framework == nil {
		return set(diag.Inconclusive, CauseHarness, "rank %d on node %s printed no framework results: %s", r.Index, r.Node, lastLine(r.Log))
	}
	fw, want := o.Framework, len(g.Nodes)*gpus
	switch {
	case o.Verdict == diag.ReportFail:
		return set(diag.Fail, CauseNode, "across %s, rank %d on node %s: %s", strings.Join(g.Nodes, ", "), r.Index, r.Node, describe(o, diag.SeverityError, "a framework check failed"))
	case o.Verdict != diag.ReportOK:
		return set(diag.Inconclusive, CauseHarness, "rank %d on node %s: %s", r.Index, r.Node, describe(o, diag.SeverityError, "the framework output cannot be judged"))
	case r.ExitCode != nil && *r.ExitCode != 0:
		return set(diag.Inconclusive, CauseHarness, "rank %d on node %s exited %d although its checks passed", r.Index, r.Node, *r.ExitCode)
	case fw.Device != "cuda":
		return set(diag.Inconclusive, CauseHarness, "rank %d on node %s: the checks ran on %s, not on the GPUs", r.Index, r.Node, orDashStr(fw.Device))
	case fw.World != want || fw.Nodes != len(g.Nodes):
		return set(diag.Inconclusive, CauseHarness, "rank %d on node %s: the checks ran on %d ranks on %d nodes, the group has %d (%d nodes x %d GPUs)", r.Index, r.Node, fw.World, fw.Nodes, want, len(g.Nodes), gpus)
	}
	return fw, nil
}
