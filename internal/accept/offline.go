package accept

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
)

// Rejudge re-judges the evidence a run saved in dir (run.json, the
// kubernetes.* files and each stage's logs and status) without a cluster,
// with the given parser and baselines, and returns a new Result. Stages that
// were skipped stay skipped. Errors are for a directory that is not a run's
// evidence.
func Rejudge(dir string, p Parser, bl *Baselines, version string, at time.Time) (*Result, error) {
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return nil, fmt.Errorf("not an evidence directory of gpuctl accept: %w", err)
	}
	var rf RunFile
	if err := json.Unmarshal(data, &rf); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "run.json"), err)
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
	stop := ""
	for _, old := range rf.Stages {
		if old.Verdict == diag.Skipped && stop == "" {
			s.results = append(s.results, old)
			continue
		}
		if stop != "" {
			r := result(old.Name, diag.Skipped, "%s", stop)
			s.results = append(s.results, r)
			continue
		}
		res, err := rejudgeStage(dir, s, old)
		if err != nil {
			return nil, err
		}
		res.Started, res.Finished, res.Image = old.Started, old.Finished, old.Image
		s.results = append(s.results, res)
		if res.Verdict == diag.Fail && !plan.Continue {
			stop = fmt.Sprintf("stage %s FAILED (use --continue to run the rest)", old.Name)
		}
	}
	pred := BuildPredicate(s)
	pred.Rejudged = &Rejudged{At: at.UTC(), EvidenceUnchanged: true}
	return &Result{Node: rf.Node, RunID: rf.RunID, Verdict: pred.Verdict, Stages: s.results, Predicate: pred, EvidenceDir: dir}, nil
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

func rejudgeStage(dir string, s *runState, old StageResult) (StageResult, error) {
	var ev []Evidence
	read := func(name string) ([]byte, error) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			ev = append(ev, evidenceOf(name, data))
		}
		return data, err
	}
	if old.Name == StageKubernetes {
		nd, err := read("kubernetes.node.json")
		if err != nil {
			r := result(old.Name, diag.Inconclusive, "no node evidence: %v (the live run said: %s)", err, old.Reason)
			return r, nil
		}
		var node corev1.Node
		if err := json.Unmarshal(nd, &node); err != nil {
			return StageResult{}, fmt.Errorf("kubernetes.node.json: %w", err)
		}
		pd, err := read("kubernetes.pods.json")
		if err != nil {
			return StageResult{}, err
		}
		var sums []podSummary
		if err := json.Unmarshal(pd, &sums); err != nil {
			return StageResult{}, fmt.Errorf("kubernetes.pods.json: %w", err)
		}
		pods := podsFromEvidence(sums)
		s.setNode(&node, pods)
		r := JudgeKubernetes(&node, pods, s.exp, s.plan.RunID, s.plan.Force)
		r.Evidence = ev
		return r, nil
	}
	if s.node == nil {
		if nd, err := os.ReadFile(filepath.Join(dir, "kubernetes.node.json")); err == nil {
			var node corev1.Node
			if json.Unmarshal(nd, &node) == nil {
				s.setNode(&node, nil)
			}
		}
	}
	sd, err := read(string(old.Name) + ".status.json")
	if err != nil {
		// The live run decided before any Job ran (e.g. a too-new image).
		return old, nil
	}
	var out StageOutput
	if err := json.Unmarshal(sd, &out); err != nil {
		return StageResult{}, fmt.Errorf("%s.status.json: %w", old.Name, err)
	}
	out.Logs = map[string][]byte{}
	matches, _ := filepath.Glob(filepath.Join(dir, string(old.Name)+".*.log"))
	sort.Strings(matches)
	for _, m := range matches {
		name := filepath.Base(m)
		c := strings.TrimSuffix(strings.TrimPrefix(name, string(old.Name)+"."), ".log")
		data, err := read(name)
		if err != nil {
			return StageResult{}, err
		}
		out.Logs[c] = data
	}
	sort.SliceStable(ev, func(i, j int) bool {
		si, sj := strings.HasSuffix(ev[i].Name, ".status.json"), strings.HasSuffix(ev[j].Name, ".status.json")
		if si != sj {
			return sj
		}
		return natLess(ev[i].Name, ev[j].Name)
	})
	r := Judge(old.Name, out, s.exp, s.plan.Baselines, s.parser, &s.obs)
	r.Evidence = ev
	return r, nil
}
