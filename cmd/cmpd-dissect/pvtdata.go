package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
	"github.com/cmpd-dissect/cmpd-dissect/view"
)

// pvtdataOptions are the flags shared by "pvtdata" and "pvtdata negotiate".
type pvtdataOptions struct {
	mode  string
	json  bool
	check bool
}

func (o *pvtdataOptions) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.mode, "mode", "rfc8797", "reading mode: rfc8797 (search the buffer, RFC 8797 §5.2), draft (identifier at offset 0, drafts -04/-05) or linux (magic and version at offset 0, no length check, as net/sunrpc/xprtrdma)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print one JSON object instead of the tree")
	cmd.Flags().BoolVar(&o.check, "check", false, "exit 1 when there is a finding of severity error")
}

func (o *pvtdataOptions) parseMode() (pvtdata.Mode, error) {
	m, err := pvtdata.ParseMode(o.mode)
	if err != nil {
		return 0, usageErr("--mode: %v", err)
	}
	return m, nil
}

func newPvtdataCommand() *cobra.Command {
	var (
		opts    pvtdataOptions
		port    uint16
		message string
	)
	cmd := &cobra.Command{
		Use:   "pvtdata [--mode rfc8797|draft|linux] [--json] [--check] HEX|-",
		Short: "Decode CM private data: the RFC 8797 message and other ULPs' formats",
		Long: `pvtdata decodes the ULP part of RDMA connection private data (after the 36-octet
rdma_cm header of an IB CM REQ, after the MPA v2 IRD/ORD words on iWARP) the way a
receiver does, and says what that receiver acts on.

HEX may contain spaces or colons (several arguments are joined); "-" reads raw bytes
from standard input. The default output is a tree: the fields as -V prints them
under the CM message that carries the same octets (field names in brackets, for
-Y and -e; booleans true/false), then what each reader acts on and the findings.
--json prints one object with found, offset, candidates, valid, version,
remote_invalidation, send_size, receive_size, reserved, findings and effective
(what a conforming receiver acts on: the RFC 8166 defaults, 1024 octets each way
and no remote invalidation, when the message is not valid).

The three reading modes model real receivers: rfc8797 searches the whole buffer for
the Format Identifier 0xf6ab0e18 at any alignment, draft requires it in the first
4 octets, linux also requires offset 0 and does not check the length. When they would
act differently the output says so (finding pvtdata.reader-divergence).

Exit status: 0 decoded (findings or not); 1 only with --check, when there is a
finding of severity error; 2 bad usage or unreadable input.`,
		Example: `  # the Linux NFS client's REQ private data and the server's REP
  cmpd-dissect pvtdata f6ab0e1801010303
  cmpd-dissect pvtdata --json 'f6 ab 0e 18 01 00 03 03'
  # the same message after 4 octets of something else, read as Linux does
  cmpd-dissect pvtdata --mode linux 00:00:00:00:f6:ab:0e:18:01:01:03:03
  # raw bytes from a file; fail a CI step on an error finding
  cmpd-dissect pvtdata --check - < private-data.bin
  # NVMe-oF private data of a REP (the port and message tell the layout)
  cmpd-dissect pvtdata --port 4420 --message reply 00008000
  # build a message and negotiate
  cmpd-dissect pvtdata encode --send 4096 --receive 8192 --remote-invalidation
  cmpd-dissect pvtdata negotiate f6ab0e1801010303 f6ab0e1801000303`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mode, err := opts.parseMode()
			if err != nil {
				return err
			}
			hint := pvtdata.Hint{Port: port}
			if hint.Msg, err = parseMsgKind(message); err != nil {
				return err
			}
			buf, err := pvtdataInput(cmd.InOrStdin(), args, false)
			if err != nil {
				return err
			}
			p := pvtdata.Dissect(buf, hint, mode)
			rep := p.Report()
			out := cmd.OutOrStdout()
			if opts.json {
				if err := writeJSON(out, rep); err != nil {
					return err
				}
			} else if err := writePvtdataTree(out, &p, rep.Findings); err != nil {
				return err
			}
			return checkFindings(opts.check, rep.Findings)
		},
	}
	opts.register(cmd)
	cmd.Flags().Uint16Var(&port, "port", 0, "service port the data was sent to (rdma_cm port of the IB service ID, or the iWARP TCP port): selects the ULP layout, e.g. 4420 NVMe-oF, 3260 iSER, 20049 NFS/RDMA")
	cmd.Flags().StringVar(&message, "message", "", "message that carried the data: request, reply or reject (default: unknown)")
	cmd.AddCommand(newPvtdataEncodeCmd(), newPvtdataNegotiateCmd())
	return cmd
}

func parseMsgKind(s string) (pvtdata.MsgKind, error) {
	switch s {
	case "", "unknown":
		return pvtdata.MsgUnknown, nil
	case "request", "req":
		return pvtdata.MsgRequest, nil
	case "reply", "rep":
		return pvtdata.MsgReply, nil
	case "reject", "rej":
		return pvtdata.MsgReject, nil
	}
	return 0, usageErr("--message %q: want request, reply or reject", s)
}

// pvtdataInput turns the HEX arguments (or "-") into bytes. With absentOK,
// "-" means "this side sent nothing" and returns nil.
func pvtdataInput(stdin io.Reader, args []string, absentOK bool) ([]byte, error) {
	if len(args) == 1 && args[0] == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, usageErr("reading private data from standard input: %v", err)
		}
		if b == nil {
			b = []byte{}
		}
		return b, nil
	}
	for i, a := range args {
		if a == "-" {
			return nil, usageErr(`argument %d: "-" (standard input) must be the only argument`, i+1)
		}
	}
	joined := strings.Join(args, " ")
	b, err := pvtdata.ParseHex(joined)
	if err != nil {
		return nil, usageErr("HEX %q: %v", joined, err)
	}
	return b, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// checkFindings implements --check: exit 1 when a finding is an error.
func checkFindings(check bool, fs []finding.Finding) error {
	if !check {
		return nil
	}
	var errs []string
	for _, f := range fs {
		if f.Severity == finding.SeverityError {
			errs = append(errs, f.Code)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return findingsErr("--check: %d error finding(s): %s", len(errs), strings.Join(errs, ", "))
}

// writePvtdataTree prints the decode: a title with the octets, the fields
// as -V prints them (the one tree renderer), then what each reader acts on
// and the findings.
func writePvtdataTree(w io.Writer, p *pvtdata.PrivateData, findings []finding.Finding) error {
	title := fmt.Sprintf("%s: %d octets", pvtdata.Proto.Desc, len(p.Data))
	if len(p.Data) > 0 {
		title += ": " + hex.EncodeToString(p.Data)
	}
	tree := view.NewTree(w, view.Options{})
	if err := tree.PrintFields(title, p); err != nil {
		return err
	}
	if err := tree.Flush(); err != nil {
		return err
	}
	if !p.ULP.Kind.Other() {
		fmt.Fprintln(w, "Readers:")
		for i := range p.Readers {
			fmt.Fprintf(w, "    %s\n", p.Readers[i].Describe())
		}
	}
	writeFindings(w, findings)
	return nil
}

func writeFindings(w io.Writer, findings []finding.Finding) {
	if len(findings) == 0 {
		fmt.Fprintln(w, "Findings: none")
		return
	}
	fmt.Fprintln(w, "Findings:")
	for _, f := range findings {
		where := ""
		if f.Offset >= 0 {
			where = fmt.Sprintf(" [offset %d]", f.Offset)
		}
		fmt.Fprintf(w, "    %s%s\n", f, where)
	}
}

func newPvtdataEncodeCmd() *cobra.Command {
	var (
		send, recv        int
		remoteInv, asJSON bool
		version, reserved uint8
	)
	cmd := &cobra.Command{
		Use:   "encode [--send OCTETS] [--receive OCTETS] [--remote-invalidation] [--json]",
		Short: "Build an RFC 8797 message and print it in hex",
		Long: `encode builds the 8-octet RPC-over-RDMA version 1 CM private data message of
RFC 8797 §4 from sizes in octets (multiples of 1024 from 1024 to 262144; the
message carries them as size/1024 - 1) and prints it in hex, ready for
"cmpd-dissect pvtdata", "cmpd-dissect replay --client-pd" or a test.
--version and --reserved build deliberately non-conforming messages for tests.`,
		Example: `  cmpd-dissect pvtdata encode --send 4096 --receive 4096 --remote-invalidation   # f6ab0e1801010303
  cmpd-dissect pvtdata encode --send 1024 --receive 262144 --json
  cmpd-dissect pvtdata encode --version 2 --send 4096 --receive 4096`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, s := range []struct {
				flag string
				v    int
			}{{"--send", send}, {"--receive", recv}} {
				if f, bad := pvtdata.SizeFinding(s.flag, s.v); bad {
					return usageErr("%s [%s]", f.Message, f.Code)
				}
			}
			if reserved > 0x7f {
				return usageErr("--reserved %d: the Reserved field has 7 bits (0..127)", reserved)
			}
			m, err := pvtdata.Encode(send, recv, remoteInv)
			if err != nil {
				return usageErr("%v", err)
			}
			m.Version = version
			m.Flags |= reserved << 1
			b := m.Bytes()
			out := cmd.OutOrStdout()
			if !asJSON {
				_, err := fmt.Fprintln(out, hex.EncodeToString(b[:]))
				return err
			}
			return writeJSON(out, struct {
				Hex                string `json:"hex"`
				Version            uint8  `json:"version"`
				RemoteInvalidation bool   `json:"remote_invalidation"`
				SendSize           int    `json:"send_size"`
				ReceiveSize        int    `json:"receive_size"`
				Reserved           uint8  `json:"reserved"`
			}{hex.EncodeToString(b[:]), m.Version, m.RemoteInvalidation(), m.SendBytes(), m.ReceiveBytes(), m.Reserved()})
		},
	}
	cmd.Flags().IntVar(&send, "send", pvtdata.DefaultInline, "Send Size in octets: the most this peer sends in one RDMA Send")
	cmd.Flags().IntVar(&recv, "receive", pvtdata.DefaultInline, "Receive Size in octets: the most this peer receives in one RDMA Receive")
	cmd.Flags().BoolVar(&remoteInv, "remote-invalidation", false, "set R: this peer supports remote invalidation (RFC 8797 §4.1)")
	cmd.Flags().Uint8Var(&version, "version", pvtdata.Version1, "Version field (1 is the only version defined; others make a message receivers ignore)")
	cmd.Flags().Uint8Var(&reserved, "reserved", 0, "value of the 7 Reserved bits (senders MUST send 0; for tests)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object with the hex and the fields")
	return cmd
}

// negotiateJSON is what "pvtdata negotiate --json" prints.
type negotiateJSON struct {
	pvtdata.Negotiated
	Mode   string          `json:"mode"`
	Client *pvtdata.Report `json:"client"`
	Server *pvtdata.Report `json:"server"`
}

func newPvtdataNegotiateCmd() *cobra.Command {
	var opts pvtdataOptions
	cmd := &cobra.Command{
		Use:   "negotiate [--mode rfc8797|draft|linux] [--json] [--check] CLIENT_HEX|- SERVER_HEX|-",
		Short: "Negotiate inline thresholds and remote invalidation from both peers' private data",
		Long: `negotiate reads the private data the client sent (REQ, MPA Request) and the server
sent (REP, MPA Reply) as a receiver in --mode does, and applies RFC 8797:
client-to-server inline threshold = min(client Send Size, server Receive Size),
server-to-client inline threshold = min(server Send Size, client Receive Size) (§4.2),
remote invalidation only when both set R (§4.1); a side that sent nothing, or
nothing valid, counts as 1024 octets each way and no R (§5.1).
"-" stands for a side that sent no private data. Each HEX is one argument (quote
it when it contains spaces).

Exit status as for "cmpd-dissect pvtdata".`,
		Example: `  cmpd-dissect pvtdata negotiate f6ab0e1801010303 f6ab0e1801000303
  cmpd-dissect pvtdata negotiate --json f6ab0e1801010303 -
  cmpd-dissect pvtdata negotiate --mode linux 'f6 ab 0e 18 01 01 03 03' 00000000f6ab0e1801010303`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			mode, err := opts.parseMode()
			if err != nil {
				return err
			}
			var sides [2]*pvtdata.PrivateData
			for i, a := range args {
				if a == "-" {
					continue
				}
				b, err := pvtdata.ParseHex(a)
				if err != nil {
					return usageErr("%s HEX %q: %v", [2]string{"CLIENT", "SERVER"}[i], a, err)
				}
				msg := [2]pvtdata.MsgKind{pvtdata.MsgRequest, pvtdata.MsgReply}[i]
				p := pvtdata.Dissect(b, pvtdata.Hint{Msg: msg}, mode)
				sides[i] = &p
			}
			eff := [2]pvtdata.Effective{pvtdata.Defaults, pvtdata.Defaults}
			var reports [2]*pvtdata.Report
			var findings []finding.Finding
			for i, p := range sides {
				if p == nil {
					continue
				}
				eff[i] = p.Reading.Effective()
				r := p.Report()
				reports[i] = &r
				findings = append(findings, r.Findings...)
			}
			n := pvtdata.Negotiate(eff[0], eff[1])
			out := cmd.OutOrStdout()
			if opts.json {
				if err := writeJSON(out, negotiateJSON{Negotiated: n, Mode: mode.String(), Client: reports[0], Server: reports[1]}); err != nil {
					return err
				}
			} else {
				writeNegotiation(out, sides, eff, n, mode)
			}
			return checkFindings(opts.check, findings)
		},
	}
	opts.register(cmd)
	return cmd
}

func writeNegotiation(w io.Writer, sides [2]*pvtdata.PrivateData, eff [2]pvtdata.Effective, n pvtdata.Negotiated, mode pvtdata.Mode) {
	names := [2]string{"Client (REQ / MPA Request)", "Server (REP / MPA Reply)  "}
	for i, p := range sides {
		if p == nil {
			fmt.Fprintf(w, "%s: no private data, so the defaults send %d receive %d R=0\n", names[i], eff[i].SendSize, eff[i].ReceiveSize)
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", names[i], p.Reading.Describe())
	}
	yes := map[bool]string{true: "yes: the server may reply with Send with Invalidate", false: "no: the server must reply with plain Send"}
	fmt.Fprintf(w, "Negotiated (RFC 8797 §4.1, §4.2, §5.1; %s readers):\n", mode)
	fmt.Fprintf(w, "    client-to-server inline threshold: %d octets (min of client send %d, server receive %d)\n",
		n.ClientToServerInline, eff[0].SendSize, eff[1].ReceiveSize)
	fmt.Fprintf(w, "    server-to-client inline threshold: %d octets (min of server send %d, client receive %d)\n",
		n.ServerToClientInline, eff[1].SendSize, eff[0].ReceiveSize)
	fmt.Fprintf(w, "    remote invalidation: %s\n", yes[n.RemoteInvalidation])
	var findings []finding.Finding
	for i, p := range sides {
		if p == nil {
			continue
		}
		for _, f := range p.AppendFindings(nil) {
			f.Message = [2]string{"client: ", "server: "}[i] + f.Message
			findings = append(findings, f)
		}
	}
	writeFindings(w, findings)
}
