package accept

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/safefs"
)

// Rejudge re-judges the evidence a run saved in dir (run.json, the
// kubernetes.* files and each stage's logs and status) without a cluster,
// with the given parser and baselines, and returns a new Result. Stages that
// were skipped stay skipped. Every file is read inside dir (safefs.OpenRoot:
// no link leads out of it) as safefs.Evidence (a regular file of at most
// 16 MiB), and every JSON file is held to record.CheckJSON (no member
// twice, none that differ only in case, nothing after the value, at most
// 64 levels) before it is decoded. Errors are for a directory that is not a
// run's evidence, and name the file, never its content.
func Rejudge(dir string, p Parser, bl *Baselines, version string, at time.Time) (*Result, error) {
	root, err := safefs.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("not an evidence directory of gpuctl accept: %w", err)
	}
	defer root.Close()
	var rf RunFile
	if err := readJSON(root, "run.json", &rf); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("not an evidence directory of gpuctl accept: %w", err)
	} else if err != nil {
		return nil, err
	}
	if rf.FormatVersion != "1" {
		return nil, fmt.Errorf("run.json formatVersion %q, want \"1\"", rf.FormatVersion)
	}
	if err := checkEvidence(dir, rf.Stages); err != nil {
		return nil, err
	}
	plan := Plan{Node: rf.Node, RunID: rf.RunID, Namespace: rf.Namespace, Baselines: bl, EvidenceDir: dir, Version: version,
		Force: rf.Force, Continue: rf.Continue, NCCLMaxBytes: rf.Thresholds.NCCLMaxBytes, DCGMLevel: rf.Thresholds.DCGMLevel,
		StageTimeout: time.Duration(rf.Thresholds.StageTimeoutSeconds) * time.Second, RunTimeout: time.Duration(rf.Thresholds.RunTimeoutSeconds) * time.Second}
	if rf.ExpectFixed {
		e := rf.Expectations
		plan.Expect = &e
	}
	s := &runState{parser: p, plan: plan, images: map[Stage]Image{}, started: rf.Started, finished: rf.Finished, exp: rf.Expectations}
	for st, ref := range rf.Images {
		s.images[Stage(st)] = Image{Ref: ref}
	}
	if err := rejudgeStages(root, s, rf.Stages); err != nil {
		return nil, err
	}
	pred := BuildPredicate(s)
	pred.Rejudged = &Rejudged{At: at.UTC(), EvidenceUnchanged: true}
	return &Result{Node: rf.Node, RunID: rf.RunID, Verdict: pred.Verdict, Stages: s.results, Predicate: pred, EvidenceDir: dir}, nil
}

// rejudgeStages re-judges the live run's stages into s.results, in order:
// a stage SKIPPED live stays so, one after a FAIL (without --continue) is
// SKIPPED, an evidence stage keeps its capture.
func rejudgeStages(root *safefs.Root, s *runState, stages []StageResult) error {
	stop := ""
	for _, old := range stages {
		if old.Verdict == diag.Skipped && stop == "" {
			s.results = append(s.results, old)
			continue
		}
		if d, _ := stageOf(old.Name); stop != "" && !d.evidence {
			r := result(old.Name, diag.Skipped, "%s", stop)
			s.results = append(s.results, r)
			continue
		}
		res, err := rejudgeStage(root, s, old)
		if err != nil {
			return err
		}
		res.Started, res.Finished, res.Image = old.Started, old.Finished, old.Image
		s.results = append(s.results, res)
		if res.Verdict == diag.Fail && !s.plan.Continue {
			stop = fmt.Sprintf("stage %s FAILED (use --continue to run the rest)", old.Name)
		}
	}
	return nil
}

// ErrEvidenceChanged is returned by Rejudge when an evidence file no longer
// has the sha256 (or size) the live run recorded for it.
var ErrEvidenceChanged = errors.New("evidence changed since the run")

// checkEvidence compares every evidence file named in the live run's stage
// results with its recorded sha256 and size. A re-judged record must say
// the same evidence, not edited copies.
func checkEvidence(dir string, stages []StageResult) error {
	var bad []string
	record.WalkEvidence(dir, stages, func(want, got Evidence, err error) {
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s: %v", want.Name, err))
		case got != want:
			bad = append(bad, fmt.Sprintf("%s: sha256 %s (%d bytes), the run recorded %s (%d bytes)", want.Name, got.SHA256, got.Bytes, want.SHA256, want.Bytes))
		}
	})
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrEvidenceChanged, strings.Join(bad, "; "))
	}
	return nil
}

// readJSON decodes the JSON file name inside root into v, after
// record.CheckJSON; errors name the file and quote no content.
func readJSON(root *safefs.Root, name string, v any) error {
	data, err := root.ReadFile(name, safefs.Evidence)
	if err != nil {
		return err
	}
	return decodeJSON(root.Path(name), data, v)
}

// decodeJSON decodes data, the file named path, into v after
// record.CheckJSON (with v's shape).
func decodeJSON(path string, data []byte, v any) error {
	if err := record.CheckJSON(data, reflect.ValueOf(v).Elem().Interface()); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: %s is a JSON %s, want %s", path, cmp.Or(te.Field, "the value"), te.Value, te.Type)
		}
		return fmt.Errorf("%s: not the JSON gpuctl accept wrote", path)
	}
	return nil
}

func rejudgeStage(root *safefs.Root, s *runState, old StageResult) (StageResult, error) {
	var ev []Evidence
	read := func(name string) ([]byte, error) {
		data, err := root.ReadFile(name, safefs.Evidence)
		if err == nil {
			ev = append(ev, evidenceOf(name, data))
		}
		return data, err
	}
	if old.Name == StageKubernetes {
		return rejudgeKubernetes(root, s, old, read, &ev)
	}
	if d, _ := stageOf(old.Name); d.evidence {
		return old, nil // it captured, and judged nothing; its files are checked unchanged
	}
	if s.node == nil {
		var node corev1.Node
		if readJSON(root, "kubernetes.node.json", &node) == nil {
			s.setNode(&node, nil)
		}
	}
	sd, err := read(string(old.Name) + ".status.json")
	if err != nil {
		// The live run decided before any Job ran (e.g. a too-new image).
		return old, nil
	}
	var out StageOutput
	if err := decodeJSON(root.Path(string(old.Name)+".status.json"), sd, &out); err != nil {
		return StageResult{}, err
	}
	if out.Logs, err = stageLogs(root, old.Name, read); err != nil {
		return StageResult{}, err
	}
	sort.SliceStable(ev, func(i, j int) bool {
		si, sj := strings.HasSuffix(ev[i].Name, ".status.json"), strings.HasSuffix(ev[j].Name, ".status.json")
		if si != sj {
			return sj
		}
		return matrix.NaturalLess(ev[i].Name, ev[j].Name)
	})
	r := Judge(old.Name, out, s.exp, s.plan.Baselines, s.parser, &s.obs)
	r.Evidence = ev
	return r, nil
}

// rejudgeKubernetes re-judges the kubernetes stage from the node and pod
// evidence.
func rejudgeKubernetes(root *safefs.Root, s *runState, old StageResult, read func(string) ([]byte, error), ev *[]Evidence) (StageResult, error) {
	nd, err := read("kubernetes.node.json")
	if err != nil {
		r := result(old.Name, diag.Inconclusive, "no node evidence: %v (the live run said: %s)", err, old.Reason)
		return r, nil
	}
	var node corev1.Node
	if err := decodeJSON(root.Path("kubernetes.node.json"), nd, &node); err != nil {
		return StageResult{}, err
	}
	pd, err := read("kubernetes.pods.json")
	if err != nil {
		return StageResult{}, err
	}
	var sums []podSummary
	if err := decodeJSON(root.Path("kubernetes.pods.json"), pd, &sums); err != nil {
		return StageResult{}, err
	}
	pods := podsFromEvidence(sums)
	s.setNode(&node, pods)
	r := JudgeKubernetes(&node, pods, s.exp, s.plan.RunID, s.plan.Force)
	r.Evidence = *ev
	return r, nil
}

// stageLogs reads the logs STAGE.CONTAINER.log of stage in root, by
// container, in name order.
func stageLogs(root *safefs.Root, stage Stage, read func(string) ([]byte, error)) (map[string][]byte, error) {
	ents, err := root.ReadDir(".")
	if err != nil {
		return nil, err
	}
	logs := map[string][]byte{}
	prefix := string(stage) + "."
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ".log") || len(name) <= len(prefix)+len(".log") {
			continue
		}
		data, err := read(name)
		if err != nil {
			return nil, err
		}
		logs[strings.TrimSuffix(strings.TrimPrefix(name, prefix), ".log")] = data
	}
	return logs, nil
}
