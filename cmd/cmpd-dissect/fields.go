package main

import (
	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/view"
)

func newFieldsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "fields [PREFIX]",
		Short: "List every protocol and field name (for -e, -Y and JSON), like tshark -G fields",
		Long: `List every declared protocol and field, tab-separated, like tshark -G fields:

  P  NAME  DESCRIPTION
  F  NAME  TYPE  DESCRIPTION  PROTOCOL  SPECIFICATION  TSHARK-NAMES

TYPE is uint, hex, int, bool, string, bytes, addr, mac, eui64 or group.
TSHARK-NAMES are tshark's names for the same field (ip.src for ipv4.src),
comma-separated: -Y and -e accept them too. A "Source or Destination" field
(ipv4.addr, tcp.port, …) matches either side and prints both. With PREFIX,
only the protocols and fields whose name (or tshark name) starts with it.`,
		Example: `  cmpd-dissect fields
  cmpd-dissect fields cm.req.
  cmpd-dissect fields | awk -F'\t' '$1=="F" && $3=="bool" {print $2}'`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
			return completeFieldNames(cmd, args, prefix)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			prefix := ""
			if len(args) == 1 {
				prefix = args[0]
			}
			return view.FieldList(cmd.OutOrStdout(), prefix)
		},
	}
}
