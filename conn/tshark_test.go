package conn

import (
	"strconv"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

func atoiT(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return int(n)
}

// What conns says of the real rxe capture agrees with tshark 4.0: the
// frames of every CM step, QPNs, comm IDs, service port, and the Sends and
// Sends with Invalidate in each direction.
func TestRXEAgainstTshark(t *testing.T) {
	path := testcap.RXE
	rows := testcap.TsharkFields(t, path, "infiniband.mad.attributeid", "frame.number", "infiniband.mad.attributeid",
		"infiniband.cm.req.localqpn", "infiniband.cm.rep.localqpn", "infiniband.cm.req.serviceid.dport",
		"infiniband.cm.rtu.localcommid", "infiniband.cm.rtu.remotecommid")
	tr := trackFile(t, path, nil)
	c := only(t, tr)
	frames := map[int]int{}
	for _, r := range rows {
		attr := atoiT(t, r[1])
		frames[attr] = atoiT(t, r[0])
		switch attr {
		case 0x10:
			if atoiT(t, r[2]) != int(c.ClientQPN) || atoiT(t, r[4]) != int(c.Server.Port) {
				t.Errorf("REQ: tshark qpn %s port %s, conns %#x %d", r[2], r[4], c.ClientQPN, c.Server.Port)
			}
		case 0x13:
			if atoiT(t, r[3]) != int(c.ServerQPN) {
				t.Errorf("REP: tshark qpn %s, conns %#x", r[3], c.ServerQPN)
			}
		case 0x14:
			if atoiT(t, r[5]) != int(c.ClientCommID) || atoiT(t, r[6]) != int(c.ServerCommID) {
				t.Errorf("RTU: tshark comm IDs %s %s, conns %#x %#x", r[5], r[6], c.ClientCommID, c.ServerCommID)
			}
		}
	}
	if frames[0x10] != c.RequestFrame || frames[0x13] != c.ReplyFrame || frames[0x14] != c.EstablishedFrame ||
		frames[0x15] != c.DisconnectRequestFrame || frames[0x16] != c.DisconnectReplyFrame {
		t.Errorf("tshark frames %v, conns %d %d %d %d %d", frames, c.RequestFrame, c.ReplyFrame, c.EstablishedFrame,
			c.DisconnectRequestFrame, c.DisconnectReplyFrame)
	}
	sends := testcap.TsharkFields(t, path, "infiniband.bth.opcode <= 5 or infiniband.bth.opcode == 0x16 or infiniband.bth.opcode == 0x17",
		"ip.dst", "infiniband.bth.opcode")
	wantSends(t, c, sends, func(dst string) bool { return dst == c.Server.Addr.String() },
		func(op int) bool { return op == 0x16 || op == 0x17 })
}

// wantSends compares the Sends tshark lists (rows of destination and
// opcode) with the connection's counts in each direction and of Sends with
// Invalidate: toServer tells a row's direction by its destination, inv an
// opcode that invalidates.
func wantSends(t *testing.T, c *Connection, sends [][]string, toServer func(dst string) bool, inv func(op int) bool) {
	t.Helper()
	server, client, invalidate := 0, 0, 0
	for _, r := range sends {
		if toServer(r[0]) {
			server++
		} else {
			client++
		}
		if inv(atoiT(t, r[1])) {
			invalidate++
		}
	}
	if server != c.ToServer.Sends || client != c.ToClient.Sends || invalidate != c.ToClient.Invalidate+c.ToServer.Invalidate {
		t.Errorf("tshark Sends %d/%d (%d invalidate), conns %d/%d (%d)", server, client, invalidate,
			c.ToServer.Sends, c.ToClient.Sends, c.ToClient.Invalidate+c.ToServer.Invalidate)
	}
}

// The same for the siw capture: the MPA frames and the RDMAP Sends.
func TestSIWAgainstTshark(t *testing.T) {
	path := testcap.SIW
	mpaRows := testcap.TsharkFields(t, path, "iwarp_mpa.key.req or iwarp_mpa.key.rep", "frame.number", "tcp.srcport")
	sends := testcap.TsharkFields(t, path, "iwarp_rdma.opcode >= 3 and iwarp_rdma.opcode <= 6 and iwarp_ddp.last_flag == 1",
		"tcp.dstport", "iwarp_rdma.opcode")
	tr := trackFile(t, path, nil)
	c := only(t, tr)
	if len(mpaRows) != 2 || atoiT(t, mpaRows[0][0]) != c.RequestFrame || atoiT(t, mpaRows[1][0]) != c.ReplyFrame ||
		atoiT(t, mpaRows[0][1]) != int(c.Client.Port) || atoiT(t, mpaRows[1][1]) != int(c.Server.Port) {
		t.Errorf("tshark MPA frames %v, conns %d/%d %s → %s", mpaRows, c.RequestFrame, c.ReplyFrame, c.Client, c.Server)
	}
	wantSends(t, c, sends, func(dstPort string) bool { return atoiT(t, dstPort) == int(c.Server.Port) },
		func(op int) bool { return op == 4 || op == 6 })
}
