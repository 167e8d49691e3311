package main

import (
	"bytes"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/expect"
)

// expectExample is the expectation file "check --help" shows, indented by
// four spaces: a code block for the man pages' Markdown (a test parses it).
const expectExample = `    strict: true                # a connection that matches no entry is a difference
    allowed_findings:           # codes allowed anywhere, also outside connections
      - dissect.truncated
    connections:
      - match:                  # keys given must agree; keys left out match anything
          transport: rocev2     # rocev2, rocev1, ib or iwarp
          service: NFS/RDMA     # a service name, an rdma_cm port ("20049") or a service ID (0x…)
          client: 192.0.2.1     # an address, or address:port
          server: 192.0.2.2:20049
        count: 2                # how many connections match (left out: any, at least one)
        state: disconnected     # requested, replied, established, rejected,
                                # disconnecting, disconnected, timed out
        negotiated:             # RFC 8797 result; keys left out are not checked
          client_to_server_inline: 4096
          server_to_client_inline: 4096
          remote_invalidation: false
        allowed_findings:       # codes allowed on these connections
          - conn.server-send-exceeds-client-receive
`

func newCheckCommand() *cobra.Command {
	var (
		flags       trackFlags
		expectFile  string
		writeExpect string
		format      string
	)
	cmd := &cobra.Command{
		Use:   "check [--expect FILE] [--format text|json|junit] CAPTURE… | check --write-expect FILE CAPTURE…",
		Short: "CI check: fail when a capture has an error finding or its connections differ from an expectation file",
		Long: `check follows the connections of the captures as "conns" does and compares them with an
expectation file (YAML: per connection, matched by transport, service or addresses, the expected
state, negotiated values and the finding codes allowed). Without --expect only error findings fail.

Exit status: 0 when there is no error finding and every connection matches the expectations;
1 when something differs, with a list of each difference; 2 for bad usage or unusable input.

--write-expect FILE writes the current result as the expectation file, so a CI job can pin a
known-good capture. --format junit writes a JUnit XML report for CI systems.

An expectation file:

` + expectExample + `
A connection is checked against the first entry whose match keys agree, whose expectations it
meets and whose count is not used up (else against the first whose match keys agree). Every
warning or error finding on it must be in its allowed_findings or the top-level one; findings
outside connections fail when they are errors not in the top-level allowed_findings. Unknown
keys are an error. "cmpd-dissect findings" lists the finding codes; docs/expectations.md
describes the format in full.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "text", "json", "junit":
			default:
				return usageErr("check: --format must be text, json or junit, not %q", format)
			}
			if writeExpect != "" && expectFile != "" {
				return usageErr("check: --expect and --write-expect are exclusive")
			}
			var exp *expect.Expectations
			if expectFile != "" {
				e, err := expect.Load(expectFile)
				if err != nil {
					return usageErr("check: %v", err)
				}
				exp = e
			}
			t, err := trackCaptures(cmd, args, &flags)
			if err != nil {
				return err
			}
			cs := t.tracker.Connections()
			if writeExpect != "" {
				var b bytes.Buffer
				if err := expect.Write(&b, expect.From(cs, t.other()), strings.Join(args, " ")); err != nil {
					return err
				}
				if err := os.WriteFile(writeExpect, b.Bytes(), 0o644); err != nil {
					return usageErr("check: %v", err)
				}
				return nil
			}
			res := expect.Check(cs, t.other(), exp)
			out := cmd.OutOrStdout()
			switch format {
			case "json":
				err = expect.WriteJSON(out, res)
			case "junit":
				err = expect.WriteJUnit(out, res, "cmpd-dissect check "+strings.Join(args, " "))
			default:
				err = expect.WriteText(out, res)
			}
			if err != nil {
				return err
			}
			if !res.Pass {
				return findingsErr("")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&expectFile, "expect", "", "expectation file (YAML) the connections must match")
	cmd.Flags().StringVar(&writeExpect, "write-expect", "", "write the current result as an expectation file and exit")
	cmd.Flags().StringVar(&format, "format", "text", "verdict format: text, json or junit")
	flags.register(cmd)
	return cmd
}
