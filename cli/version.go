package cli

import (
	"cmp"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/airnode/airnode/sdk/pluginrpc"
)

// version is the build's version when the build sets it:
// go build -ldflags "-X github.com/airnode/airnode/cli.version=v1.4.0".
// Empty: taken from the module and VCS information Go embeds (see
// buildVersion).
var version string

// buildVersion says which build of airnode this is, in one line: the
// version set at link time, else the main module's version (go install
// ...@v1.4.0), else the git commit Go embeds when it builds in a checkout
// (vcs.revision, 12 digits, "-dirty" for uncommitted changes, and
// vcs.time), else "devel" with the reason. Mixed fleets during an upgrade
// are told apart by it: `airnode version`, `airnode --version`, and serve's
// "serving" lines.
func buildVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel (no build information)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel (no VCS information: built outside a git checkout or with -buildvcs=false)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	if at != "" {
		return fmt.Sprintf("devel %s (%s)", rev, at)
	}
	return "devel " + rev
}

// buildLabels are the version and revision labels of airnode_build_info:
// the version set at link time, else the main module's version, else
// "devel"; the VCS commit Go embeds (12 digits, "-dirty" for uncommitted
// changes), else "". buildVersion's one line says the same for people.
func buildLabels() (ver, revision string) {
	ver = version
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return cmp.Or(ver, "devel"), ""
	}
	if v := bi.Main.Version; ver == "" && v != "" && v != "(devel)" {
		ver = v
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if dirty && revision != "" {
		revision += "-dirty"
	}
	return cmp.Or(ver, "devel"), revision
}

// versionCommand prints the build's version, its Go version and platform,
// and the plugin protocol version (pluginrpc.ProtocolVersion).
func versionCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print which build of airnode this is",
		Long: `Print which build of airnode this is: the version set at link time
(-ldflags "-X github.com/airnode/airnode/cli.version=..."), the module
version of go install, or the git commit it was built from, then the Go
version and platform, then the plugin protocol version it speaks to plugins
(a plugin built against an sdk of another protocol version fails to start,
saying which side is newer). serve logs the same version in its "serving"
lines, so the processes of a fleet being upgraded can be told apart.`,
		Args: argsRange(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(a.stdout, "%s %s\n%s %s/%s\nplugin protocol version %d\n", a.name, buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH,
				pluginrpc.ProtocolVersion)
			return nil
		},
	}
}
