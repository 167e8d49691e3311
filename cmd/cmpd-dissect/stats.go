package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/dfilter"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/view"
)

// defaultBreakdown are the enumerated fields stats counts by default: the CM
// message type first.
var defaultBreakdown = []string{"cm.attribute_id", "bth.opcode", "mpa.frame_type", "rdmap.opcode", "rpcrdma.msg_type", "rpc.procedure"}

func newStatsCommand() *cobra.Command {
	var in inputFlags
	var by []string
	var asJSON bool
	var filter string
	cmd := &cobra.Command{
		Use:   "stats [FILE…]",
		Short: "Count packets by protocol and CM message type, and findings by code",
		Long: `Read captures and print counts: packets per protocol, per value of the
breakdown fields (the CM message type cm.attribute_id, the BTH opcode, the
RDMAP opcode, the RPC-over-RDMA procedure …) and findings per code.`,
		Example: `  cmpd-dissect stats nfs-rdma.pcap
  cmpd-dissect stats -r a.pcap -r b.pcapng.gz --json
  cmpd-dissect stats --by udp.dstport -Y udp capture.pcap`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := view.NewStats(by)
			if err != nil {
				return usageErr("%v", err)
			}
			var f *dfilter.Filter
			if filter != "" {
				if f, err = dfilter.Compile(filter); err != nil {
					return usageErr("%v", err)
				}
			}
			it, err := in.open(cmd, args)
			if err != nil {
				return err
			}
			runErr := it.each(in.dissector(), func(r *dissect.Record) (bool, error) {
				if f != nil && !f.Match(r) {
					return false, nil
				}
				return true, st.Print(r)
			})
			if err := it.close(); err != nil && runErr == nil {
				runErr = err
			}
			if runErr != nil {
				return runErr
			}
			st.Interfaces = it.ifStats
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				return enc.Encode(st.JSON())
			}
			return st.Render(cmd.OutOrStdout())
		},
	}
	in.register(cmd)
	cmd.Flags().StringArrayVar(&by, "by", defaultBreakdown, "count packets by the values of integer `FIELD` (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts as one JSON object")
	cmd.Flags().StringVarP(&filter, "display-filter", "Y", "", "count only packets matching `EXPR`")
	return cmd
}
