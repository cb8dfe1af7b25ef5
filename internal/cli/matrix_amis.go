package cli

import (
	"fmt"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// ---- matrix amis ----

// amisOptions are `matrix amis`'s filters.
type amisOptions struct {
	amiType, kubernetes, driver string
}

func newMatrixAMIsCommand(streams *IOStreams) *cobra.Command {
	var out *outputFlag
	var o amisOptions
	cmd := &cobra.Command{
		Use:   "amis",
		Short: "List the EKS NVIDIA AMI releases with their Kubernetes version, date and driver",
		Long: `The releases of the EKS NVIDIA AMI types the matrix knows (data/amis.yaml): AL2023 and AL2 from
awslabs/amazon-eks-ami's release notes, Bottlerocket from bottlerocket.dev's GPU driver pages. RELEASE is
what a node group's releaseVersion takes (Bottlerocket: the OS version, followed by "-" and its commit).
A Bottlerocket DATE is the day its driver page was listed (the release is that day or earlier).`,
		Example: "  gpuctl matrix amis --ami-type AL2023_x86_64_NVIDIA --kubernetes 1.34\n  gpuctl matrix amis --driver 580.95.05 -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			return writeOutput(streams, out, amiListFormats, newAMIList(o))
		},
	}
	cmd.Flags().StringVar(&o.amiType, "ami-type", "", "only this EKS AMI type (AL2023_x86_64_NVIDIA, BOTTLEROCKET_x86_64_NVIDIA, ...)")
	cmd.Flags().StringVar(&o.kubernetes, "kubernetes", "", "only releases for this Kubernetes minor (1.34)")
	cmd.Flags().StringVar(&o.driver, "driver", "", "only releases that ship this driver version or branch (580.95.05, 580)")
	out = addViewFlag(cmd, amiListFormats)
	return cmd
}

// validate refuses filters that can match nothing by their form: an AMI
// type without a release table, a Kubernetes version that is not X.Y, a
// driver that is not a version or branch (exit 2), so a typo is not read
// as "no releases".
func (o amisOptions) validate() error {
	if o.amiType != "" && len(matrix.AMIReleases(matrix.AMIReleaseFilter{AMIType: o.amiType})) == 0 {
		return usageErrorf("--ami-type %q has no release table; the tabled AMI types: %s", o.amiType, strings.Join(matrix.TabledAMITypes(), ", "))
	}
	if o.kubernetes != "" && !kubernetesMinorForm.MatchString(o.kubernetes) {
		return usageErrorf("--kubernetes %q is not a Kubernetes minor (1.34)", o.kubernetes)
	}
	if o.driver != "" {
		if _, err := matrix.ParseVersion(o.driver); err != nil {
			return usageErrorf("--driver %q is not a driver version or branch (580.95.05, 580)", o.driver)
		}
	}
	return nil
}

var kubernetesMinorForm = regexp.MustCompile(`^1\.[0-9]{1,2}$`)

// amiList is `matrix amis -o json`: the releases the filters select, by
// AMI type, newest first.
type amiList struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Items      []matrix.AMIRelease `json:"items"`
}

func newAMIList(o amisOptions) amiList {
	items := matrix.AMIReleases(matrix.AMIReleaseFilter{AMIType: o.amiType, Kubernetes: o.kubernetes, Driver: o.driver})
	if items == nil {
		items = []matrix.AMIRelease{}
	}
	return amiList{spec.APIVersion, "MatrixAMIReleaseList", items}
}

var amiListFormats = viewFormats[amiList]{tableFormat(writeAMITable), jsonFormat[amiList]()}

func writeAMITable(s *IOStreams, l amiList) error {
	tw := tabwriter.NewWriter(s.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AMI TYPE\tRELEASE\tKUBERNETES\tDATE\tDRIVER")
	for _, r := range l.Items {
		date, drv := r.Date, r.Driver
		if r.DateListed {
			date += " (listed)"
		}
		if drv == "" {
			drv = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.AMIType, r.Release, r.Kubernetes, date, drv)
	}
	return tw.Flush()
}
