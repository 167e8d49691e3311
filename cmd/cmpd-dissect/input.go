package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/source"
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
	limits    limitFlags
}

func (in *inputFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVarP(&in.reads, "read", "r", nil, "read packets from `FILE` (pcap or pcapng, gzip ok; \"-\" is stdin); repeat for several files, read in order")
	f.StringVarP(&in.iface, "interface", "i", "", "capture live from `IFACE` (Linux, root or CAP_NET_RAW)")
	f.StringVarP(&in.capFilter, "capture-filter", "f", "", "capture filter in tcpdump syntax (`EXPR`), compiled to BPF without libpcap")
	f.IntVarP(&in.count, "count", "c", 0, "stop after `N` packets")
	f.StringArrayVarP(&in.autostop, "autostop", "a", nil, "stop live capture: duration:`SECONDS` or packets:N")
	f.StringVarP(&in.write, "write", "w", "", "also write the packets read (those passing -Y, if given) to `FILE` as pcapng")
	f.Var(&portList{&in.rocePorts}, "roce-port", "decode UDP `PORT` as RoCEv2 too (4791 always is); repeatable")
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
	it := &input{count: count}
	switch {
	case in.iface != "" && len(names) > 0:
		return nil, usageErr("give either -i IFACE or capture files, not both")
	case in.iface != "":
		l, err := source.OpenLive(source.LiveOptions{Interface: in.iface, Filter: in.capFilter, Count: count, Duration: duration})
		if err != nil {
			return nil, usageErr("%v", err)
		}
		it.src, it.live = l, l
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		go func() {
			<-ctx.Done()
			l.Stop()
		}()
		it.stopSig = stop
	case len(names) == 0:
		return nil, usageErr("no input: give -r FILE (or FILE…), -r - for stdin, or -i IFACE (see --help)")
	default:
		if in.capFilter != "" {
			return nil, usageErr("-f applies to live capture (-i); use -Y to filter files")
		}
		fs, err := source.OpenFiles(names, cmd.InOrStdin())
		if err != nil {
			return nil, inputErr(err)
		}
		it.src, it.files = fs, fs
		if prefetchable(names) {
			it.src = source.NewPrefetch(fs, in.dissectorAhead())
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
	return it, nil
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
	if runtime.GOMAXPROCS(0) < 2 {
		return false
	}
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
// ICRC computed on the reading goroutine (dissect.AheadICRC).
func (in *inputFlags) dissectorAhead() func(*source.Frame) {
	return dissect.AheadICRC(in.dissectorOptions())
}

// dissector makes the Dissector for these flags.
func (in *inputFlags) dissector() *dissect.Dissector {
	return in.limits.newDissector(in.dissectorOptions())
}

// dissectorOptions are the Dissector's options from these flags (before
// the limits are applied).
func (in *inputFlags) dissectorOptions() dissect.Options {
	return dissect.Options{RoCEPorts: in.rocePorts}
}

// each reads every frame, dissects it and calls fn; keep reports whether
// the frame is to be written with -w (fn's verdict).
func (it *input) each(d *dissect.Dissector, fn func(r *dissect.Record) (keep bool, err error)) error {
	var f source.Frame
	for {
		if it.count > 0 && it.seen >= it.count {
			break
		}
		err := it.src.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			var re *source.RecordError
			if errors.As(err, &re) {
				if _, err := fn(d.DamagedRecord(re)); err != nil {
					return err
				}
				continue
			}
			return inputErr(err)
		}
		it.seen++
		it.progress.Packet()
		keep, err := fn(d.Dissect(&f))
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
			if err := it.writer.Write(&f); err != nil {
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
	if it.src != nil {
		it.src.Close()
	}
	return err
}
