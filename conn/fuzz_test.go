package conn

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// FuzzTracker drives the tracker with event sequences decoded from the
// input: every message type, comm IDs, QPNs and hosts from a small set (so
// messages pair up), arbitrary private data, Sends of any size. The
// tracker must not panic, must keep its table within the cap and must keep
// its per-code finding cap.
func FuzzTracker(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 1, 1, 2, 0, 1, 0, 2, 3, 4, 0, 0, 3})
	f.Add(append([]byte{0, 0, 0, 0, 0, 0, 0, 0x24}, reqPD(linuxClientPD)...))
	f.Add([]byte{9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11, 12, 0, 1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		hosts := []Peer{
			{Addr: netip.MustParseAddr("10.0.0.1")}, {Addr: netip.MustParseAddr("10.0.0.2")},
			{LID: 3}, {Addr: netip.MustParseAddr("fe80::1"), LID: 4},
		}
		tr := New(Config{MaxConnections: 3, Timeout: time.Second, MaxPendingCalls: 2, MaxFindingsPerCode: 2})
		now := t0
		for frame := 1; len(data) >= 4; frame++ {
			op, a, b, c := data[0], data[1], data[2], data[3]
			data = data[4:]
			now = now.Add(time.Duration(c) * 50 * time.Millisecond)
			src, dst := hosts[a%4], hosts[b%4]
			var pd []byte
			if n := int(c % 64); op&0x80 != 0 && n <= len(data) {
				pd, data = data[:n], data[n:]
			}
			switch op % 14 {
			case 12, 13:
				ev := &SendEvent{FirstFrame: frame, LastFrame: frame, Time: now, Transport: RoCEv2,
					Src: src, Dst: dst, DestQP: uint32(c % 4), Length: int(a) * 64, Invalidate: b&1 != 0,
					InvalidateSTag: uint32(c % 3), RPCRDMA: b&2 != 0, XID: uint32(a % 5),
					Handles: []uint32{uint32(b % 3)}}
				if op%14 == 13 {
					ev.Transport = IWARP
					ev.Src.Port, ev.Dst.Port = uint16(a%2), uint16(b%2)
				}
				tr.Send(ev)
			case 10, 11:
				types := []MPAType{MPARequest, MPAReply, MPAReject}
				src.Port, dst.Port = uint16(a%2), uint16(b%2)
				tr.MPA(&MPAEvent{Frame: frame, Time: now, Src: src, Dst: dst, Type: types[c%3],
					PrivateData: pd, ULPOffset: int(a % 8)})
			default:
				typ := uint16(0x10 + op%11)
				ev := &CMEvent{Frame: frame, Time: now, Transport: RoCEv2, Src: src, Dst: dst, Type: typ,
					TID: uint64(c % 3), LocalCommID: uint32(a % 3), RemoteCommID: uint32(b % 3),
					ServiceID: uint64(c) << 16, QPN: uint32(c % 4), PrivateData: pd, ULPOffset: int(b % 40),
					PrivateDataAt: int(a), RejectReason: uint16(c)}
				if len(pd) >= 4 {
					ev.CMAValid, ev.CMAPort = true, binary.BigEndian.Uint16(pd)
				}
				tr.CM(ev)
			}
			if tr.nActive > 3 || len(tr.last) > 3 || len(tr.index) > 3*8 {
				t.Fatalf("%d connections followed (%d peers, %d keys), cap 3", tr.nActive, len(tr.last), len(tr.index))
			}
		}
		tr.Finish()
		for _, c := range tr.Connections() {
			type key struct {
				code string
				sev  finding.Severity
			}
			n := map[key]int{}
			for _, f := range c.Findings() {
				k := key{f.Code, f.Severity}
				n[k]++
				if n[k] > 2 {
					t.Fatalf("connection %d: %d findings %s, cap 2", c.ID, n[k], f.Code)
				}
			}
			// Every finding counted, each kind listed at least once.
			for _, fc := range c.FindingCounts {
				if fc.Count < 1 || fc.Listed != min(fc.Count, 2) || n[key{fc.Code, fc.Severity}] != fc.Listed ||
					(fc.Unlisted() == 0 && fc.FirstUnlistedFrame != 0) || fc.FirstFrame > fc.LastFrame {
					t.Fatalf("connection %d: count %+v, %d listed", c.ID, fc, n[key{fc.Code, fc.Severity}])
				}
			}
			if len(n) != len(c.FindingCounts) {
				t.Fatalf("connection %d: %d kinds listed, %d counted", c.ID, len(n), len(c.FindingCounts))
			}
			_ = c.Service()
			_ = c.Client.String()
			if c.ClientData != nil {
				_ = c.ClientData.Report()
			}
		}
	})
}
