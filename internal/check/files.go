package check

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/gpuctl/gpuctl/internal/helmgen"
)

// Layers gpuctl generates, and the folder of each under --out.
const (
	LayerTerraform = "terraform"
	LayerHelm      = "helm"
	LayerManifests = "manifests"
	LayerKarpenter = "karpenter"
	// LayerAcceptance is the acceptance sweep alone: the manifests layer's
	// AcceptanceFile and preflight snippets (IsAcceptanceFile; written
	// under manifests/, which also holds them).
	LayerAcceptance = "acceptance"
	LayerAll        = "all"
)

// AcceptanceFile is the manifests layer's file of the acceptance sweep
// (spec.acceptance), what LayerAcceptance writes.
const AcceptanceFile = "acceptance.yaml"

// IsAcceptanceFile reports whether name (relative to manifests/<env>/) is
// a file of LayerAcceptance: AcceptanceFile, or a pool's preflight snippet
// (workload/<pool>-preflight.yaml).
func IsAcceptanceFile(name string) bool {
	dir, file, _ := strings.Cut(name, "/")
	if file == "" {
		return dir == AcceptanceFile
	}
	return dir == helmgen.WorkloadDir && !strings.Contains(file, "/") && strings.HasSuffix(file, helmgen.PreflightFileSuffix)
}

// BaseEnvDir is the folder of the base spec (the spec without overlays).
const BaseEnvDir = "base"

// ManifestName is the file under --out that lists every file `gpuctl
// generate` wrote there, one slash-separated path a line: `generate --check`
// and `plan` compare exactly those, so files of the team's own beside them
// (backend.tf, providers.tf) are theirs.
const ManifestName = ".gpuctl-files"

// InScope reports whether the manifest entry p is a file that a run of
// layer (LayerAll: every layer) for env ("" the base spec and every
// environment; else that environment only) writes or would once have
// written: a path LAYER/ENV/... of the run's layers and environment. An
// entry the run would not write any more is then stale (a removed
// environment, an add-on turned off); entries out of scope are another
// run's (another layer or environment).
func InScope(p, layer, env string) bool {
	parts := strings.Split(p, "/")
	if len(parts) < 3 || !fs.ValidPath(p) {
		return false
	}
	if layer == LayerAcceptance {
		return parts[0] == LayerManifests && (env == "" || parts[1] == env) && IsAcceptanceFile(strings.Join(parts[2:], "/"))
	}
	if layer != LayerAll && parts[0] != layer {
		return false
	}
	switch parts[0] {
	case LayerTerraform, LayerHelm, LayerManifests, LayerKarpenter:
	default:
		return false
	}
	return env == "" || parts[1] == env
}

// RunEnv is the environment filter of a checked result, for InScope: ""
// when it holds the base spec (every environment was checked), else its
// one environment.
func RunEnv(res *Result) string {
	for _, e := range res.Envs {
		if e.Name == "" {
			return ""
		}
	}
	if len(res.Envs) == 1 {
		return res.Envs[0].Name
	}
	return ""
}

// File is one generated file; Path is relative to the output folder
// ("terraform/base/node_pools.tf").
type File struct {
	Path string
	Data []byte
}

// Files returns the files of layer (LayerTerraform, LayerHelm,
// LayerManifests, LayerKarpenter, LayerAcceptance (manifests/<env>/
// acceptance.yaml alone) or LayerAll; Karpenter's files only for
// a spec whose pools Karpenter launches, helmgen.UsesKarpenter) of every checked environment of res, from what
// the check built, sorted by path: what `gpuctl generate` writes and what
// `gpuctl plan` compares. specFile is the spec's base name for the headers.
// Errors: an environment was not built (res has an error finding), or a
// generator cannot write a file.
func Files(res *Result, layer, specFile string) ([]File, error) {
	var files []File
	for _, env := range res.Envs {
		if env.Layers == nil {
			return nil, fmt.Errorf("environment %q was not built although it has no error finding (gpuctl bug: please report)", env.Name)
		}
		dir := env.Name
		if dir == "" {
			dir = BaseEnvDir
		}
		if layer == LayerTerraform || layer == LayerAll {
			for _, f := range env.Terraform {
				files = append(files, File{LayerTerraform + "/" + dir + "/" + f.Name, f.Data})
			}
		}
		hopts := helmgen.Options{SpecFile: specFile, Environment: env.Name}
		for _, l := range inClusterLayers {
			if layer != l.name && layer != LayerAll {
				continue
			}
			fs, err := l.files(env, layer, hopts)
			if err != nil {
				return nil, err
			}
			folder := l.name
			if l.name == LayerAcceptance {
				folder = LayerManifests
			}
			for _, f := range fs {
				files = append(files, File{folder + "/" + dir + "/" + f.Name, f.Data})
			}
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// inClusterLayers are the layers helmgen writes, each with its files of
// an environment (the layer asked for is the run's: a layer named alone
// may refuse a spec that all leaves out).
var inClusterLayers = []struct {
	name  string
	files func(env Env, layer string, opts helmgen.Options) ([]helmgen.File, error)
}{
	{LayerHelm, func(env Env, _ string, opts helmgen.Options) ([]helmgen.File, error) {
		fs, err := env.Layers.Values(opts)
		return fs, wrapEnv(env.Name, err)
	}},
	{LayerManifests, func(env Env, _ string, opts helmgen.Options) ([]helmgen.File, error) {
		fs, err := env.Layers.Manifests(opts)
		return fs, wrapEnv(env.Name, err)
	}},
	{LayerKarpenter, karpenterFiles},
	{LayerAcceptance, acceptanceFiles},
}

// acceptanceFiles are env's acceptance sweep file and preflight snippets
// for LayerAcceptance alone (the manifests layer holds it for the others); none for an
// environment without spec.acceptance.
func acceptanceFiles(env Env, layer string, opts helmgen.Options) ([]helmgen.File, error) {
	if layer != LayerAcceptance || env.Spec.Spec.Acceptance == nil {
		return nil, nil
	}
	fs, err := env.Layers.Manifests(opts)
	if err != nil {
		return nil, envError(env.Name, err)
	}
	var out []helmgen.File
	for _, f := range fs {
		if IsAcceptanceFile(f.Name) {
			out = append(out, f)
		}
	}
	return out, nil
}

// wrapEnv is envError for a non-nil err.
func wrapEnv(env string, err error) error {
	if err == nil {
		return nil
	}
	return envError(env, err)
}

// karpenterFiles are env's Karpenter files: none for a spec whose pools
// Karpenter does not launch, which is an error when layer is
// LayerKarpenter (asked for by name).
func karpenterFiles(env Env, layer string, opts helmgen.Options) ([]helmgen.File, error) {
	if !helmgen.UsesKarpenter(&env.Spec.Spec) {
		if layer == LayerKarpenter {
			return nil, envError(env.Name, fmt.Errorf("addons.autoscaler is %q on provider %s: Karpenter NodePools are written for an EKS spec with addons.autoscaler: karpenter", env.Spec.Spec.Addons.Autoscaler, env.Spec.Spec.Provider))
		}
		return nil, nil
	}
	ks, err := env.Layers.Karpenter(opts)
	if err != nil {
		return nil, envError(env.Name, err)
	}
	return ks, nil
}

// EnvError is an error of a generator for environment env (its
// environment named; the base spec's unchanged).
type EnvError struct {
	Env string
	Err error
}

func (e *EnvError) Error() string {
	if e.Env == "" {
		return e.Err.Error()
	}
	return "environment " + e.Env + ": " + e.Err.Error()
}

func (e *EnvError) Unwrap() error { return e.Err }

func envError(env string, err error) error { return &EnvError{Env: env, Err: err} }
