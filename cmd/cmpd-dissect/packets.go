package main

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/dfilter"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/source"
	"github.com/cmpd-dissect/cmpd-dissect/view"
)

const packetExamples = `  # one line per RDMA packet (CM, RoCE, iWARP, RPC-over-RDMA) of a capture
  cmpd-dissect -r nfs-rdma.pcap

  # every packet, not only the RDMA ones; several files, read in order
  cmpd-dissect --all -r a.pcapng -r b.pcap.gz

  # the full field tree of the CM messages, private data decoded per RFC 8797
  cmpd-dissect -r nfs-rdma.pcap -V -Y cm

  # JSON lines for scripts
  cmpd-dissect -r nfs-rdma.pcap -T json | jq .layers[].name

  # chosen fields, tab-separated (names from "cmpd-dissect fields")
  cmpd-dissect -r nfs-rdma.pcap -T fields -e frame.number -e bth.opcode -Y 'bth.opcode == 0x04'

  # from tcpdump, through a pipe
  tcpdump -i eth0 -w - 'udp port 4791' | cmpd-dissect -r -

  # live, 10 seconds, RoCEv2 and TCP only, also saved as pcapng
  sudo cmpd-dissect -i eth0 -f 'udp port 4791 or tcp' -a duration:10 -w out.pcapng`

// packetFlags are the root command's view options.
type packetFlags struct {
	in       inputFlags
	verbose  bool     // -V
	format   string   // -T
	fields   []string // -e
	eopts    []string // -E
	filter   string   // -Y
	all      bool     // --all
	color    string   // --color
	check    bool     // --check
	findings bool     // --findings
	hex      bool     // -x
	summary  bool     // -P
	timeFmt  string   // -t
	expand   string   // -O
	resolve  string   // -N
	noNames  bool     // -n
}

// setupPacketView makes the packet view the root command's own flags and
// Run (cmpd-dissect -r FILE …, tshark-like).
func setupPacketView(root *cobra.Command) {
	var pf packetFlags
	root.Use = "cmpd-dissect [-r FILE]… [-i IFACE] [-V | -T json | -T fields -e FIELD…] [-Y FILTER]"
	root.Long = `cmpd-dissect dissects RDMA connection setup and the traffic that follows:
IB CM over RoCEv2, RoCEv1 and InfiniBand, iWARP MPA, the RFC 8797 private data
they carry and RPC-over-RDMA. Without a subcommand it prints packets, like
tshark: a summary line per RDMA packet (--all for every packet), the field
tree (-V), JSON lines (-T json) or chosen fields (-T fields -e NAME).

Display filters (-Y) compare fields: ==, !=, ~=, ===, <, <=, >, >=, contains,
in {a, b, c..d}, not in; and, or, not, parentheses; a field or protocol name
alone tests presence; values are numbers (decimal or 0x hex), addresses and
prefixes, aa:bb:cc bytes, "strings" or the names of enumerated values
(cm.attribute_id == REQ). tshark's field names work too (ip.addr, tcp.port,
infiniband.bth.opcode, iwarp_ddp.msn, rpcordma.xid: see docs/tshark.md); as in
tshark 4.x, ip.addr != X means no address is X, ip.addr ~= X some address is
not X.

Exit status: 0 done, 1 --check found an error finding, 2 bad usage or an
unreadable capture.`
	root.Example = packetExamples
	root.Args = cobra.ArbitraryArgs
	pf.in.register(root)
	f := root.Flags()
	f.BoolVarP(&pf.verbose, "verbose", "V", false, "print the full field tree of each packet")
	f.StringVarP(&pf.format, "output-format", "T", "text", "output `FORMAT`: text, json or fields")
	f.StringArrayVarP(&pf.fields, "field", "e", nil, "with -T fields, print `FIELD` (repeatable)")
	f.StringArrayVarP(&pf.eopts, "fields-option", "E", nil, "with -T fields: header=y|n, separator=/t|/s|C, aggregator=,|/s|C, occurrence=f|l|a|N, quote=d|s|n, bom=y|n")
	f.StringVarP(&pf.filter, "display-filter", "Y", "", "show only packets matching `EXPR`")
	f.BoolVar(&pf.all, "all", false, "summary view: show every packet, not only the RDMA-relevant ones (implied by -Y)")
	f.StringVar(&pf.color, "color", "auto", "colour: auto (terminal, unless NO_COLOR), always, never")
	f.BoolVarP(&pf.hex, "hex", "x", false, "after each packet, its bytes as a hex and ASCII dump (alone, or after -V's tree or -P's summary line)")
	f.BoolVarP(&pf.summary, "print", "P", false, "with -x: print the summary line before the dump, as tshark -P")
	f.StringVarP(&pf.timeFmt, "time-format", "t", "r", "summary time column: `FORMAT` r (since first packet), a, ad, adoy (local time, date, day of year), u, ud, udoy (UTC), e (epoch), d (since previous packet), dd (since previous shown)")
	f.StringVarP(&pf.expand, "expand", "O", "", "with -V (implied): show the fields of these `PROTOCOLS` only (comma-separated; the others show their title line)")
	f.BoolVar(&pf.check, "check", false, "exit 1 if any error finding was raised")
	f.BoolVar(&pf.findings, "findings", false, "print every finding on stderr as it is raised")
	f.StringVarP(&pf.resolve, "name-resolution", "N", "", "enable name resolution as tshark: `FLAGS` n shows the host names of the files' pcapng Name Resolution Blocks for IP addresses (summary, ip.src_host, ip.dst_host, ip.host); tshark's other flags (d, m, N, t, v) are accepted and change nothing")
	f.BoolVarP(&pf.noNames, "no-name-resolution", "n", false, "disable all name resolution (the default; -N overrides it, as in tshark)")
	root.RegisterFlagCompletionFunc("output-format", cobra.FixedCompletions([]string{"text", "json", "fields"}, cobra.ShellCompDirectiveNoFileComp))
	root.RegisterFlagCompletionFunc("time-format", cobra.FixedCompletions(view.TimeFormats, cobra.ShellCompDirectiveNoFileComp))
	root.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	root.RegisterFlagCompletionFunc("field", completeFieldNames)
	root.RegisterFlagCompletionFunc("read", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"pcap", "pcapng", "gz"}, cobra.ShellCompDirectiveFilterFileExt
	})
	root.RunE = func(cmd *cobra.Command, args []string) error { return runPackets(cmd, args, &pf) }
}

// completeFieldNames completes -e and -Y field names.
func completeFieldNames(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	var out []string
	var b strings.Builder
	view.FieldList(&b, prefix)
	for _, line := range strings.Split(b.String(), "\n") {
		parts := strings.Split(line, "\t")
		if len(parts) > 2 && parts[0] == "F" {
			if strings.HasPrefix(parts[1], prefix) {
				out = append(out, parts[1]+"\t"+parts[3])
			}
			// tshark's names of the field complete too (ip.src).
			if len(parts) > 6 && parts[6] != "" {
				for _, a := range strings.Split(parts[6], ",") {
					if strings.HasPrefix(a, prefix) {
						out = append(out, a+"\t"+parts[3])
					}
				}
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// optionError is a bad -E option: the message, then the option with a
// caret under the bad part.
func optionError(flag, opt string, pos int, format string, args ...any) error {
	return usageErr("%s %s: %s at column %d\n  %s\n  %s^", flag, opt, fmt.Sprintf(format, args...), pos+1, opt, strings.Repeat(" ", pos))
}

// fieldsOptionHelp lists the -E options as tshark 4.0 does.
const fieldsOptionHelp = "bom=y|n, header=y|n, separator=/t|/s|C, occurrence=f|l|a|N, aggregator=,|/s|C, quote=d|s|n"

// parseFieldsOptions reads -E options; a bad key or value is a usage
// error naming it, with its column.
func parseFieldsOptions(opts []string) (view.FieldsOptions, error) {
	var fo view.FieldsOptions
	yesNo := func(o string, at int, v string) (bool, error) {
		switch v {
		case "y", "Y":
			return true, nil
		case "n", "N":
			return false, nil
		}
		return false, optionError("-E", o, at, "%q is not y or n", v)
	}
	for _, o := range opts {
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			return fo, optionError("-E", o, len(o), "want KEY=VALUE (%s)", fieldsOptionHelp)
		}
		at := len(k) + 1
		var err error
		switch k {
		case "header":
			fo.Header, err = yesNo(o, at, v)
		case "bom":
			fo.BOM, err = yesNo(o, at, v)
		case "quote":
			switch v {
			case "d", "D":
				fo.Quote = '"'
			case "s", "S":
				fo.Quote = '\''
			case "n", "N":
				fo.Quote = 0
			default:
				err = optionError("-E", o, at, "%q is not d, s or n", v)
			}
		case "separator", "aggregator":
			switch v {
			case "/t":
				v = "\t"
			case "/s":
				v = " "
			case "":
				return fo, optionError("-E", o, at, "want a separator: /t, /s or a character")
			}
			if k == "separator" {
				fo.Separator = v
			} else {
				fo.Aggregator = v
			}
		case "occurrence":
			switch v {
			case "a":
				fo.Occurrence = 0
			case "f":
				fo.Occurrence = 1
			case "l":
				fo.Occurrence = -1
			default:
				n, cerr := strconv.Atoi(v)
				if cerr != nil || n == 0 {
					err = optionError("-E", o, at, "%q is not f, l, a or a non-zero number", v)
				}
				fo.Occurrence = n
			}
		default:
			err = optionError("-E", o, 0, "%q is not a field output option (%s)", k, fieldsOptionHelp)
		}
		if err != nil {
			return fo, err
		}
	}
	return fo, nil
}

func runPackets(cmd *cobra.Command, args []string, pf *packetFlags) error {
	out := cmd.OutOrStdout()
	mode, err := view.ParseColorMode(pf.color)
	if err != nil {
		return usageErr("%v", err)
	}
	opts := view.Options{Color: view.UseColor(mode, out), All: pf.all}
	if !slices.Contains(view.TimeFormats, pf.timeFmt) {
		return optionError("-t", pf.timeFmt, 0, "%q is not a time format (%s)", pf.timeFmt, strings.Join(view.TimeFormats, ", "))
	}
	opts.TimeFormat = pf.timeFmt
	if pf.expand != "" {
		opts.Expand = map[*field.Proto]bool{}
		at := 0
		for _, name := range strings.Split(pf.expand, ",") {
			proto, ok := field.LookupProto(strings.TrimSpace(name))
			if !ok {
				return optionError("-O", pf.expand, at, "%q is not a protocol (cmpd-dissect fields lists them)", name)
			}
			opts.Expand[proto] = true
			at += len(name) + 1
		}
		pf.verbose = true
	}
	if err := pf.setNaming(args); err != nil {
		return err
	}
	var filter *dfilter.Filter
	if pf.filter != "" {
		if filter, err = dfilter.Compile(pf.filter); err != nil {
			return usageErr("%v", err)
		}
		// The user's filter chooses the packets: -Y tcp shows TCP packets
		// even when they carry no RDMA.
		opts.All = true
	}
	var p view.Printer
	format := pf.format
	if pf.verbose && format == "text" {
		format = "tree"
	}
	if len(pf.fields) > 0 && format == "text" {
		return usageErr("-e needs -T fields")
	}
	if pf.hex && format != "text" && format != "tree" {
		return usageErr("-x goes with the summary and -V, not -T %s", format)
	}
	switch {
	case pf.hex:
		// The dump interleaves with the tree or summary line: both write
		// through one buffer.
		bw := bufio.NewWriterSize(out, 64<<10)
		sum := view.NewSummary(bw, opts)
		var inner view.Printer
		switch {
		case format == "tree":
			inner = view.NewTree(bw, opts)
		case pf.summary:
			inner = sum
		}
		p = view.NewHexDump(bw, inner, sum.Wanted)
		if format == "tree" {
			p = view.NewHexDump(bw, inner, nil)
		}
	case format == "text":
		p = view.NewSummary(out, opts)
	case format == "tree":
		p = view.NewTree(out, opts)
	}
	switch format {
	case "text", "tree":
	case "json", "ek", "jsonraw":
		p = view.NewJSON(out)
	case "fields":
		fo, err := parseFieldsOptions(pf.eopts)
		if err != nil {
			return err
		}
		fp, err := view.NewFields(out, pf.fields, fo)
		if err != nil {
			return usageErr("%v", err)
		}
		p = fp
	default:
		return usageErr("-T %s: want text, json or fields", pf.format)
	}
	if len(args) == 0 && len(pf.in.reads) == 0 && pf.in.iface == "" {
		return usageErr("no input: give -r FILE (or FILE…), -r - for stdin, or -i IFACE (see --help)")
	}
	it, err := pf.in.open(cmd, args)
	if err != nil {
		return err
	}
	it.setFlush(p.Flush)
	d := pf.in.dissector()
	errors := 0
	stderr := cmd.ErrOrStderr()
	runErr := it.each(d, func(r *dissect.Record) (bool, error) {
		for i := range r.Findings {
			if r.Findings[i].Severity == finding.SeverityError {
				errors++
			}
			if pf.findings {
				fmt.Fprintf(stderr, "frame %d: %s\n", r.Frame, escapeLine(r.Findings[i].String()))
			}
		}
		if filter != nil && !filter.Match(r) {
			return false, nil
		}
		// The summary's Print leaves out the records it does not want
		// itself (asking here as well cost a second dissect.Relevant).
		return true, p.Print(r)
	})
	if err := p.Flush(); err != nil && runErr == nil {
		runErr = err
	}
	if err := it.close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return runErr
	}
	if pf.check && errors > 0 {
		return findingsErr("%d error finding(s)", errors)
	}
	return nil
}

// escapeLine makes a message safe for a terminal.
func escapeLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

// setNaming reads -N: with n, the host names of the input files' Name
// Resolution Blocks name IP addresses; src_host and dst_host are
// reported when names are resolved or -e or -Y asks for them (tshark
// gives them always: the address when there is no name).
func (pf *packetFlags) setNaming(args []string) error {
	for i, c := range pf.resolve {
		if !strings.ContainsRune("dmnNtv", c) {
			return optionError("-N", pf.resolve, i, "%q is not a name resolution flag (d, m, n, N, t, v)", c)
		}
	}
	asked := strings.Contains(pf.filter, "host")
	for _, e := range pf.fields {
		if f, ok := field.Lookup(e); ok && strings.HasSuffix(f.Name, "host") {
			asked = true
		}
	}
	pf.in.hostFields = asked
	if !strings.Contains(pf.resolve, "n") {
		return nil
	}
	names, err := source.ReadNames(append(append([]string(nil), pf.in.reads...), args...))
	if err != nil {
		return err
	}
	pf.in.names, pf.in.hostFields = &hostNaming{hosts: names}, true
	return nil
}
