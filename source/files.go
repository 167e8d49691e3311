package source

import (
	"errors"
	"io"
	"net/netip"
	"os"
	"sync/atomic"
	"time"
)

// Files reads several captures one after the other, numbering frames
// across all of them. Files are opened lazily, one at a time.
type Files struct {
	names  []string
	stdin  io.Reader
	cur    *File
	next   int // index in names of the next file to open
	number int // frames handed so far
	// done are the bytes of files already finished (progress).
	done atomic.Int64
	// cur is read by progress bars from another goroutine.
	curRead atomic.Pointer[File]
	// unmaps release the mappings of finished files at Close.
	unmaps []func() error
	// stats are the interface statistics of the files finished.
	stats []InterfaceStats
	// stopped is set by Stop: Next returns io.EOF from then on.
	stopped atomic.Bool
}

// Stop ends the input early (Ctrl-C on a pipe): a Next waiting for input
// is woken, and it and every later Next return io.EOF, even in the middle
// of a record. Safe to call from another goroutine.
func (fs *Files) Stop() {
	fs.stopped.Store(true)
	if f := fs.curRead.Load(); f != nil {
		f.wake()
	}
	if d, ok := fs.stdin.(deadliner); ok {
		d.SetReadDeadline(time.Now())
	}
}

// OpenFiles prepares to read names in order ("-" is stdin). The first file
// is opened at once so that a bad first file fails early; the others when
// reached.
func OpenFiles(names []string, stdin io.Reader) (*Files, error) {
	if stdin == nil {
		stdin = os.Stdin
	}
	fs := &Files{names: names, stdin: pollableStdin(stdin)}
	if len(names) > 0 {
		if err := fs.openNext(); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

func (fs *Files) openNext() error {
	name := fs.names[fs.next]
	fs.next++
	f, err := Open(name, fs.stdin)
	if err != nil {
		return err
	}
	fs.cur = f
	fs.curRead.Store(f)
	return nil
}

// Current is the file being read, nil before the first and after the last.
func (fs *Files) Current() *File { return fs.cur }

// Next implements Source. A *HeaderError for a later file is returned once
// and reading goes on with the file after it.
func (fs *Files) Next(f *Frame) error {
	for {
		if fs.stopped.Load() {
			return io.EOF
		}
		if fs.cur == nil {
			if fs.next >= len(fs.names) {
				return io.EOF
			}
			if err := fs.openNext(); err != nil {
				return err
			}
		}
		err := fs.cur.Next(f, fs.number+1)
		if err != nil && fs.stopped.Load() {
			return io.EOF
		}
		if err == nil {
			fs.number++
			return nil
		}
		fs.finishCurrent()
		if err != io.EOF {
			return err
		}
	}
}

func (fs *Files) finishCurrent() {
	fs.stats = append(fs.stats, fs.cur.InterfaceStats()...)
	fs.done.Add(fs.cur.BytesRead())
	fs.curRead.Store(nil)
	// A mapped file stays mapped until Close: reassembly flushed at the
	// end of input may still look at the last frames' bytes.
	if unmap := fs.cur.closeKeepMapping(); unmap != nil {
		fs.unmaps = append(fs.unmaps, unmap)
	}
	fs.cur = nil
}

// Ready reports whether the next frame can be read without waiting for
// input (see File.Ready); false between files.
func (fs *Files) Ready() bool { return fs.cur != nil && fs.cur.Ready() }

// InterfaceStats are the pcapng interface statistics of the files read so
// far (File.InterfaceStats), in file order.
func (fs *Files) InterfaceStats() []InterfaceStats {
	out := append([]InterfaceStats(nil), fs.stats...)
	if fs.cur != nil {
		out = append(out, fs.cur.InterfaceStats()...)
	}
	return out
}

// BytesRead is how many bytes of the files (on disk) have been read; safe
// to call from another goroutine (progress bars).
func (fs *Files) BytesRead() int64 {
	read := fs.done.Load()
	if f := fs.curRead.Load(); f != nil {
		read += f.BytesRead()
	}
	return read
}

// Progress reports bytes read so far and the total size of all files on
// disk (0 when a size is unknown, e.g. stdin).
func (fs *Files) Progress() (read, total int64) {
	return fs.BytesRead(), TotalSize(fs.names)
}

// Close closes the file being read and unmaps the files read.
func (fs *Files) Close() error {
	var err error
	if fs.cur != nil {
		err = fs.cur.Close()
		fs.cur = nil
	}
	for _, u := range fs.unmaps {
		u()
	}
	fs.unmaps = nil
	return err
}

// ReadNames reads each regular pcapng file of names to its end and returns the
// host names of their Name Resolution Blocks (pcapng), a later file's
// after an earlier's; nil when there are none. tshark writes these blocks
// at the end of a file, so a one-pass reader knows the names only after
// the packets: this is the first pass (tshark -2 -N n uses them for every
// packet). Standard input, pipes and FIFOs are left out (they can be read
// only once); a damaged record ends its file's pass, and a file that
// cannot be opened is left to the run to report.
func ReadNames(names []string) (map[netip.Addr][]string, error) {
	var all map[netip.Addr][]string
	for _, name := range names {
		if name == "-" {
			continue
		}
		if st, err := os.Stat(name); err != nil || !st.Mode().IsRegular() {
			continue
		}
		f, err := Open(name, nil)
		if err != nil {
			continue // the run reports it when it opens the file
		}
		if f.Format() != FormatPcapNG {
			// A classic pcap has no names: not read through.
			if err := f.Close(); err != nil {
				return nil, err
			}
			continue
		}
		var fr Frame
		for n := 1; ; n++ {
			err := f.Next(&fr, n)
			var re *RecordError
			if errors.As(err, &re) || err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return nil, err
			}
		}
		for a, ns := range f.Names() {
			if all == nil {
				all = map[netip.Addr][]string{}
			}
			all[a] = append(all[a], ns...)
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	}
	return all, nil
}
