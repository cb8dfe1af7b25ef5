package accept

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
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
// record did not have on the same GPU. There is one Regression per GPU
// that names it (index in nvidia-smi's order, UUID, serial and bus ID where
// the record has them) and lists its new findings once each, ordered by
// rule and message; the GPUs come in the record's order, then GPUs the
// record's hardware does not list (by name), then the node's own findings
// (no GPU). A previous finding without a GPU (a record before findings
// named one) stands for that finding on every GPU.
func healthRegressions(prev, cur *Predicate) []Regression {
	old := seenFindings(prev)
	ids := gpuIDs{cur.Hardware}
	byGPU := map[string]*gpuFindings{}
	for _, f := range cur.GPUHealth {
		g := ids.of(f.GPU)
		what := f.Rule + "\x00" + f.Message
		if old.has(g, what) {
			continue
		}
		if byGPU[g.key()] == nil {
			byGPU[g.key()] = &gpuFindings{gpu: g, seen: map[string]bool{}}
		}
		byGPU[g.key()].add(what, f)
	}
	groups := slices.Collect(maps.Values(byGPU))
	slices.SortFunc(groups, func(a, b *gpuFindings) int { return a.gpu.compare(b.gpu) })
	out := make([]Regression, 0, len(groups))
	for _, g := range groups {
		out = append(out, Regression{Kind: RegressionHealth, Message: g.message()})
	}
	return out
}

// previousFindings are a previous record's health findings by the GPU
// they name: its UUID, its bus ID and the name as given ("" for none).
type previousFindings struct {
	keys map[string]bool
	// uuids: the record lists its GPUs' UUIDs (then a GPU is matched by
	// UUID: a GPU swapped in at the same bus ID is another GPU).
	uuids bool
}

func seenFindings(prev *Predicate) previousFindings {
	s := previousFindings{keys: map[string]bool{}, uuids: slices.ContainsFunc(prev.Hardware.UUIDs, func(u string) bool { return u != "" })}
	ids := gpuIDs{prev.Hardware}
	for _, f := range prev.GPUHealth {
		g, what := ids.of(f.GPU), f.Rule+"\x00"+f.Message
		s.keys["name:"+g.name+"\x00"+what] = true
		for _, k := range [][2]string{{"uuid:", g.uuid}, {"bus:", g.bus}} {
			if k[1] != "" {
				s.keys[k[0]+k[1]+"\x00"+what] = true
			}
		}
	}
	return s
}

// has says whether the previous record had finding what on GPU g: a
// finding that named no GPU stands for every GPU; else by UUID where both
// records list UUIDs, by bus ID, else by the name as given.
func (s previousFindings) has(g gpuRef, what string) bool {
	switch {
	case s.keys["name:\x00"+what]:
		return true
	case g.uuid != "" && s.uuids:
		return s.keys["uuid:"+g.uuid+"\x00"+what]
	case g.bus != "":
		return s.keys["bus:"+g.bus+"\x00"+what]
	}
	return s.keys["name:"+g.name+"\x00"+what]
}

// gpuFindings are the new findings of one GPU, each once.
type gpuFindings struct {
	gpu      gpuRef
	seen     map[string]bool
	findings []diag.Finding
}

func (g *gpuFindings) add(what string, f diag.Finding) {
	if !g.seen[what] {
		g.seen[what] = true
		g.findings = append(g.findings, f)
	}
}

// message is "new GPU health finding(s) on GPU 3 (UUID ..., serial ...,
// bus ...): RULE: MESSAGE; RULE: MESSAGE".
func (g *gpuFindings) message() string {
	slices.SortStableFunc(g.findings, func(a, b diag.Finding) int {
		return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
	})
	parts := make([]string, len(g.findings))
	for i, f := range g.findings {
		parts[i] = f.Rule + ": " + f.Message
	}
	what := "new GPU health finding"
	if len(parts) > 1 {
		what = fmt.Sprintf("%d new GPU health findings", len(parts))
	}
	return fmt.Sprintf("%s on %s: %s", what, g.gpu.label, strings.Join(parts, "; "))
}

// gpuRef is the GPU a finding names, as a record's hardware knows it:
// its UUID and bus ID (lowercase, 8-digit domain) where the record has
// them, the name as the finding gives it ("" for the node itself), its
// position in nvidia-smi's order (-1 when the hardware does not list it)
// and how a person reads it.
type gpuRef struct {
	uuid, bus, name, label string
	index                  int
}

// key tells the GPUs of one record apart ("" for the node).
func (g gpuRef) key() string {
	switch {
	case g.name == "":
		return ""
	case g.uuid != "":
		return "uuid:" + g.uuid
	case g.bus != "":
		return "bus:" + g.bus
	}
	return "name:" + g.name
}

// compare orders the record's GPUs by index, then the unlisted ones by
// name, then the node.
func (g gpuRef) compare(o gpuRef) int {
	rank := func(r gpuRef) int {
		switch {
		case r.name == "":
			return 2
		case r.index < 0:
			return 1
		}
		return 0
	}
	if c := cmp.Compare(rank(g), rank(o)); c != 0 || rank(g) == 2 {
		return c
	}
	if c := cmp.Compare(g.index, o.index); c != 0 {
		return c
	}
	return naturalCompare(g.name, o.name)
}

// gpuIDs finds the GPU of a finding in a record's hardware.
type gpuIDs struct{ hw record.Hardware }

// of is the GPU a finding's GPU field names (a bus ID in either of
// nvidia-smi's forms, a UUID or an index).
func (ids gpuIDs) of(name string) gpuRef {
	name = strings.TrimSpace(name)
	if name == "" {
		return gpuRef{label: "the node (no GPU named)", index: -1}
	}
	i := ids.index(name)
	if i < 0 {
		return gpuRef{bus: normBusID(name), name: name, label: "GPU " + name + " (not in the record's hardware)", index: -1}
	}
	g := gpuRef{uuid: at(ids.hw.UUIDs, i), bus: normBusID(cmp.Or(at(ids.hw.BusIDs, i), name)), name: name, index: i}
	var facts []string
	for _, f := range [][2]string{{"UUID", g.uuid}, {"serial", at(ids.hw.Serials, i)}, {"bus", at(ids.hw.BusIDs, i)}} {
		if f[1] != "" {
			facts = append(facts, f[0]+" "+f[1])
		}
	}
	g.label = fmt.Sprintf("GPU %d", i)
	if len(facts) > 0 {
		g.label += " (" + strings.Join(facts, ", ") + ")"
	}
	return g
}

// index is the position of the GPU name names in the hardware's arrays:
// by bus ID, UUID or index; -1 when none matches.
func (ids gpuIDs) index(name string) int {
	count := max(len(ids.hw.BusIDs), len(ids.hw.UUIDs), ids.hw.GPUCount)
	bus := normBusID(name)
	for i := range count {
		if (bus != "" && normBusID(at(ids.hw.BusIDs, i)) == bus) || strings.EqualFold(at(ids.hw.UUIDs, i), name) {
			return i
		}
	}
	if n, err := strconv.Atoi(name); err == nil && n >= 0 && n < count {
		return n
	}
	return -1
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// normBusID is a PCI bus ID in one form, lowercase with nvidia-smi's
// 8-digit domain ("00000000:19:00.0"; -q prints 8 digits, -L and the
// XML's pci_bus_id 4 or 8); "" for a name that is no bus ID.
func normBusID(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	if strings.Count(id, ":") != 2 {
		return ""
	}
	if dom, rest, _ := strings.Cut(id, ":"); len(dom) < 8 {
		id = strings.Repeat("0", 8-len(dom)) + dom + ":" + rest
	}
	return id
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
