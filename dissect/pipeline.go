package dissect

import (
	"errors"
	"io"
	"sync"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// The pipeline splits dissection in two stages on two goroutines:
//
//   - ahead, on a worker: reading the capture and the stateless decoding of
//     each frame (link, IP, UDP/TCP, LRH … CM headers, ICRC/VCRC checks,
//     the layers' findings), each frame into its own slot Dissector;
//   - behind, on the caller's goroutine and in frame order: the stateful
//     steps the slot left pending (RC Send reassembly and RPC-over-RDMA
//     decoding with call/reply matching, iWARP TCP reassembly), run with
//     the main Dissector's state, and then the consumer.
//
// Frames travel in batches (one channel operation per batch, not per
// frame); a batch's slots are reused once the consumer is done with all
// of them. The records are the same as Run's, frame by frame (the tests
// compare both).

// pendingStep is the stateful step a slot's frame still needs.
type pendingStep struct {
	kind    uint8
	net     gopacket.Flow // pendingTCP: the IP flow of the segment
	bth     *ibcm.BTH     // pendingSend: the BTH and the Send payload
	payload []byte
}

const (
	pendingNone = iota
	pendingTCP
	pendingSend
)

// Pipeline sizes: batchFrames frames per batch, pipelineBatches batches in
// flight (the worker fills one while the consumer empties another).
const (
	batchFrames     = 64
	pipelineBatches = 3
)

// slot is one frame in flight: its own stateless Dissector (layers and
// record) and a copy of the frame's bytes (the Source reuses its buffer).
type slot struct {
	d       *Dissector
	f       source.Frame
	buf     []byte
	damaged bool
}

type batch struct {
	slots []slot
	n     int
	// end: no batch follows; err (if not nil) stops the run after the
	// batch's frames.
	end bool
	err error
}

// RunPipelined is Run with the stateless decoding of the frames ahead on a
// second goroutine. It reads at most max good frames (0: all). fn gets each
// record and its frame (nil for a damaged record and for the end-of-input
// record); the Frame, like the Record, is valid only during the call. A
// *source.HeaderError (or other read error) stops the run after the frames
// before it; fn's error stops it at once. src must not be used by anyone
// else until RunPipelined returns.
func (d *Dissector) RunPipelined(src source.Source, max int, fn func(*Record, *source.Frame) error) error {
	batches := make([]batch, pipelineBatches)
	free := make(chan *batch, pipelineBatches)
	full := make(chan *batch, pipelineBatches)
	for i := range batches {
		b := &batches[i]
		b.slots = make([]slot, batchFrames)
		for k := range b.slots {
			b.slots[k].d = newDissector(d.opts, d.roce)
		}
		free <- b
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.fill(src, max, free, full, done)
	}()
	stop := func() {
		close(done)
		wg.Wait()
	}
	for {
		b := <-full
		for i := 0; i < b.n; i++ {
			s := &b.slots[i]
			r := d.adopt(s.d)
			var f *source.Frame
			if !s.damaged {
				f = &s.f
			}
			if err := fn(r, f); err != nil {
				stop()
				return err
			}
		}
		if b.end {
			stop()
			if b.err != nil {
				return b.err
			}
			break
		}
		free <- b
	}
	var ferr error
	d.Finish(func(r *Record) {
		if ferr == nil {
			ferr = fn(r, nil)
		}
	})
	return ferr
}

// fill is the worker: it reads frames into the free batches' slots,
// dissects them (stateless part) and hands the batches on in order.
func (d *Dissector) fill(src source.Source, max int, free <-chan *batch, full chan<- *batch, done <-chan struct{}) {
	good := 0
	for {
		var b *batch
		select {
		case b = <-free:
		case <-done:
			return
		}
		b.n, b.end, b.err = 0, false, nil
		for b.n < len(b.slots) {
			if max > 0 && good >= max {
				b.end = true
				break
			}
			s := &b.slots[b.n]
			err := src.Next(&s.f)
			if err == io.EOF {
				b.end = true
				break
			}
			if err != nil {
				var re *source.RecordError
				if errors.As(err, &re) {
					s.d.DamagedRecord(re)
					s.damaged = true
					b.n++
					continue
				}
				b.end, b.err = true, err
				break
			}
			good++
			s.damaged = false
			s.buf = append(s.buf[:0], s.f.Data...)
			s.f.Data = s.buf
			// Relative and delta times run across the slots.
			s.d.first, s.d.prev, s.d.started = d.first, d.prev, d.started
			s.d.Dissect(&s.f)
			d.first, d.prev, d.started = s.d.first, s.d.prev, s.d.started
			b.n++
		}
		select {
		case full <- b:
		case <-done:
			return
		}
		if b.end {
			return
		}
	}
}

// adopt runs the stateful step slot s left pending on its record, with d's
// Send and iWARP state, and returns the record.
func (d *Dissector) adopt(s *Dissector) *Record {
	r := &s.rec
	r.sends = stateFor(&d.rec)
	switch p := &s.pending; p.kind {
	case pendingTCP:
		d.ext.iwarp.Segment(r, p.net, &s.tcp.TCP)
	case pendingSend:
		sendOn(r, p.bth, s.ext.ib.IETH.RKey, p.payload)
	}
	s.pending = pendingStep{}
	return r
}
