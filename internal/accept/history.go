package accept

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/safefs"
)

// The kinds of Regression.
const (
	RegressionBusBW       = "busbw-dropped"
	RegressionHealth      = "gpu-health-new"
	RegressionDriver      = "driver-changed"
	RegressionFirmware    = "firmware-changed"
	RegressionGPUIdentity = "gpu-identity-changed"
)

// BusBWDropFraction is how far busbw may fall below the previous record's
// before it is a regression (10 %).
const BusBWDropFraction = 0.10

// FindPrevious returns the node's newest record under dir
// (dir/NODE/RUN-ID/record.dsse.json, else statement.intoto.json there) that
// finished before before and is not of run runID; nil when there is none.
// The records are read inside dir (safefs.OpenRoot: no link leads out of
// it; run folders that are links are skipped) as record.ReadFile reads
// them (regular files, record.Decode's checks); records that cannot be read
// are skipped.
func FindPrevious(dir, node, runID string, before time.Time) (*record.File, error) {
	root, err := safefs.OpenRoot(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	runs, err := root.ReadDir(node)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var best *record.File
	for _, r := range runs {
		if !r.IsDir() || r.Name() == runID {
			continue
		}
		for _, name := range []string{RecordFile, StatementFile} {
			h, err := readRecord(root, path.Join(node, r.Name(), name))
			if err != nil {
				continue
			}
			p := h.Predicate
			if p.Node.Name != node || p.RunID == runID || !p.Finished.Before(before) {
				break
			}
			if best == nil || p.Finished.After(best.Predicate.Finished) {
				best = h
			}
			break
		}
	}
	return best, nil
}

// readRecord reads and decodes the record file rel inside root.
func readRecord(root *safefs.Root, rel string) (*record.File, error) {
	data, err := root.ReadFile(rel, record.FileKind)
	if err != nil {
		return nil, err
	}
	return record.Decode(root.Path(rel), data)
}

// LinkPrevious sets cur's previous link to prev and its regressions
// against it. A prev of nil leaves cur as it is.
func LinkPrevious(cur *Predicate, prev *record.File) {
	if prev == nil {
		return
	}
	cur.Previous = &PreviousRecord{RunID: prev.Predicate.RunID, Digest: prev.Digest, Verdict: prev.Predicate.Verdict}
	cur.Regressions = Regressions(prev.Predicate, cur)
	// Only two records that each read the GPUs' identities can say the
	// hardware changed: a run without inventory (or whose inventory read
	// nothing) has the digest of no GPUs.
	none := record.HardwareDigest(nil, nil)
	if d := record.HardwareDigest(cur.Hardware.UUIDs, cur.Hardware.Serials); prev.Subject != "" && prev.Subject != none && d != none && prev.Subject != d {
		if !slices.ContainsFunc(cur.Regressions, func(r Regression) bool { return r.Kind == RegressionGPUIdentity }) {
			cur.Regressions = append(cur.Regressions, Regression{Kind: RegressionGPUIdentity,
				Message: "the GPUs' identity (UUIDs and serials) differs from the previous record: hardware was swapped"})
		}
	}
}

// Regressions compares a run with the node's previous one: busbw more than
// BusBWDropFraction below, GPU health findings the previous did not have,
// a driver, VBIOS or InfoROM change, and GPU UUIDs or serials that changed.
func Regressions(prev, cur *Predicate) []Regression {
	var out []Regression
	for _, kind := range []func(prev, cur *Predicate) []Regression{identityRegressions, busBWRegressions, healthRegressions, driverRegressions, firmwareRegressions} {
		out = append(out, kind(prev, cur)...)
	}
	return out
}

// identityRegressions: GPU UUIDs or serials that changed (hardware swapped).
func identityRegressions(prev, cur *Predicate) []Regression {
	uu, ss := diffSet(prev.Hardware.UUIDs, cur.Hardware.UUIDs), diffSet(prev.Hardware.Serials, cur.Hardware.Serials)
	if uu == "" && ss == "" {
		return nil
	}
	msg := "the GPUs differ from the previous record (hardware swapped):"
	if uu != "" {
		msg += " UUIDs " + uu
	}
	if ss != "" {
		msg += " serials " + ss
	}
	return []Regression{{Kind: RegressionGPUIdentity, Message: msg}}
}

// busBWRegressions: an NCCL busbw more than BusBWDropFraction below the
// previous run's (both measured).
func busBWRegressions(prev, cur *Predicate) []Regression {
	if prev.NCCL == nil || cur.NCCL == nil || prev.NCCL.BusBandwidthGBps <= 0 || cur.NCCL.BusBandwidthGBps <= 0 ||
		cur.NCCL.BusBandwidthGBps >= prev.NCCL.BusBandwidthGBps*(1-BusBWDropFraction) {
		return nil
	}
	drop := 100 * (1 - cur.NCCL.BusBandwidthGBps/prev.NCCL.BusBandwidthGBps)
	return []Regression{{Kind: RegressionBusBW, Message: fmt.Sprintf("NCCL busbw %.1f GB/s is %.0f %% below the previous run's %.1f GB/s (more than %.0f %%)",
		cur.NCCL.BusBandwidthGBps, drop, prev.NCCL.BusBandwidthGBps, 100*BusBWDropFraction)}}
}

// healthRegressions: GPU health findings (rule and message) the previous
// record did not have.
func healthRegressions(prev, cur *Predicate) []Regression {
	var out []Regression
	seen := map[string]bool{}
	for _, f := range prev.GPUHealth {
		seen[f.Rule+"\x00"+f.Message] = true
	}
	for _, f := range cur.GPUHealth {
		if !seen[f.Rule+"\x00"+f.Message] {
			out = append(out, Regression{Kind: RegressionHealth, Message: fmt.Sprintf("new GPU health finding %s: %s", f.Rule, f.Message)})
		}
	}
	return out
}

// driverRegressions: a driver version other than the previous run's.
func driverRegressions(prev, cur *Predicate) []Regression {
	if prev.Driver.Version == "" || cur.Driver.Version == "" || prev.Driver.Version == cur.Driver.Version {
		return nil
	}
	return []Regression{{Kind: RegressionDriver, Message: fmt.Sprintf("driver %s, the previous run had %s", cur.Driver.Version, prev.Driver.Version)}}
}

// firmwareRegressions: VBIOS or InfoROM versions that changed.
func firmwareRegressions(prev, cur *Predicate) []Regression {
	var out []Regression
	for _, fw := range []struct {
		name      string
		prev, cur []string
	}{{"VBIOS", prev.Hardware.VBIOS, cur.Hardware.VBIOS}, {"InfoROM", prev.Hardware.InfoROM, cur.Hardware.InfoROM}} {
		if d := diffSet(fw.prev, fw.cur); d != "" {
			out = append(out, Regression{Kind: RegressionFirmware, Message: fmt.Sprintf("%s changed: %s", fw.name, d)})
		}
	}
	return out
}

// diffSet describes how the non-empty values of cur differ from prev
// ("A -> B"), or "" when they are the same set (or either has none).
func diffSet(prev, cur []string) string {
	p, c := nonEmptySorted(prev), nonEmptySorted(cur)
	if len(p) == 0 || len(c) == 0 || slices.Equal(p, c) {
		return ""
	}
	var gone, added []string
	for _, v := range p {
		if !slices.Contains(c, v) {
			gone = append(gone, v)
		}
	}
	for _, v := range c {
		if !slices.Contains(p, v) {
			added = append(added, v)
		}
	}
	if len(gone) == 0 && len(added) == 0 {
		return ""
	}
	return strings.Join(gone, ",") + " -> " + strings.Join(added, ",")
}

func nonEmptySorted(v []string) []string {
	var out []string
	for _, s := range v {
		if s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// CheckPrevious returns a problem when the record p does not link the
// previous record whose file has digest ("sha256:HEX").
func CheckPrevious(p *Predicate, digest string) []string {
	switch {
	case p.Previous == nil:
		return []string{"previous: the record links no previous record"}
	case p.Previous.Digest != digest:
		return []string{fmt.Sprintf("previous: the record links %s (run %s), the given previous record is %s", p.Previous.Digest, p.Previous.RunID, digest)}
	}
	return nil
}
