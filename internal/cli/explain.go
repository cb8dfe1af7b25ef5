package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/probe"
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
		Short: "Explain a validation rule, a parse finding or an input finding (or list them all)",
		Long: `Print the long form of a rule: what it checks, why it matters, how to fix a finding and the
sources of the facts behind it, and its severity (and, where it reports another severity for
another case, each case) with the severity contract's reason:

  error    the pool will not come up, its GPUs will not be usable, or the vendor
           declares the combination unsupported (with the source)
  warning  it works today, but is deprecated, past support, or risky
  info     a note: nothing to fix, or a fact gpuctl cannot judge

Three kinds of rules, told apart by their area:
  validate  the findings of validate, generate and plan on a cluster spec; their
            IDs are upper case (CUDA-DRIVER-MIN, DEVICE-PLUGIN-CONFLICT, ...)
  parse     the findings of parse and accept on a GPU tool's output; their IDs
            are lower case (xid-reset, nccl-wrong-results, not-exercised, ...).
            A parse finding that makes the verdict unknown is a warning.
  input     what validate's -o json, yaml and sarif documents hold for an input
            it could not read or a wrong use of the command, exit 2
            (SPEC-DECODE, IMPORT-DECODE, CLI-USAGE)
Case does not matter, and _ reads as -. Without a rule, list every rule of all three.

Exits 2 for an unknown rule, naming the nearest IDs of either kind.`,
		Example: `  gpuctl explain CUDA-MINOR-COMPAT
  gpuctl explain device-plugin-conflict
  gpuctl explain xid-reset       # a finding of gpuctl parse
  gpuctl explain                 # every rule and finding
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
	// Area is "validate" for a validation rule (validate, generate, plan)
	// and "parse" for a finding of parse and accept's judges.
	Area string `json:"area"`
}

// explainSeverity is one severity of a rule: when ("" for the usual
// case), the contract's reason, and the contract's definition of it.
type explainSeverity struct {
	Severity string `json:"severity"`
	When     string `json:"when"`
	Reason   string `json:"reason"`
	Contract string `json:"contract"`
}

// The areas of explain's rules.
const (
	areaValidate = "validate"
	areaParse    = "parse"
	// areaInput: the findings that stand in validate's -o json, yaml and
	// sarif documents for an input it could not read or a wrong use
	// (inputRules); they are no rule of the validator.
	areaInput = "input"
)

// toExplainRule is a validation rule's JSON form, with its Long text
// when long.
func toExplainRule(r rules.Rule, long bool) explainRule {
	e := explainRule{ID: r.ID, Title: r.Title, Severity: string(r.Severity), SeverityReason: r.SeverityReason,
		Severities: []explainSeverity{}, Summary: r.Summary, Fix: r.Fix, Sources: matrixNonNil(r.Sources), Area: areaValidate}
	for _, c := range r.Severities() {
		e.Severities = append(e.Severities, explainSeverity{Severity: string(c.Severity), When: c.When, Reason: c.Reason, Contract: rules.ContractLine(c.Severity)})
	}
	if long {
		e.Long = r.Long
	}
	return e
}

// findingExplainRule is a parse finding rule's JSON form, with its Long
// text when long.
func findingExplainRule(r probe.FindingRule, long bool) explainRule {
	e := explainRule{ID: r.ID, Title: r.Title, Severity: string(r.Severity), SeverityReason: r.SeverityReason,
		Severities: []explainSeverity{}, Summary: r.Summary, Fix: r.Fix, Sources: matrixNonNil(r.Sources), Area: areaParse}
	for _, c := range r.Severities() {
		e.Severities = append(e.Severities, explainSeverity{Severity: string(c.Severity), When: c.When, Reason: c.Reason, Contract: rules.ContractLine(c.Severity)})
	}
	if long {
		e.Long = r.Long
	}
	return e
}

// inputSeverityReason is why an input finding is an error.
const inputSeverityReason = "nothing was validated: the input was not read, or the command was not run as asked (exit 2)."

// inputExplainRule is the JSON form of one of validate's input findings
// (inputRules); its Long text when long.
func inputExplainRule(r render.RuleInfo, long bool) explainRule {
	e := explainRule{ID: r.ID, Title: r.Title, Severity: string(diag.SeverityError), SeverityReason: inputSeverityReason,
		Severities: []explainSeverity{{Severity: string(diag.SeverityError), Reason: inputSeverityReason, Contract: rules.ContractLine(diag.SeverityError)}},
		Summary:    r.Summary, Fix: r.Help, Sources: matrixNonNil(r.Sources), Area: areaInput}
	if long {
		e.Long = "validate -o json, -o yaml and -o sarif write this finding in their document, at the file:line:column where it is known, " +
			"in place of the findings of an input that was not validated; stderr says the same as with -o table, and the exit code is 2."
	}
	return e
}

// inputRuleIDs are the IDs of inputRules, sorted.
func inputRuleIDs() []string { return slices.Sorted(maps.Keys(inputRules)) }

// lookupInputRule finds one of validate's input findings by ID, without
// case, _ read as -.
func lookupInputRule(id string) (render.RuleInfo, bool) {
	r, ok := inputRules[strings.ToUpper(strings.ReplaceAll(id, "_", "-"))]
	return r, ok
}

// severityList is "error" or "warning,info": the rule's severities.
func (e explainRule) severityList() string {
	var out []string
	for _, c := range e.Severities {
		if !slices.Contains(out, c.Severity) {
			out = append(out, c.Severity)
		}
	}
	return strings.Join(out, ",")
}

// lookupExplainRule finds a validation rule or a parse finding rule by
// ID, case-insensitively.
func lookupExplainRule(id string) (explainRule, bool) {
	if r, ok := rules.LookupRule(id); ok {
		return toExplainRule(r, true), true
	}
	if r, ok := probe.LookupFindingRule(id); ok {
		return findingExplainRule(r, true), true
	}
	if r, ok := lookupInputRule(id); ok {
		return inputExplainRule(r, true), true
	}
	return explainRule{}, false
}

// nearestExplainRules returns up to n IDs of either set closest to id,
// compared without case, for "did you mean".
func nearestExplainRules(id string, n int) []string {
	byFolded := map[string]string{}
	var folded []string
	add := func(id string) {
		f := strings.ToLower(id)
		byFolded[f] = id
		folded = append(folded, f)
	}
	for _, r := range rules.Rules() {
		add(r.ID)
	}
	for _, r := range probe.FindingRules() {
		add(r.ID)
	}
	for _, id := range inputRuleIDs() {
		add(id)
	}
	var out []string
	for _, f := range matrix.Nearest(strings.ReplaceAll(strings.ToLower(id), "_", "-"), folded, n) {
		out = append(out, byFolded[f])
	}
	return out
}

func (o *explainOptions) run() error {
	if o.id == "" {
		return writeOutput(o.streams, o.out, explainFormats, explainDoc(newRuleList(rules.Rules(), probe.FindingRules())))
	}
	r, ok := lookupExplainRule(o.id)
	if !ok {
		return usageErrorf("unknown rule %q; did you mean %s? (run 'gpuctl explain' for the list)", o.id, strings.Join(nearestExplainRules(o.id, 3), ", "))
	}
	return writeOutput(o.streams, o.out, explainFormats, explainDoc(ruleDoc{spec.APIVersion, "Rule", r}))
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

// ruleList is `explain -o json` without a rule: the validation rules,
// then the parse finding rules, then validate's input findings, each set
// sorted by ID.
type ruleList struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Items      []explainRule `json:"items"`
}

func newRuleList(validation []rules.Rule, findings []probe.FindingRule) ruleList {
	items := make([]explainRule, 0, len(validation)+len(findings)+len(inputRules))
	for _, r := range validation {
		items = append(items, toExplainRule(r, false))
	}
	for _, r := range findings {
		items = append(items, findingExplainRule(r, false))
	}
	for _, id := range inputRuleIDs() {
		items = append(items, inputExplainRule(inputRules[id], false))
	}
	return ruleList{spec.APIVersion, "RuleList", items}
}

// writeTable lists every rule with its severities, area and title.
func (l ruleList) writeTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tSEVERITY\tAREA\tTITLE")
	for _, r := range l.Items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.severityList(), r.Area, r.Title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nArea validate: a rule of validate, generate and plan; parse: a finding of parse and accept;")
	fmt.Fprintln(w, "input: an input validate could not read, or a wrong use, in its -o json/yaml/sarif document.")
	fmt.Fprintln(w, "Run 'gpuctl explain RULE' for a rule's long form.")
	return nil
}

// ruleDoc is `explain RULE -o json`: the rule's long form.
type ruleDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	explainRule
}

// writeTable writes the rule's long form: severities, summary, why, fix,
// sources.
func (d ruleDoc) writeTable(w io.Writer) error {
	r := d.explainRule
	fmt.Fprintf(w, "%s: %s\n", r.ID, r.Title)
	fmt.Fprintf(w, "Area: %s\n", areaLine[r.Area])
	fmt.Fprintf(w, "Severity: %s: %s\n", r.Severity, r.SeverityReason)
	for _, c := range r.Severities[1:] {
		fmt.Fprintf(w, "  %s when %s: %s\n", c.Severity, c.When, c.Reason)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%s\n\n", r.Summary)
	if r.Long != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimRight(r.Long, "\n"))
	}
	fmt.Fprintf(w, "Fix: %s\n", r.Fix)
	if len(r.Sources) > 0 {
		fmt.Fprintln(w, "\nSources:")
		for _, s := range r.Sources {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	return nil
}

// areaLine says in words where a rule's findings come from.
var areaLine = map[string]string{
	areaValidate: "validate (a finding of validate, generate and plan on a cluster spec)",
	areaParse:    "parse (a finding of parse and accept on a GPU tool's output)",
	areaInput:    "input (an input validate could not read, or a wrong use of it, as a finding of its -o json, yaml and sarif documents)",
}
