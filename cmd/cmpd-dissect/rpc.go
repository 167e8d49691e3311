package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/dfilter"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/rpcstat"
)

// rpcJSON is what rpc --json prints: one object.
type rpcJSON struct {
	Procedures []rpcstat.JSONRow  `json:"procedures"`
	Unanswered []rpcstat.JSONCall `json:"unanswered"`
	// Untracked counts calls not kept for the unanswered list (more were
	// waiting than --max-pending).
	Untracked int `json:"untracked,omitempty"`
}

func newRPCCommand() *cobra.Command {
	var in inputFlags
	var asJSON bool
	var filter string
	var maxPending int
	cmd := &cobra.Command{
		Use:   "rpc [FILE…]",
		Short: "RPC service response times per program, version and procedure; calls without reply",
		Long: `Read captures and print the ONC RPC service response times (SRT), like
tshark -z rpc,srt,PROGRAM,VERSION: per program, version and procedure the
calls, the replies matched to them (by connection and xid) and the minimum,
average and maximum time from a call to its reply; for an NFSv4 COMPOUND also
per operation it carried. An RDMA_NOMSG (the reply went by RDMA Write into the
reply chunk) or RDMA_ERROR with a call's xid answers that call. The calls that
never got a reply are listed after the table.

tshark's "Calls" column counts the replies it matched (and a reply it
dissects twice, as it does with some RDMA_MSG replies carrying a write chunk,
twice): compare it with the Replies column.`,
		Example: `  cmpd-dissect rpc nfs-rdma.pcap
  cmpd-dissect rpc --json -r a.pcap -r b.pcapng.gz`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if maxPending <= 0 {
				return usageErr("--max-pending must be positive, not %d", maxPending)
			}
			var f *dfilter.Filter
			if filter != "" {
				var err error
				if f, err = dfilter.Compile(filter); err != nil {
					return usageErr("%v", err)
				}
			}
			it, err := in.open(cmd, args)
			if err != nil {
				return err
			}
			st := rpcstat.New(maxPending)
			runErr := it.each(in.dissector(), func(r *dissect.Record) (bool, error) {
				if f != nil && !f.Match(r) {
					return false, nil
				}
				st.Record(r)
				return true, nil
			})
			if err := it.close(); err != nil && runErr == nil {
				runErr = err
			}
			if runErr != nil {
				return runErr
			}
			if asJSON {
				out := rpcJSON{Procedures: []rpcstat.JSONRow{}, Unanswered: []rpcstat.JSONCall{}, Untracked: st.Untracked}
				for _, r := range st.Rows() {
					out.Procedures = append(out.Procedures, r.JSON())
				}
				for _, c := range st.Unanswered() {
					out.Unanswered = append(out.Unanswered, c.JSON())
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(out)
			}
			return renderRPC(cmd.OutOrStdout(), st)
		},
	}
	in.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the statistics as one JSON object")
	cmd.Flags().StringVarP(&filter, "display-filter", "Y", "", "take only packets matching `EXPR`")
	cmd.Flags().IntVar(&maxPending, "max-pending", rpcstat.DefaultMaxPending, "calls kept while they await their reply, for the list of calls without reply")
	return cmd
}

// renderRPC prints a table per program and version, as tshark's
// rpc,srt does, times in milliseconds, then the calls without reply.
func renderRPC(w io.Writer, st *rpcstat.Stats) error {
	bw := bufio.NewWriter(w)
	rows := st.Rows()
	if len(rows) == 0 {
		fmt.Fprintln(bw, "No RPC calls or replies.")
	}
	for i, r := range rows {
		if i == 0 || r.Program != rows[i-1].Program || r.Version != rows[i-1].Version {
			if i > 0 {
				fmt.Fprintln(bw)
			}
			fmt.Fprintf(bw, "RPC SRT: %s (%d) version %d\n", rpcstat.ProgramName(r.Program), r.Program, r.Version)
			fmt.Fprintf(bw, "%-5s %-28s %7s %7s %10s %10s %10s\n", "Index", "Procedure", "Calls", "Replies", "Min ms", "Avg ms", "Max ms")
		}
		j := r.JSON()
		name, index := j.Procedure, fmt.Sprint(r.Procedure)
		if r.HasOp {
			name, index = "  "+j.Operation, ""
		}
		fmt.Fprintf(bw, "%-5s %-28s %7d %7d %10.3f %10.3f %10.3f\n", index, name, r.Calls, r.Replies, j.MinMS, j.AvgMS, j.MaxMS)
	}
	if calls := st.Unanswered(); len(calls) > 0 {
		fmt.Fprintf(bw, "\nCalls without reply: %d\n", len(calls))
		for _, c := range calls {
			j := c.JSON()
			fmt.Fprintf(bw, "  frame %d  xid %s  %s v%d %s", c.Frame, j.XID, j.Program, j.Version, j.Procedure)
			if len(j.Operations) > 0 {
				fmt.Fprintf(bw, " %s", strings.Join(j.Operations, " "))
			}
			fmt.Fprintln(bw)
		}
	}
	if st.Untracked > 0 {
		fmt.Fprintf(bw, "(%d calls not kept for this list: more than --max-pending were waiting)\n", st.Untracked)
	}
	return bw.Flush()
}
