package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// statsCodes are the finding codes "stats" lists for a capture, with
// their severities ("rpc.truncated error").
func statsCodes(t *testing.T, path string) map[string]bool {
	t.Helper()
	code, out, errOut := runCmd(t, "stats", path)
	if code != 0 {
		t.Fatalf("stats %s: exit %d: %s", path, code, errOut)
	}
	codes := map[string]bool{}
	_, list, _ := strings.Cut(out, "Findings by code\n")
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			codes[f[0]+" "+f[1]] = true
		}
	}
	return codes
}

// snapCodes are the findings a capture cut by a snap length has that the
// whole capture has not: the frames cut, and the iWARP streams whose PDUs
// are not wholly captured.
var snapCodes = map[string]bool{"dissect.truncated warning": true, "iwarp.not-captured info": true}

var errorFinding = regexp.MustCompile(`(?m)\berror\b`)

// wholeCapture is what the whole capture a cut one was cut from has: its
// finding codes as stats lists them, and its connections as conns sees
// them (connsSeen).
type wholeCapture struct {
	codes map[string]bool
	conns connsSeen
}

func readWhole(t *testing.T, path string) wholeCapture {
	return wholeCapture{statsCodes(t, path), readConns(t, path)}
}

// connsSeen is what conns says of a capture: how many connections, the
// conn.* finding codes on them (and on no connection), and each one's
// QPN and comm ID line ("QPN client 0x000020 server ?, comm ID client
// 0x772f93ef server 0x14f12625"), split in its four values; and where
// the packets of its REQ and REP show their Local QPN (the fields
// captured, -T fields), the QPN conns gives each side (none: "?").
type connsSeen struct {
	n     int
	codes map[string]bool
	ids   [][4]string
	qpns  []sideQPN
}

// sideQPN is a REQ's or REP's Local QPN as its packet shows it and as
// conns gives it for that side.
type sideQPN struct {
	frame        int
	packet, conn string
}

var connIDs = regexp.MustCompile(`(?m)^  QPN client (\S+) server (\S+), comm ID client (\S+) server (\S+)$`)

func readConns(t *testing.T, path string) connsSeen {
	t.Helper()
	seen := connsSeen{codes: map[string]bool{}}
	_, js, _ := runCmd(t, "conns", "--json", path)
	for _, line := range strings.Split(strings.TrimSpace(js), "\n") {
		if line == "" {
			continue
		}
		var c struct {
			Kind         string  `json:"kind"`
			ClientQPN    *uint32 `json:"client_qpn"`
			ServerQPN    *uint32 `json:"server_qpn"`
			RequestFrame *int    `json:"request_frame"`
			ReplyFrame   *int    `json:"reply_frame"`
			Findings     []struct {
				Code string `json:"code"`
			} `json:"findings"`
			Counts []struct {
				Code string `json:"code"`
			} `json:"finding_counts"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("conns --json %s: %v: %s", filepath.Base(path), err, line)
		}
		if c.Kind == "connection" {
			seen.n++
			seen.qpns = append(seen.qpns, sideQPN{frame: deref(c.RequestFrame), conn: qpnText(c.ClientQPN)},
				sideQPN{frame: deref(c.ReplyFrame), conn: qpnText(c.ServerQPN)})
		}
		for _, f := range c.Findings {
			seen.codes[f.Code] = true
		}
		for _, f := range c.Counts {
			seen.codes[f.Code] = true
		}
	}
	_, v, _ := runCmd(t, "conns", "-V", path)
	for _, m := range connIDs.FindAllStringSubmatch(v, -1) {
		seen.ids = append(seen.ids, [4]string{m[1], m[2], m[3], m[4]})
	}
	_, fields, _ := runCmd(t, "-r", path, "-Y", "cm.attribute_id == 0x10 || cm.attribute_id == 0x13", "-T", "fields", "-e", "frame.number",
		"-e", "cm.req.localqpn", "-e", "cm.rep.localqpn")
	shown := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(fields), "\n") {
		if f := strings.Split(line, "\t"); len(f) == 3 {
			n, _ := strconv.Atoi(f[0])
			shown[n] = f[1] + f[2]
		}
	}
	for i := range seen.qpns {
		q := &seen.qpns[i]
		if v, ok := shown[q.frame]; ok && v != "" {
			x, err := strconv.ParseUint(v, 0, 32)
			if err != nil {
				t.Fatalf("%s frame %d: Local QPN %q", filepath.Base(path), q.frame, v)
			}
			q.packet = fmt.Sprintf("0x%06x", x)
		}
	}
	return seen
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func qpnText(p *uint32) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprintf("0x%06x", *p)
}

// checkSnapCut checks a capture cut by a snap length against the whole
// capture it was cut from: "check" passes (no error finding: running out
// of captured octets breaks no protocol rule) and no finding appears that
// the whole capture has not, but for snapCodes, neither among the frames'
// findings nor among those conns raises on the connections (a REQ whose
// fixed fields were cut was still seen: no "REQ not seen"). conns finds
// no more connections than the whole capture has, every one when the CM
// messages' headers were captured (full), and each QPN and comm ID it
// shows is the whole capture's ("?" where it was not captured).
func checkSnapCut(t *testing.T, cut string, whole wholeCapture, full bool) {
	t.Helper()
	name := filepath.Base(cut)
	code, out, errOut := runCmd(t, "check", cut)
	if code != 0 || errorFinding.MatchString(out) {
		t.Errorf("check %s: exit %d, want 0:\n%s%s", name, code, out, errOut)
	}
	for c := range statsCodes(t, cut) {
		if !whole.codes[c] && !snapCodes[c] {
			t.Errorf("%s: %s, which the whole capture does not have", name, c)
		}
	}
	got := readConns(t, cut)
	for c := range got.codes {
		if !whole.conns.codes[c] && c != "dissect.truncated" && c != "iwarp.not-captured" {
			t.Errorf("%s: conns has %s, which the whole capture does not have", name, c)
		}
	}
	if got.n > whole.conns.n || full && got.n != whole.conns.n {
		t.Errorf("%s: conns has %d connections, the whole capture %d", name, got.n, whole.conns.n)
	}
	// A QPN the REQ's or REP's captured fields show is the connection's.
	for _, q := range got.qpns {
		if q.packet != "" && q.packet != q.conn {
			t.Errorf("%s: frame %d shows Local QPN %s, conns gives %s", name, q.frame, q.packet, q.conn)
		}
	}
	if whole.conns.codes[conn.CodeREPWithoutREQ] && full && !got.codes[conn.CodeREPWithoutREQ] {
		t.Errorf("%s: a REP with no REQ seen, as in the whole capture, and no %s", name, conn.CodeREPWithoutREQ)
	}
	if full && len(got.ids) == len(whole.conns.ids) {
		for i, ids := range got.ids {
			for j, id := range ids {
				if id != "?" && id != whole.conns.ids[i][j] {
					t.Errorf("%s: connection %d shows %s where the whole capture has %s", name, i+1, ids, whole.conns.ids[i])
					break
				}
			}
		}
	}
}

// snapCMHeaders is a snap length that keeps every real capture's CM
// message headers: RoCEv2 over IPv6's MAD header ends at octet 106, an
// MPA Request's header at 94.
const snapCMHeaders = 128

// TestSnapLengthCaptures: every real capture that "check" passes passes
// cut at each of testcap.SnapLengths, as "tcpdump -s N" or "editcap -s N"
// writes it, with no finding the whole capture has not (tshark: "[Packet
// size limited during capture]", not a malformed packet).
func TestSnapLengthCaptures(t *testing.T) {
	fulls := testcap.Glob(t, "pcaps/real/*.pcap")
	dir := t.TempDir()
	checked := 0
	for _, full := range fulls {
		if code, _, _ := runCmd(t, "check", full); code != 0 {
			continue // a capture whose own findings fail check
		}
		whole := readWhole(t, full)
		for _, snap := range testcap.SnapLengths {
			name := fmt.Sprintf("%s.s%d.pcap", strings.TrimSuffix(filepath.Base(full), ".pcap"), snap)
			cut := filepath.Join(dir, name)
			frames := testcap.SnapCut(t, full, snap)
			testcap.WritePcap(t, cut, layers.LinkType(frames[0].LinkType), frames)
			checkSnapCut(t, cut, whole, snap >= snapCMHeaders)
			checked++
		}
	}
	if checked < 300 {
		t.Errorf("%d cut captures checked: the real captures are missing", checked)
	}
}

// TestSnapLengthREPWithoutREQ: captures that start after the REQ (its
// frames left out of real ones), cut at each of testcap.SnapLengths. A
// REP whose fixed fields the snap length cut still reveals its connection
// with the conn.rep-without-req finding, as the whole REP does.
func TestSnapLengthREPWithoutREQ(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"live-rxe4-nfs42", "live-rxe6-rfc8797", "live-rxe4-reconnect"} {
		full := testcap.Real(name + ".pcap")
		_, reqs, _ := runCmd(t, "-r", full, "-Y", "cm.attribute_id == 0x10", "-T", "fields", "-e", "frame.number")
		skip := map[string]bool{}
		for _, n := range strings.Fields(reqs) {
			skip[n] = true
		}
		var frames []source.Frame
		for i, f := range testcap.Frames(t, full) {
			if !skip[strconv.Itoa(i+1)] {
				frames = append(frames, f)
			}
		}
		if len(skip) == 0 || len(frames) == 0 {
			t.Fatalf("%s: %d REQ frames", name, len(skip))
		}
		late := filepath.Join(dir, name+".late.pcap")
		testcap.WritePcap(t, late, layers.LinkType(frames[0].LinkType), frames)
		whole := readWhole(t, late)
		if !whole.conns.codes[conn.CodeREPWithoutREQ] || whole.conns.n == 0 {
			t.Fatalf("%s without its REQs: %d connections, codes %v", name, whole.conns.n, whole.conns.codes)
		}
		for _, snap := range testcap.SnapLengths {
			cut := filepath.Join(dir, fmt.Sprintf("%s.late.s%d.pcap", name, snap))
			frames := testcap.SnapCut(t, late, snap)
			testcap.WritePcap(t, cut, layers.LinkType(frames[0].LinkType), frames)
			checkSnapCut(t, cut, whole, snap >= snapCMHeaders)
		}
	}
}

// TestTcpdumpSnapLength: the captures tcpdump -s 128 wrote of the real
// ones' frames (testdata/pcaps/converted/PROVENANCE.md).
func TestTcpdumpSnapLength(t *testing.T) {
	for _, name := range []string{"live-rxe4-nfs42", "live-siw4-nfs42"} {
		cut := testcap.Path("pcaps", "converted", name+".tcpdump-s128.pcap")
		checkSnapCut(t, cut, readWhole(t, testcap.Real(name+".pcap")), true)
	}
	// The REQ is cut in its fixed fields, the REP's private data after 6
	// of its 196 octets: what the peers advertised, and so the
	// negotiation, is not known (not RFC 8797's defaults, which peers
	// that sent nothing would mean).
	cut := testcap.Path("pcaps", "converted", "live-rxe4-nfs42.tcpdump-s128.pcap")
	_, table, _ := runCmd(t, "conns", cut)
	if strings.Count(table, "not captured") != 3 || strings.Contains(table, "1024") {
		t.Errorf("conns: the REQ's and the REP's private data and the negotiation should be not captured:\n%s", table)
	}
	_, js, _ := runCmd(t, "conns", "--json", cut)
	if !strings.Contains(js, `"negotiated":null`) || !strings.Contains(js, `"uncaptured":true`) || strings.Contains(js, "pvtdata.overrun") {
		t.Errorf("conns --json: a negotiation the capture did not hold:\n%s", js)
	}
	// Nor what a receiver would act on: the reading's fallback to the
	// defaults is no offer of the peer's.
	if strings.Contains(js, `"send_size":1024`) || strings.Count(js, `"effective":null,"readers":null`) != 2 {
		t.Errorf("conns --json: effective values of private data not captured:\n%s", js)
	}
	_, whole, _ := runCmd(t, "conns", "--json", testcap.Real("live-rxe4-nfs42.pcap"))
	if strings.Contains(whole, `"effective":null`) || !strings.Contains(whole, `"effective":{"send_size":4096`) {
		t.Errorf("conns --json of the whole capture: effective values missing:\n%s", whole)
	}
}

// TestSnapLengthTshark compares the tcpdump -s 128 captures with tshark.
// On the iWARP one both agree: tshark marks no frame malformed (the cut
// segments are "[Packet size limited during capture]", its BoundsError),
// and no frame has an error finding here. On the RoCEv2 one we differ on
// purpose: tshark 4.0's InfiniBand dissector sizes a RoCEv2 packet from
// the captured octets, finds its "LRH" length wrong and calls every cut
// frame "Invalid Packet Length from LRH! [Malformed Packet]" (a RoCEv2
// packet has no LRH; the packet's own lengths, IP and UDP, are whole). We
// count the packet from its IP length as tshark's own rule for a frame
// cut by the snap length says: a warning that the frame was cut, no error.
func TestSnapLengthTshark(t *testing.T) {
	for _, tc := range []struct {
		name      string
		malformed bool // tshark calls the cut frames malformed
	}{{"live-siw4-nfs42", false}, {"live-rxe4-nfs42", true}} {
		path := testcap.Path("pcaps", "converted", tc.name+".tcpdump-s128.pcap")
		info := testcap.TsharkByFrame(t, path, "", "frame.len", "frame.cap_len", "_ws.col.Info")
		_, out, _ := runCmd(t, "-r", path, "-T", "fields", "-e", "frame.number", "-e", "frame.len", "-e", "frame.cap_len")
		ours := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			ours[line] = true
		}
		code, checkOut, _ := runCmd(t, "check", path)
		if code != 0 {
			t.Errorf("%s: check exit %d:\n%s", tc.name, code, checkOut)
		}
		cut, malformed := 0, 0
		for n, row := range info {
			if !ours[fmt.Sprintf("%d\t%s\t%s", n, row[0], row[1])] {
				t.Errorf("%s frame %d: tshark's lengths %s/%s are not ours", tc.name, n, row[0], row[1])
			}
			if row[0] == row[1] {
				continue
			}
			cut++
			if strings.Contains(row[2], "[Malformed Packet]") {
				malformed++
			}
		}
		if cut == 0 {
			t.Fatalf("%s: no frame cut", tc.name)
		}
		if tc.malformed && malformed == 0 || !tc.malformed && malformed != 0 {
			t.Errorf("%s: tshark calls %d of %d cut frames malformed; this test pins it doing so: %v", tc.name, malformed, cut, tc.malformed)
		}
	}
}

// TestSnapLengthCMTshark compares the fields of CM messages the snap
// length cut inside their fixed fields with tshark's. tshark 4.0 decodes
// no field of such a message (its InfiniBand dissector gives up on a
// payload the capture did not hold whole: "Invalid Packet Length from
// LRH!"), so the comparison is with its decode of the whole capture: at
// each of testcap.SnapLengths, a field that tshark places (pdml position
// and size) in the octets captured is shown with tshark's value, one it
// places beyond them is not shown. A field tshark shows inside another
// (the service ID's prefix, protocol and port) is placed as the field it
// is part of; of the private data, the octets captured are shown, and the
// fields in them (the rdma_cm header's) where they lie. Where
// tshark shows a field of a cut message, ours is the same.
func TestSnapLengthCMTshark(t *testing.T) {
	dir := t.TempDir()
	compared := 0
	for _, name := range []string{"live-rxe4-nfs42", "live-rxe6-rfc8797"} {
		full := testcap.Real(name + ".pcap")
		ends := tsharkCMEnds(t, full)
		var aliases []string
		for a := range ends[0] {
			aliases = append(aliases, a)
		}
		sort.Strings(aliases)
		delete(ends, 0)
		whole := testcap.TsharkByFrame(t, full, "infiniband.mad.mgmtclass == 0x07", aliases...)
		ours := oursByFrame(t, full, aliases)
		for frame := range ends {
			for i, a := range aliases {
				if ours[frame][i] != whole[frame][i] {
					t.Fatalf("%s frame %d: %s is %q, tshark's %q", name, frame, a, ours[frame][i], whole[frame][i])
				}
			}
		}
		for _, snap := range testcap.SnapLengths {
			cut := filepath.Join(dir, fmt.Sprintf("%s.s%d.pcap", name, snap))
			frames := testcap.SnapCut(t, full, snap)
			testcap.WritePcap(t, cut, layers.LinkType(frames[0].LinkType), frames)
			got := oursByFrame(t, cut, aliases)
			tsharkCut := testcap.TsharkByFrame(t, cut, "", aliases...)
			for frame, fe := range ends {
				for i, a := range aliases {
					end, ok := fe[a]
					if !ok {
						continue
					}
					want := ""
					if end <= snap {
						want = whole[frame][i]
					}
					if strings.HasSuffix(a, ".private") && strings.HasPrefix(whole[frame][i], got[frame][i]) {
						want = got[frame][i] // the private data octets captured
					}
					if got[frame][i] != want {
						t.Errorf("%s -s %d frame %d: %s is %q, want %q (tshark places it to octet %d)", name, snap, frame, a, got[frame][i], want, end)
					}
					if tc := tsharkCut[frame][i]; tc != "" && tc != got[frame][i] {
						t.Errorf("%s -s %d frame %d: %s is %q, tshark's %q", name, snap, frame, a, got[frame][i], tc)
					}
					compared++
				}
			}
		}
	}
	if compared < 700 {
		t.Errorf("%d fields compared", compared)
	}
}

// tsharkCMEnds runs tshark -T pdml on the CM messages of the capture at
// path and returns, per frame, where each of its CM fields that we know
// by tshark's name ends (pos+size; a field inside another but the private
// data and the rdma_cm header in it: where that one ends); fields a frame shows more than once are left out. At frame 0:
// every field name seen.
func tsharkCMEnds(t *testing.T, path string) map[int]map[string]int {
	t.Helper()
	bin, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed: the comparison with Wireshark is skipped")
	}
	out, err := exec.Command(bin, "-r", path, "-Y", "infiniband.mad.mgmtclass == 0x07", "-T", "pdml").Output()
	if err != nil {
		t.Fatalf("tshark -T pdml %s: %v", path, err)
	}
	ends := map[int]map[string]int{0: {}}
	dec := xml.NewDecoder(bytes.NewReader(out))
	frame, twice := 0, map[string]bool{}
	var parents []int // where each open field ends when it is a CM field, else -1
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("pdml of %s: %v", path, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if e.Name.Local == "packet" {
				for a := range twice {
					delete(ends[frame], a)
				}
				twice = map[string]bool{}
				continue
			}
			if e.Name.Local != "field" {
				continue
			}
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			pos, err1 := strconv.Atoi(attr["pos"])
			size, err2 := strconv.Atoi(attr["size"])
			end := -1
			if err1 == nil && err2 == nil {
				end = pos + size
				if n := len(parents); n > 0 && parents[n-1] > end {
					end = parents[n-1]
				}
			}
			n := attr["name"]
			if strings.HasPrefix(n, "infiniband.cm.") && !strings.HasSuffix(n, ".private") && !strings.HasSuffix(n, ".ip_cm") {
				parents = append(parents, end)
			} else {
				parents = append(parents, -1)
			}
			if n == "frame.number" {
				frame, _ = strconv.Atoi(attr["show"])
				ends[frame] = map[string]int{}
			}
			if !strings.HasPrefix(n, "infiniband.cm.") || !field.IsAlias(n) || end < 0 {
				continue
			}
			if _, ok := ends[frame][n]; ok {
				twice[n] = true
			}
			ends[frame][n] = end
			ends[0][n] = 0
		case xml.EndElement:
			if e.Name.Local == "field" {
				parents = parents[:len(parents)-1]
			}
		}
	}
	for a := range twice {
		delete(ends[frame], a)
	}
	return ends
}

// oursByFrame is "-T fields -e frame.number -e aliases…" of the capture
// at path, each row by its frame number.
func oursByFrame(t *testing.T, path string, aliases []string) map[int][]string {
	t.Helper()
	args := []string{"-r", path, "-T", "fields", "-e", "frame.number"}
	for _, a := range aliases {
		args = append(args, "-e", a)
	}
	code, out, errOut := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	rows := map[int][]string{}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		f := strings.Split(line, "\t")
		n, err := strconv.Atoi(f[0])
		if err != nil || len(f) != len(aliases)+1 {
			t.Fatalf("row %q", line)
		}
		rows[n] = f[1:]
	}
	return rows
}
