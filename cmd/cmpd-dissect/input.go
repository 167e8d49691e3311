package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/capfilter"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/source"
	"github.com/cmpd-dissect/cmpd-dissect/transport"
	"github.com/cmpd-dissect/cmpd-dissect/view"
)

// inputFlags are the tshark-like input options shared by the packet view
// and the subcommands that read captures (stats; conns can use them too).
type inputFlags struct {
	reads     []string // -r, repeatable; positional arguments add to it
	iface     string   // -i
	capFilter string   // -f
	count     int      // -c
	autostop  []string // -a duration:N | packets:N
	write     string   // -w
	rocePorts []uint16 // --roce-port
	progress  string   // --progress auto|always|never
	lineBuf   bool     // -l
	runAs     string   // -Z
	limits    limitFlags
	// queuePairs: the command reads the transport analysis' summaries of
	// the queue pairs (conns, export); others let them go as they end.
	queuePairs bool
	// names are the packet views' host names (-N n), hostFields whether
	// the IP layers report src_host and dst_host.
	names      *hostNaming
	hostFields bool
}

// hostNaming is -N n's name resolution: the names of the files' Name
// Resolution Blocks.
type hostNaming struct {
	hosts map[netip.Addr][]string
}

func (in *inputFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVarP(&in.reads, "read", "r", nil, "read packets from `FILE` (pcap or pcapng; gzip, zstd or lz4 ok; \"-\" is stdin); repeat for several files, read in order")
	f.StringVarP(&in.iface, "interface", "i", "", "capture live from `IFACE`, or from every interface with any (Linux, root or CAP_NET_RAW)")
	f.StringVarP(&in.runAs, "relinquish-privileges", "Z", "", "after opening the capture, run as `USER` (its uid, gid and groups), like tcpdump -Z; needs root")
	f.StringVarP(&in.capFilter, "capture-filter", "f", "", "capture filter in tcpdump syntax (`EXPR`, pcap-filter(7): host, net, port, portrange, ether, vlan, ip, ip6, tcp, udp, proto[offset], not, and, or…), compiled to BPF without libpcap; checked with -r too")
	f.IntVarP(&in.count, "count", "c", 0, "stop after `N` packets")
	f.StringArrayVarP(&in.autostop, "autostop", "a", nil, "stop live capture: duration:`SECONDS` or packets:N")
	f.StringVarP(&in.write, "write", "w", "", "also write the packets read (those passing -Y, if given) to `FILE` as pcapng")
	f.Var(&portList{&in.rocePorts}, "roce-port", "decode UDP `PORT` as RoCEv2 too (4791 always is); repeatable")
	f.BoolVarP(&in.lineBuf, "line-buffered", "l", false, "write each packet's output as soon as it is dissected (as tshark -l); a pipe or live capture does so whenever it waits for input anyway")
	f.StringVar(&in.progress, "progress", "auto", "progress bar on stderr: auto (a terminal and input over 8 MB), always, never")
	in.limits.register(cmd)
}

// portList is a repeatable uint16 flag.
type portList struct{ p *[]uint16 }

func (l *portList) String() string {
	if l.p == nil {
		return ""
	}
	var s []string
	for _, v := range *l.p {
		s = append(s, strconv.Itoa(int(v)))
	}
	return strings.Join(s, ",")
}

func (l *portList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(part), 10, 16)
		if err != nil || n == 0 {
			return fmt.Errorf("%q is not a UDP port", part)
		}
		*l.p = append(*l.p, uint16(n))
	}
	return nil
}

func (l *portList) Type() string { return "port" }

// input is an opened source with what the run needs around it.
type input struct {
	src      source.Source
	files    *source.Files // nil for live capture
	live     *source.Live
	writer   *source.Writer
	wfile    *os.File
	progress *view.Progress
	stopSig  func()
	count    int
	seen     int
	stderr   io.Writer
	// flush writes out the view's buffered output (nil: nothing to
	// flush); called after every packet with -l, and whenever a pipe or
	// live capture is about to wait for input (waits).
	flush     func() error
	lineBuf   bool
	waits     bool
	lastFlush time.Time
	// ifStats are the pcapng interface statistics of the files, known
	// after close.
	ifStats []source.InterfaceStats
	// transport is the per-queue-pair analysis: it adds its findings to
	// each record before the view sees it, and conns reads its counters.
	transport *transport.Analyzer
}

// setFlush gives the input the view's flush, so that output for packets
// already read is written before waiting for more.
func (it *input) setFlush(flush func() error) {
	it.flush = flush
	if it.live != nil {
		it.live.Idle = func() { it.flushNow() }
	}
}

func (it *input) flushNow() error {
	if it.flush == nil {
		return nil
	}
	if it.live != nil {
		it.lastFlush = time.Now()
	}
	return it.flush()
}

// open opens the files (flags and positional args) or the live capture.
func (in *inputFlags) open(cmd *cobra.Command, args []string) (*input, error) {
	names := append(append([]string(nil), in.reads...), args...)
	duration := time.Duration(0)
	count := in.count
	for _, a := range in.autostop {
		k, v, ok := strings.Cut(a, ":")
		n, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || n <= 0 {
			return nil, usageErr("-a %s: want duration:SECONDS or packets:N", a)
		}
		switch k {
		case "duration":
			duration = time.Duration(n * float64(time.Second))
		case "packets":
			count = int(n)
		default:
			return nil, usageErr("-a %s: want duration:SECONDS or packets:N", a)
		}
	}
	if count < 0 {
		return nil, usageErr("-c %d: want a positive count", count)
	}
	if in.capFilter != "" {
		// Checked before anything is opened: a bad filter is a usage
		// error with its column, with -r too.
		lt := capfilter.LinkTypeEthernet
		if in.iface == source.AnyInterface {
			lt = capfilter.LinkTypeLinuxSLL
		}
		if _, err := capfilter.Compile(in.capFilter, lt); err != nil {
			return nil, usageErr("-f: %v", err)
		}
	}
	var runAs *source.PrivUser
	if in.runAs != "" {
		// Looked up first: an unknown user fails before anything opens.
		u, err := source.LookupUser(in.runAs)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		if euid := os.Geteuid(); euid != 0 && euid != u.UID {
			return nil, usageErr("-Z %s: changing user needs root (running as uid %d)", in.runAs, euid)
		}
		runAs = u
	}
	it := &input{count: count, stderr: cmd.ErrOrStderr(), lineBuf: in.lineBuf, transport: transport.New(transport.Config{ForgetEnded: !in.queuePairs})}
	switch {
	case in.iface != "" && len(names) > 0:
		return nil, usageErr("give either -i IFACE or capture files, not both")
	case in.iface != "":
		l, err := source.OpenLive(source.LiveOptions{Interface: in.iface, Filter: in.capFilter, Count: count, Duration: duration})
		if err != nil {
			return nil, usageErr("%v", err)
		}
		it.src, it.live, it.waits = l, l, true
		it.stopOnInterrupt(l.Stop)
		fmt.Fprintf(it.stderr, "Capturing on '%s'\n", in.iface)
	case len(names) == 0:
		return nil, usageErr("no input: give -r FILE (or FILE…), -r - for stdin, or -i IFACE (see --help)")
	default:
		if in.capFilter != "" {
			// As tshark: a capture filter chooses what the kernel
			// captures; a file is filtered with -Y.
			return nil, usageErr("-f: only read filters, not capture filters, can be specified when reading a capture file; -f applies to live capture (-i), use -Y to filter files")
		}
		fs, err := source.OpenFiles(names, cmd.InOrStdin())
		if err != nil {
			return nil, inputErr(err)
		}
		it.src, it.files = fs, fs
		if prefetchable(names) {
			it.src = source.NewPrefetch(fs, in.dissectorAhead())
		} else if !regularFiles(names) {
			// A pipe or FIFO: each packet is shown when it arrives,
			// and Ctrl-C ends the input (conns and stats then print
			// what was read) instead of the program.
			it.waits = true
			it.stopOnInterrupt(fs.Stop)
		}
		if total := source.TotalSize(names); total > 0 && in.wantProgress(cmd.ErrOrStderr(), total) {
			it.progress = view.StartProgress(cmd.ErrOrStderr(), total, fs.BytesRead)
		}
	}
	if in.write != "" {
		f, err := os.Create(in.write)
		if err != nil {
			it.close()
			return nil, usageErr("-w: %v", err)
		}
		it.wfile = f
	}
	if runAs != nil && os.Geteuid() == 0 {
		// Everything that needed the privilege is open.
		if err := source.DropPrivileges(runAs); err != nil {
			it.close()
			return nil, err
		}
	}
	return it, nil
}

// stopOnInterrupt makes the first Ctrl-C call stop (the input ends and the
// view prints what was read); a second one kills as usual.
func (it *input) stopOnInterrupt(stop func()) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	go func() {
		<-ctx.Done()
		cancel()
		stop()
	}()
	it.stopSig = cancel
}

func (in *inputFlags) wantProgress(w io.Writer, total int64) bool {
	switch in.progress {
	case "always":
		return true
	case "never":
		return false
	}
	return total > view.ProgressMin && view.IsTerminal(w)
}

// inputErr maps source errors to exit codes: unreadable file → 2.
func inputErr(err error) error {
	var he *source.HeaderError
	if errors.As(err, &he) {
		return usageErr("%v", err)
	}
	return err
}

// prefetchable reports whether frames of these files are read ahead on a
// second goroutine (source.Prefetch): only regular files, where reading
// ahead never waits for data still to come (a pipe from tcpdump -w - must
// hand each packet on as it arrives), and only with a second core to run
// it on.
func prefetchable(names []string) bool {
	return runtime.GOMAXPROCS(0) >= 2 && regularFiles(names)
}

// regularFiles reports whether every name is a regular file (not stdin,
// a pipe or a FIFO: input that can make the reader wait).
func regularFiles(names []string) bool {
	for _, n := range names {
		if n == "-" {
			return false
		}
		st, err := os.Stat(n)
		if err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// dissectorAhead is the prefetch hook of these flags' Dissector: the
// ICRC and the headers decoded on the reading goroutine (dissect.Ahead).
func (in *inputFlags) dissectorAhead() func(*source.Frame) {
	return dissect.Ahead(in.dissectorOptions())
}

// dissector makes the Dissector for these flags.
func (in *inputFlags) dissector() *dissect.Dissector {
	return dissect.New(in.dissectorOptions())
}

// dissectorOptions are the Dissector's options from these flags: the
// RoCE ports and the limits.
func (in *inputFlags) dissectorOptions() dissect.Options {
	o := dissect.Options{RoCEPorts: in.rocePorts, HostFields: in.hostFields}
	if in.names != nil {
		o.HostNames, o.ResolveNames = in.names.hosts, true
	}
	return in.limits.apply(o)
}

// each reads every frame, dissects it and calls fn; keep reports whether
// the frame is to be written with -w (fn's verdict). A damaged record is
// handed to fn as dissect.DamagedRecord makes it, then reported on stderr.
func (it *input) each(d *dissect.Dissector, fn func(r *dissect.Record) (keep bool, err error)) error {
	var own source.Frame
	// A Prefetch's frames are dissected where they lie in its batch
	// instead of each copied out.
	pf, _ := it.src.(*source.Prefetch)
	for {
		if it.count > 0 && it.seen >= it.count {
			break
		}
		if it.waits && it.flush != nil {
			if err := it.idle(); err != nil {
				return err
			}
		}
		f, err := &own, error(nil)
		if pf != nil {
			f, err = pf.Frame()
		} else {
			err = it.src.Next(f)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			var re *source.RecordError
			if errors.As(err, &re) {
				if _, err := fn(d.DamagedRecord(re)); err != nil {
					return err
				}
				if err := it.flushNow(); err != nil {
					return err
				}
				warnDamaged(it.stderr, re)
				continue
			}
			return inputErr(err)
		}
		it.seen++
		it.progress.Packet()
		rec := d.Dissect(f)
		it.transport.Record(rec)
		keep, err := fn(rec)
		if err != nil {
			return err
		}
		if keep && it.wfile != nil {
			if it.writer == nil {
				w, err := source.NewWriter(it.wfile, f.LinkType, f.Source)
				if err != nil {
					return err
				}
				it.writer = w
			}
			if err := it.writer.Write(f); err != nil {
				return err
			}
		}
		if it.lineBuf {
			if err := it.flushNow(); err != nil {
				return err
			}
		}
	}
	var ferr error
	d.Finish(func(r *dissect.Record) {
		if ferr == nil {
			_, ferr = fn(r)
		}
	})
	return ferr
}

// liveFlushEvery bounds how long a live capture's output stays buffered
// while packets keep coming (the capture's poll timeout flushes when they
// stop).
const liveFlushEvery = 50 * time.Millisecond

// idle flushes the output when reading the next frame may wait for input:
// a pipe whose buffer does not hold the next record whole, or a live
// capture (whose reader also flushes when a poll times out) after
// liveFlushEvery.
func (it *input) idle() error {
	switch {
	case it.files != nil:
		if it.files.Ready() {
			return nil
		}
	case it.live != nil:
		if time.Since(it.lastFlush) < liveFlushEvery {
			return nil
		}
	}
	return it.flushNow()
}

// warnDamaged tells on stderr where a capture file is damaged, as tshark
// does ("appears to have been cut short in the middle of a packet"): the
// frames before were read; the rest of the file is skipped.
func warnDamaged(w io.Writer, re *source.RecordError) {
	if errors.Is(re, source.ErrTruncated) {
		fmt.Fprintf(w, "cmpd-dissect: warning: %s appears to have been cut short in the middle of a packet (frame %d, at byte offset %d: %v)\n",
			re.File, re.Frame, re.Offset, re.Err)
		return
	}
	fmt.Fprintf(w, "cmpd-dissect: warning: %s is damaged at frame %d (byte offset %d: %v); the rest of the file is skipped\n",
		re.File, re.Frame, re.Offset, re.Err)
}

// close stops the progress bar, flushes -w and closes everything.
func (it *input) close() error {
	it.progress.Stop()
	it.progress = nil
	var err error
	if it.writer != nil {
		err = it.writer.Flush()
	}
	if it.wfile != nil {
		if it.writer == nil {
			// Nothing passed: still leave a valid, empty pcapng.
			if w, werr := source.NewWriter(it.wfile, source.LinkTypeEthernet, "cmpd-dissect"); werr == nil {
				w.Flush()
			}
		}
		if cerr := it.wfile.Close(); err == nil {
			err = cerr
		}
	}
	if it.stopSig != nil {
		it.stopSig()
	}
	if it.live != nil {
		// Before Close: the counters are the open socket's.
		_, dropped, serr := it.live.KernelStats()
		io.WriteString(it.stderr, source.CaptureReport(it.live.Interface(), it.live.Captured(), dropped))
		if serr != nil {
			fmt.Fprintf(it.stderr, "cmpd-dissect: warning: kernel packet statistics unavailable: %v\n", serr)
		}
		it.live = nil
	}
	if it.src != nil {
		it.src.Close()
		it.src = nil
		if it.files != nil {
			// After Close: a Prefetch's reader has finished its files.
			it.ifStats = it.files.InterfaceStats()
			warnDrops(it.stderr, it.ifStats)
		}
	}
	return err
}

// warnDrops tells on stderr of the packets a capture itself lost, as its
// pcapng Interface Statistics Blocks count them: what the views show is
// then not all that crossed the interface.
func warnDrops(w io.Writer, stats []source.InterfaceStats) {
	for i := range stats {
		if n, _ := stats[i].Lost(); n > 0 {
			fmt.Fprintf(w, "cmpd-dissect: warning: capture dropped %d packets on interface %s (%s)\n", n, stats[i].Label(), stats[i].File)
		}
	}
}
