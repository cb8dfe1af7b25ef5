package cli

import (
	"cmp"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

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
	commit, date := vcsStamp(buildSettings())
	if v.Commit == "" {
		v.Commit = commit
	}
	if v.BuildDate == "" {
		v.BuildDate = date
	}
	if d := matrix.DataDate(); !d.IsZero() {
		v.MatrixAsOf = d.Format("2006-01-02")
	}
	return v
}

// buildSettings are the key=value settings Go recorded in the binary
// (vcs.revision, vcs.time, vcs.modified, ...); empty when none.
func buildSettings() map[string]string {
	settings := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
	}
	return settings
}

// vcsStamp is the VCS revision Go recorded for a build in a clone, with
// "-dirty" for a modified tree, and the commit's time (RFC 3339); "" for
// what is not recorded (go build -buildvcs=false, a build outside a clone).
func vcsStamp(settings map[string]string) (commit, date string) {
	if commit = settings["vcs.revision"]; commit != "" && settings["vcs.modified"] == "true" {
		commit += "-dirty"
	}
	return commit, settings["vcs.time"]
}

// versionLine is the version `gpuctl version` and `gpuctl --version` print
// after "gpuctl ": the version, and for a build not stamped with a version
// (go build without -ldflags: "devel") the VCS revision and the commit's
// date where Go recorded them: "devel (abc1234, 2026-12-03)",
// "devel (abc1234-dirty, 2026-12-03)".
func versionLine(version, commit, date string) string {
	if version != "devel" || commit == "" {
		return version
	}
	short, dirty := strings.CutSuffix(commit, "-dirty")
	if len(short) > 7 {
		short = short[:7]
	}
	if dirty {
		short += "-dirty"
	}
	if t, err := time.Parse(time.RFC3339, date); err == nil {
		return fmt.Sprintf("%s (%s, %s)", version, short, t.UTC().Format("2006-01-02"))
	}
	return fmt.Sprintf("%s (%s)", version, short)
}

// rootVersion is versionLine for this binary, for `gpuctl --version`.
func rootVersion() string {
	commit, date := Commit, BuildDate
	if commit == "" || date == "" {
		c, d := vcsStamp(buildSettings())
		commit, date = cmp.Or(commit, c), cmp.Or(date, d)
	}
	return versionLine(BuildVersion(), commit, date)
}

func newVersionCommand(streams *IOStreams) *cobra.Command {
	var out *outputFlag
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print gpuctl's version",
		Long: `Print gpuctl's version; -o json adds the commit, the build date, the Go
version and the date of the version matrix (the newest as_of of its facts).
` + "`gpuctl --version`" + ` prints the first line. A build not stamped with a version
('go build' without make build's -ldflags) reads "devel", with the commit and
its date where Go recorded them: "devel (abc1234, 2026-12-03)".`,
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
		versionLine(v.Version, v.Commit, v.BuildDate), orUnknown(v.Commit), orUnknown(v.BuildDate), v.GoVersion, v.Platform, orUnknown(v.MatrixAsOf))
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
