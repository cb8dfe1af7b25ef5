package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

type explainOptions struct {
	streams *IOStreams
	id      string
	out     *outputFlag
}

func newExplainCommand(streams *IOStreams) *cobra.Command {
	o := &explainOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "explain [RULE]",
		Short: "Explain a validation rule (or list them all)",
		Long: `Print the long form of a rule: what it checks, why it matters, how to fix a finding and the
sources of the facts behind it. Rule IDs are those findings carry (CUDA-DRIVER-MIN,
DEVICE-PLUGIN-CONFLICT, ...); case does not matter. Without a rule, list every rule.

Exits 2 for an unknown rule, naming the nearest IDs.`,
		Example: `  gpuctl explain CUDA-MINOR-COMPAT
  gpuctl explain device-plugin-conflict
  gpuctl explain            # every rule
  gpuctl explain NCCL-IB-DISABLE-RDMA -o json`,
		Args: maximumArgs(1, "at most one RULE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.id = args[0]
			}
			if err := o.out.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	o.out = addOutputFlag(cmd, "table", "table", "json")
	return cmd
}

// explainRule is the JSON form of a rule.
type explainRule struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Severity string   `json:"severity"`
	Summary  string   `json:"summary"`
	Long     string   `json:"long,omitempty"`
	Fix      string   `json:"fix"`
	Sources  []string `json:"sources"`
}

func toExplainRule(r matrix.Rule, long bool) explainRule {
	e := explainRule{ID: r.ID, Title: r.Title, Severity: string(r.Severity), Summary: r.Summary, Fix: r.Fix, Sources: matrixNonNil(r.Sources)}
	if long {
		e.Long = r.Long
	}
	return e
}

func (o *explainOptions) run() error {
	w := o.streams.Out
	if o.id == "" {
		rules := matrix.Rules()
		if o.out.value == "json" {
			items := make([]explainRule, 0, len(rules))
			for _, r := range rules {
				items = append(items, toExplainRule(r, false))
			}
			return render.JSON(w, struct {
				APIVersion string        `json:"apiVersion"`
				Kind       string        `json:"kind"`
				Items      []explainRule `json:"items"`
			}{spec.APIVersion, "RuleList", items})
		}
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RULE\tSEVERITY\tTITLE")
		for _, r := range rules {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Severity, r.Title)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, "\nRun 'gpuctl explain RULE' for a rule's long form.")
		return nil
	}
	r, ok := matrix.LookupRule(o.id)
	if !ok {
		return usageErrorf("unknown rule %q; did you mean %s? (run 'gpuctl explain' for the list)", o.id, strings.Join(matrix.NearestRules(o.id, 3), ", "))
	}
	if o.out.value == "json" {
		return render.JSON(w, struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			explainRule
		}{spec.APIVersion, "Rule", toExplainRule(r, true)})
	}
	fmt.Fprintf(w, "%s: %s\n", r.ID, r.Title)
	fmt.Fprintf(w, "Severity: %s\n\n", r.Severity)
	fmt.Fprintf(w, "%s\n\n", r.Summary)
	fmt.Fprintf(w, "%s\n\n", r.Long)
	fmt.Fprintf(w, "Fix: %s\n", r.Fix)
	if len(r.Sources) > 0 {
		fmt.Fprintln(w, "\nSources:")
		for _, s := range r.Sources {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	return nil
}
