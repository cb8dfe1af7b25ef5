package cli

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gpuctl/gpuctl/internal/accept"
)

// Factory holds the dependencies commands reach the outside world through,
// each made only when a command asks for it (so validate and generate never
// need a kubeconfig). Main builds the real one with NewFactory; tests build
// their own with fakes, so they need no package variables and can run in
// parallel.
type Factory struct {
	// KubeClient builds the Kubernetes client from the kube flags.
	KubeClient func(*genericclioptions.ConfigFlags) (kubernetes.Interface, error)
	// Now is the clock.
	Now func() time.Time
	// Random returns the random part of a run id.
	Random func() uint16
	// Parser reads the probes' outputs for accept.
	Parser accept.Parser
	// Catalogue knows the GPUs of machine types, for accept's expectations.
	Catalogue accept.Catalogue
}

// NewFactory returns the factory of the real world: a client from the
// kubeconfig, the system clock, crypto/rand, gpuctl's probe parsers and the
// version matrix's machine catalogue.
func NewFactory() *Factory {
	return &Factory{KubeClient: newKubeClient, Now: time.Now, Random: randomUint16, Parser: accept.ProbeParser(), Catalogue: accept.MatrixCatalogue}
}

// runID returns a fresh run id (accept.NewRunID).
func (f *Factory) runID() string { return accept.NewRunID(f.Now(), f.Random()) }

// runIDs returns n run ids, all different. The runs of a fleet share a
// namespace and its watch, and a run finds its Jobs and pods by its id, so
// two nodes must never get the same one: the ids of a fleet are drawn in
// the same second, and among 500 of them 16 random bits give about two
// equal pairs (the later run's create met the earlier's Job, and one of
// them waited out the stage timeout). A repeat is drawn again; should the
// source repeat itself (a fixed one in tests), the next value is taken.
func (f *Factory) runIDs(n int) []string {
	ids := make([]string, 0, n)
	used := map[string]bool{}
	for len(ids) < n {
		now := f.Now()
		id := accept.NewRunID(now, f.Random())
		for try := 0; used[id] && try < 1<<16; try++ {
			id = accept.NewRunID(now, f.Random()+uint16(try))
		}
		used[id] = true
		ids = append(ids, id)
	}
	return ids
}

// newKubeClient builds the client from the flags. It is called only by
// commands that talk to a cluster.
func newKubeClient(flags *genericclioptions.ConfigFlags) (kubernetes.Interface, error) {
	if err := kubeconfigFound(flags); err != nil {
		return nil, err
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "gpuctl/" + BuildVersion()
	return kubernetes.NewForConfig(cfg)
}

// errNoKubeconfig: without a kubeconfig client-go falls back to
// http://localhost:8080, which is never what a user meant.
var errNoKubeconfig = errors.New("no kubeconfig found; set KUBECONFIG or --kubeconfig")

// kubeconfigFound returns errNoKubeconfig when the flags, $KUBECONFIG and
// ~/.kube/config name no cluster, no --server is given and gpuctl does not
// run in a pod.
func kubeconfigFound(flags *genericclioptions.ConfigFlags) error {
	if flags.APIServer != nil && *flags.APIServer != "" {
		return nil
	}
	if _, err := rest.InClusterConfig(); err == nil {
		return nil
	}
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return err // a kubeconfig that does not load says why itself
	}
	if len(raw.Clusters) == 0 {
		return errNoKubeconfig
	}
	return nil
}

func randomUint16() uint16 {
	var b [2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return uint16(time.Now().UnixNano())
	}
	return binary.BigEndian.Uint16(b[:])
}
