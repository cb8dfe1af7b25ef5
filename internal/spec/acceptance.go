package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
	"github.com/robfig/cron/v3"
)

// Acceptance is the in-cluster acceptance sweep (spec.acceptance): a
// CronJob in Namespace that runs `gpuctl accept --sweep` in Image on
// Schedule over the idle nodes Selector picks, signing each record with the
// key in KeySecret and keeping the records where Records says.
type Acceptance struct {
	// Image is the gpuctl image the CronJob runs, with a tag or a digest
	// (REPO:TAG, REPO@sha256:HEX or REPO:TAG@sha256:HEX); required.
	Image string `yaml:"image" json:"image" jsonschema:"required,example=ghcr.io/gpuctl/gpuctl:v0.9.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" jsonschema_description:"The gpuctl image the CronJob runs, with a tag or a digest (pin it by digest: REPO:TAG@sha256:HEX). Required."`
	// Schedule is the CronJob's schedule: five cron fields (minute hour
	// day-of-month month day-of-week) or a descriptor such as @daily;
	// required.
	Schedule string `yaml:"schedule" json:"schedule" jsonschema:"required,example=0 3 * * *" jsonschema_description:"The CronJob's schedule: five cron fields (minute hour day-of-month month day-of-week) or a descriptor such as @daily; no TZ= prefix (use timeZone). Required."`
	// TimeZone is the CronJob's time zone (an IANA name, "Etc/UTC");
	// empty: the kube-controller-manager's.
	TimeZone string `yaml:"timeZone,omitempty" json:"timeZone,omitempty" jsonschema:"example=Etc/UTC" jsonschema_description:"The CronJob's time zone, an IANA name the kube-apiserver knows (Etc/UTC, Europe/Berlin; not Local). Unset: the kube-controller-manager's time zone."`
	// Namespace is where the CronJob, its ServiceAccount, the probe Jobs
	// and the records' ConfigMaps live; empty: DefaultAcceptanceNamespace.
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty" jsonschema:"default=gpuctl-acceptance,example=gpuctl-acceptance" jsonschema_description:"The namespace of the CronJob, its ServiceAccount, the probe Jobs and the records' ConfigMaps (a DNS label). Unset: gpuctl-acceptance."`
	// Selector is the label selector of the nodes swept; empty: the
	// spec's GPU pools by their node-pool label.
	Selector string `yaml:"selector,omitempty" json:"selector,omitempty" jsonschema:"example=gpuctl.dev/accept-sweep=true" jsonschema_description:"The label selector of the nodes swept (kubectl's syntax). Unset: the spec's GPU pools, by their node-pool label."`
	// Stages are the acceptance stages each node runs (accept's stage
	// names); empty: DefaultAcceptanceStages.
	Stages []string `yaml:"stages,omitempty" json:"stages,omitempty" jsonschema_description:"The acceptance stages each node runs, by gpuctl accept's stage names. Unset: kubernetes, inventory, topology, cuda (the quick node-local ones)."`
	// Parallel is how many nodes are accepted at once; 0: 1.
	Parallel int `yaml:"parallel,omitempty" json:"parallel,omitempty" jsonschema:"minimum=1,default=1,example=4" jsonschema_description:"How many nodes are accepted at the same time. Unset: 1."`
	// MaxUnhealthy caps the nodes a sweep quarantines: a count (3) or a
	// percentage of the selection ("10%"); nil: DefaultMaxUnhealthy.
	MaxUnhealthy *IntOrPercent `yaml:"maxUnhealthy,omitempty" json:"maxUnhealthy,omitempty" jsonschema_description:"The most nodes a sweep quarantines: a count (3) or a percentage of the selection (\"10%\"); over it nothing new is quarantined. Unset: 10%."`
	// Timeout is the longest one sweep runs before Kubernetes stops its Job
	// (the CronJob's activeDeadlineSeconds), a Go duration ("3h", "90m",
	// at least 1m); empty: derived from the pools' autoscaling.max,
	// Parallel and Stages under accept's default time limits.
	Timeout string `yaml:"timeout,omitempty" json:"timeout,omitempty" jsonschema:"example=3h" jsonschema_description:"The longest one sweep runs before Kubernetes stops its Job (activeDeadlineSeconds), as a duration (\"3h\", \"90m\"; at least 1m): with concurrencyPolicy Forbid a hung sweep would block every later run. Unset: the node pools' autoscaling.max nodes, parallel at a time, each within accept's time limit of a node's run (1h), plus the fleet stages and a margin."`
	// KeySecret is the Secret (in Namespace) holding the private key that
	// signs the records; required.
	KeySecret SecretKeyRef `yaml:"keySecret" json:"keySecret" jsonschema:"required" jsonschema_description:"The Secret in the sweep's namespace that holds the private key signing the records (gpuctl keygen). Required."`
	// Records is where the signed records are kept; exactly one of its
	// fields is set.
	Records AcceptanceRecords `yaml:"records" json:"records" jsonschema:"required" jsonschema_description:"Where the signed records are kept: configMap: true (one ConfigMap per node with its newest record) or a persistentVolumeClaim. Exactly one."`
	// Images are the probe images of stages (stage name -> REPO:TAG or
	// REPO@sha256:HEX), passed as accept's --image STAGE=REF: a private
	// mirror's copies of the default images. A stage not named runs
	// accept's default image.
	Images map[string]string `yaml:"images,omitempty" json:"images,omitempty" jsonschema_description:"The probe image of each stage that runs one (stage name: image with a tag or, better, a digest), passed as gpuctl accept --image STAGE=REF; for a private mirror. A stage not named runs gpuctl accept's default image."`
	// AllowPrivileged lets the sweep create privileged probe pods (accept's
	// --allow-privileged): the kernel log's XIDs, dcgm's SYS_ADMIN, and
	// the rank pods of a GPUDirect fabric that nccl-multi and
	// framework-multi need. The sweep's namespace then admits privileged
	// pods (its Pod Security level is the one the stages need with it).
	AllowPrivileged bool `yaml:"allowPrivileged,omitempty" json:"allowPrivileged,omitempty" jsonschema_description:"Let the sweep create privileged probe pods (gpuctl accept --allow-privileged): the kernel log's XID scan, dcgm's SYS_ADMIN, the GPUDirect rank pods of nccl-multi and framework-multi. The sweep's namespace then enforces the Pod Security level those pods need (privileged). Unset: false."`
	// Preflight names the pools whose workloads get gpuctl preflight's init
	// container (gpuctl generate writes the snippet).
	Preflight *AcceptancePreflight `yaml:"preflight,omitempty" json:"preflight,omitempty" jsonschema_description:"The pools whose workloads get gpuctl preflight's init container."`
}

// JSONSchemaExtend lists the stage names stages may hold (AcceptStages).
func (Acceptance) JSONSchemaExtend(s *jsonschema.Schema) {
	p, ok := s.Properties.Get("stages")
	if !ok || p.Items == nil {
		return
	}
	p.Items.Enum = nil
	for _, st := range AcceptStages {
		p.Items.Enum = append(p.Items.Enum, st)
	}
}

// SecretKeyRef names one key of a Secret.
type SecretKeyRef struct {
	// Name is the Secret's name.
	Name string `yaml:"name" json:"name" jsonschema:"required,example=gpuctl-accept-key" jsonschema_description:"The Secret's name."`
	// Key is the key in the Secret's data; the file name it is mounted as.
	Key string `yaml:"key" json:"key" jsonschema:"required,example=accept.key" jsonschema_description:"The key in the Secret's data (a PEM private key); mounted as a file of that name."`
}

// AcceptanceRecords is where the sweep keeps its signed records: in a
// ConfigMap per node (gpuctl-record-<node>, the newest record) or under a
// path of a PersistentVolumeClaim (every record, NODE/RUN-ID/).
type AcceptanceRecords struct {
	// ConfigMap keeps each node's newest record in ConfigMap
	// gpuctl-record-<node> of the sweep's namespace.
	ConfigMap bool `yaml:"configMap,omitempty" json:"configMap,omitempty" jsonschema_description:"Keep each node's newest signed record in ConfigMap gpuctl-record-<node> (key record.dsse.json) of the sweep's namespace."`
	// PersistentVolumeClaim keeps every record and its evidence on a volume.
	PersistentVolumeClaim *RecordsVolume `yaml:"persistentVolumeClaim,omitempty" json:"persistentVolumeClaim,omitempty" jsonschema_description:"Keep every record and its evidence on a PersistentVolumeClaim of the sweep's namespace."`
}

// RecordsVolume is a PersistentVolumeClaim and the path on it where the
// records go.
type RecordsVolume struct {
	// ClaimName is the PersistentVolumeClaim in the sweep's namespace.
	ClaimName string `yaml:"claimName" json:"claimName" jsonschema:"required,example=gpuctl-records" jsonschema_description:"The PersistentVolumeClaim in the sweep's namespace (it must exist)."`
	// Path is the folder on the volume (subPath); empty: its root.
	Path string `yaml:"path,omitempty" json:"path,omitempty" jsonschema:"example=/records" jsonschema_description:"The folder on the volume the records go under. Unset: the volume's root."`
}

// AcceptancePreflight names the pools whose workloads get the preflight
// init container (gpuctl generate writes workload/<pool>-preflight.yaml).
type AcceptancePreflight struct {
	// Pools are node pool names of the spec, each with whole GPUs (no
	// sharing); empty: every pool with whole GPUs.
	Pools []string `yaml:"pools,omitempty" json:"pools,omitempty" jsonschema:"example=train-h100" jsonschema_description:"Node pools (by name, each with whole GPUs) whose workloads get gpuctl preflight's init container. Unset or empty: every pool with whole GPUs."`
}

// The defaults of spec.acceptance.
const (
	// DefaultAcceptanceNamespace is spec.acceptance.namespace unset.
	DefaultAcceptanceNamespace = "gpuctl-acceptance"
)

// DefaultAcceptanceStages are spec.acceptance.stages unset: the quick
// node-local stages, which need no second node and no privilege.
var DefaultAcceptanceStages = []string{"kubernetes", "inventory", "topology", "cuda"}

// DefaultMaxUnhealthy is spec.acceptance.maxUnhealthy unset.
var DefaultMaxUnhealthy = IntOrPercent{Value: 10, Percent: true}

// StagesWithoutImage are the stages of AcceptStages that run no image
// (the API-only kubernetes stage), so acceptance.images cannot name them;
// TestSpecStageImages (in helmgen) holds the list to accept.RunsImage.
var StagesWithoutImage = []string{"kubernetes"}

// AcceptStages are the names of `gpuctl accept`'s stages, in its order:
// what spec.acceptance.stages may name. The accept package's stage table
// is the one copy of the stages; TestSpecKnowsEveryStage (in accept) holds
// this list to it, as spec imports no other gpuctl package.
var AcceptStages = []string{"kubernetes", "inventory", "topology", "cuda", "nccl", "dcgm", "network", "framework", "diagnostics", "nccl-multi", "framework-multi"}

// NamespaceOr is a's namespace, DefaultAcceptanceNamespace when unset.
func (a *Acceptance) NamespaceOr() string {
	if a.Namespace == "" {
		return DefaultAcceptanceNamespace
	}
	return a.Namespace
}

// StagesOr are a's stages, DefaultAcceptanceStages when unset.
func (a *Acceptance) StagesOr() []string {
	if len(a.Stages) == 0 {
		return DefaultAcceptanceStages
	}
	return a.Stages
}

// ParallelOr is a's parallelism, 1 when unset.
func (a *Acceptance) ParallelOr() int { return max(a.Parallel, 1) }

// MaxUnhealthyOr is a's quarantine cap, DefaultMaxUnhealthy when unset.
func (a *Acceptance) MaxUnhealthyOr() IntOrPercent {
	if a.MaxUnhealthy == nil {
		return DefaultMaxUnhealthy
	}
	return *a.MaxUnhealthy
}

// cronParser reads a schedule as the Kubernetes CronJob controller does:
// robfig/cron/v3's standard parser (five fields, or a descriptor such as
// @daily). Source: https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#schedule-syntax
// (2026-12-03), which also says a TZ= or CRON_TZ= prefix is not supported
// (the API server refuses it when timeZone is set; use timeZone).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule checks a CronJob schedule as the CronJob controller reads
// it. Errors: a schedule with "TZ" in it (a TZ= or CRON_TZ= zone, which
// the kube-apiserver refuses in a new CronJob: validateScheduleFormat in
// https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/batch/validation/validation.go,
// 2026-12-03), or a schedule robfig/cron's standard parser refuses (its
// message kept).
func ParseSchedule(s string) error {
	t := strings.TrimSpace(s)
	if strings.Contains(t, "TZ") {
		return fmt.Errorf("schedule %q names a time zone; Kubernetes refuses TZ= and CRON_TZ= in a CronJob schedule (use timeZone)", s)
	}
	if _, err := cronParser.Parse(t); err != nil {
		return fmt.Errorf("schedule %q is not a cron schedule: %v", s, err)
	}
	return nil
}

// imageRef is REPO[:TAG][@sha256:HEX], REPO a registry path of lowercase
// components (a registry host may carry a port).
var (
	imageRepo   = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-]+[a-z0-9]+)*)*$`)
	imageTag    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	imageDigest = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
)

// ImagePinned reports whether an image reference names a digest.
func ImagePinned(ref string) bool { return strings.Contains(ref, "@") }

// ParseImage checks an image reference that must name a tag or a digest:
// REPO:TAG, REPO@sha256:HEX or REPO:TAG@sha256:HEX. Errors: no tag nor
// digest (the registry's "latest" would be pulled), a malformed part.
func ParseImage(ref string) error {
	name, digest, hasDigest := strings.Cut(ref, "@")
	if hasDigest && !imageDigest.MatchString(digest) {
		return fmt.Errorf("image %q: digest %q is not sha256: and 64 lowercase hex digits", ref, digest)
	}
	repo, tag := name, ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		repo, tag = name[:i], name[i+1:]
	}
	switch {
	case !imageRepo.MatchString(repo):
		return fmt.Errorf("image %q: %q is not an image repository (lowercase path components)", ref, repo)
	case tag == "" && !hasDigest:
		return fmt.Errorf("image %q names neither a tag nor a digest", ref)
	case tag != "" && !imageTag.MatchString(tag):
		return fmt.Errorf("image %q: tag %q is not a valid tag", ref, tag)
	}
	return nil
}

// checkAcceptance holds spec.acceptance (at path) to what the generated
// CronJob can run: the required fields, a schedule the CronJob controller
// reads, an image with a tag or digest, known stages, one place for the
// records.
func (d *Document) checkAcceptance(path string, a *Acceptance) error {
	if a == nil {
		return nil
	}
	for _, c := range []func(string, *Acceptance) error{d.checkAcceptanceRun, d.checkAcceptanceStages, d.checkAcceptanceImages, d.checkAcceptanceStore} {
		if err := c(path, a); err != nil {
			return err
		}
	}
	return nil
}

// checkAcceptanceRun checks the image, schedule, namespace and parallelism.
func (d *Document) checkAcceptanceRun(path string, a *Acceptance) error {
	switch {
	case strings.TrimSpace(a.Image) == "":
		return d.errorAt(path, "acceptance.image is required", "name the gpuctl image, pinned by digest: image: REPO:TAG@sha256:HEX (make image builds one)")
	case strings.TrimSpace(a.Schedule) == "":
		return d.errorAt(path, "acceptance.schedule is required", `write a cron schedule, e.g. schedule: "0 3 * * *"`)
	}
	if err := ParseImage(a.Image); err != nil {
		return d.errorAt(path+".image", err.Error(), "write REPO:TAG or, better, REPO:TAG@sha256:HEX")
	}
	if err := ParseSchedule(a.Schedule); err != nil {
		return d.errorAt(path+".schedule", err.Error(), `five fields: minute hour day-of-month month day-of-week, e.g. "0 3 * * *", or @daily`)
	}
	if a.TimeZone != "" {
		if err := ParseTimeZone(a.TimeZone); err != nil {
			return d.errorAt(path+".timeZone", err.Error(), timeZoneHint(a.TimeZone))
		}
	}
	if a.Namespace != "" && !envName.MatchString(a.Namespace) {
		return d.errorAt(path+".namespace", fmt.Sprintf("namespace %q is not a DNS label", a.Namespace), "use lowercase letters, digits and '-'")
	}
	if a.Parallel < 0 {
		return d.errorAt(path+".parallel", fmt.Sprintf("parallel %d: must be at least 1", a.Parallel), "")
	}
	if _, err := a.TimeoutOr(0); err != nil {
		return d.errorAt(path+".timeout", err.Error(), `a duration of at least a minute, e.g. timeout: "3h"`)
	}
	return nil
}

// MinAcceptanceTimeout is the shortest spec.acceptance.timeout.
const MinAcceptanceTimeout = time.Minute

// TimeoutOr is a's timeout, derived when unset. Errors: a timeout that is
// no duration, or under MinAcceptanceTimeout.
func (a *Acceptance) TimeoutOr(derived time.Duration) (time.Duration, error) {
	if a.Timeout == "" {
		return derived, nil
	}
	t, err := time.ParseDuration(strings.TrimSpace(a.Timeout))
	if err != nil {
		return 0, fmt.Errorf("timeout %q is not a duration", a.Timeout)
	}
	if t < MinAcceptanceTimeout {
		return 0, fmt.Errorf("timeout %q: a sweep needs at least %s", a.Timeout, MinAcceptanceTimeout)
	}
	return t, nil
}

// checkPreflightPools refuses a name in acceptance.preflight.pools (a at
// path) that is no pool of pools (the spec's, an environment's merged).
func (d *Document) checkPreflightPools(path string, a *Acceptance, pools []NodePool) error {
	if a == nil || a.Preflight == nil {
		return nil
	}
	var names []string
	for _, p := range pools {
		names = append(names, p.Name)
	}
	for i, n := range a.Preflight.Pools {
		if slices.Contains(names, n) {
			continue
		}
		return d.errorAt(fmt.Sprintf("%s.preflight.pools[%d]", path, i), fmt.Sprintf("no node pool %q", n), nearestHint(n, "nodePools", names))
	}
	return nil
}

// checkAcceptanceStages refuses a stage gpuctl accept does not have.
func (d *Document) checkAcceptanceStages(path string, a *Acceptance) error {
	for i, st := range a.Stages {
		if !slices.Contains(AcceptStages, st) {
			return d.errorAt(fmt.Sprintf("%s.stages[%d]", path, i), fmt.Sprintf("unknown stage %q", st), nearestHint(st, "stages", AcceptStages))
		}
	}
	return nil
}

// nearestHint is the fix of a name not among names: the closest one, or
// the list ("what: a, b, c").
func nearestHint(name, what string, names []string) string {
	if near := NearestFold(name, names); near != "" {
		return fmt.Sprintf("did you mean %q?", near)
	}
	return what + ": " + strings.Join(names, ", ")
}

// checkAcceptanceImages refuses an acceptance.images entry for a stage
// that runs no image or that the sweep does not run, and an image without
// a tag or digest. Entries are checked in stage order.
func (d *Document) checkAcceptanceImages(path string, a *Acceptance) error {
	for _, st := range ImageStages(a) {
		at := path + ".images" + Key(st)
		switch {
		case !slices.Contains(AcceptStages, st):
			return d.errorAt(at, fmt.Sprintf("acceptance.images: unknown stage %q", st), nearestHint(st, "stages", AcceptStages))
		case slices.Contains(StagesWithoutImage, st):
			return d.errorAt(at, fmt.Sprintf("acceptance.images: the %s stage runs no image (it reads the API)", st), "remove the entry")
		case !slices.Contains(a.StagesOr(), st):
			return d.errorAt(at, fmt.Sprintf("acceptance.images names stage %s, which the sweep does not run (stages: %s)", st, strings.Join(a.StagesOr(), ", ")), "add the stage to acceptance.stages, or remove the entry")
		}
		if err := ParseImage(a.Images[st]); err != nil {
			return d.errorAt(at, err.Error(), "write REPO:TAG or, better, REPO:TAG@sha256:HEX")
		}
	}
	return nil
}

// ImageStages are the stages acceptance.images names: accept's stages in
// their order, then any other name sorted.
func ImageStages(a *Acceptance) []string {
	var out, other []string
	for _, st := range AcceptStages {
		if _, ok := a.Images[st]; ok {
			out = append(out, st)
		}
	}
	for st := range a.Images {
		if !slices.Contains(AcceptStages, st) {
			other = append(other, st)
		}
	}
	slices.Sort(other)
	return append(out, other...)
}

// checkAcceptanceStore checks the key Secret and that exactly one place
// keeps the records.
func (d *Document) checkAcceptanceStore(path string, a *Acceptance) error {
	switch {
	case a.KeySecret.Name == "" || a.KeySecret.Key == "":
		return d.errorAt(path, "acceptance.keySecret needs a name and a key", "keySecret: {name: gpuctl-accept-key, key: accept.key} (a Secret made from gpuctl keygen's private key)")
	case !dnsSubdomain.MatchString(a.KeySecret.Name):
		return d.errorAt(path+".keySecret.name", fmt.Sprintf("Secret name %q is not a DNS subdomain", a.KeySecret.Name), "")
	case !secretKey.MatchString(a.KeySecret.Key):
		return d.errorAt(path+".keySecret.key", fmt.Sprintf("Secret key %q is not a valid key (letters, digits, '-', '_', '.')", a.KeySecret.Key), "")
	}
	r := a.Records
	pvc := r.PersistentVolumeClaim
	switch {
	case r.ConfigMap && pvc != nil:
		return d.errorAt(path+".records", "acceptance.records sets both configMap and persistentVolumeClaim", "keep the records in one place: one of the two")
	case !r.ConfigMap && pvc == nil:
		return d.errorAt(path, "acceptance.records is required: configMap: true or a persistentVolumeClaim", "records: {configMap: true}, or records: {persistentVolumeClaim: {claimName: gpuctl-records, path: /records}}")
	case pvc != nil && pvc.ClaimName == "":
		return d.errorAt(path+".records.persistentVolumeClaim", "persistentVolumeClaim needs a claimName", "")
	case pvc != nil && strings.Contains("/"+strings.Trim(pvc.Path, "/")+"/", "/../"):
		return d.errorAt(path+".records.persistentVolumeClaim.path", fmt.Sprintf("path %q leaves the volume", pvc.Path), "write a folder on the volume, e.g. /records")
	}
	return nil
}

var (
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	secretKey    = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
)

// checkOverlayAcceptance checks the acceptance block environment env
// resolves to, when its overlay (at path) writes one: an overlay may change
// a field alone, so the merged block is what must hold.
func (d *Document) checkOverlayAcceptance(env, path string) error {
	if d.Spec.Spec.Environments[env].Acceptance == nil {
		return nil
	}
	cs, err := d.resolve(env)
	if err != nil {
		return err
	}
	if err := d.checkAcceptance(path, cs.Spec.Acceptance); err != nil {
		return err
	}
	return d.checkPreflightPools(path, cs.Spec.Acceptance, cs.Spec.NodePools)
}
