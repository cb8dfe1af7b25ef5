package matrix

import (
	"fmt"
	"maps"
	"strings"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// nccl.yaml: NCCL's environment, the GPU fabrics and their transports,
// the single- and multi-node all_reduce baselines; their index and lookups.

// ncclFile is data/nccl.yaml as decoded; indexed by (*catalog).indexNCCL.
type ncclFile struct {
	Env struct {
		Provenance     `yaml:",inline"`
		Known          []string          `yaml:"known"`
		PluginPrefixes []string          `yaml:"plugin_prefixes"`
		Misspellings   map[string]string `yaml:"misspellings"`
		Facts          []struct {
			Provenance `yaml:",inline"`
			Name       string `yaml:"name"`
			Fact       string `yaml:"fact"`
		} `yaml:"facts"`
	} `yaml:"env"`
	Fabrics    []fabricFact  `yaml:"fabrics"`
	MachineEnv []machineEnv  `yaml:"machine_env"`
	Baselines  baselinesFile `yaml:"baselines"`
	MultiNode  multiNodeFile `yaml:"multi_node"`
	// GPUDirectImages pin each GKE GPUDirect fabric's images.
	GPUDirectImages []gpudirectImages `yaml:"gpudirect_images"`
}

// machineEnv is the NCCL environment Google documents for the workloads of
// one GPUDirect machine type (its fabric's env comes first).
type machineEnv struct {
	Provenance `yaml:",inline"`
	Machine    string            `yaml:"machine"`
	Fabric     string            `yaml:"fabric"`
	Env        map[string]string `yaml:"env"`
}

// multiNodeFile holds the multi-node all_reduce baselines per GPU fabric.
type multiNodeFile struct {
	AsOf    string            `yaml:"as_of"`
	Fabrics []multiNodeFabric `yaml:"fabrics"`
}

// multiNodeFabric is one fabric's multi-node all_reduce_perf baseline, or
// NoFigure: why there is none.
type multiNodeFabric struct {
	Provenance  `yaml:",inline"`
	Fabric      string        `yaml:"fabric"`
	Machines    []string      `yaml:"machines"`
	GPUsPerNode int           `yaml:"gpus_per_node"`
	MinBusBW    float64       `yaml:"min_busbw_gbps"`
	MinAlgo     string        `yaml:"min_algo"`
	MinBytes    int64         `yaml:"min_bytes"`
	Confidence  string        `yaml:"confidence"`
	NoFigure    string        `yaml:"no_figure"`
	Figures     []busbwFigure `yaml:"figures"`
}

type fabricFact struct {
	Provenance  `yaml:",inline"`
	Name        string   `yaml:"name"`
	Plugin      string   `yaml:"plugin"`
	NetName     string   `yaml:"net_name"`
	EnvPrefixes []string `yaml:"env_prefixes"`
	Fact        string   `yaml:"fact"`
	// Env are the variables the transport needs in the workload pods, and
	// NICEnv the variables that take the list of GPU NICs (eth1,...,ethN);
	// EnvSource is where both are documented.
	Env       map[string]string `yaml:"env"`
	NICEnv    []string          `yaml:"nic_env"`
	EnvSource string            `yaml:"env_source"`
}

type baselinesFile struct {
	AsOf        string        `yaml:"as_of"`
	MinFraction float64       `yaml:"min_fraction"`
	SKUs        []baselineSKU `yaml:"skus"`
	PerNIC      []busbwFigure `yaml:"per_nic"`
}

// baselineSKU is one GPU SKU's single-node all_reduce_perf baseline.
type baselineSKU struct {
	Provenance  `yaml:",inline"`
	SKU         string   `yaml:"sku"`
	ID          string   `yaml:"id"`
	Description string   `yaml:"description"`
	GPU         string   `yaml:"gpu"`
	GPUMatch    []string `yaml:"gpu_match"`
	GPUs        int      `yaml:"gpus"`
	GPULink     string   `yaml:"gpu_link"`
	MinBusBW    float64  `yaml:"min_busbw_gbps"`
	MinAlgo     string   `yaml:"min_algo"`
	MinBytes    int64    `yaml:"min_bytes"`
	Confidence  string   `yaml:"confidence"`
	// NoFigure, when set, says why the SKU has no published figure (then
	// it has no minimum and no figures; gpus 0 matches any GPU count).
	NoFigure string        `yaml:"no_figure"`
	Figures  []busbwFigure `yaml:"figures"`
}

// busbwFigure is a published bus bandwidth range and the NCCL algorithm it
// assumes.
type busbwFigure struct {
	Provenance `yaml:",inline"`
	ID         string  `yaml:"id"`
	Algo       string  `yaml:"algo"`
	Default    bool    `yaml:"default"`
	MinGBps    float64 `yaml:"min_gbps"`
	MaxGBps    float64 `yaml:"max_gbps"`
	Estimate   string  `yaml:"estimate"`
}

// indexNCCL checks and indexes nccl.yaml: the known NCCL variables, the
// single-node baselines (each of a known GPU) and the multi-node baselines
// (each of a known fabric and of machines on it).
func (c *catalog) indexNCCL() error {
	c.ncclKnown = map[string]bool{}
	for _, k := range c.nccl.Env.Known {
		c.ncclKnown[k] = true
	}
	for i := range c.nccl.Baselines.SKUs {
		b := &c.nccl.Baselines.SKUs[i]
		if _, ok := c.products[b.GPU]; !ok {
			return fmt.Errorf("nccl baseline %s: unknown gpu %q", b.SKU, b.GPU)
		}
		if err := b.check(); err != nil {
			return err
		}
	}
	fabrics := map[string]bool{}
	for _, f := range c.nccl.Fabrics {
		fabrics[f.Name] = true
	}
	for i := range c.nccl.MultiNode.Fabrics {
		f := &c.nccl.MultiNode.Fabrics[i]
		if !fabrics[f.Fabric] {
			return fmt.Errorf("multi-node baseline: unknown fabric %q", f.Fabric)
		}
		if err := c.checkMultiNode(f); err != nil {
			return err
		}
	}
	return c.checkImages(fabrics)
}

// check holds a single-node baseline to its shape: with no_figure, GPU
// matches and provenance and no minimum or figures; else a GPU count, GPU
// matches, a minimum with its algorithm, and figures.
func (b *baselineSKU) check() error {
	if b.NoFigure != "" {
		if b.MinBusBW != 0 || len(b.Figures) > 0 || len(b.GPUMatch) == 0 || b.Source == "" || b.AsOf == "" {
			return fmt.Errorf("nccl baseline %s: no_figure takes gpu_match, source and as_of, and no minimum or figures", b.SKU)
		}
		return nil
	}
	if b.GPUs <= 0 || b.MinBusBW <= 0 || b.MinAlgo == "" || len(b.GPUMatch) == 0 || len(b.Figures) == 0 {
		return fmt.Errorf("nccl baseline %s: needs gpus, gpu_match, min_busbw_gbps, min_algo and figures", b.SKU)
	}
	return nil
}

// checkMultiNode holds a multi-node baseline to machines of its fabric,
// a GPU count per node and provenance, and to figures or no_figure
// (checkFigures).
func (c *catalog) checkMultiNode(f *multiNodeFabric) error {
	for _, m := range f.Machines {
		mc, ok := c.machines[spec.ProviderGKE][m]
		if !ok {
			mc, ok = c.machines[spec.ProviderEKS][m]
		}
		if !ok || mc.Fabric != f.Fabric {
			return fmt.Errorf("multi-node baseline %s: machine %s is not a machine of that fabric", f.Fabric, m)
		}
	}
	if f.Source == "" || f.AsOf == "" || len(f.Machines) == 0 || f.GPUsPerNode <= 0 {
		return fmt.Errorf("multi-node baseline %s: needs machines, gpus_per_node, source and as_of", f.Fabric)
	}
	return f.checkFigures()
}

// checkFigures: no_figure takes no minimum or figures; without it the
// baseline needs a minimum with its algorithm and message size, and figures.
func (f *multiNodeFabric) checkFigures() error {
	if f.NoFigure != "" {
		if f.MinBusBW != 0 || len(f.Figures) > 0 {
			return fmt.Errorf("multi-node baseline %s: no_figure takes no minimum or figures", f.Fabric)
		}
		return nil
	}
	if f.MinBusBW <= 0 || f.MinAlgo == "" || f.MinBytes <= 0 || len(f.Figures) == 0 {
		return fmt.Errorf("multi-node baseline %s: needs min_busbw_gbps, min_algo, min_bytes and figures (or no_figure)", f.Fabric)
	}
	return nil
}

// NCCLBaselineFact is a healthy all_reduce_perf bus bandwidth for a node
// type, at large message sizes (>= 1-8 GB), and the acceptance minimum of
// that node type.
type NCCLBaselineFact struct {
	// ID names the baseline ("H100-SXM-8"; "H100-SXM-8-RING" for the figure
	// with a non-default algorithm).
	ID string `json:"id"`
	// GPU is the product ID; GPUs the GPUs per node it was measured on.
	GPU  string `json:"gpu,omitempty"`
	GPUs int    `json:"gpus,omitempty"`
	// MinBusBandwidthGBps and MaxBusBandwidthGBps bound the healthy busbw
	// in GB/s with Algo.
	MinBusBandwidthGBps float64 `json:"minBusBandwidthGBps,omitempty"`
	MaxBusBandwidthGBps float64 `json:"maxBusBandwidthGBps,omitempty"`
	// Algo is the NCCL algorithm the range assumes ("NVLS (default)",
	// "RING"; "default" where the figure does not say).
	Algo string `json:"algo,omitempty"`
	// AcceptanceMinBusBandwidthGBps is the minimum `gpuctl accept` judges
	// the node type against, and AcceptanceAlgo the algorithm whose figure
	// it is derived from (90% of RING's ~370 GB/s on 8x H100 SXM: 333).
	AcceptanceMinBusBandwidthGBps float64  `json:"acceptanceMinBusBandwidthGBps,omitempty"`
	AcceptanceAlgo                string   `json:"acceptanceAlgo,omitempty"`
	Confidence                    string   `json:"confidence,omitempty"`
	Note                          string   `json:"note,omitempty"`
	Sources                       []string `json:"sources,omitempty"`
	AsOf                          string   `json:"asOf"`
}

// NCCLBusBandwidth is one published all_reduce_perf bus bandwidth range and
// the NCCL algorithm it assumes.
type NCCLBusBandwidth struct {
	// Algo is the NCCL algorithm (NCCL_ALGO: NVLS, RING, ...), or "default"
	// where the figure does not say which one NCCL chose.
	Algo string `json:"algo"`
	// Default is true when NCCL picks Algo by itself on the SKU.
	Default bool `json:"default,omitempty"`
	// MinBusBandwidthGBps and MaxBusBandwidthGBps bound the figure (GB/s).
	MinBusBandwidthGBps float64 `json:"minBusBandwidthGBps"`
	MaxBusBandwidthGBps float64 `json:"maxBusBandwidthGBps"`
	// Estimate says how an estimated figure was reckoned; empty when measured.
	Estimate string   `json:"estimate,omitempty"`
	Note     string   `json:"note,omitempty"`
	Sources  []string `json:"sources"`
	AsOf     string   `json:"asOf"`
}

// Text is the figure for people: "~450-480 GB/s with NVLS (default)",
// "~370 GB/s with NCCL_ALGO=RING".
func (f NCCLBusBandwidth) Text() string {
	r := fmt.Sprintf("~%g-%g GB/s", f.MinBusBandwidthGBps, f.MaxBusBandwidthGBps)
	if f.MaxBusBandwidthGBps <= f.MinBusBandwidthGBps {
		r = fmt.Sprintf("~%g GB/s", f.MinBusBandwidthGBps)
	}
	switch {
	case f.Algo == "default":
		r += " with NCCL's default algorithm"
	case f.Default:
		r += " with " + f.Algo + " (default)"
	default:
		r += " with NCCL_ALGO=" + f.Algo
	}
	if f.Estimate != "" {
		r += " (estimate: " + f.Estimate + ")"
	}
	return r
}

// NCCLSKUBaseline is the single-node NCCL all_reduce_perf baseline of one GPU
// SKU: the published figures and the acceptance minimum `gpuctl accept`
// judges its nccl stage against.
type NCCLSKUBaseline struct {
	// SKU names it ("h100-sxm-x8").
	SKU         string `json:"sku"`
	Description string `json:"description,omitempty"`
	// GPU is the matrix product ID; GPUMatch are substrings of the product
	// name (see GPUNameContains) that identify the SKU, telling SXM from PCIe
	// where one product covers both.
	GPU      string   `json:"gpu"`
	GPUMatch []string `json:"gpuMatch"`
	// GPUs is the GPU count of the node.
	GPUs int `json:"gpus"`
	// GPULink is the link class topo -m shows on every GPU pair ("NV18").
	GPULink string `json:"gpuLink,omitempty"`
	// MinBusBandwidthGBps is the acceptance minimum at the largest message
	// size: min_fraction of the figure with MinAlgo.
	MinBusBandwidthGBps float64 `json:"minBusBandwidthGBps"`
	MinAlgo             string  `json:"minAlgo"`
	// MinBytes is the smallest largest-message size that is judged.
	MinBytes   int64  `json:"minBytes"`
	Confidence string `json:"confidence,omitempty"`
	Note       string `json:"note,omitempty"`
	// NoFigure, when set, says why no published figure exists: the SKU has
	// no minimum, and accept does not judge its busbw (INCONCLUSIVE).
	NoFigure string             `json:"noFigure,omitempty"`
	Figures  []NCCLBusBandwidth `json:"figures"`
	// Sources are the SKU's and its figures' sources, without repeats.
	Sources []string `json:"sources"`
	AsOf    string   `json:"asOf"`
}

// Expected returns the figure of the algorithm NCCL picks by itself (the
// informative "expected" value: NVLS on 8x H100 SXM).
func (b NCCLSKUBaseline) Expected() NCCLBusBandwidth {
	for _, f := range b.Figures {
		if f.Default {
			return f
		}
	}
	if len(b.Figures) == 0 {
		return NCCLBusBandwidth{}
	}
	return b.Figures[0]
}

// ExpectedText is every figure for people, the default algorithm's first:
// "~450-480 GB/s with NVLS (default), ~370 GB/s with NCCL_ALGO=RING".
func (b NCCLSKUBaseline) ExpectedText() string {
	var parts []string
	for _, f := range b.Figures {
		if f.Default {
			parts = append([]string{f.Text()}, parts...)
		} else {
			parts = append(parts, f.Text())
		}
	}
	return strings.Join(parts, ", ")
}

// NCCLBaselines returns the single-node NCCL baselines per GPU SKU and the
// date of the set.
func NCCLBaselines() (asOf string, out []NCCLSKUBaseline) {
	c := cat()
	for _, b := range c.nccl.Baselines.SKUs {
		out = append(out, skuBaseline(b))
	}
	return c.nccl.Baselines.AsOf, out
}

func figureOf(f busbwFigure) NCCLBusBandwidth {
	return NCCLBusBandwidth{Algo: f.Algo, Default: f.Default, MinBusBandwidthGBps: f.MinGBps, MaxBusBandwidthGBps: f.MaxGBps,
		Estimate: f.Estimate, Note: f.Note, Sources: f.sources(), AsOf: f.AsOf}
}

func skuBaseline(b baselineSKU) NCCLSKUBaseline {
	out := NCCLSKUBaseline{SKU: b.SKU, Description: b.Description, GPU: b.GPU, GPUMatch: append([]string(nil), b.GPUMatch...),
		GPUs: b.GPUs, GPULink: b.GPULink, MinBusBandwidthGBps: b.MinBusBW, MinAlgo: b.MinAlgo, MinBytes: b.MinBytes,
		Confidence: b.Confidence, Note: b.Note, NoFigure: b.NoFigure, Sources: b.sources(), AsOf: b.AsOf}
	for _, f := range b.Figures {
		fig := figureOf(f)
		out.Figures = append(out.Figures, fig)
		for _, s := range fig.Sources {
			out.Sources = appendUnique(out.Sources, s)
		}
	}
	return out
}

// algoLabel is the Algo of an NCCLBaselineFact: "NVLS (default)", "RING".
func algoLabel(f NCCLBusBandwidth) string {
	if f.Default && f.Algo != "default" {
		return f.Algo + " (default)"
	}
	return f.Algo
}

// NCCLBaseline returns the single-node all_reduce bus-bandwidth baseline
// for sku: a baseline ID ("H100-SXM-8", or "H100-SXM-8-RING" for the figure
// with NCCL_ALGO=RING), a GPU name ("H100", "H100 SXM"), or a machine type
// ("p5.48xlarge", "a3-highgpu-8g"). With a GPU or machine it picks the
// figure of that product's default algorithm and the machine's GPU count.
func NCCLBaseline(sku string) (NCCLBaselineFact, bool) {
	c := cat()
	if f, ok := c.baselineByID(sku); ok {
		return f, true
	}
	if f, ok := c.perNICBaseline(sku); ok {
		return f, true
	}
	return c.baselineOfGPU(sku)
}

// baselineByID is the baseline whose ID or SKU is sku (its default
// figure), or whose ID with an algorithm is ("H100-SXM-8-RING": that
// figure); SKUs without a figure have none.
func (c *catalog) baselineByID(sku string) (NCCLBaselineFact, bool) {
	for i := range c.nccl.Baselines.SKUs {
		b := &c.nccl.Baselines.SKUs[i]
		if b.NoFigure != "" {
			continue // no figure to answer with
		}
		id := b.id()
		if strings.EqualFold(id, sku) || strings.EqualFold(b.SKU, sku) {
			return b.fact(b.defaultFigure(), id), true
		}
		for _, f := range b.Figures {
			if !f.Default && strings.EqualFold(id+"-"+f.Algo, sku) {
				return b.fact(f, id+"-"+f.Algo), true
			}
		}
	}
	return NCCLBaselineFact{}, false
}

// perNICBaseline is the per-NIC figure whose ID is id.
func (c *catalog) perNICBaseline(id string) (NCCLBaselineFact, bool) {
	for _, f := range c.nccl.Baselines.PerNIC {
		if strings.EqualFold(f.ID, id) {
			fig := figureOf(f)
			return NCCLBaselineFact{ID: f.ID, MinBusBandwidthGBps: fig.MinBusBandwidthGBps, MaxBusBandwidthGBps: fig.MaxBusBandwidthGBps,
				Algo: fig.Algo, Note: fig.Note, Sources: fig.Sources, AsOf: fig.AsOf}, true
		}
	}
	return NCCLBaselineFact{}, false
}

// baselineOfGPU is the first baseline with a figure of the GPU that name
// names, a machine type (of its GPU count) or a GPU name (any count).
func (c *catalog) baselineOfGPU(name string) (NCCLBaselineFact, bool) {
	gpu, count := "", 0
	if g, n, ok := MachineGPU("", name); ok {
		gpu, count = g.ID, n
	} else if p, ok := LookupGPU(name); ok {
		gpu = p.ID
	}
	if gpu == "" {
		return NCCLBaselineFact{}, false
	}
	for i := range c.nccl.Baselines.SKUs {
		b := &c.nccl.Baselines.SKUs[i]
		if b.NoFigure == "" && b.GPU == gpu && (count == 0 || b.GPUs == count) {
			return b.fact(b.defaultFigure(), b.id()), true
		}
	}
	return NCCLBaselineFact{}, false
}

// id is the baseline's ID, its SKU where it has none.
func (b *baselineSKU) id() string {
	if b.ID != "" {
		return b.ID
	}
	return b.SKU
}

// defaultFigure is the figure of the algorithm NCCL picks by itself, else
// the first; the baseline has figures (it has no no_figure).
func (b *baselineSKU) defaultFigure() busbwFigure {
	for _, f := range b.Figures {
		if f.Default {
			return f
		}
	}
	return b.Figures[0]
}

// fact is the baseline's answer with figure f, named id.
func (b *baselineSKU) fact(f busbwFigure, id string) NCCLBaselineFact {
	fig := figureOf(f)
	return NCCLBaselineFact{ID: id, GPU: b.GPU, GPUs: b.GPUs, MinBusBandwidthGBps: fig.MinBusBandwidthGBps,
		MaxBusBandwidthGBps: fig.MaxBusBandwidthGBps, Algo: algoLabel(fig),
		AcceptanceMinBusBandwidthGBps: b.MinBusBW, AcceptanceAlgo: b.MinAlgo, Confidence: b.Confidence,
		Note: fig.Note, Sources: fig.Sources, AsOf: fig.AsOf}
}

// Transport is the NCCL transport of a pool and what it needs in the
// workload pods, from the matrix's fabric data (data/nccl.yaml).
type Transport struct {
	// Fabric is FabricEFA, FabricTCPX, FabricTCPXO or FabricRoCE.
	Fabric string
	// Plugin is the NCCL net plugin that drives it (aws-ofi-nccl, tcpx,
	// tcpxo, gib).
	Plugin string
	// Env are the variables the transport needs, the GPU NIC lists included.
	Env map[string]string
	// Source documents Env: the fabric's source, then the machine type's
	// where it has settings of its own (space-separated).
	Source string
	AsOf   string
}

// PoolGPUNICs is the number of GPU NICs (eth1..ethN after the extra
// gVNICs, PoolNICs) that GKE pool p's GPUDirect NCCL plugin uses.
func PoolGPUNICs(provider string, p *spec.NodePool) int { return PoolNICs(provider, p).GPU }

// PoolNICs are the additional NICs (additional node networks) of GKE pool p
// that its GPUDirect NCCL plugin needs, from its machine type's network
// interfaces:
//   - GPUDirect-TCPX or -TCPXO (nccl.plugin tcpx, tcpxo on a machine of that
//     fabric): every interface but the primary one is a GPU NIC (4 on A3
//     High, 8 on A3 Mega);
//   - GPUDirect RDMA (nccl.plugin gib on a RoCE machine with RDMA NICs: A3
//     Ultra, A4): the RDMA NICs (8), after the gVNICs other than the
//     primary one (1), as Google's GKE blueprints attach them
//     (GoogleCloudPlatform/cluster-toolkit examples/gke-a3-ultragpu and
//     examples/gke-a4 at commit 1047080375afbb44da4b596be314634e7486af4a,
//     2026-06-25: networks net-1 and rdma-net with 8 subnetworks).
//
// None on EKS, for other plugins, and where the machine type's interfaces
// are not known or its GPU network is not the plugin's; none on A4X either,
// whose RDMA NICs the matrix does not count (Google's A4X blueprint attaches
// them through DRANET resource claims, not Network objects). The Terraform
// sizes the pool's networks by it, the manifests their GKE Network objects.
func PoolNICs(provider string, p *spec.NodePool) spec.NICLayout {
	if provider != spec.ProviderGKE {
		return spec.NICLayout{}
	}
	mts := p.MachineTypes()
	if len(mts) == 0 {
		return spec.NICLayout{}
	}
	m, ok := LookupMachine(provider, mts[0])
	if !ok {
		return spec.NICLayout{}
	}
	switch {
	case (p.NCCL.Plugin == FabricTCPX || p.NCCL.Plugin == FabricTCPXO) && m.Fabric == p.NCCL.Plugin && m.NICs >= 2:
		return spec.NICLayout{GPU: m.NICs - 1}
	case p.NCCL.Plugin == gcpPluginFor[FabricRoCE] && m.Fabric == FabricRoCE && m.RDMANICs > 0:
		return spec.NICLayout{GVNICs: max(m.NICs-1, 0), GPU: m.RDMANICs, RDMA: true}
	}
	return spec.NICLayout{}
}

// PoolTransport returns the NCCL transport pool p uses: on EKS, EFA where
// efa.enabled is set on an instance type with EFA; on GKE, the GPU network
// of its machine type where nccl.plugin names that network's plugin. false
// where the pool has none (TCP sockets over the primary NIC).
func PoolTransport(provider string, p *spec.NodePool) (Transport, bool) {
	name := p.MachineType
	if name == "" && len(p.InstanceTypes) > 0 {
		name = p.InstanceTypes[0]
	}
	m, ok := LookupMachine(provider, name)
	if !ok {
		return Transport{}, false
	}
	c := cat()
	f := c.fabric(m.Fabric)
	if f == nil || !f.usedBy(provider, p) {
		return Transport{}, false
	}
	return c.transport(f, m), true
}

// fabric is the fabric named name; nil when nccl.yaml has none (FabricNone).
func (c *catalog) fabric(name string) *fabricFact {
	for i := range c.nccl.Fabrics {
		if c.nccl.Fabrics[i].Name == name {
			return &c.nccl.Fabrics[i]
		}
	}
	return nil
}

// usedBy reports whether pool p uses the fabric of its machine type: EFA on
// EKS where efa.enabled is set, another fabric on GKE where nccl.plugin
// names its plugin.
func (f *fabricFact) usedBy(provider string, p *spec.NodePool) bool {
	switch {
	case provider == spec.ProviderEKS && f.Name == FabricEFA:
		return p.EFA.Enabled
	case provider == spec.ProviderGKE && f.Name != FabricEFA:
		return p.NCCL.Plugin == f.Plugin
	}
	return false
}

// transport is fabric f on machine m: the fabric's env, then machine m's
// own settings (machine_env), then the fabric's NIC variables set to m's
// GPU NICs (eth1,...,ethN).
func (c *catalog) transport(f *fabricFact, m Machine) Transport {
	t := Transport{Fabric: f.Name, Plugin: f.Plugin, Env: maps.Clone(f.Env), Source: f.EnvSource, AsOf: f.AsOf}
	if t.Env == nil {
		t.Env = map[string]string{}
	}
	for _, me := range c.nccl.MachineEnv {
		if me.Machine == m.Name && me.Fabric == f.Name {
			maps.Copy(t.Env, me.Env)
			t.Source += " " + me.Source
		}
	}
	if len(f.NICEnv) > 0 && m.NICs > 1 {
		nics := make([]string, m.NICs-1)
		for i := range nics {
			nics[i] = fmt.Sprintf("eth%d", i+1)
		}
		for _, k := range f.NICEnv {
			t.Env[k] = strings.Join(nics, ",")
		}
	}
	return t
}

// NCCLMultiNodeBaseline is a GPU fabric's multi-node all_reduce_perf
// baseline (8 GPUs per node), from data/nccl.yaml's multi_node.
type NCCLMultiNodeBaseline struct {
	// Fabric is FabricTCPX, FabricTCPXO, FabricEFA or FabricRoCE; Machines
	// the machine and instance types it covers.
	Fabric      string   `json:"fabric"`
	Machines    []string `json:"machines"`
	GPUsPerNode int      `json:"gpusPerNode"`
	// MinBusBandwidthGBps is the acceptance minimum at messages of at least
	// MinBytes: min_fraction of the figure with MinAlgo.
	MinBusBandwidthGBps float64            `json:"minBusBandwidthGBps,omitempty"`
	MinAlgo             string             `json:"minAlgo,omitempty"`
	MinBytes            int64              `json:"minBytes,omitempty"`
	Confidence          string             `json:"confidence,omitempty"`
	Note                string             `json:"note,omitempty"`
	NoFigure            string             `json:"noFigure,omitempty"`
	Figures             []NCCLBusBandwidth `json:"figures"`
	Sources             []string           `json:"sources"`
	AsOf                string             `json:"asOf"`
}

// ExpectedText is the figures for people ("~86.99-89.54 GB/s with NCCL's
// default algorithm").
func (b NCCLMultiNodeBaseline) ExpectedText() string {
	var parts []string
	for _, f := range b.Figures {
		parts = append(parts, f.Text())
	}
	return strings.Join(parts, ", ")
}

// MultiNodeBaseline returns the multi-node all_reduce baseline of the
// fabric of machine type (GKE machine or EKS instance type); false when the
// machine has no GPU fabric with an entry.
func MultiNodeBaseline(machine string) (NCCLMultiNodeBaseline, bool) {
	c := cat()
	for _, f := range c.nccl.MultiNode.Fabrics {
		for _, m := range f.Machines {
			if m != machine {
				continue
			}
			out := NCCLMultiNodeBaseline{Fabric: f.Fabric, Machines: append([]string(nil), f.Machines...), GPUsPerNode: f.GPUsPerNode,
				MinBusBandwidthGBps: f.MinBusBW, MinAlgo: f.MinAlgo, MinBytes: f.MinBytes, Confidence: f.Confidence,
				Note: f.Note, NoFigure: f.NoFigure, Figures: []NCCLBusBandwidth{}, Sources: f.sources(), AsOf: f.AsOf}
			for _, fig := range f.Figures {
				nf := figureOf(fig)
				out.Figures = append(out.Figures, nf)
				for _, s := range nf.Sources {
					out.Sources = appendUnique(out.Sources, s)
				}
			}
			return out, true
		}
	}
	return NCCLMultiNodeBaseline{}, false
}

// gpudirectImages is one row of nccl.yaml's gpudirect_images: the images
// of one GKE GPUDirect fabric, released together.
type gpudirectImages struct {
	Provenance `yaml:",inline"`
	Fabric     string `yaml:"fabric"`
	Installer  string `yaml:"installer"`
	RxDM       string `yaml:"rxdm"`
}

// GPUDirectImages are the images of one GKE GPUDirect fabric that gpuctl
// pins, from one release of Google's manifests: the NCCL plugin installer
// (generate's installer DaemonSet) and, for GPUDirect-TCPX and -TCPXO, the
// receive-datapath (RxDM, tcpgpudmarxd) sidecar of the workload pods, whose
// version Google couples to the installer's (data/nccl.yaml
// gpudirect_images).
type GPUDirectImages struct {
	// Fabric is FabricTCPX, FabricTCPXO or FabricRoCE.
	Fabric string `json:"fabric"`
	// Installer and RxDM are image references (registry/path:tag); RxDM is
	// "" for a fabric without a sidecar (RDMA).
	Installer string   `json:"installer"`
	RxDM      string   `json:"rxdm,omitempty"`
	Note      string   `json:"note,omitempty"`
	Sources   []string `json:"sources"`
	AsOf      string   `json:"asOf"`
}

// FabricImages returns the pinned images of GKE GPUDirect fabric (FabricTCPX,
// FabricTCPXO, FabricRoCE); false for a fabric without a row (EFA, none).
func FabricImages(fabric string) (GPUDirectImages, bool) {
	for _, r := range cat().nccl.GPUDirectImages {
		if r.Fabric == fabric {
			return GPUDirectImages{Fabric: r.Fabric, Installer: r.Installer, RxDM: r.RxDM, Note: r.Note, Sources: r.sources(), AsOf: r.AsOf}, true
		}
	}
	return GPUDirectImages{}, false
}

// checkImages holds gpudirect_images to its shape: a known fabric once, an
// installer with a tag, a sidecar exactly for GPUDirect-TCPX and -TCPXO.
func (c *catalog) checkImages(fabrics map[string]bool) error {
	seen := map[string]bool{}
	for _, r := range c.nccl.GPUDirectImages {
		switch {
		case !fabrics[r.Fabric] || r.Fabric == FabricEFA:
			return fmt.Errorf("gpudirect_images: unknown GKE fabric %q", r.Fabric)
		case seen[r.Fabric]:
			return fmt.Errorf("gpudirect_images: fabric %s twice", r.Fabric)
		case !strings.Contains(r.Installer, ":"):
			return fmt.Errorf("gpudirect_images %s: installer %q has no tag", r.Fabric, r.Installer)
		case (r.Fabric == FabricTCPX || r.Fabric == FabricTCPXO) != strings.Contains(r.RxDM, ":"):
			return fmt.Errorf("gpudirect_images %s: rxdm %q: GPUDirect-TCPX and -TCPXO need a tagged sidecar image, RDMA none", r.Fabric, r.RxDM)
		}
		seen[r.Fabric] = true
	}
	return nil
}
