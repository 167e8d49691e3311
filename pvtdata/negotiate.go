package pvtdata

// Negotiated is what the two peers of one connection end up using
// (RFC 8797 §4.1, §4.2, §5.1).
type Negotiated struct {
	// ClientToServerInline is min(client send size, server receive size).
	ClientToServerInline int `json:"client_to_server_inline"`
	// ServerToClientInline is min(server send size, client receive size).
	ServerToClientInline int `json:"server_to_client_inline"`
	// RemoteInvalidation reports that both peers set R, so the responder
	// (the server) may reply with Send with Invalidate.
	RemoteInvalidation bool `json:"remote_invalidation"`
}

// Negotiate applies RFC 8797 to what a conforming receiver made of each
// side's private data. Pass Defaults (or Reading.Effective of an invalid
// reading) for a side that sent nothing usable.
func Negotiate(client, server Effective) Negotiated {
	return Negotiated{
		ClientToServerInline: min(client.SendSize, server.ReceiveSize),
		ServerToClientInline: min(server.SendSize, client.ReceiveSize),
		RemoteInvalidation:   client.RemoteInvalidation && server.RemoteInvalidation,
	}
}

// NegotiateBuffers reads both peers' ULP private data in mode (nil for a side
// that sent none) and negotiates.
func NegotiateBuffers(client, server []byte, mode Mode) Negotiated {
	c, s := Defaults, Defaults
	if client != nil {
		r := Read(client, mode)
		c = r.Effective()
	}
	if server != nil {
		r := Read(server, mode)
		s = r.Effective()
	}
	return Negotiate(c, s)
}
