package main

import (
	"encoding/json"
	"runtime"
	"testing"
)

func TestVersionFlagAndCommand(t *testing.T) {
	code, flag, stderr := runCmd(t, "--version")
	if code != 0 {
		t.Fatalf("--version: exit %d: %s", code, stderr)
	}
	code, out, stderr := runCmd(t, "version")
	if code != 0 {
		t.Fatalf("version: exit %d: %s", code, stderr)
	}
	if flag != out {
		t.Errorf("--version and version differ:\n%s\n%s", flag, out)
	}
	wantIn(t, "version output", out, "cmpd-dissect ", "\ncommit:   ", "\ngo:       "+runtime.Version(), "\nplatform: "+runtime.GOOS+"/"+runtime.GOARCH)
	code, js, stderr := runCmd(t, "version", "--json")
	if code != 0 {
		t.Fatalf("version --json: exit %d: %s", code, stderr)
	}
	var b buildInfo
	if err := json.Unmarshal([]byte(js), &b); err != nil {
		t.Fatalf("version --json: %v: %s", err, js)
	}
	if b.Go != runtime.Version() || b.Version == "" || b.Commit == "" {
		t.Errorf("version --json: %+v", b)
	}
}

func TestVersionCommitOverride(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "0123456789abcdef0123456789abcdef01234567+dirty"
	b := readBuildInfo()
	if b.Version != "v1.2.3" {
		t.Errorf("version = %q, want the -ldflags one", b.Version)
	}
	// A test binary has no VCS stamp, so the -ldflags commit is used.
	if b.Commit != commit {
		t.Errorf("commit = %q, want %q", b.Commit, commit)
	}
}

func TestPseudoVersionCommit(t *testing.T) {
	for _, c := range []struct{ v, want string }{
		{"v0.0.0-20261125131800-6fdb21c27350", "6fdb21c27350"},
		{"v1.2.4-0.20261125131800-6fdb21c27350", "6fdb21c27350"},
		{"v1.2.4-rc.1.0.20261125131800-6fdb21c27350+dirty", "6fdb21c27350"},
		{"v1.2.3", ""},
		{"(devel)", ""},
		{"v1.2.3-rc1", ""},
		{"v0.0.0-2026112513180-6fdb21c27350", ""},
		{"v0.0.0-20261125131800-6fdb21c2735g", ""},
	} {
		if got := pseudoVersionCommit(c.v); got != c.want {
			t.Errorf("pseudoVersionCommit(%q) = %q, want %q", c.v, got, c.want)
		}
	}
}
