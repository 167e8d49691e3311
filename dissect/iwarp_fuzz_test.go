package dissect

import (
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
)

// FuzzIWARPStream feeds one TCP connection's client octets to the iWARP
// reassembly in segments whose sizes, order, duplication and loss come
// from the input, with and without a SYN, and a server direction. Nothing
// may panic, pending memory must stay under the caps, and everything must
// be released by Flush. Each segment is decoded when it arrives, as tshark
// does: one that brings no new octets (a duplicate) reports no MPA frame or
// FPDU, no octet is reported in two of them (a late segment that fills a
// hole decodes only what was never decoded), and an iwarp.stream-gap
// finding comes only on a segment that starts after a hole, at most one.
//
// Input: ctl[0] flags (bit 0 SYN, bit 1 reorder, bit 2 duplicate, bit 3
// server echo, bit 4 lose every fourth segment, bit 5 send the lost ones
// at the end), ctl[1] segment size, then the stream octets.
func FuzzIWARPStream(f *testing.F) {
	for _, name := range []string{"synth-iwarp-markers-crc.pcap", "synth-iwarp-rdmap-opcodes.pcap", "synth-iwarp-split-reorder-dup.pcap"} {
		f.Add(append([]byte{0x0f, 100}, clientStream(f, testcap.Synthetic(name))...))
		f.Add(append([]byte{0x00, 37}, clientStream(f, testcap.Synthetic(name))...))
		f.Add(append([]byte{0x31, 150}, clientStream(f, testcap.Synthetic(name))...))
	}
	f.Add(append([]byte{0x01, 90}, clientStream(f, testcap.SIW)...))
	f.Add(append([]byte{0x11, 199}, clientStream(f, testcap.Real("live-siw4-crc-nfs42.pcap"))...))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 2 {
			return
		}
		flags, size, stream := in[0], int(in[1])%200+1, in[2:]
		cfg := Options{MaxPDUBytes: 4096, MaxTCPBufferedBytes: 8192, ResyncWindow: 2048, MaxSendBytes: 4096, MaxPendingSends: 4}
		w := newIWARP(cfg, newRPCSends(cfg))
		rec := &Record{}
		flow := gopacket.NewFlow(layers.EndpointIPv4, []byte{10, 0, 0, 1}, []byte{10, 0, 0, 2})
		frame := 0
		// next is, for each direction, the sequence number after the
		// highest octet seen.
		var next [2]uint32
		var known [2]bool
		// got marks the client octets seen (by offset from the first
		// segment); reported counts the octets of the client's MPA frames
		// and FPDUs.
		var got []bool
		var base uint32
		reported, distinct := 0, 0
		seg := func(fromClient bool, syn bool, seq uint32, pl []byte) {
			dir := 0
			if !fromClient {
				dir = 1
			}
			end := seq + uint32(len(pl))
			if syn {
				end++
			}
			old := known[dir] && int32(end-next[dir]) <= 0
			if fromClient {
				if !known[0] {
					base = seq
				}
				old = known[0]
				for i := range pl {
					o := int(int32(seq + uint32(i) - base))
					if o < 0 {
						old = false
						continue
					}
					for len(got) <= o {
						got = append(got, false)
					}
					if !got[o] {
						old, got[o] = false, true
						distinct++
					}
				}
			}
			hole := known[dir] && int32(seq-next[dir]) > 0
			if !known[dir] || int32(end-next[dir]) > 0 {
				next[dir], known[dir] = end, true
			}
			frame++
			rec.Reset()
			rec.Frame, rec.Time = frame, time.Unix(1, int64(frame)*1000)
			tcp := &layers.TCP{SrcPort: 40000, DstPort: 20049, Seq: seq, SYN: syn, ACK: !syn}
			tcp.Payload = pl
			fl := flow
			if !fromClient {
				tcp.SrcPort, tcp.DstPort = tcp.DstPort, tcp.SrcPort
				fl = flow.Reverse()
			}
			tcp.SetInternalPortsForTesting()
			w.Segment(rec, fl, tcp)
			if st := w.Stats(); st.PendingBytes > cfg.MaxTCPBufferedBytes {
				t.Fatalf("pending %d > %d", st.PendingBytes, cfg.MaxTCPBufferedBytes)
			}
			for _, l := range rec.Layers {
				switch x := l.(type) {
				case *mpa.Frame, *mpa.FPDU:
					if old && len(pl) > 0 {
						t.Fatalf("frame %d (seq %d, %d octets, all seen before) reports %s", frame, seq, len(pl), l.Proto().Name)
					}
					if fromClient {
						reported += len(x.(interface{ LayerContents() []byte }).LayerContents())
					}
				}
			}
			if reported > distinct {
				t.Fatalf("frame %d: %d octets reported in MPA frames and FPDUs, of %d octets seen: some twice", frame, reported, distinct)
			}
			gaps := 0
			for _, f := range rec.Findings {
				if f.Code == CodeIWARPGap {
					gaps++
				}
			}
			if gaps > b2i(hole) {
				t.Fatalf("frame %d (seq %d, after a hole: %v): %d stream-gap findings", frame, seq, hole, gaps)
			}
		}
		seq := uint32(0xfffffe00) // wraps inside the stream
		if flags&1 != 0 {
			seg(true, true, seq, nil)
			seq++
		}
		type piece struct {
			seq uint32
			b   []byte
		}
		var ps []piece
		for off := 0; off < len(stream); off += size {
			end := min(off+size, len(stream))
			ps = append(ps, piece{seq + uint32(off), stream[off:end]})
		}
		if flags&2 != 0 {
			for i := 0; i+1 < len(ps); i += 3 {
				ps[i], ps[i+1] = ps[i+1], ps[i]
			}
		}
		var lost []piece
		for i, p := range ps {
			if flags&0x10 != 0 && i%4 == 1 {
				lost = append(lost, p)
				continue
			}
			seg(true, false, p.seq, p.b)
			if flags&4 != 0 && i%2 == 0 {
				seg(true, false, p.seq, p.b)
			}
			if flags&8 != 0 && i%4 == 0 {
				seg(false, false, 1000+uint32(i), p.b)
			}
		}
		if flags&0x20 != 0 {
			for _, p := range lost {
				seg(true, false, p.seq, p.b)
			}
		}
		rec.Reset()
		w.Flush(rec)
		if st := w.Stats(); st.Streams != 0 || st.PendingBytes != 0 {
			t.Fatalf("after Flush: %+v", st)
		}
		for _, l := range rec.Layers {
			l.VisitFields(field.NopVisitor{}) // only that reporting does not panic
		}
	})
}

// clientStream returns the TCP payload octets a capture's first connection
// sent from its first sender, in capture order, duplicates dropped.
func clientStream(t testing.TB, path string) []byte {
	rd := openPcap(t, path)
	var (
		eth    layers.Ethernet
		ip4    layers.IPv4
		tcp    layers.TCP
		types  []gopacket.LayerType
		out    []byte
		src    layers.TCPPort
		next   uint32
		inited bool
	)
	p := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip4, &tcp)
	p.IgnoreUnsupported = true
	for {
		data, _, err := rd.ReadPacketData()
		if err != nil {
			break
		}
		if p.DecodeLayers(data, &types) != nil || len(types) < 3 {
			continue
		}
		if !inited {
			src, next, inited = tcp.SrcPort, tcp.Seq, true
			if tcp.SYN {
				next++
			}
		}
		if tcp.SrcPort != src || len(tcp.Payload) == 0 || tcp.Seq != next {
			continue
		}
		out = append(out, tcp.Payload...)
		next += uint32(len(tcp.Payload))
	}
	return out
}
