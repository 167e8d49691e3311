package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/report"
)

func newReportCommand() *cobra.Command {
	var (
		flags trackFlags
		out   string
	)
	cmd := &cobra.Command{
		Use:   "report -o FILE.html CAPTURE…",
		Short: "Write one self-contained HTML report of captures: verdict, connections, ladder diagrams, findings",
		Long: `report writes one HTML file about the captures (each read on its own, as explain reads them): the
explain verdict and statements, the connection table, one ladder diagram (SVG) per connection with
client and server lanes, the CM/MPA messages, the Sends that findings name, the findings marked on
their frames and the teardown or rejection, with the text ladder of conns -V as its alternative;
the negotiation table and every finding with its frame.

The file is self-contained: inline CSS, SVG and a few lines of script, a Content-Security-Policy
that forbids any fetch. It opens from a file:// URL or as a mail attachment, and prints.
-o - writes it to standard output.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr("report: -o FILE.html is required")
			}
			caps, runs, err := explainCaptures(cmd, args, &flags)
			if err != nil {
				return err
			}
			rc := make([]report.Capture, len(caps))
			for i, c := range caps {
				rc[i] = report.Capture{Name: c.Name, Conns: runs[i].tracker.Connections(), Other: runs[i].other(), Explanation: c}
			}
			if out == "-" {
				return report.Write(cmd.OutOrStdout(), rc)
			}
			f, err := os.Create(out)
			if err != nil {
				return usageErr("report: %v", err)
			}
			if err := report.Write(f, rc); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return fmt.Errorf("report: %v", err)
			}
			n := 0
			for _, c := range rc {
				n += len(c.Conns)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "report: %s: %d captures, %d connections\n", out, len(rc), n)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the report to `FILE` (\"-\": standard output)")
	flags.register(cmd)
	return cmd
}
