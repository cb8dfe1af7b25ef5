package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// DefaultNamespace is where accept runs its probe Jobs unless -n says
// otherwise.
const DefaultNamespace = "gpuctl"

// kubeFlags are kubectl's connection flags (--kubeconfig, --context,
// -n/--namespace) through cli-runtime, plus --create-namespace.
type kubeFlags struct {
	config          *genericclioptions.ConfigFlags
	createNamespace bool
}

func newKubeFlags() *kubeFlags {
	s := func() *string { v := ""; return &v }
	return &kubeFlags{config: &genericclioptions.ConfigFlags{KubeConfig: s(), Context: s(), Namespace: s()}}
}

// AddFlags adds the flags to cmd.
func (k *kubeFlags) AddFlags(cmd *cobra.Command) {
	k.config.AddFlags(cmd.Flags())
	if f := cmd.Flags().Lookup("namespace"); f != nil {
		f.Usage = fmt.Sprintf("namespace of the probe Jobs (default %q; it must exist unless --create-namespace)", DefaultNamespace)
	}
	cmd.Flags().BoolVar(&k.createNamespace, "create-namespace", false, "create the namespace if it does not exist")
}

// namespace returns -n, else DefaultNamespace (not the kubeconfig's).
func (k *kubeFlags) namespace() string {
	if ns := *k.config.Namespace; ns != "" {
		return ns
	}
	return DefaultNamespace
}
