// Package gendocs writes the man pages and shell completion scripts of a
// cobra command tree ("make man"). It is its own package so that the
// shipped binary does not link cobra/doc and what it brings (a Markdown
// parser, a second YAML library), whose package initialisation would run
// on every command: cmd/cmpd-dissect's gen-docs command reaches it only in
// a build with the gendocs tag, and the test that keeps the committed
// pages in sync imports it.
package gendocs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// The directories "make man" writes: man pages under docs/man, completion
// scripts under completions/ (names as the shells look them up:
// bash-completion's CMD.bash or CMD, zsh's _CMD on $fpath, fish's
// CMD.fish).
const (
	ManDir         = "docs/man"
	CompletionsDir = "completions"
)

var completionFiles = map[string]func(root *cobra.Command, w *bytes.Buffer) error{
	"cmpd-dissect.bash": func(root *cobra.Command, w *bytes.Buffer) error { return root.GenBashCompletionV2(w, true) },
	"_cmpd-dissect":     func(root *cobra.Command, w *bytes.Buffer) error { return root.GenZshCompletion(w) },
	"cmpd-dissect.fish": func(root *cobra.Command, w *bytes.Buffer) error { return root.GenFishCompletion(w, true) },
}

// thDate is the date field of the .TH line cobra writes ("Nov 2026"): it
// is emptied, so the committed pages depend only on the commands and the
// test that keeps them in sync does not fail when the month changes.
var thDate = regexp.MustCompile(`(?m)^(\.TH "[^"]*" "[^"]*" )"[^"]*"`)

// Generate writes the man pages of root and every subcommand into man and
// the shell completion scripts into completions (either may be empty to
// skip it). Pages of commands that no longer exist are removed.
func Generate(root *cobra.Command, man, completions string) error {
	// What Execute adds by itself, so the pages are the same whether this
	// runs as a command or from a test.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	root.DisableAutoGenTag = true
	if man != "" {
		if err := os.MkdirAll(man, 0o755); err != nil {
			return err
		}
		old, _ := filepath.Glob(filepath.Join(man, "cmpd-dissect*.1"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
		header := &doc.GenManHeader{Section: "1", Source: "cmpd-dissect", Manual: "cmpd-dissect manual"}
		if err := genManTree(root, header, man); err != nil {
			return err
		}
	}
	if completions != "" {
		if err := os.MkdirAll(completions, 0o755); err != nil {
			return err
		}
		for name, gen := range completionFiles {
			var b bytes.Buffer
			if err := gen(root, &b); err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			if err := os.WriteFile(filepath.Join(completions, name), b.Bytes(), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// genManTree is doc.GenManTree with the date taken out of each page.
func genManTree(c *cobra.Command, header *doc.GenManHeader, dir string) error {
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := genManTree(sub, header, dir); err != nil {
			return err
		}
	}
	h := *header
	h.Title = ""
	var b bytes.Buffer
	if err := doc.GenMan(c, &h, &b); err != nil {
		return err
	}
	name := filepath.Join(dir, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
	return os.WriteFile(name, thDate.ReplaceAll(b.Bytes(), []byte(`$1""`)), 0o644)
}
