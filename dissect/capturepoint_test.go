package dissect

// Frames as other capture points and stacks deliver them, built from the
// real captures' frames: RoCEv2 without the ICRC, IPv6 with extension
// headers, frames a port mirror encapsulates.

import (
	"encoding/binary"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// tsharkEach writes frames to a capture named name, runs tshark on it
// (display filter, fields) and calls fn with each frame's record and
// tshark's values of the fields for it (nil: tshark did not show the frame).
func tsharkEach(t *testing.T, name string, frames []source.Frame, filter string, fields []string, fn func(r *Record, want []string)) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	testcap.WritePcap(t, path, layers.LinkTypeEthernet, frames)
	want := testcap.TsharkByFrame(t, path, filter, fields...)
	d := New(Options{})
	for _, f := range testcap.Frames(t, path) {
		r := d.Dissect(&f)
		fn(r, want[r.Frame])
	}
}

// values is the field values of all of r's layers.
func values(r *Record) testcap.TsharkValues {
	c := testcap.TsharkValues{}
	for _, l := range r.Layers {
		l.VisitFields(c)
	}
	return c
}

// layersText is the field values of ls as text, each layer's fields in
// name order, those skip names left out, and the codes of r's findings.
func layersText(r *Record, ls []field.Layer, skip func(name string) bool) (text string, codes []string) {
	var b strings.Builder
	for _, l := range ls {
		c := testcap.TsharkValues{}
		l.VisitFields(c)
		for _, k := range slices.Sorted(maps.Keys(c)) {
			if !skip(k) {
				b.WriteString(k + "=" + c.Get(k) + " ")
			}
		}
	}
	for _, f := range r.Findings {
		codes = append(codes, f.Code)
	}
	return b.String(), codes
}

// withoutICRC returns the frames of a real capture as a capture point that
// does not deliver the ICRC hands them: each RoCEv2 frame without its last
// four octets (its IP and UDP lengths unchanged), padded with zeros to
// Ethernet's 60-octet minimum as a mirror port pads it, and captured whole
// (length and captured length the same). roce reports which frames were
// changed.
func withoutICRC(t *testing.T, frames []source.Frame) (out []source.Frame, roce map[int]bool) {
	t.Helper()
	d := New(Options{})
	roce = map[int]bool{}
	for _, f := range frames {
		r := d.Dissect(&f)
		h := r.Headers()
		if h.BTH != nil && (h.IPv4 != nil || h.IPv6 != nil) && len(f.Data) == f.Length {
			data := slices.Clone(f.Data[:len(f.Data)-4])
			if len(data) < 60 {
				data = append(data, make([]byte, 60-len(data))...)
			}
			f.Data, f.CaptureLength, f.Length = data, len(data), len(data)
			roce[f.Number] = true
		}
		out = append(out, f)
	}
	return out, roce
}

// recordView is a record's field values and findings as text, without the
// frame's lengths and the ICRC (what stripping the ICRC changes); the
// findings with their messages.
func recordView(r *Record) (fields string, findings []string) {
	fields, _ = layersText(r, r.Layers, func(k string) bool {
		switch k {
		case "frame.len", "frame.cap_len", "bth.icrc", "bth.icrc.computed", "bth.icrc.status":
			return true
		}
		return false
	})
	for _, f := range r.Findings {
		findings = append(findings, f.Code+" "+f.Message)
	}
	return fields, findings
}

// TestICRCNotCaptured: RoCEv2 frames built from real captures (CM, NFS
// over RC Sends with their RDMA Writes and ACKs, IPv4 and IPv6) without
// their ICRC decode as the originals do, Send reassembly and RPC decoding
// included: the payload whole, no ICRC shown (status 3, not present), no
// truncation, short-MAD or short-frame finding, and one
// dissect.icrc-not-captured for the capture, on its first RoCEv2 frame.
// With and without the reading goroutine's hook.
func TestICRCNotCaptured(t *testing.T) {
	for _, name := range []string{"live-rxe4-rfc8797.pcap", "live-rxe6-rfc8797.pcap", "live-rxe4-nfs42.pcap", "live-rxe4-perftest-write.pcap"} {
		for _, ahead := range []bool{false, true} {
			frames := testcap.Frames(t, testcap.Real(name))
			stripped, roce := withoutICRC(t, frames)
			var hook func(*source.Frame)
			if ahead {
				hook = Ahead(Options{})
			}
			orig, got := New(Options{}), New(Options{})
			noted, padded := 0, 0
			for i := range frames {
				want, wantF := recordView(orig.Dissect(&frames[i]))
				f := stripped[i]
				if hook != nil {
					hook(&f)
				}
				r := got.Dissect(&f)
				if roce[f.Number] {
					if b := r.Headers().BTH; b == nil || b.ICRCStatus != 3 {
						t.Fatalf("%s frame %d: BTH %v, want ICRC status 3", name, f.Number, b)
					}
					if len(frames[i].Data) < 64 {
						padded++
					}
				}
				g, gotF := recordView(r)
				if len(gotF) > 0 && strings.HasPrefix(gotF[0], CodeICRCNotCaptured+" ") {
					noted++
					if noted == 1 && !roce[f.Number] {
						t.Errorf("%s frame %d: %s on a frame that is not RoCEv2", name, f.Number, gotF[0])
					}
					gotF = gotF[1:]
				}
				if g != want {
					t.Errorf("%s frame %d:\n got %s\nwant %s", name, f.Number, g, want)
				}
				if !slices.Equal(gotF, wantF) {
					t.Errorf("%s frame %d: findings %q, want %q", name, f.Number, gotF, wantF)
				}
			}
			if noted != 1 {
				t.Errorf("%s: %d %s findings, want 1", name, noted, CodeICRCNotCaptured)
			}
			if name == "live-rxe4-perftest-write.pcap" && padded == 0 {
				t.Errorf("%s: no frame padded to 60 octets: the padded case is not tested", name)
			}
		}
	}
}

// TestICRCNotCapturedOnly: only a frame whose IP and UDP lengths both count
// exactly the ICRC's 4 octets more than it holds (fewer in a frame padded
// to the minimum size) is taken as one without its ICRC. A frame shorter
// by another count, or whose UDP length disagrees, is short: a
// dissect.short-frame warning that blames no snap length; a frame the snap
// length cut is dissect.truncated.
func TestICRCNotCapturedOnly(t *testing.T) {
	frame := testcap.Frames(t, testcap.Real("live-rxe4-rfc8797.pcap"))[0]
	for _, tc := range []struct {
		name  string
		cut   int  // octets cut from the frame's end
		udp   int  // added to the UDP length
		snap  bool // the capture's length keeps the frame's
		codes string
	}{
		{name: "no ICRC", cut: 4, codes: CodeICRCNotCaptured},
		{name: "3 octets", cut: 3, codes: ibcm.CodeMADLength + " " + ibcm.CodeTruncated + " " + CodeShortFrame},
		{name: "5 octets", cut: 5, codes: ibcm.CodeMADLength + " " + ibcm.CodeTruncated + " " + CodeShortFrame},
		{name: "UDP length off", cut: 4, udp: 1, codes: ibcm.CodeMADLength + " " + ibcm.CodeTruncated + " " + CodeShortFrame},
		{name: "snap length", cut: 4, snap: true, codes: CodeTruncated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := frame
			f.Data = slices.Clone(frame.Data[:len(frame.Data)-tc.cut])
			f.Data[38+1] += byte(tc.udp) // UDP length, low octet
			f.CaptureLength, f.Length = len(f.Data), len(f.Data)
			if tc.snap {
				f.Length = len(frame.Data)
			}
			r := New(Options{}).Dissect(&f)
			var codes []string
			for _, fd := range r.Findings {
				codes = append(codes, fd.Code)
				if strings.Contains(fd.Message, "by the capture's snap length") && !tc.snap {
					t.Errorf("%s: %s", fd.Code, fd.Message)
				}
			}
			if g := strings.Join(codes, " "); g != tc.codes {
				t.Errorf("findings %q, want %q", g, tc.codes)
			}
		})
	}
}

// TestICRCNotCapturedTshark: tshark, too, decodes the CM messages of the
// frames without their ICRC whole (built from the real CM exchanges, IPv4
// and IPv6) and shows no ICRC; the private data, PSNs and attributes are
// ours.
func TestICRCNotCapturedTshark(t *testing.T) {
	for _, name := range []string{"live-rxe4-rfc8797.pcap", "live-rxe6-rfc8797.pcap"} {
		stripped, _ := withoutICRC(t, testcap.Frames(t, testcap.Real(name)))
		n := 0
		tsharkEach(t, "noicrc-"+name, stripped, "infiniband", []string{"infiniband.bth.psn", "infiniband.mad.attributeid",
			"infiniband.cm.req.ip_cm", "infiniband.invariant.crc"}, func(r *Record, want []string) {
			if want == nil {
				return
			}
			n++
			c := values(r)
			got := []string{c.Get("bth.psn"), "0x00" + strconv.FormatUint(uint64(r.Headers().MAD.AttributeID), 16),
				c.Get("cm.req.private"), c.Get("bth.icrc")}
			if !slices.Equal(got, want) {
				t.Errorf("%s frame %d: %q, tshark %q", name, r.Frame, got, want)
			}
		})
		if n == 0 {
			t.Errorf("%s: tshark decodes no frame", name)
		}
	}
}

// ipv6ExtChains are extension header chains put between the IPv6 header
// and UDP or TCP (RFC 8200 §4): each entry's protocol number and the
// header's 8 octets after its Next Header (PadN options, or a Routing
// header of an unassigned type with no segments left).
var ipv6ExtChains = map[string][]struct {
	proto byte
	rest  [7]byte
}{
	"dstopts":         {{60, [7]byte{0, 1, 4}}},
	"routing":         {{43, [7]byte{0, 253, 0}}},
	"hopopts+dstopts": {{0, [7]byte{0, 1, 4}}, {60, [7]byte{0, 1, 4}}},
}

// withIPv6Ext returns the frames with the chain inserted after the IPv6
// header of each Ethernet IPv6 frame (its Next Header and payload length
// made to match).
func withIPv6Ext(frames []source.Frame, chain string) []source.Frame {
	var out []source.Frame
	for _, f := range frames {
		d := f.Data
		if len(d) >= 54 && binary.BigEndian.Uint16(d[12:14]) == 0x86dd {
			exts := ipv6ExtChains[chain]
			b := slices.Clone(d[:54])
			nh := b[20]
			b[20] = exts[0].proto
			binary.BigEndian.PutUint16(b[18:], binary.BigEndian.Uint16(b[18:])+uint16(8*len(exts)))
			for i, e := range exts {
				next := nh
				if i+1 < len(exts) {
					next = exts[i+1].proto
				}
				b = append(b, next)
				b = append(b, e.rest[:]...)
			}
			f.Data = append(b, d[54:]...)
			f.CaptureLength, f.Length = len(f.Data), f.Length+8*len(exts)
		}
		out = append(out, f)
	}
	return out
}

// TestIPv6ExtensionHeaders: RoCEv2 (CM over UD) and iWARP (MPA, NFS over
// TCP) frames from the real IPv6 captures, with Destination Options,
// Routing, or Hop-by-Hop and Destination Options headers before UDP or
// TCP, decode past them as the originals do (the layers after IPv6, the
// findings, the connections), the headers in the IPv6 layer's tree.
func TestIPv6ExtensionHeaders(t *testing.T) {
	for _, name := range []string{"live-rxe6-rfc8797.pcap", "live-siw6-rfc8797.pcap", "live-siw6-offset.pcap"} {
		frames := testcap.Frames(t, testcap.Real(name))
		for chain := range ipv6ExtChains {
			orig, got := New(Options{}), New(Options{})
			for i, f := range withIPv6Ext(frames, chain) {
				want, wantF := afterIP(orig.Dissect(&frames[i]))
				r := got.Dissect(&f)
				g, gotF := afterIP(r)
				if g != want || !slices.Equal(gotF, wantF) {
					t.Errorf("%s %s frame %d:\n got %s %q\nwant %s %q", name, chain, f.Number, g, gotF, want, wantF)
				}
				c := testcap.TsharkValues{}
				r.Headers().IPv6.VisitFields(c)
				for _, p := range strings.Split(chain, "+") {
					if c.Get("ipv6."+p+".len_oct") != "8" {
						t.Fatalf("%s %s frame %d: no %s header in %v", name, chain, f.Number, p, c)
					}
				}
			}
		}
	}
}

// afterIP is the field values of a record's layers after its IP header
// (ICRC left out: it covers the IPv6 header, which changed) and its
// findings' codes.
func afterIP(r *Record) (fields string, codes []string) {
	at := slices.IndexFunc(r.Layers, func(l field.Layer) bool { return l.Proto() == ProtoIPv6 })
	return layersText(r, r.Layers[at+1:], func(k string) bool { return strings.HasPrefix(k, "bth.icrc") })
}

// TestIPv6ExtensionHeadersTshark: tshark decodes the same extension
// headers (their Next Header and length) and the UDP or TCP header after
// them (ports, TCP sequence numbers) in the frames built from the real
// captures.
func TestIPv6ExtensionHeadersTshark(t *testing.T) {
	fields := []string{"ipv6.hopopts.nxt", "ipv6.hopopts.len_oct", "ipv6.routing.nxt", "ipv6.routing.len_oct",
		"ipv6.dstopts.nxt", "ipv6.dstopts.len_oct", "udp.dstport", "tcp.dstport", "tcp.seq_raw"}
	for _, name := range []string{"live-rxe6-rfc8797.pcap", "live-siw6-rfc8797.pcap"} {
		for chain := range ipv6ExtChains {
			frames := withIPv6Ext(testcap.Frames(t, testcap.Real(name)), chain)
			tsharkEach(t, chain+"-"+name, frames, "ipv6", fields, func(r *Record, want []string) {
				c := values(r)
				var got []string
				for _, k := range fields {
					got = append(got, c.Get(k))
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s %s frame %d: %q, tshark %q", name, chain, r.Frame, got, want)
				}
			})
		}
	}
}

// mirrorKinds are the encapsulations port mirrors send captured frames in.
var mirrorKinds = []string{"gre", "erspan1", "erspan2", "erspan3", "vxlan"}

// mirrored returns frames as a collector receives them from a port
// mirror: each whole frame inside Ethernet, IPv4 (203.0.113.1 →
// 203.0.113.2) and the encapsulation kind (GRE with transparent Ethernet
// bridging; ERSPAN type I, II or III over GRE; VXLAN, VNI 4242), built
// octet by octet as the specifications lay the headers out.
func mirrored(frames []source.Frame, kind string) []source.Frame {
	var out []source.Frame
	for i, f := range frames {
		seq := uint32(i + 1)
		var encap []byte
		proto := byte(47)
		switch kind {
		case "gre":
			encap = binary.BigEndian.AppendUint32(nil, 0x6558)
		case "erspan1":
			encap = binary.BigEndian.AppendUint32(nil, 0x88be)
		case "erspan2":
			encap = binary.BigEndian.AppendUint32(nil, 0x1000_88be) // S bit, ERSPAN
			encap = binary.BigEndian.AppendUint32(encap, seq)
			// Version 1, VLAN 100; COS 1, Encap 0, T 0, session 5; index 7.
			encap = binary.BigEndian.AppendUint32(encap, 0x1064_2005)
			encap = binary.BigEndian.AppendUint32(encap, 7)
		case "erspan3":
			encap = binary.BigEndian.AppendUint32(nil, 0x1000_22eb) // S bit, ERSPAN III
			encap = binary.BigEndian.AppendUint32(encap, seq)
			// Version 2, VLAN 100; COS 2, BSO 0, T 0, session 5;
			// timestamp; SGT 0x1234; P 0, FT 0, HW 3, D 1, Gra 1, O 0.
			encap = binary.BigEndian.AppendUint32(encap, 0x2064_4005)
			encap = binary.BigEndian.AppendUint32(encap, 1000+seq)
			encap = binary.BigEndian.AppendUint32(encap, 0x1234_003a)
		case "vxlan":
			proto = 17
			n := 8 + 8 + len(f.Data)
			encap = []byte{0xc0, 0x00, 0x12, 0xb5, byte(n >> 8), byte(n), 0, 0} // 49152 → 4789
			encap = binary.BigEndian.AppendUint32(encap, 0x0800_0000)
			encap = binary.BigEndian.AppendUint32(encap, 4242<<8)
		}
		ip := []byte{0x45, 0, 0, 0, byte(seq >> 8), byte(seq), 0x40, 0, 64, proto, 0, 0, 203, 0, 113, 1, 203, 0, 113, 2}
		binary.BigEndian.PutUint16(ip[2:], uint16(20+len(encap)+len(f.Data)))
		binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip))
		d := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0}
		d = append(append(append(d, ip...), encap...), f.Data...)
		f.Data, f.CaptureLength, f.Length = d, len(d), len(d)
		out = append(out, f)
	}
	return out
}

// ipChecksum is the IPv4 header checksum of h (its checksum field zero).
func ipChecksum(h []byte) uint16 {
	var s uint32
	for i := 0; i < len(h); i += 2 {
		s += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// TestMirroredFrames: the frames of real captures (RoCEv2 over IPv4 and
// IPv6: CM, NFS over RC Sends, RDMA Writes; iWARP: MPA, NFS over TCP) as a
// port mirror delivers them, in GRE, ERSPAN type I, II and III, or VXLAN,
// decode inside the encapsulation as the originals do: the same layers and
// values after it, the same findings (ICRC verdicts included: computed
// over the inner packet), the inner addresses as the frame's endpoints
// and flow; with and without the reading goroutine's hook.
func TestMirroredFrames(t *testing.T) {
	for _, name := range []string{"live-rxe4-nfs42.pcap", "live-siw4-nfs42.pcap", "live-rxe6-rfc8797.pcap", "live-siw6-offset.pcap"} {
		frames := testcap.Frames(t, testcap.Real(name))
		for _, kind := range mirrorKinds {
			for _, ahead := range []bool{false, true} {
				var hook func(*source.Frame)
				if ahead {
					hook = Ahead(Options{})
				}
				orig, got := New(Options{}), New(Options{})
				for i, f := range mirrored(frames, kind) {
					o := orig.Dissect(&frames[i])
					want, wantF := layersText(o, o.Layers[1:], noSkip)
					ws, wd := AppendEndpoints(o, nil, nil)
					wantHash := connHash(o)
					if hook != nil {
						hook(&f)
					}
					r := got.Dissect(&f)
					at := slices.IndexFunc(r.Layers, func(l field.Layer) bool {
						_, gre := l.(*GRE)
						_, vx := l.(*VXLAN)
						return gre || vx
					})
					if at < 0 {
						t.Fatalf("%s %s frame %d: no encapsulation layer", name, kind, f.Number)
					}
					for at+1 < len(r.Layers) && r.Layers[at+1].Proto() == ProtoERSPAN {
						at++
					}
					g, gotF := layersText(r, r.Layers[at+1:], noSkip)
					if g != want || !slices.Equal(gotF, wantF) {
						t.Fatalf("%s %s frame %d:\n got %s %q\nwant %s %q", name, kind, f.Number, g, gotF, want, wantF)
					}
					if gs, gd := AppendEndpoints(r, nil, nil); string(gs) != string(ws) || string(gd) != string(wd) || connHash(r) != wantHash {
						t.Errorf("%s %s frame %d: %s → %s, want %s → %s (or another connection hash)", name, kind, f.Number, gs, gd, ws, wd)
					}
				}
			}
		}
	}
}

// TestMirroredFramesTshark: tshark decodes the encapsulation headers with
// the values we give them, and the RoCEv2 or iWARP frame inside them.
func TestMirroredFramesTshark(t *testing.T) {
	outer := []string{"gre.flags_and_version", "gre.proto", "gre.sequence_number", "erspan.version", "erspan.vlan",
		"erspan.cos", "erspan.encap", "erspan.bso", "erspan.truncated", "erspan.spanid", "erspan.index",
		"erspan.timestamp", "erspan.sgt", "erspan.p", "erspan.ft", "erspan.hw", "erspan.direction", "erspan.gra",
		"erspan.o", "vxlan.flags", "vxlan.flag_i", "vxlan.vni"}
	inner := map[string]string{"infiniband.bth.psn": "bth.psn", "tcp.seq_raw": "tcp.seq_raw", "udp.dstport": "udp.dstport"}
	cols := append(slices.Clone(outer), "infiniband.bth.psn", "tcp.seq_raw", "udp.dstport")
	for _, name := range []string{"live-rxe4-nfs42.pcap", "live-siw4-nfs42.pcap"} {
		for _, kind := range mirrorKinds {
			frames := mirrored(testcap.Frames(t, testcap.Real(name)), kind)
			tsharkEach(t, kind+"-"+name, frames, "", cols, func(r *Record, want []string) {
				c := values(r)
				var got []string
				for _, k := range outer {
					got = append(got, strings.NewReplacer("true", "1", "false", "0").Replace(c.Get(k)))
				}
				for _, k := range cols[len(outer):] {
					got = append(got, c.Get(inner[k]))
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s %s frame %d:\n got %q\nwant %q", name, kind, r.Frame, got, want)
				}
			})
		}
	}
}

// FuzzTunnelDecode: on any bytes, the VXLAN header and ERSPAN type II
// decode to gopacket's values (VNI, its flag; VLAN, COS, encapsulation,
// truncated bit, session, index) with the same header and payload, type
// III to a header of 12 or 20 octets, and GRE to gopacket's; none panics.
func FuzzTunnelDecode(f *testing.F) {
	for _, kind := range mirrorKinds {
		fr := mirrored(testcap.Frames(f, testcap.Real("live-rxe4-rfc8797.pcap"))[:1], kind)[0]
		f.Add(fr.Data[34:])
		f.Add(fr.Data[38:])
		f.Add(fr.Data[42:])
	}
	var (
		vx  VXLAN
		gvx layers.VXLAN
		e   ERSPAN
		ge  layers.ERSPANII
		g   GRE
		gg  layers.GRE
		tf  testcap.TruncFlag
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := vx.DecodeFromBytes(data, &tf); (err == nil) != (gvx.DecodeFromBytes(data, &tf) == nil) ||
			err == nil && (vx.VNI != gvx.VNI || (vx.Flags&0x0800 != 0) != gvx.ValidIDFlag || len(vx.Payload) != len(gvx.Payload)) {
			t.Errorf("VXLAN %x: %+v, gopacket %+v", data, vx, gvx)
		}
		if err := e.DecodeFromBytes(data, &tf); err == nil && !e.V3 {
			if ge.DecodeFromBytes(data, &tf) != nil || e.VLAN != ge.VLANIdentifier || e.COS != ge.CoS || e.Encap != ge.TrunkEncap ||
				e.Truncated != ge.IsTruncated || e.SpanID != ge.SessionID || e.Index != ge.Index || len(e.Payload) != len(ge.Payload) {
				t.Errorf("ERSPAN II %x: %+v, gopacket %+v", data, e, ge)
			}
		} else if err == nil && len(e.Contents) != 12 && len(e.Contents) != 20 {
			t.Errorf("ERSPAN III %x: %d-octet header", data, len(e.Contents))
		}
		if err := g.DecodeFromBytes(data, &tf); (err == nil) != (gg.DecodeFromBytes(data, &tf) == nil) ||
			err == nil && (g.Protocol != gg.Protocol || len(g.Payload) != len(gg.Payload)) {
			t.Errorf("GRE %x: %+v, gopacket %+v", data, g.GRE, gg)
		}
		c := testcap.TsharkValues{}
		for _, l := range []field.Layer{&vx, &e, &g} {
			if len(l.(interface{ LayerContents() []byte }).LayerContents()) > 0 {
				l.VisitFields(c)
			}
		}
	})
}

// noSkip leaves out no field.
func noSkip(string) bool { return false }
