package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
	"github.com/cmpd-dissect/cmpd-dissect/transport"
	"github.com/cmpd-dissect/cmpd-dissect/view"
)

// trackFlags are the connection tracker's options, shared by conns and
// check, with the usual input options (-r, -i, -c, -a, --roce-port …).
type trackFlags struct {
	input    inputFlags
	mode     string
	maxConns int
	timeout  time.Duration
	// tableOnly: the connections are shown only as the conns table,
	// which has no column from the transport analysis' queue-pair and
	// stream summaries: they are not kept as queue pairs end, nor
	// attached to the connections.
	tableOnly bool
}

func (f *trackFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.mode, "mode", "rfc8797", "how the receivers read the private data for the negotiation: rfc8797, draft or linux")
	fs.IntVar(&f.maxConns, "max-connections", conn.DefaultMaxConnections, "connections followed at once; the oldest is evicted beyond it (finding conn.table-full)")
	fs.DurationVar(&f.timeout, "conn-timeout", conn.DefaultTimeout, "capture time after which an unanswered request or disconnect is timed out")
	f.input.register(cmd)
}

func (f *trackFlags) config() (conn.Config, error) {
	mode, err := pvtdata.ParseMode(f.mode)
	if err != nil {
		return conn.Config{}, usageErr("--mode: %v", err)
	}
	if f.maxConns <= 0 {
		return conn.Config{}, usageErr("--max-connections must be positive, not %d", f.maxConns)
	}
	if f.timeout <= 0 {
		return conn.Config{}, usageErr("--conn-timeout must be positive, not %s", f.timeout)
	}
	return conn.Config{Mode: mode, MaxConnections: f.maxConns, Timeout: f.timeout}, nil
}

// maxFrameFindings caps the decode findings kept from frames (the rest are
// counted), so a damaged multi-GB capture cannot exhaust memory.
const maxFrameFindings = 10000

// tracked is the result of following the connections of some captures.
type tracked struct {
	tracker *conn.Tracker
	// frameFindings are the findings raised while decoding frames (warning
	// and error only), dropped counts those beyond maxFrameFindings.
	frameFindings []finding.Finding
	dropped       int
	frames        int
	// sources are the captures read, each with the first frame read from
	// it, in order.
	sources []sourceSpan
}

// sourceSpan is one capture of a run and the first frame read from it.
type sourceSpan struct {
	first int
	name  string
}

// source names the capture frame was read from ("" when unknown).
func (t *tracked) source(frame int) string {
	name := ""
	for _, s := range t.sources {
		if s.first > frame {
			break
		}
		name = s.name
	}
	return name
}

// connSource names the capture c's first message was read from.
func (t *tracked) connSource(c *conn.Connection) string {
	frame := c.RequestFrame
	if c.NumSteps() > 0 {
		frame = c.StepFrame(0)
	}
	return t.source(frame)
}

// other returns the findings that belong to no connection: the frames'
// and the tracker's own.
func (t *tracked) other() []finding.Finding {
	out := append([]finding.Finding(nil), t.frameFindings...)
	out = append(out, t.tracker.Findings()...)
	if t.dropped > 0 {
		out = append(out, finding.Finding{Code: conn.CodeFindingsSuppressed, Severity: finding.SeverityInfo, Offset: -1,
			Message: fmt.Sprintf("%d more frame findings were not kept (limit %d)", t.dropped, maxFrameFindings)})
	}
	return out
}

// trackCaptures dissects every frame of the captures (files, -r, or -i
// live) and feeds the tracker.
func trackCaptures(cmd *cobra.Command, files []string, flags *trackFlags) (*tracked, error) {
	cfg, err := flags.config()
	if err != nil {
		return nil, err
	}
	flags.input.queuePairs = !flags.tableOnly
	it, err := flags.input.open(cmd, files)
	if err != nil {
		return nil, err
	}
	defer it.close()
	t := &tracked{tracker: conn.New(cfg)}
	err = it.each(flags.input.dissector(), func(rec *dissect.Record) (bool, error) {
		t.frames++
		if n := len(t.sources); rec.Source != "" && (n == 0 || t.sources[n-1].name != rec.Source) {
			t.sources = append(t.sources, sourceSpan{first: rec.Frame, name: rec.Source})
		}
		t.tracker.Record(rec)
		claimed := t.tracker.ClaimedFrame() == rec.Frame
		for _, f := range rec.Findings {
			if f.Severity < finding.SeverityWarning || (claimed && f.Layer == transport.Layer) {
				// Below warning, or listed on its connection.
				continue
			}
			if len(t.frameFindings) >= maxFrameFindings {
				t.dropped++
				continue
			}
			t.frameFindings = append(t.frameFindings, f)
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	t.tracker.Finish()
	if !flags.tableOnly {
		t.tracker.AttachTransport(it.transport)
	}
	// A CM or MPA frame's findings are shown with its connection (the
	// tracker attaches them, and raises the private-data ones itself):
	// they are not listed again outside connections. The set holds the
	// findings' frames (bounded by maxFrameFindings), true for a step's.
	if len(t.frameFindings) == 0 {
		return t, nil
	}
	steps := make(map[int]bool, len(t.frameFindings))
	for _, f := range t.frameFindings {
		steps[f.Frame] = false
	}
	for _, c := range t.tracker.Connections() {
		for i := range c.NumSteps() {
			if _, ok := steps[c.StepFrame(i)]; ok {
				steps[c.StepFrame(i)] = true
			}
		}
	}
	kept := t.frameFindings[:0]
	for _, f := range t.frameFindings {
		if !steps[f.Frame] {
			kept = append(kept, f)
		}
	}
	t.frameFindings = kept
	return t, nil
}

func newConnsCommand() *cobra.Command {
	var (
		flags   trackFlags
		asJSON  bool
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "conns [--json | -V] CAPTURE…",
		Short: "List the RDMA connections of captures: who connected, what each side advertised, what was negotiated",
		Long: `conns follows every IB CM (RoCEv2, RoCEv1, InfiniBand) and iWARP MPA connection setup in the
captures (read in order; "-" is stdin): client and server, service, QPNs, state with the frame
of each step, each side's private data decoded (RFC 8797 and other ULPs), the negotiated inline
thresholds and remote invalidation, and the findings of the checks of the traffic that follows.

Default: a table with one row per connection. --json: one JSON object per connection per line.
-V: the ladder of each connection (message, frame, time, direction) with the findings at the
step where they arise.

A connection lists the first few findings of each code and severity in full (conn's
MaxFindingsPerCode, 5) and counts the rest: the table counts them all, -V adds "… and N more
like this (frames A–B)" after the last one listed, --json has "finding_counts" (code, severity,
count, listed, first and last frame) next to "findings".`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && verbose {
				return usageErr("conns: --json and -V are exclusive")
			}
			flags.tableOnly = !asJSON && !verbose
			t, err := trackCaptures(cmd, args, &flags)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			width := view.TerminalWidth(out)
			cs := t.tracker.Connections()
			switch {
			case asJSON:
				return view.WriteConnsJSON(out, cs)
			case verbose:
				if err := view.WriteConnsLadder(out, cs); err != nil {
					return err
				}
			default:
				opts := view.ConnsTableOptions{Width: width}
				if len(t.sources) > 1 {
					opts.File = func(c *conn.Connection) string { return filepath.Base(t.connSource(c)) }
				}
				if err := view.WriteConnsTableWith(out, cs, opts); err != nil {
					return err
				}
			}
			if other := t.tracker.Findings(); len(other) > 0 {
				fmt.Fprintf(out, "\nOutside any connection:\n")
				for _, f := range other {
					line := fmt.Sprintf("  ! frame %d: %s", f.Frame, f.String())
					if !verbose {
						line = view.WrapText(line, width, "      ")
					}
					fmt.Fprintln(out, line)
				}
			}
			if len(cs) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "conns: no connection setup in %d frames\n", t.frames)
			}
			if n := t.tracker.Unmatched; n > 0 {
				why := "their setup is not in the capture"
				if t.tracker.SetupCut() {
					why += ", or the snap length cut the CM fields naming their QPs"
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "conns: %d Sends matched no connection (%s): not checked\n", n, why)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per connection per line")
	cmd.Flags().BoolVarP(&verbose, "verbose", "V", false, "the ladder of each connection with its findings")
	flags.register(cmd)
	return cmd
}
