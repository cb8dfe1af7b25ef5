package cli

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/probe"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// nodeCompletionTimeout bounds the cluster call that completes node names:
// a shell waits for it on every TAB.
const nodeCompletionTimeout = 2 * time.Second

// completionHelp is the completion command's long help: how to install it.
const completionHelp = `Write the shell completion script for gpuctl to stdout.

It completes commands and flags, and their values: rule IDs for explain,
parse kinds, generate layers, output formats, the environments (--env) and
node pools (--pool) of the spec on the command line, accept's stage names
(--stages, --image STAGE=) and, when a kubeconfig is available, node names
from the cluster (with a ` + "2s" + ` timeout).

  bash:  source <(gpuctl completion bash)   # or write it to /etc/bash_completion.d/gpuctl
  zsh:   gpuctl completion zsh > "${fpath[1]}/_gpuctl"
  fish:  gpuctl completion fish > ~/.config/fish/completions/gpuctl.fish
  pwsh:  gpuctl completion powershell | Out-String | Invoke-Expression`

// registerCompletions gives the commands of root their dynamic completions.
// It is called once the tree is built, so the commands keep their files.
func registerCompletions(root *cobra.Command, f *Factory) {
	for _, c := range []struct {
		path     []string
		register func(*cobra.Command)
	}{
		{[]string{"completion"}, func(c *cobra.Command) { c.Long = completionHelp }},
		{[]string{"explain"}, completeExplain},
		{[]string{"parse"}, completeParse},
		{[]string{"generate"}, completeGenerate},
		{[]string{"validate"}, completeValidate},
		{[]string{"accept"}, func(c *cobra.Command) { completeAccept(c, f) }},
		{[]string{"matrix", "check"}, completeMatrixCheck},
		{[]string{"matrix", "machines"}, completeProvider},
	} {
		if cmd, _, err := root.Find(c.path); err == nil && cmd != root {
			c.register(cmd)
		}
	}
}

// completeExplain completes explain's RULE with the IDs and titles of the
// validation rules and the parse findings.
func completeExplain(c *cobra.Command) {
	c.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, r := range rules.Rules() {
			out = append(out, r.ID+"\t"+r.Title)
		}
		for _, r := range probe.FindingRules() {
			out = append(out, r.ID+"\t"+r.Title)
		}
		return matching(out, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeParse completes parse's KIND, then its FILE with files.
func completeParse(c *cobra.Command) {
	c.ValidArgs = nil
	c.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			var kinds []string
			for _, k := range probe.ParseKinds {
				kinds = append(kinds, string(k))
			}
			return matching(kinds, toComplete), cobra.ShellCompDirectiveNoFileComp
		case 1:
			return nil, cobra.ShellCompDirectiveDefault
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// specFiles completes a SPEC argument with YAML files.
func specFiles() ([]string, cobra.ShellCompDirective) {
	return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// completeGenerate completes generate's LAYER, then its SPEC, and --env
// from that spec.
func completeGenerate(c *cobra.Command) {
	layers := c.ValidArgs
	c.ValidArgs = nil
	c.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return matching(layers, toComplete), cobra.ShellCompDirectiveNoFileComp
		case 1:
			return specFiles()
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	envCompletion(c, func(_ *cobra.Command, args []string) []string { return args[min(1, len(args)):] })
}

// completeValidate completes validate's SPECs, and --env from them.
func completeValidate(c *cobra.Command) {
	c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) { return specFiles() }
	envCompletion(c, func(_ *cobra.Command, args []string) []string { return args })
}

// completeAccept completes accept's --env and --pool from --spec, its
// --stages and --image STAGE=, and its NODEs from the cluster.
func completeAccept(c *cobra.Command, f *Factory) {
	specOf := func(c *cobra.Command, _ []string) []string {
		if s, _ := c.Flags().GetString("spec"); s != "" {
			return []string{s}
		}
		return nil
	}
	envCompletion(c, specOf)
	_ = c.RegisterFlagCompletionFunc("pool", func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		env, _ := c.Flags().GetString("env")
		return matching(specPools(specOf(c, args), env), toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	_ = c.RegisterFlagCompletionFunc("stages", completeStageList)
	_ = c.RegisterFlagCompletionFunc("image", completeStageImage)
	c.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return matching(clusterNodes(c, f, args), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeStageList completes the last stage of a comma-separated
// --stages, leaving out those already listed.
func completeStageList(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []string
	for _, st := range accept.AllStages {
		if strings.HasPrefix(string(st), last) && !strings.Contains(","+done, ","+string(st)+",") {
			out = append(out, done+string(st))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeStageImage completes --image with STAGE= for every stage that
// runs an image.
func completeStageImage(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, st := range accept.AllStages {
		if st != accept.StageKubernetes {
			out = append(out, string(st)+"=")
		}
	}
	return matching(out, toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeMatrixCheck completes matrix check's --gpu with the GPU IDs and
// names, and its --provider.
func completeMatrixCheck(c *cobra.Command) {
	_ = c.RegisterFlagCompletionFunc("gpu", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, g := range matrix.GPUs() {
			out = append(out, g.ID+"\t"+g.Name)
		}
		return matching(out, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	completeProvider(c)
}

// completeProvider completes --provider with gke and eks, where c has it.
func completeProvider(c *cobra.Command) {
	if c.Flags().Lookup("provider") != nil {
		_ = c.RegisterFlagCompletionFunc("provider", cobra.FixedCompletions([]string{spec.ProviderGKE, spec.ProviderEKS}, cobra.ShellCompDirectiveNoFileComp))
	}
}

// envCompletion completes --env of c with the environments of the spec
// files that files finds on the command line.
func envCompletion(c *cobra.Command, files func(*cobra.Command, []string) []string) {
	if c.Flags().Lookup("env") == nil {
		return
	}
	_ = c.RegisterFlagCompletionFunc("env", func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		seen := map[string]bool{}
		var out []string
		for _, file := range files(c, args) {
			doc, err := spec.Load(file, nil)
			if err != nil {
				continue
			}
			for _, e := range doc.Environments() {
				if !seen[e] {
					seen[e] = true
					out = append(out, e)
				}
			}
		}
		sort.Strings(out)
		return matching(out, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
}

// specPools are the node pool names of the spec files (of environment env
// when it is one of theirs).
func specPools(files []string, env string) []string {
	var out []string
	for _, file := range files {
		doc, err := spec.Load(file, nil)
		if err != nil {
			continue
		}
		cs, err := doc.Resolve(env)
		if err != nil {
			cs, err = doc.Resolve("")
			if err != nil {
				continue
			}
		}
		for _, p := range cs.Spec.NodePools {
			out = append(out, p.Name)
		}
	}
	return out
}

// clusterNodes lists the cluster's node names for accept's arguments
// (without those already given); nothing without a kubeconfig or when the
// cluster does not answer within nodeCompletionTimeout.
func clusterNodes(c *cobra.Command, f *Factory, given []string) []string {
	flags := newKubeFlags().config
	for name, dst := range map[string]*string{"kubeconfig": flags.KubeConfig, "context": flags.Context} {
		if v, err := c.Flags().GetString(name); err == nil {
			*dst = v
		}
	}
	client, err := f.KubeClient(flags)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.Context(), nodeCompletionTimeout)
	defer cancel()
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	skip := map[string]bool{}
	for _, g := range given {
		skip[g] = true
	}
	var out []string
	for _, n := range list.Items {
		if !skip[n.Name] {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out
}

// matching keeps the candidates ("value" or "value\tdescription") whose
// value starts with prefix, case-insensitively.
func matching(candidates []string, prefix string) []string {
	out := []string{}
	p := strings.ToLower(prefix)
	for _, c := range candidates {
		v, _, _ := strings.Cut(c, "\t")
		if strings.HasPrefix(strings.ToLower(v), p) {
			out = append(out, c)
		}
	}
	return out
}
