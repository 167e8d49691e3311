package main

import (
	"github.com/spf13/cobra"
)

// genDocs writes the man pages and completion scripts (internal/gendocs'
// Generate). It is set only in a build with the gendocs tag ("make man")
// and by the tests: the shipped binary does not link cobra/doc, whose
// dependencies' initialisation would otherwise run on every command.
var genDocs func(root *cobra.Command, man, completions string) error

func newGenDocsCommand() *cobra.Command {
	var man, completions string
	cmd := &cobra.Command{
		Use:    "gen-docs [--man DIR] [--completions DIR]",
		Short:  "Write the man pages and shell completion scripts from the command definitions (make man)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if man == "" && completions == "" {
				return usageErr("gen-docs: give --man DIR, --completions DIR or both")
			}
			if genDocs == nil {
				return usageErr("gen-docs: this binary was built without the gendocs tag: run make man")
			}
			return genDocs(cmd.Root(), man, completions)
		},
	}
	cmd.Flags().StringVar(&man, "man", "", "write the man pages (section 1) into `DIR`")
	cmd.Flags().StringVar(&completions, "completions", "", "write the bash, zsh and fish completion scripts into `DIR`")
	return cmd
}
