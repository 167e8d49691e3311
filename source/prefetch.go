package source

import (
	"io"
	"sync"
)

// Ahead is what a Prefetch hook computed from a frame's Data on the reading
// goroutine, for the decoder to use instead of computing it again: a CRC
// over Data[At:]. Kind says which CRC it is (0: none); Kind's values and
// what OK means are the hook's (dissect's: which ICRC, and whether the
// bytes held a complete packet to compute it over). When End is not zero,
// Stored is the big-endian value of the four octets Data[End-4:End] (the
// CRC the packet carries), read while they were in the reading core's
// cache so the decoder need not load that line again.
type Ahead struct {
	Kind   uint8
	OK     bool
	At     int32
	CRC    uint32
	Stored uint32
	End    int32
}

// prefetchBatch is how many frames the reading goroutine hands over at a
// time: one channel operation per batch instead of per frame.
const prefetchBatch = 512

// prefetchBatchBytes also ends a batch: with prefetchDepth batches in
// flight the oldest frame not yet handed back is less than 2 MB behind the
// reader, inside what a mapped file keeps resident behind its position (keepResident),
// whatever the frames' sizes. (Batches of 256 frames or 96 KB had each side
// wake the other twice as often: stats on 2M packets took ~10% longer.
// Batches of 4096 frames or 1 MB, beyond the second-level cache, were slower
// again.)
const prefetchBatchBytes = 192 << 10

// prefetchDepth is how many batches are in flight: read ahead, being
// consumed, or consumed and not yet handed back.
const prefetchDepth = 8

// prefetchReturn is how many consumed batches the consumer hands back at
// once. The reader, far faster than the consumer, is waiting for a free
// batch each time; waking it is a system call on the consumer's core (the
// critical path), so it is woken once per prefetchReturn batches and then
// fills them in a row, still prefetchDepth-prefetchReturn batches ahead.
const prefetchReturn = 4

// InFlight is the most frames a Prefetch's hook has run on that its
// consumer may not be done with: the frames of the prefetchDepth batches,
// read ahead or being consumed. A batch comes back to the reader only
// after the consumer has asked for the frame after its last, so the hook's
// run on a frame InFlight frames later happens after the consumer is done
// with this one (the batches' channels order the two).
const InFlight = prefetchDepth * prefetchBatch

type frameBatch struct {
	frames [prefetchBatch]Frame
	n      int
	err    error  // after frames[:n]; nil when the batch is full
	arena  []byte // copies of frames whose bytes the reader reuses
}

// Prefetch reads frames from files on a goroutine of its own, ahead of the
// consumer, and runs hook on each there. Reading (the mapped file's page
// faults and cache misses) and the hook's work (dissect: the ICRC, a CRC
// over the whole packet) then run on a second core while the consumer
// decodes: for "cmpd-dissect stats" on 2M packets about a third less wall
// time. Frames come out in order with the errors of Files.Next between
// them. Frames of mapped files point into the mapping; those of files read
// through a buffer (pcapng, gzip, stdin) are copied, so that every frame's
// Data stays valid until its batch (up to prefetchBatch frames) is handed
// back (after the consumer has started on the next batch) and the last
// batch's until Close. Not safe for concurrent use by several consumers.
type Prefetch struct {
	files *Files
	hook  func(*Frame)

	full, free chan *frameBatch
	stop       chan struct{}
	exited     chan struct{}
	closeOnce  sync.Once

	cur  *frameBatch
	i    int
	eof  bool
	used []*frameBatch // consumed, to be handed back (prefetchReturn)
}

// NewPrefetch starts reading fs ahead. hook (may be nil) runs on the reading
// goroutine, once per frame, before the consumer gets it. Close stops the
// goroutine and closes fs.
func NewPrefetch(fs *Files, hook func(*Frame)) *Prefetch {
	p := &Prefetch{files: fs, hook: hook,
		full:   make(chan *frameBatch, prefetchDepth),
		free:   make(chan *frameBatch, prefetchDepth),
		stop:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	for i := 0; i < prefetchDepth; i++ {
		p.free <- new(frameBatch)
	}
	go p.read()
	return p
}

// read fills free batches until the end of the files or Close.
func (p *Prefetch) read() {
	defer close(p.exited)
	for {
		var b *frameBatch
		select {
		case b = <-p.free:
		case <-p.stop:
			return
		}
		b.n, b.err, b.arena = 0, nil, b.arena[:0]
		bytes := 0
		for b.n < len(b.frames) && bytes < prefetchBatchBytes {
			f := &b.frames[b.n]
			if err := p.files.Next(f); err != nil {
				b.err = err
				break
			}
			if cur := p.files.cur; cur == nil || cur.mapped == nil {
				// The reader reuses its buffer for the next record.
				start := len(b.arena)
				b.arena = append(b.arena, f.Data...)
				f.Data = b.arena[start:len(b.arena):len(b.arena)]
			}
			if p.hook != nil {
				p.hook(f)
			}
			bytes += len(f.Data) + 16
			b.n++
		}
		select {
		case p.full <- b:
		case <-p.stop:
			return
		}
		if b.err == io.EOF {
			return
		}
	}
}

// Next implements Source: the frames and errors of Files.Next, in order.
func (p *Prefetch) Next(f *Frame) error {
	fp, err := p.Frame()
	if err == nil {
		*f = *fp
	}
	return err
}

// Frame is Next without the copy: the next frame where it lies in its
// batch, valid, like its Data, until the batch is handed back.
func (p *Prefetch) Frame() (*Frame, error) {
	if b := p.cur; b != nil && p.i < b.n {
		f := &b.frames[p.i]
		p.i++
		return f, nil
	}
	return p.nextBatch()
}

// nextBatch hands the batch consumed back (prefetchReturn at a time) and
// returns the first frame of the next one, or the error that ended it.
func (p *Prefetch) nextBatch() (*Frame, error) {
	for {
		if p.eof {
			return nil, io.EOF
		}
		if p.cur == nil {
			p.cur, p.i = <-p.full, 0
		}
		b := p.cur
		if p.i < b.n {
			f := &b.frames[p.i]
			p.i++
			return f, nil
		}
		err := b.err
		if err == io.EOF {
			// The last batch stays: its frames' bytes may still be
			// looked at (reassembly flushed at the end of input).
			p.eof = true
			return nil, err
		}
		p.cur = nil
		p.used = append(p.used, b)
		if len(p.used) == prefetchReturn {
			for _, u := range p.used {
				p.free <- u
			}
			p.used = p.used[:0]
		}
		if err != nil {
			return nil, err
		}
	}
}

// Close stops the reading goroutine, waits for it, and closes the files.
func (p *Prefetch) Close() error {
	p.closeOnce.Do(func() { close(p.stop) })
	<-p.exited
	return p.files.Close()
}
