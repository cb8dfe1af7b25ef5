package importer

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/goccy/go-yaml"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// eksModuleVersion is the terraform-aws-modules/eks/aws release a module
// call's version constraint selects (Terraform takes the newest release
// that matches), as major and minor.
type eksModuleVersion struct {
	major, minor int
	// note says how it was chosen when the call does not pin it.
	note string
}

func (v eksModuleVersion) String() string {
	s := fmt.Sprintf("v%d.%d", v.major, v.minor)
	if v.note != "" {
		s += ", " + v.note
	}
	return s
}

// atLeast reports whether v is major.minor or later.
func (v eksModuleVersion) atLeast(major, minor int) bool {
	return v.major > major || (v.major == major && v.minor >= minor)
}

// eksModuleNewest is the newest release of each major version of
// terraform-aws-modules/eks/aws (minor only), and the newest major.
// Source: https://github.com/terraform-aws-modules/terraform-aws-eks/tags
// (v18.31.2, v19.21.0, v20.37.2, v21.19.0 at commit
// bef29c4d9523523e57fe898643fde2895106b339; 2026-12-02).
var eksModuleNewest = map[int]int{18: 31, 19: 21, 20: 37, 21: 19}

const eksModuleNewestMajor = 21

// nodeadmDocs splits user data at YAML document markers and MIME
// boundaries (lines that begin with "--").
var nodeadmDocs = regexp.MustCompile(`(?m)^--.*$`)

// eksModuleBounds are the releases where the module facts below change.
var eksModuleBounds = []string{"20.4.0", "20.7.0", "20.28.0", "21.0.0"}

// eksModuleVersionOf is the release module call o's version selects: the
// newest release the constraint allows (newestAllowed over the facts'
// bounds and each major's newest release), the newest release when there
// is no constraint or it allows none of them.
func eksModuleVersionOf(o obj) eksModuleVersion {
	c, _ := o.get("version").str()
	newest := eksModuleVersion{major: eksModuleNewestMajor, minor: eksModuleNewest[eksModuleNewestMajor]}
	cands := slices.Clone(eksModuleBounds)
	for major, minor := range eksModuleNewest {
		cands = append(cands, fmt.Sprintf("%d.%d.0", major, minor))
	}
	v, ok := newestAllowed(c, cands)
	switch {
	case strings.TrimSpace(c) == "":
		newest.note = "no version constraint: the newest release"
		return newest
	case !ok:
		newest.note = fmt.Sprintf("version %q: the newest release", c)
		return newest
	}
	seg := v.Segments()
	got := eksModuleVersion{major: seg[0], minor: seg[1]}
	if allows(c, "99999.0.0") {
		// a lower bound alone: the newest release is a guess of today's
		got.note = fmt.Sprintf("version %q: the newest release", c)
	}
	return got
}

// Module facts of terraform-aws-modules/eks/aws's eks-managed-node-group
// submodule (modules/eks-managed-node-group, variables.tf and main.tf;
// https://github.com/terraform-aws-modules/terraform-aws-eks, 2026-12-02):
//   - enable_efa_support exists from v20.4.0 (commit e6c3e90a0268b05e9a4c6f5e51bbbe593538a696);
//   - from v20.7.0 (commit bed26ac4216f64cf71b9e50fbe7c40469fead396)
//     enable_efa_support also creates a cluster placement group
//     (local.create_placement_group = var.create && (enable_efa_support ||
//     create_placement_group));
//   - enable_efa_only and efa_indices exist from v20.28.0 (commit
//     d2e6262188aa706c8315ddcd1cc23ae2749edca9), enable_efa_only default
//     false; from v21.0.0 (commit b7eabbd3848f09e62add631e0c7683b7db0db8b9)
//     default true; efa_indices default [0].
//
// eksModuleEFA reads a module node group's EFA: enable_efa_support (one
// EFA interface per network card), the cluster placement group the module
// creates with it, enable_efa_only (else the version's default) and
// efa_indices.
func (t *tfImport) eksModuleEFA(pb *poolB, g obj, mv eksModuleVersion) {
	p := &pb.p
	sup := g.get("enable_efa_support")
	if !pb.usable(".efa.enabled", sup) {
		return
	}
	if on, ok := sup.bool(); !ok || !on {
		return
	}
	p.EFA.Enabled = true
	pb.at(".efa.enabled", sup.at)
	pb.at(".efa", sup.at)
	if mv.atLeast(20, 7) && p.PlacementGroup == "" {
		p.PlacementGroup = "cluster"
		o := sup.at
		o.Note = fmt.Sprintf("enable_efa_support creates a cluster placement group (module %s, from v20.7.0)", mv)
		pb.origins[".placementGroup"] = o
	}
	t.eksModuleEFAOnly(pb, g, mv)
}

// eksModuleEFAOnly reads enable_efa_only (efaOnly) and efa_indices of a
// module node group with EFA.
func (t *tfImport) eksModuleEFAOnly(pb *poolB, g obj, mv eksModuleVersion) {
	p := &pb.p
	only := g.get("enable_efa_only")
	var v bool
	switch {
	case !mv.atLeast(20, 28):
		v = false // no efa-only interfaces before v20.28.0
		if !only.absent() {
			t.b.skip(only.what, fmt.Sprintf("enable_efa_only has no effect before module v20.28.0 (the call selects %s): every card's interface is EFA with ENA", mv), only.at)
		}
	case only.absent():
		v = mv.major >= 21 // the module's default: false in v20, true from v21.0.0
	default:
		var b *bool
		if !pb.flag(".efa.efaOnly", only, &b) {
			return
		}
		v = *b
	}
	p.EFA.EFAOnly = &v
	if _, ok := pb.origins[".efa.efaOnly"]; !ok {
		o := g.get("enable_efa_support").at
		o.Note = fmt.Sprintf("enable_efa_only default of module %s", mv)
		pb.origins[".efa.efaOnly"] = o
	}
	if idx := g.get("efa_indices"); !idx.absent() {
		if ns, ok := idx.strs(); !ok || len(ns) != 1 || ns[0] != "0" {
			t.b.skip(idx.what, "no spec field (efa_indices other than [0]: gpuctl puts EFA with ENA on card 0 and efa-only interfaces on the other cards)", idx.at)
		}
	}
}

// nodeadmLocalStorage reads nodeadm NodeConfig documents of
// cloudinit_pre_nodeadm (a list of {content_type, content}): a
// spec.instance.localStorage.strategy RAID0 is localStorage raid0.
// Source: https://awslabs.github.io/amazon-eks-ami/nodeadm/doc/api/ (NodeConfig
// spec.instance.localStorage.strategy RAID0 | Mount; 2026-12-02).
func nodeadmLocalStorage(e *evaluator, pb *poolB, x val) {
	if x.absent() {
		return
	}
	if !x.known() {
		pb.unknown(".localStorage", x)
		return
	}
	for _, part := range valObjs(e, x, nil) {
		c := part.get("content")
		text, ok := c.str()
		if !ok {
			continue
		}
		if strings.EqualFold(nodeadmStrategy(text), "RAID0") {
			pb.p.LocalStorage = spec.LocalStorageRAID0
			pb.origins[".localStorage"] = c.at
		}
	}
}

// launchTemplateUserData reads a launch template's user_data (base64, as
// EC2 takes it): a nodeadm NodeConfig with localStorage RAID0 in it is
// localStorage raid0.
func launchTemplateUserData(pb *poolB, x val) {
	s, ok := x.str()
	if !ok {
		return
	}
	text, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return
	}
	if strings.EqualFold(nodeadmStrategy(string(text)), "RAID0") || bottlerocketEphemeralInit(string(text)) {
		pb.p.LocalStorage = spec.LocalStorageRAID0
		pb.at(".localStorage", x.at)
	}
}

// bottlerocketEphemeralInit reports whether text, Bottlerocket user data
// (TOML settings), runs `apiclient ephemeral-storage init` as a bootstrap
// command: the instance store disks become one array.
// Source: https://bottlerocket.dev/en/os/1.22.x/concepts/bootstrap-commands (2026-12-02).
func bottlerocketEphemeralInit(text string) bool {
	var ud struct {
		Settings struct {
			Bootstrap map[string]struct {
				Commands [][]string `toml:"commands"`
			} `toml:"bootstrap-commands"`
		} `toml:"settings"`
	}
	if toml.Unmarshal([]byte(text), &ud) != nil {
		return false
	}
	for _, bc := range ud.Settings.Bootstrap {
		for _, c := range bc.Commands {
			if len(c) >= 3 && c[0] == "apiclient" && c[1] == "ephemeral-storage" && c[2] == "init" {
				return true
			}
		}
	}
	return false
}

// nodeadmStrategy is spec.instance.localStorage.strategy of the first
// NodeConfig document of text (YAML documents, "---" separated, or the
// parts of a MIME multipart message); "" when none says.
func nodeadmStrategy(text string) string {
	for _, doc := range nodeadmDocs.Split(text, -1) {
		var nc struct {
			Kind string `yaml:"kind"`
			Spec struct {
				Instance struct {
					LocalStorage struct {
						Strategy string `yaml:"strategy"`
					} `yaml:"localStorage"`
				} `yaml:"instance"`
			} `yaml:"spec"`
		}
		if yaml.Unmarshal([]byte(doc), &nc) != nil || nc.Kind != "NodeConfig" {
			continue
		}
		if s := nc.Spec.Instance.LocalStorage.Strategy; s != "" {
			return s
		}
	}
	return ""
}
