package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/cli/render"
)

// printDryRun prints the RBAC and, for each node, the Jobs the run would
// create, as a YAML stream. read holds the nodes nodeNames already read; the
// others are read here.
func (o *acceptOptions) printDryRun(ctx context.Context, c kubernetes.Interface, nodes []string, read map[string]*corev1.Node) error {
	var plans []*accept.NodePlan
	var objs []*corev1.Node
	for _, name := range nodes {
		node := read[name]
		if node == nil {
			var err error
			if node, err = c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil {
				if apierrors.IsNotFound(err) {
					return usageErrorf("node %s not found ('kubectl get nodes' lists the nodes)", name)
				}
				return withCode(ExitInconclusive, fmt.Errorf("reading node %s: %w", name, err))
			}
		}
		np, err := accept.PlanNode(o.plan(name, o.f.runID()), node)
		if errors.Is(err, accept.ErrNoGPUs) {
			return withCode(ExitInconclusive, err)
		}
		if err != nil {
			return err
		}
		o.noteStageProblems(np)
		plans = append(plans, np)
		objs = append(objs, node)
	}
	docs := accept.DryRunObjectsWith(o.kube.namespace(), plans, o.subjects, o.rbacFeatures())
	more, err := o.multiDryRun(objs)
	if err != nil {
		return err
	}
	return o.printDocs(append(docs, more...))
}

// noteStageProblems says on stderr which of np's stages would create no Job
// (and be INCONCLUSIVE), and why.
func (o *acceptOptions) noteStageProblems(np *accept.NodePlan) {
	for _, sp := range np.Stages {
		if sp.Problem != "" {
			fmt.Fprintf(o.streams.ErrOut, "note: node %s: stage %s would create no Job and be INCONCLUSIVE: %s\n", np.Node, sp.Stage, sp.Problem)
		}
	}
}

// printPoolDryRun plans without any API access, for the machine the spec's
// pool (or --gpus/--product) describes: one plan per named node, else one
// for a node called NODE.
func (o *acceptOptions) printPoolDryRun() error {
	exp := accept.Expectations{Source: "--gpus/--product"}
	if o.expect != nil {
		exp = *o.expect
	}
	if o.gpus > 0 {
		exp.GPUCount = o.gpus
	}
	if o.product != "" {
		exp.GPUProduct = o.product
	}
	if exp.GPUCount == 0 {
		return usageErrorf("the spec's pool does not say how many GPUs a node has: give --gpus")
	}
	names := o.nodes
	if len(names) == 0 {
		names = []string{"NODE"}
	}
	if o.multi && len(names) < 2 {
		names = []string{"NODE-1", "NODE-2"} // nccl-multi runs across nodes: plan a pair
	}
	var plans []*accept.NodePlan
	var objs []*corev1.Node
	for _, name := range names {
		p := o.plan(name, o.f.runID())
		p.Expect = &exp
		node := accept.PoolNode(name, exp, o.driverCUDA)
		np, err := accept.PlanNode(p, node)
		if err != nil {
			return err
		}
		o.noteStageProblems(np)
		plans = append(plans, np)
		objs = append(objs, node)
	}
	fmt.Fprintf(o.streams.ErrOut, "note: planned without a cluster for %d x %s (%s)\n", exp.GPUCount, dash(exp.GPUProduct), exp.Source)
	docs := accept.DryRunObjectsWith(o.kube.namespace(), plans, o.subjects, o.rbacFeatures())
	more, err := o.multiDryRun(objs)
	if err != nil {
		return err
	}
	return o.printDocs(append(docs, more...))
}

// multiDryRun returns the Services and Jobs the fleet stages (nccl-multi,
// framework-multi) would create across nodes (none without them), from the
// planning a run uses.
func (o *acceptOptions) multiDryRun(nodes []*corev1.Node) ([]any, error) {
	var out []any
	for _, st := range o.fleet {
		m := o.multiRun(st, o.f.runID(), nodes, nil)
		if o.driverCUDA != "" {
			m.DriverCUDA = o.driverCUDA
		}
		mp, err := accept.PlanMulti(m)
		if err != nil {
			return nil, err
		}
		if mp.Problem != "" {
			fmt.Fprintf(o.streams.ErrOut, "note: stage %s would create nothing and be INCONCLUSIVE: %s\n", st, mp.Problem)
		}
		if mp.Problem == "" && len(mp.Fabric.Privileged) > 0 && !o.privileged {
			fmt.Fprintf(o.streams.ErrOut, "note: stage %s would create nothing and be INCONCLUSIVE without --allow-privileged: the %s rank pods below need %s\n", st, mp.Fabric.Name, strings.Join(mp.Fabric.Privileged, "; "))
		}
		if mp.ImageNote != "" {
			fmt.Fprintf(o.streams.ErrOut, "note: stage %s: %s\n", st, mp.ImageNote)
		}
		out = append(out, mp.Objects()...)
	}
	return out, nil
}

func dash(s string) string {
	if s == "" {
		return "unknown GPU"
	}
	return s
}

// printDocs prints a dry run's objects in the -o format.
func (o *acceptOptions) printDocs(docs []any) error {
	return writeOutput(o.streams, o.out, dryRunFormats, docs)
}

// dryRunFormats are the output formats of accept's objects (--dry-run),
// and so accept's -o: a YAML stream (also for table, with a note on stderr)
// or a JSON List.
var dryRunFormats = viewFormats[[]any]{
	{render.FormatTable, writeDryRunTable},
	{render.FormatJSON, writeObjectList},
	{render.FormatYAML, writeYAMLStream},
}

// writeDryRunTable is the YAML stream, and a note on stderr on what to do
// with the RBAC.
func writeDryRunTable(s *IOStreams, docs []any) error {
	if err := writeYAMLStream(s, docs); err != nil {
		return err
	}
	fmt.Fprintln(s.ErrOut, "note: --dry-run prints YAML; bind the Role and ClusterRole to the identity that runs gpuctl")
	return nil
}

// writeObjectList writes the objects as one JSON List (kubectl's v1 List).
func writeObjectList(s *IOStreams, docs []any) error {
	return render.JSON(s.Out, map[string]any{"apiVersion": "v1", "kind": "List", "items": docs})
}

// writeYAMLStream writes the objects as YAML documents separated by "---".
func writeYAMLStream(s *IOStreams, docs []any) error {
	for i, d := range docs {
		b, err := accept.MarshalYAML(d)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(s.Out, "---")
		}
		if _, err := s.Out.Write(b); err != nil {
			return err
		}
	}
	return nil
}
