package matrix

import (
	"embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"
)

// The facts live in data/*.yaml, embedded in the binary. Each entry carries
// the URL it comes from (source) and the date it was true (as_of); TestData
// holds every entry to that and checks that versions and dates parse.
//
// Each data file data/X.yaml has one Go file, X.go, holding its YAML type,
// its index (the method the loader calls through files: it checks the
// entries and builds the catalogue's maps) and its lookups. This file holds
// the embed, the loader and the catalogue they fill.

//go:embed data/*.yaml
var dataFS embed.FS

// Provenance is where an embedded fact comes from: every entry of the data
// files carries it (the YAML decoder needs the embedded type exported).
type Provenance struct {
	Source  string `yaml:"source"`
	Source2 string `yaml:"source_2"`
	AsOf    string `yaml:"as_of"`
	Note    string `yaml:"note"`
}

func (f Provenance) sources() []string {
	var out []string
	for _, s := range []string{f.Source, f.Source2} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// catalog is every embedded fact, decoded and indexed.
type catalog struct {
	cuda     cudaFile
	gpus     gpusFile
	drivers  driversFile
	aws      awsFile
	gcp      gcpFile
	operator operatorFile
	nccl     ncclFile
	amisData amisFile
	localSSD localSSDFile

	// gpus.yaml (indexGPUs)
	products    map[string]*productFact // by ID
	aliases     map[string]*productFact // by normalized name
	familyNames map[string]string       // normalized family-level name -> family
	archs       map[string]*archFact
	// drivers.yaml (indexDrivers)
	branches map[int]*branchFact
	// gcp.yaml and aws.yaml (indexGCP, indexAWS)
	accelerators map[string]*acceleratorFact
	machines     map[string]map[string]Machine // provider -> name
	amis         map[string]*amiFact
	// amis.yaml (indexAMIs): every release row, by AMI type, newest first
	amiReleases []AMIRelease
	// localssd.yaml (indexLocalSSD): provider -> machine
	localDisks map[string]map[string]LocalDisks
	// nccl.yaml and operator.yaml (indexNCCL, indexOperator)
	ncclKnown map[string]bool
	gfdLabels map[string]bool
}

var loadCatalog = sync.OnceValues(load)

// cat returns the embedded catalogue. The data is checked by tests, so a
// decoding failure here is a build defect and panics.
func cat() *catalog {
	c, err := loadCatalog()
	if err != nil {
		panic(fmt.Sprintf("matrix: embedded data: %v", err))
	}
	return c
}

// decode reads data/<name> into v with goccy/go-yaml, the spec's YAML
// library: unknown fields and duplicate keys are refused, and an error names
// the file, line and column (decodeData).
func decode(name string, v any) error {
	b, err := dataFS.ReadFile("data/" + name)
	if err != nil {
		return err
	}
	return decodeData("data/"+name, b, v)
}

// decodeData decodes the YAML text b of file into v, strictly: a field the
// type does not have or a key given twice is an error. Errors read
// "file:line:col: message".
func decodeData(file string, b []byte, v any) error {
	err := yaml.UnmarshalWithOptions(b, v, yaml.DisallowUnknownField())
	if err == nil {
		return nil
	}
	var ye yaml.Error
	if errors.As(err, &ye) {
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			return fmt.Errorf("%s:%d:%d: %s", file, tk.Position.Line, tk.Position.Column, ye.GetMessage())
		}
	}
	return fmt.Errorf("%s: %w", file, err)
}

// dataFile is one file of data/: the catalogue field it decodes into and
// the index that checks it and builds the catalogue's maps from it (which
// may read the files indexed before it).
type dataFile struct {
	name  string
	v     any
	index func() error
}

// files are the data files in the order they are indexed: GPUs before the
// machines and baselines that name them, machines before the baselines that
// list them. A new data file is a Go file with its type and index, and a
// line here.
func (c *catalog) files() []dataFile {
	return []dataFile{
		{"cuda.yaml", &c.cuda, c.indexCUDA},
		{"gpus.yaml", &c.gpus, c.indexGPUs},
		{"drivers.yaml", &c.drivers, c.indexDrivers},
		{"gcp.yaml", &c.gcp, c.indexGCP},
		{"aws.yaml", &c.aws, c.indexAWS},
		{"amis.yaml", &c.amisData, c.indexAMIs},
		{"localssd.yaml", &c.localSSD, c.indexLocalSSD},
		{"operator.yaml", &c.operator, c.indexOperator},
		{"nccl.yaml", &c.nccl, c.indexNCCL},
	}
}

// load decodes and indexes every data file. Errors name the file, and the
// line and column (decoding) or the entry (index).
func load() (*catalog, error) {
	c := &catalog{}
	for _, f := range c.files() {
		if err := decode(f.name, f.v); err != nil {
			return nil, err
		}
	}
	if err := c.index(); err != nil {
		return nil, err
	}
	return c, nil
}

// index runs every data file's index, in files' order.
func (c *catalog) index() error {
	for _, f := range c.files() {
		if err := f.index(); err != nil {
			return fmt.Errorf("data/%s: %w", f.name, err)
		}
	}
	return nil
}

func parseV(where, s string) (Version, error) {
	v, err := ParseVersion(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return v, nil
}

// parseDate reads YYYY-MM-DD, or YYYY-MM meaning the end of that month. It
// returns the first instant after the date.
func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.AddDate(0, 0, 1), nil
	}
	if t, err := time.Parse("2006-01", s); err == nil {
		return t.AddDate(0, 1, 0), nil
	}
	return time.Time{}, fmt.Errorf("date %q is neither YYYY-MM-DD nor YYYY-MM", s)
}

// parseRange reads a Kubernetes range "1.30-1.34".
func parseRange(s string) (lo, hi Version, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return nil, nil, fmt.Errorf("range %q is not LOW-HIGH", s)
	}
	if lo, err = ParseVersion(a); err != nil {
		return nil, nil, err
	}
	if hi, err = ParseVersion(b); err != nil {
		return nil, nil, err
	}
	return lo, hi, nil
}
