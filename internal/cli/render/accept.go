package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
)

// Verification is the JSON shape of `gpuctl verify -o json`.
type Verification struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Record     string   `json:"record"`
	OK         bool     `json:"ok"`
	Problems   []string `json:"problems"`
	Subject    string   `json:"subject,omitempty"`
	Digest     string   `json:"sha256,omitempty"`
	KeyID      string   `json:"keyID,omitempty"`
	RunID      string   `json:"runID,omitempty"`
	Verdict    string   `json:"verdict,omitempty"`
	// EvidenceChecked is the number of evidence files whose hash was checked
	// (0 without --evidence-dir).
	EvidenceChecked int `json:"evidenceChecked"`
	// Stages are the record's stage results (name, verdict, reason), in
	// run order: what the signed record says of each stage, network,
	// framework and the fleet stages included.
	Stages []VerificationStage `json:"stages"`
	// Template is the record mapped onto the acceptance practice's node
	// record template (record.Template: each field, the keys that hold
	// it, this record's value); absent when the record has no predicate.
	Template []record.TemplateField `json:"template,omitempty"`
	// EvidenceURI is where the operator keeps the run's evidence bundle
	// (evidenceBundle.uri, accept --evidence-uri); "" without one.
	EvidenceURI string `json:"evidenceURI,omitempty"`
}

// VerificationStage is one stage result of a verified record.
type VerificationStage struct {
	Name    string `json:"name"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
}

// VerificationText writes the verification for people.
func VerificationText(w io.Writer, v *Verification) error {
	if v.OK {
		msg := fmt.Sprintf("verified: %s (sha256 %s), run %s, verdict %s, signed by key %s", v.Subject, short(v.Digest), v.RunID, v.Verdict, short(v.KeyID))
		if v.EvidenceChecked > 0 {
			msg += fmt.Sprintf("; %d evidence files match", v.EvidenceChecked)
		}
		if _, err := fmt.Fprintln(w, msg); err != nil {
			return err
		}
		if v.Digest == record.HardwareDigest(nil, nil) { // the digest of no GPUs
			if _, err := fmt.Fprintln(w, "  note: the record binds no GPU identities (no inventory stage ran): its subject digest is the sha256 of an empty list"); err != nil {
				return err
			}
		}
		if err := verifiedStages(w, v.Stages); err != nil {
			return err
		}
		return verifiedTemplate(w, v.Template)
	}
	if _, err := fmt.Fprintf(w, "NOT verified: %s\n", v.Record); err != nil {
		return err
	}
	for _, p := range v.Problems {
		if _, err := fmt.Fprintf(w, "  - %s\n", p); err != nil {
			return err
		}
	}
	return nil
}

func short(s string) string {
	if len(s) > 16 {
		return s[:16] + "…"
	}
	return s
}

// AcceptNode is one node's outcome, for the human summary.
type AcceptNode struct {
	Node        string
	RunID       string
	Verdict     diag.Verdict
	Stages      []AcceptStage
	EvidenceDir string
	Record      string
	Signed      bool
	Err         error
	// Duration is the node's run time.
	Duration time.Duration
	// Mark is what --mark did to the node (nil without --mark or when
	// marking stopped).
	Mark *AcceptMark
	// Previous is the node's previous record ("RUN-ID (VERDICT)"), ""
	// when none was found; Regressions are what got worse since then.
	Previous    string
	Regressions []Regression
	// Curve is the nccl stage's busbw by size (nil when it did not run).
	Curve *BusbwCurve
	// Bundle is the evidence bundle (--evidence-uri); nil without one.
	Bundle *AcceptBundle
	// Sweep is what accept --sweep did to the node besides Mark: the
	// quarantine, the GPUAccepted condition, the records ConfigMap (nil
	// without --sweep).
	Sweep *AcceptSweep
}

// AcceptSweep is what accept --sweep did to one probed node.
type AcceptSweep struct {
	// Quarantined: a FAIL cordoned and tainted (or kept so) within
	// --max-unhealthy.
	Quarantined bool `json:"quarantined"`
	// NotQuarantined says why a FAIL was marked but not quarantined (the
	// cap was reached); "" otherwise.
	NotQuarantined string `json:"notQuarantined,omitempty"`
	// Returned: a PASS took off the quarantine gpuctl had put on.
	Returned bool `json:"returned"`
	// Condition is the GPUAccepted condition set, "STATUS (REASON)".
	Condition string `json:"condition,omitempty"`
	// RecordConfigMap is "NAMESPACE/NAME" of the ConfigMap holding the
	// node's newest record (--records-configmap).
	RecordConfigMap string `json:"recordConfigMap,omitempty"`
	// Errors are the sweep's steps that failed on the node (the condition,
	// the records ConfigMap: a record too large for one, say).
	Errors []string `json:"errors,omitempty"`
}

// AcceptSkipped is a node a sweep did not probe, and why (busy: a pod not
// gpuctl's holds GPUs).
type AcceptSkipped struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

// AcceptBundle is a node's evidence bundle: the file written, its sha256
// and the URI the operator stores it at.
type AcceptBundle struct {
	Path, SHA256, URI string
}

// Regression is one thing that got worse since the node's previous record.
type Regression struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (r Regression) String() string { return r.Kind + ": " + r.Message }

// regressionKinds lists the kinds of rs once each, with how many of a
// kind there are when more than one ("busbw-dropped,gpu-health-new x8":
// one health regression per GPU).
func regressionKinds(rs []Regression) string {
	var kinds []string
	count := map[string]int{}
	for _, r := range rs {
		if count[r.Kind]++; count[r.Kind] == 1 {
			kinds = append(kinds, r.Kind)
		}
	}
	for i, k := range kinds {
		if count[k] > 1 {
			kinds[i] = fmt.Sprintf("%s x%d", k, count[k])
		}
	}
	return strings.Join(kinds, ",")
}

// writeRegressions writes what got worse since the previous record: one
// on the line, several one a line below it.
func writeRegressions(w io.Writer, rs []Regression) {
	switch len(rs) {
	case 0:
		fmt.Fprintln(w, "  regressions: none")
	case 1:
		fmt.Fprintln(w, "  regressions: "+rs[0].String())
	default:
		fmt.Fprintf(w, "  regressions: %d\n", len(rs))
		for _, r := range rs {
			fmt.Fprintln(w, "    - "+r.String())
		}
	}
}

// AcceptMark is what --mark did to one node.
type AcceptMark struct {
	Label   string   `json:"label,omitempty"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Event   string   `json:"event,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Events are the quarantine and return Events (--sweep).
	Events []string `json:"events,omitempty"`
}

// AcceptStage is one stage's outcome in the node's table.
type AcceptStage struct {
	Name    string
	Verdict diag.Verdict
	Reason  string
	Cause   string
}

// LabelAcceptPrefix is how the marked line shows the node's label.
const LabelAcceptPrefix = "gpuctl.dev/accept="

// writeEvidenceLines writes where a node's evidence, bundle and record are.
func writeEvidenceLines(w io.Writer, n AcceptNode) {
	fmt.Fprintf(w, "  evidence: %s\n", n.EvidenceDir)
	if b := n.Bundle; b != nil {
		fmt.Fprintf(w, "  evidence bundle: %s (sha256 %s) -> %s\n", b.Path, b.SHA256, oneLine(b.URI))
	}
	if n.Record != "" {
		kind := "signed record"
		if !n.Signed {
			kind = "UNSIGNED statement (no --key)"
		}
		fmt.Fprintf(w, "  %s: %s\n", kind, n.Record)
	}
}

// AcceptText writes one node's stage table for people (stderr); on a
// terminal (tty) the nccl stage's busbw by size follows as a sparkline.
func AcceptText(w io.Writer, tty bool, n AcceptNode) error {
	if n.Err != nil {
		_, err := fmt.Fprintf(w, "node %s: error: %v\n", n.Node, n.Err)
		return err
	}
	fmt.Fprintf(w, "node %s  run %s  verdict %s\n", n.Node, n.RunID, n.Verdict)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  STAGE\tVERDICT\tCAUSE\tREASON")
	for _, s := range n.Stages {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.Name, s.Verdict, dash(s.Cause), oneLine(s.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if line := Sparkline(n.Curve); tty && line != "" {
		fmt.Fprintf(w, "  %s\n", line)
	}
	writeEvidenceLines(w, n)
	if n.Previous != "" {
		fmt.Fprintf(w, "  previous: %s\n", n.Previous)
		writeRegressions(w, n.Regressions)
	}
	if m := n.Mark; m != nil && m.Error == "" {
		line := "  marked: " + LabelAcceptPrefix + m.Label
		if len(m.Added) > 0 {
			line += ", added " + strings.Join(m.Added, ",")
		}
		if len(m.Removed) > 0 {
			line += ", removed " + strings.Join(m.Removed, ",")
		}
		fmt.Fprintln(w, line+", event "+m.Event)
	}
	writeSweepLines(w, n.Sweep)
	return nil
}

// writeSweepLines writes what the sweep did to a probed node.
func writeSweepLines(w io.Writer, sw *AcceptSweep) {
	if sw == nil {
		return
	}
	switch {
	case sw.Quarantined:
		fmt.Fprintln(w, "  quarantined: cordoned, tainted "+quarantineTaint)
	case sw.NotQuarantined != "":
		fmt.Fprintln(w, "  NOT quarantined: "+sw.NotQuarantined)
	case sw.Returned:
		fmt.Fprintln(w, "  returned to scheduling (the quarantine gpuctl added is removed)")
	}
	if sw.Condition != "" {
		fmt.Fprintln(w, "  condition GPUAccepted="+sw.Condition)
	}
	if sw.RecordConfigMap != "" {
		fmt.Fprintln(w, "  record ConfigMap: "+sw.RecordConfigMap)
	}
	for _, e := range sw.Errors {
		fmt.Fprintln(w, "  error: "+oneLine(e))
	}
}

// quarantineTaint is how the quarantined line names gpuctl's taint.
const quarantineTaint = "gpuctl.dev/unaccepted=fail:NoSchedule"

// AcceptSkippedText writes the nodes a sweep skipped, one line each.
func AcceptSkippedText(w io.Writer, skipped []AcceptSkipped) error {
	for _, s := range skipped {
		if _, err := fmt.Fprintf(w, "node %s  SKIPPED  %s: not probed, not changed\n", s.Node, oneLine(s.Reason)); err != nil {
			return err
		}
	}
	return nil
}

// AcceptSummary writes the table of many nodes.
func AcceptSummary(w io.Writer, nodes []AcceptNode) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tVERDICT\tTIME\tFIRST PROBLEM\tREGRESSIONS\tRECORD")
	for _, n := range nodes {
		verdict, problem := string(n.Verdict), ""
		if n.Err != nil {
			verdict, problem = "ERROR", n.Err.Error()
		}
		for _, s := range n.Stages {
			if problem == "" && (s.Verdict == diag.Fail || s.Verdict == diag.Inconclusive) {
				problem = fmt.Sprintf("%s: %s", s.Name, oneLine(s.Reason))
			}
		}
		if len(problem) > 90 {
			problem = problem[:89] + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1fs\t%s\t%s\t%s\n", n.Node, verdict, n.Duration.Seconds(), dash(problem), dash(regressionKinds(n.Regressions)), dash(n.Record))
	}
	return tw.Flush()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// verifiedTemplate writes the record's template fields, one per line,
// "-" for what the record does not hold.
func verifiedTemplate(w io.Writer, fields []record.TemplateField) error {
	if len(fields) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w, "record template:"); err != nil {
		return err
	}
	for _, f := range fields {
		if _, err := fmt.Fprintf(w, "  %-36s %s\n", f.Field+":", dash(f.Value)); err != nil {
			return err
		}
	}
	return nil
}

// verifiedStages writes the stages that ran (not SKIPPED), one per line.
func verifiedStages(w io.Writer, stages []VerificationStage) error {
	for _, s := range stages {
		if s.Verdict == "SKIPPED" {
			continue
		}
		if _, err := fmt.Fprintf(w, "  %-15s %-12s %s\n", s.Name, s.Verdict, s.Reason); err != nil {
			return err
		}
	}
	return nil
}
