package dissect

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

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
// frame's lengths and the ICRC (what stripping the ICRC changes).
func recordView(r *Record) (fields string, findings []string) {
	var b strings.Builder
	for _, l := range r.Layers {
		c := testcap.TsharkValues{}
		l.VisitFields(c)
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range c {
				if !yield(k) {
					return
				}
			}
		}) {
			switch k {
			case "frame.len", "frame.cap_len", "bth.icrc", "bth.icrc.computed", "bth.icrc.status":
				continue
			}
			b.WriteString(k + "=" + c.Get(k) + " ")
		}
	}
	for _, f := range r.Findings {
		findings = append(findings, f.Code+" "+f.Message)
	}
	return b.String(), findings
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
		path := filepath.Join(t.TempDir(), "noicrc-"+name)
		testcap.WritePcap(t, path, layers.LinkTypeEthernet, stripped)
		want := testcap.TsharkByFrame(t, path, "infiniband", "infiniband.bth.psn", "infiniband.mad.attributeid",
			"infiniband.cm.req.ip_cm", "infiniband.invariant.crc")
		d := New(Options{})
		n := 0
		for _, f := range testcap.Frames(t, path) {
			r := d.Dissect(&f)
			cols, ok := want[r.Frame]
			if !ok {
				continue
			}
			n++
			c := testcap.TsharkValues{}
			for _, l := range r.Layers {
				l.VisitFields(c)
			}
			got := []string{c.Get("bth.psn"), "0x00" + strconv.FormatUint(uint64(r.Headers().MAD.AttributeID), 16), "", c.Get("bth.icrc")}
			got[2] = c.Get("cm.req.private")
			if !slices.Equal(got, cols) {
				t.Errorf("%s frame %d: %q, tshark %q", name, r.Frame, got, cols)
			}
		}
		if n == 0 {
			t.Errorf("%s: tshark decodes no frame", name)
		}
	}
}
