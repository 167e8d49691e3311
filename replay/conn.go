package replay

import (
	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
)

// Conn is one connection attempt found in a capture: what each side put in
// its connection private data, as it must be handed to librdmacm to send the
// same bytes again.
type Conn struct {
	// N is the 1-based number of the connection in request order.
	N int `json:"conn"`
	// Transport is the connection tracker's name of the transport
	// ("rocev2", "iwarp" …).
	Transport string `json:"transport"`
	// Client and Server are the IP addresses of the two peers ("" when
	// the capture shows none, as on native InfiniBand without a GRH).
	Client string `json:"client"`
	Server string `json:"server"`
	// Port is the rdma_cm port: the low 16 bits of the REQ's service ID
	// (port space TCP) on IB and RoCE, the TCP destination port on iWARP;
	// 0 when neither applies.
	Port int `json:"port"`
	// RequestFrame and ReplyFrame are the frames of the REQ / MPA Request
	// and of the REP, REJ or MPA Reply (0 when absent).
	RequestFrame int `json:"request_frame"`
	ReplyFrame   int `json:"reply_frame"`
	// ClientPrivateData is the ULP private data of the request: after the
	// 36-byte rdma_cm header on RoCE (56 octets, the REQ's fixed size,
	// zero padding included), after the MPA v2 IRD/ORD words on iWARP.
	ClientPrivateData HexBytes `json:"client_private_data"`
	// ServerPrivateData is the reply's (REP 196 octets, REJ 148 on RoCE;
	// the MPA Reply's ULP data on iWARP), nil when there was no reply.
	ServerPrivateData HexBytes `json:"server_private_data"`
	// Rejected reports a REJ or an MPA Reply with the Reject flag.
	Rejected bool `json:"rejected"`
}

// FromConnections returns what replay needs of each connection the tracker
// followed (SIDR exchanges and connections whose request it did not see are
// left out), numbered from 1 in request order: the ULP private data of both
// sides as they were on the wire.
func FromConnections(cs []*conn.Connection) []Conn {
	var out []Conn
	for _, c := range cs {
		if c.Kind != conn.KindConnection || c.ClientData == nil {
			continue
		}
		rc := Conn{
			N:                 len(out) + 1,
			Transport:         c.Transport.String(),
			Client:            peerHost(c.Client),
			Server:            peerHost(c.Server),
			RequestFrame:      c.RequestFrame,
			ReplyFrame:        max(c.ReplyFrame, c.RejectFrame),
			ClientPrivateData: append(HexBytes{}, c.ClientData.ULP()...),
			Rejected:          c.State == conn.StateRejected,
		}
		if c.Transport == conn.IWARP {
			rc.Port = int(c.Server.Port)
		} else if ps, port, ok := ibcm.RDMACMPort(c.ServiceID); ok && c.HasServiceID && ps == ibcm.PortSpaceTCP {
			rc.Port = int(port)
		}
		if c.ServerData != nil {
			rc.ServerPrivateData = append(HexBytes{}, c.ServerData.ULP()...)
		}
		out = append(out, rc)
	}
	return out
}

func peerHost(p conn.Peer) string {
	if p.Addr.IsValid() {
		return p.Addr.String()
	}
	return ""
}
