package diag

// ReportVerdict is what a report of one tool's output (`gpuctl parse`,
// `gpuctl probe`) concludes about the node.
type ReportVerdict string

// Report verdicts:
//   - ReportOK: the output is complete and shows no node problem;
//   - ReportFail: the output shows a node problem (hardware, or the driver's
//     state);
//   - ReportUnknown: the output cannot judge the node (truncated, garbled or
//     incomplete output, an error of the test's environment, a single-rank
//     collective).
//
// An acceptance stage maps them to Pass, Fail and Inconclusive.
const (
	ReportOK      ReportVerdict = "ok"
	ReportFail    ReportVerdict = "fail"
	ReportUnknown ReportVerdict = "unknown"
)

// Verdict is the acceptance outcome of one stage or of a whole run, as
// records carry it.
type Verdict string

// Verdicts, from best to worst. Skipped marks a stage that did not run (opted
// out, or stopped by an earlier Fail); it does not count towards a run's
// verdict.
const (
	Pass         Verdict = "PASS"
	Skipped      Verdict = "SKIPPED"
	Inconclusive Verdict = "INCONCLUSIVE"
	Fail         Verdict = "FAIL"
)

func (v Verdict) rank() int {
	switch v {
	case Pass:
		return 1
	case Inconclusive:
		return 2
	case Fail:
		return 3
	}
	return 0 // Skipped and unknown values
}

// Worst returns the run verdict of the given stage verdicts: FAIL over
// INCONCLUSIVE over PASS. SKIPPED stages are ignored; a run in which nothing
// passed, failed or was inconclusive (everything skipped, or nothing at all) is
// INCONCLUSIVE, because nothing was shown about the node.
func Worst(vs ...Verdict) Verdict {
	worst := Verdict("")
	for _, v := range vs {
		if v.rank() > worst.rank() {
			worst = v
		}
	}
	if worst == "" {
		return Inconclusive
	}
	return worst
}
