package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/rules"
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
sources of the facts behind it, and its severity (and, where it reports another severity for
another case, each case) with the severity contract's reason:

  error    the pool will not come up, its GPUs will not be usable, or the vendor
           declares the combination unsupported (with the source)
  warning  it works today, but is deprecated, past support, or risky
  info     a note: nothing to fix, or a fact gpuctl cannot judge
 Rule IDs are those findings carry (CUDA-DRIVER-MIN,
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
	o.out = addViewFlag(cmd, explainFormats)
	return cmd
}

// explainRule is the JSON form of a rule.
type explainRule struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Severity string `json:"severity"`
	// SeverityReason is the severity contract's reason for Severity;
	// Severities are every severity the rule reports, the usual one first.
	SeverityReason string            `json:"severityReason"`
	Severities     []explainSeverity `json:"severities"`
	Summary        string            `json:"summary"`
	Long           string            `json:"long,omitempty"`
	Fix            string            `json:"fix"`
	Sources        []string          `json:"sources"`
}

// explainSeverity is one severity of a rule: when ("" for the usual
// case), the contract's reason, and the contract's definition of it.
type explainSeverity struct {
	Severity string `json:"severity"`
	When     string `json:"when"`
	Reason   string `json:"reason"`
	Contract string `json:"contract"`
}

func toExplainRule(r rules.Rule, long bool) explainRule {
	e := explainRule{ID: r.ID, Title: r.Title, Severity: string(r.Severity), SeverityReason: r.SeverityReason,
		Severities: []explainSeverity{}, Summary: r.Summary, Fix: r.Fix, Sources: matrixNonNil(r.Sources)}
	for _, c := range r.Severities() {
		e.Severities = append(e.Severities, explainSeverity{Severity: string(c.Severity), When: c.When, Reason: c.Reason, Contract: rules.ContractLine(c.Severity)})
	}
	if long {
		e.Long = r.Long
	}
	return e
}

// severityList is "error" or "warning,info": the rule's severities.
func severityList(r rules.Rule) string {
	var out []string
	for _, c := range r.Severities() {
		if !slices.Contains(out, string(c.Severity)) {
			out = append(out, string(c.Severity))
		}
	}
	return strings.Join(out, ",")
}

func (o *explainOptions) run() error {
	if o.id == "" {
		return writeOutput(o.streams, o.out, explainFormats, explainDoc(newRuleList(rules.Rules())))
	}
	r, ok := rules.LookupRule(o.id)
	if !ok {
		return usageErrorf("unknown rule %q; did you mean %s? (run 'gpuctl explain' for the list)", o.id, strings.Join(rules.NearestRules(o.id, 3), ", "))
	}
	return writeOutput(o.streams, o.out, explainFormats, explainDoc(ruleDoc{spec.APIVersion, "Rule", toExplainRule(r, true), r}))
}

// explainDoc is what explain prints: every rule (ruleList) or one
// (ruleDoc). Its JSON is the value itself; writeTable is its text form.
type explainDoc interface {
	writeTable(w io.Writer) error
}

// explainFormats are explain's output formats.
var explainFormats = viewFormats[explainDoc]{
	tableFormat(writeExplainTable),
	jsonFormat[explainDoc](),
}

func writeExplainTable(s *IOStreams, d explainDoc) error { return d.writeTable(s.Out) }

// ruleList is `explain -o json` without a rule.
type ruleList struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Items      []explainRule `json:"items"`
	rules      []rules.Rule
}

func newRuleList(rules []rules.Rule) ruleList {
	items := make([]explainRule, 0, len(rules))
	for _, r := range rules {
		items = append(items, toExplainRule(r, false))
	}
	return ruleList{spec.APIVersion, "RuleList", items, rules}
}

// writeTable lists every rule with its severities and title.
func (l ruleList) writeTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tSEVERITY\tTITLE")
	for _, r := range l.rules {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, severityList(r), r.Title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nRun 'gpuctl explain RULE' for a rule's long form.")
	return nil
}

// ruleDoc is `explain RULE -o json`: the rule's long form.
type ruleDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	explainRule
	rule rules.Rule
}

// writeTable writes the rule's long form: severities, summary, why, fix,
// sources.
func (d ruleDoc) writeTable(w io.Writer) error {
	r := d.rule
	fmt.Fprintf(w, "%s: %s\n", r.ID, r.Title)
	fmt.Fprintf(w, "Severity: %s: %s\n", r.Severity, r.SeverityReason)
	for _, c := range r.Also {
		fmt.Fprintf(w, "  %s when %s: %s\n", c.Severity, c.When, c.Reason)
	}
	fmt.Fprintln(w)
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
