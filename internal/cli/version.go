package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// Version, Commit and BuildDate are stamped at build time with -ldflags
// "-X github.com/gpuctl/gpuctl/internal/cli.Version=v1.2.3" (Makefile: make
// build). Unstamped, they come from the build info Go records (the module
// version; the VCS revision and time of a build in a clone).
var (
	Version   = ""
	Commit    = ""
	BuildDate = ""
)

// BuildVersion returns the stamped version, else the module version from the
// build info, else "devel".
func BuildVersion() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// VersionInfo is `gpuctl version -o json`. Its keys are a contract.
type VersionInfo struct {
	Version string `json:"version"`
	// Commit is the VCS revision ("" when unknown), with "-dirty" for a
	// build of a modified tree.
	Commit string `json:"commit"`
	// BuildDate is when the binary was stamped, or the commit's time (RFC
	// 3339; "" when unknown).
	BuildDate string `json:"buildDate"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	// MatrixAsOf is the date of the newest embedded fact (YYYY-MM-DD).
	MatrixAsOf string `json:"matrixAsOf"`
}

// buildInfo returns what this binary knows about its build.
func buildInfo() VersionInfo {
	v := VersionInfo{Version: BuildVersion(), Commit: Commit, BuildDate: BuildDate, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if v.Commit == "" && settings["vcs.revision"] != "" {
			v.Commit = settings["vcs.revision"]
			if settings["vcs.modified"] == "true" {
				v.Commit += "-dirty"
			}
		}
		if v.BuildDate == "" {
			v.BuildDate = settings["vcs.time"]
		}
	}
	if d := matrix.DataDate(); !d.IsZero() {
		v.MatrixAsOf = d.Format("2006-01-02")
	}
	return v
}

func newVersionCommand(streams *IOStreams) *cobra.Command {
	var out *outputFlag
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print gpuctl's version",
		Long: `Print gpuctl's version; -o json adds the commit, the build date, the Go
version and the date of the version matrix (the newest as_of of its facts).
` + "`gpuctl --version`" + ` prints the first line.`,
		Example: `  gpuctl version
  gpuctl version -o json | jq -r .matrixAsOf`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			return writeOutput(streams, out, versionFormats, buildInfo())
		},
	}
	out = addViewFlag(cmd, versionFormats)
	return cmd
}

// versionFormats are `gpuctl version`'s output formats.
var versionFormats = viewFormats[VersionInfo]{tableFormat(writeVersionTable), jsonFormat[VersionInfo]()}

func writeVersionTable(s *IOStreams, v VersionInfo) error {
	_, err := fmt.Fprintf(s.Out, "gpuctl %s\ncommit: %s\nbuilt: %s\ngo: %s %s\nmatrix as of: %s\n",
		v.Version, orUnknown(v.Commit), orUnknown(v.BuildDate), v.GoVersion, v.Platform, orUnknown(v.MatrixAsOf))
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
