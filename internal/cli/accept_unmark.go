package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/cli/render"
)

// unmarkFlags are the flags of accept that --unmark takes besides the
// kube flags (--kubeconfig, --context, -n ...): which nodes, a dry run and
// its RBAC, the output and the API rate.
var unmarkFlags = map[string]bool{"unmark": true, "selector": true, "dry-run": true, "bind": true, "output": true, "quiet": true, "kube-qps": true, "kube-burst": true}

// unmarkFormats are the views of --unmark: one line per node, or a JSON
// list of the nodes.
var unmarkFormats = viewFormats[[]render.AcceptUnmarked]{
	tableFormat(func(s *IOStreams, v []render.AcceptUnmarked) error { return render.AcceptUnmarkedText(s.Out, v) }),
	jsonFormat[[]render.AcceptUnmarked](),
}

// runUnmark is accept --unmark: remove from each selected node what gpuctl
// put on it (accept.Unmark), or with --dry-run say what that would be, or
// with --dry-run -o yaml (or --bind) print the RBAC it needs. It runs no
// stage and creates no Job. Exit 1 when a node's API calls failed.
func (o *acceptOptions) runUnmark(cmd *cobra.Command) error {
	if err := o.validateUnmark(cmd); err != nil {
		return err
	}
	if o.unmarkRBAC() {
		docs := accept.DryRunObjectsWith(o.kube.namespace(), nil, o.subjects, accept.RBACFeatures{Unmark: true})
		return o.printDocs(docs)
	}
	ctx := cmd.Context()
	client, err := o.f.KubeClient(o.kube.config)
	if err != nil {
		return withCode(ExitToolError, fmt.Errorf("kubernetes client: %w", err))
	}
	nodes, read, err := o.nodeNames(ctx, client)
	var ee *ExitError
	if errors.As(err, &ee) && ee.Code == ExitInconclusive {
		ee.Code = ExitToolError // the API's error, or a selector that matches no node
	}
	if err != nil {
		return err
	}
	runID := o.f.runID()
	var out []render.AcceptUnmarked
	failed := 0
	for _, n := range nodes {
		v := o.unmarkNode(ctx, client, n, read[n], runID)
		if len(v.Errors) > 0 {
			failed++
		}
		out = append(out, v)
	}
	if err := writeOutput(o.streams, o.out, unmarkFormats, out); err != nil {
		return err
	}
	if failed > 0 {
		return withCode(ExitToolError, fmt.Errorf("--unmark: API errors on %d of %d nodes", failed, len(nodes)))
	}
	return nil
}

// validateUnmark: --unmark takes the node selection, --dry-run (with -o
// yaml or --bind: the RBAC, which names no node) and the kube flags; any
// other flag on the command line (stages, --mark, --sweep ...) is a usage
// error. Flags set from the environment are ignored.
func (o *acceptOptions) validateUnmark(cmd *cobra.Command) error {
	if err := o.out.validate(); err != nil {
		return err
	}
	kube := pflag.NewFlagSet("kube", pflag.ContinueOnError)
	newKubeFlags().config.AddFlags(kube)
	var extra []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if !unmarkFlags[f.Name] && kube.Lookup(f.Name) == nil && len(f.Annotations[fromEnvAnnotation]) == 0 {
			extra = append(extra, "--"+f.Name)
		}
	})
	sort.Strings(extra)
	switch {
	case len(extra) > 0:
		return usageErrorf("--unmark removes gpuctl's marks and runs no stage: %s does not go with it", strings.Join(extra, ", "))
	case !o.dryRun && (o.out.value == render.FormatYAML || len(o.bind) > 0):
		return usageErrorf("-o yaml and --bind print the RBAC of --unmark: add --dry-run")
	case len(o.nodes) == 0 && o.selector == "" && !o.unmarkRBAC():
		return usageErrorf("--unmark: name at least one node, or use --selector")
	}
	return o.completeSubjects()
}

// unmarkRBAC: --dry-run -o yaml or --bind prints the RBAC of --unmark.
func (o *acceptOptions) unmarkRBAC() bool {
	return o.dryRun && (o.out.value == render.FormatYAML || len(o.bind) > 0)
}

// unmarkNode unmarks node (with --dry-run: plans it from read, the node as
// nodeNames read it, or a fresh read) and reports it; an error goes to the
// node's report and, with -o json, to stderr.
func (o *acceptOptions) unmarkNode(ctx context.Context, c kubernetes.Interface, node string, read *corev1.Node, runID string) render.AcceptUnmarked {
	v := render.AcceptUnmarked{Node: node, Removed: []string{}, Errors: []string{}, DryRun: o.dryRun}
	var u *accept.Unmarked
	var err error
	switch {
	case o.dryRun && read != nil:
		u = accept.PlanUnmark(read)
	case o.dryRun:
		if read, err = c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err == nil {
			u = accept.PlanUnmark(read)
		}
	default:
		u, err = accept.Unmark(ctx, c, node, runID, o.f.Now().UTC())
	}
	if u != nil {
		v.Removed, v.Kept, v.Event = append(v.Removed, u.Removed...), u.Kept, u.Event
	}
	if err != nil {
		v.Errors = append(v.Errors, err.Error())
		if o.out.value == render.FormatJSON {
			fmt.Fprintf(o.streams.ErrOut, "error: node %s: --unmark: %v\n", node, err)
		}
	}
	return v
}
