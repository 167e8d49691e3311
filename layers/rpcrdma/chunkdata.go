package rpcrdma

import "github.com/cmpd-dissect/cmpd-dissect/field"

// ChunkDataKind is the chunk list a ChunkData accounts for.
type ChunkDataKind uint8

// The chunk lists of a call (RFC 8166 §4.3).
const (
	ChunkDataRead  ChunkDataKind = 1 // the read list
	ChunkDataWrite ChunkDataKind = 2 // one write chunk of the write list
	ChunkDataReply ChunkDataKind = 3 // the reply chunk
)

var chunkDataNames = map[uint64]string{1: "read list", 2: "write chunk", 3: "reply chunk"}

// ChunkData is what a capture saw move by RDMA for one chunk of the call
// a reply answers: the client's data the responder pulled by RDMA Read
// from the read list, the results it placed by RDMA Write into a write
// chunk or the reply chunk. It is not on the wire: the dissector that
// matched the transfers to the call's segments sets it on the reply's
// Header.
type ChunkData struct {
	Kind ChunkDataKind
	// Index is a write chunk's position in the write list.
	Index int
	// Advertised is the octets the call's segments offered.
	Advertised uint64
	// Octets is the octets the capture saw move into or out of them
	// (from each segment's start; a transfer sent again counts once).
	Octets uint64
	// Reported is what the reply's write list says was written into a
	// write chunk (HasReported).
	Reported    uint64
	HasReported bool
	// FirstFrame and LastFrame are the frames of the first and last
	// transfer (0: none seen).
	FirstFrame, LastFrame int
	// LastTime is LastFrame's time (Unix ns): for a read chunk, when the
	// responder had the whole call (rpc's response times start there, as
	// tshark's, which dissects such a call in that frame). Not a field.
	LastTime int64
	// Segments is how many segments the chunk has, Used how many of them
	// the capture saw a transfer into or out of. Not fields of the reply:
	// they feed the connection's totals (conns -V and --json).
	Segments, Used int
}

var (
	gChunkData     = ProtoHeader.Group("rpcrdma.chunk_data", "Chunk data moved by RDMA for the call").WithRef("RFC 8166 §3.4")
	fChunkDataList = ProtoHeader.Uint("rpcrdma.chunk_data.list", 8, "Chunk").WithNames(chunkDataNames)
	fChunkDataIdx  = ProtoHeader.Uint("rpcrdma.chunk_data.index", 32, "Write list position")
	fChunkDataAdv  = ProtoHeader.Uint("rpcrdma.chunk_data.advertised", 64, "Octets the call's segments offered").WithUnit("bytes")
	fChunkDataRep  = ProtoHeader.Uint("rpcrdma.chunk_data.reported", 64, "Octets written, as the reply's write list says").WithUnit("bytes").WithRef("RFC 8166 §3.4.6")
	fChunkDataOcts = ProtoHeader.Uint("rpcrdma.chunk_data.octets", 64, "Octets moved by RDMA (Read for the read list, Write for the others)").WithUnit("bytes")
	fChunkDataFst  = ProtoHeader.Uint("rpcrdma.chunk_data.first_frame", 32, "First frame of the transfers")
	fChunkDataLst  = ProtoHeader.Uint("rpcrdma.chunk_data.last_frame", 32, "Last frame of the transfers")
)

func visitChunkData(v field.Visitor, cs []ChunkData) {
	for _, c := range cs {
		v.Begin(gChunkData)
		v.Uint(fChunkDataList, uint64(c.Kind))
		if c.Kind == ChunkDataWrite {
			v.Uint(fChunkDataIdx, uint64(c.Index))
		}
		v.Uint(fChunkDataAdv, c.Advertised)
		if c.HasReported {
			v.Uint(fChunkDataRep, c.Reported)
		}
		v.Uint(fChunkDataOcts, c.Octets)
		if c.FirstFrame != 0 {
			v.Uint(fChunkDataFst, uint64(c.FirstFrame))
			v.Uint(fChunkDataLst, uint64(c.LastFrame))
		}
		v.End()
	}
}
