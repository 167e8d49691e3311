package main

import (
	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/internal/catalog"
)

func newFindingsCommand() *cobra.Command {
	var asJSON, markdown bool
	cmd := &cobra.Command{
		Use:   "findings [--json | --markdown]",
		Short: "List every finding code the tool can raise, with its severity and specification section",
		Long: `findings lists every finding code the tool can raise: its one severity, the
specification section it enforces, and what it means. These are the codes expectation files
name in allowed_findings (see "check --help").

--json prints one JSON array of {code, severity, section, summary, remedy}; --markdown prints
docs/findings.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			switch {
			case asJSON && markdown:
				return usageErr("findings: --json and --markdown are exclusive")
			case asJSON:
				return catalog.WriteJSON(out, catalog.All())
			case markdown:
				return catalog.WriteMarkdown(out)
			}
			return catalog.WriteText(out, catalog.All())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the catalogue as a JSON array")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the catalogue as Markdown (docs/findings.md)")
	return cmd
}
