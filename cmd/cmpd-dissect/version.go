package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is set by a release build (make build VERSION=v1.2.3 passes
// -ldflags "-X main.version=…"); otherwise the module version from the
// build info names the build.
//
// commit is the fallback for the commit when the build info has none: Go
// stamps vcs.revision only where .git is a directory, not in a git
// worktree (where .git is a file), so the Makefile passes
// -X main.commit=… from git itself.
var version, commit string

// buildInfo says which build of the tool this is.
type buildInfo struct {
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from, with "+dirty"
	// when the work tree had uncommitted changes; "unknown" when the build
	// recorded none (go build -buildvcs=false, or a source tree without
	// its .git).
	Commit     string `json:"commit"`
	CommitTime string `json:"commit_time,omitempty"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
}

// readBuildInfo gathers buildInfo from the -ldflags override and
// runtime/debug.ReadBuildInfo.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if b.Version == "" {
			b.Version = "unknown"
		}
		if commit != "" {
			b.Commit = commit
		}
		return b
	}
	if b.Version == "" {
		b.Version = bi.Main.Version
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if b.Commit == "unknown" && commit != "" {
		b.Commit = commit
	} else if b.Commit == "unknown" {
		// go install …@latest builds from the module proxy's zip, which has
		// no .git: the pseudo-version (v0.0.0-20261125131800-6fdb21c1a2b3)
		// still names the commit.
		if c := pseudoVersionCommit(bi.Main.Version); c != "" {
			b.Commit = c
		}
	} else if dirty {
		b.Commit += "+dirty"
	}
	return b
}

// pseudoVersionCommit returns the 12-digit commit prefix at the end of a Go
// pseudo-version (go help module-get: vX.Y.Z-yyyymmddhhmmss-abcdefabcdef,
// or …-pre.0.yyyymmddhhmmss-abcdefabcdef), "" for any other version.
func pseudoVersionCommit(v string) string {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 {
		return ""
	}
	rev := v[i+1:]
	stamp := v[:i]
	if j := strings.LastIndexAny(stamp, "-."); j >= 0 {
		stamp = stamp[j+1:]
	}
	if len(stamp) != 14 || strings.Trim(stamp, "0123456789") != "" || strings.Trim(rev, "0123456789abcdef") != "" {
		return ""
	}
	return rev
}

// String is the text of --version and the version command.
func (b buildInfo) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "cmpd-dissect %s\n", b.Version)
	fmt.Fprintf(&s, "commit:   %s", b.Commit)
	if b.CommitTime != "" {
		fmt.Fprintf(&s, " (%s)", b.CommitTime)
	}
	fmt.Fprintf(&s, "\ngo:       %s\nplatform: %s\n", b.Go, b.Platform)
	return s.String()
}

// setVersion gives root its --version flag, with the same text as the
// version command.
func setVersion(root *cobra.Command) {
	b := readBuildInfo()
	root.Version = b.Version
	root.SetVersionTemplate(b.String())
}

func newVersionCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print the version, commit and Go version this binary was built with",
		Long: `version prints what identifies this build: the version (a release tag, the Go module
version "go install" recorded, or "(devel)" for a build from a work tree), the commit it was
built from ("+dirty" when the work tree had uncommitted changes), the Go version and the
platform. "cmpd-dissect --version" prints the same.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := readBuildInfo()
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				return enc.Encode(b)
			}
			_, err := fmt.Fprint(cmd.OutOrStdout(), b.String())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build information as one JSON object")
	return cmd
}
