package main

import (
	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/explain"
	"github.com/cmpd-dissect/cmpd-dissect/view"
)

// explainCaptures follows the connections of each capture on its own (its
// frames numbered from 1, as other tools show them) and explains them.
func explainCaptures(cmd *cobra.Command, args []string, flags *trackFlags) ([]*explain.Capture, []*tracked, error) {
	files := append(append([]string(nil), flags.input.reads...), args...)
	flags.input.reads = nil
	var caps []*explain.Capture
	var runs []*tracked
	one := func(files []string, name string) error {
		t, err := trackCaptures(cmd, files, flags)
		if err != nil {
			return err
		}
		caps = append(caps, explain.Explain(name, t.tracker.Connections(), t.other()))
		runs = append(runs, t)
		return nil
	}
	if len(files) == 0 {
		name := flags.input.iface
		if name == "" {
			return nil, nil, usageErr("give a capture file (or -i IFACE)")
		}
		return caps, runs, one(nil, name)
	}
	for _, f := range files {
		if err := one([]string{f}, f); err != nil {
			return nil, nil, err
		}
	}
	return caps, runs, nil
}

func newExplainCommand() *cobra.Command {
	var (
		flags  trackFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "explain [--json] CAPTURE…",
		Short: "Say in plain sentences what happened to the connections of each capture, and what to do",
		Long: `explain reads each capture on its own and says what happened to its RDMA connections, from the
same analysis as conns (one source): a verdict first (how many connections, how many failed, the
worst problems), then each connection — or each group of connections that went the same way,
such as a client reconnecting without end — with frame numbers:

  - what was agreed and why: each inline threshold with the two values it came from and which
    side's value set it; why the RFC 8797 defaults (1024 octets) apply where they do: no private
    data, not RFC 8797, an unknown version, an overrun, an identifier where some receivers do not
    look (RFC 8797 search, drafts -04/-05, Linux);
  - who refused and why: the REJ reason with its meaning and usual cause, the MPA Reject with the
    cause the capture supports, a setup that got no answer, a storm of attempts;
  - what the traffic broke: Sends over the agreed threshold, Send with Invalidate not negotiated;
  - what to do, where a remedy is known (the sysctl or mount option, the RFC section).

--json: one JSON object per statement per line: capture, code, severity, connection (and the
connections of its group), frames, text, remedy, section, finding.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			caps, _, err := explainCaptures(cmd, args, &flags)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return explain.WriteJSON(out, caps)
			}
			width := view.TerminalWidth(out)
			return explain.WriteText(out, caps, func(line, indent string) string { return view.WrapText(line, width, indent) })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per statement per line")
	flags.register(cmd)
	return cmd
}
