// Package converted lists the captures Wireshark's tools wrote from the real
// pcaps (testdata/pcaps/converted/PROVENANCE.md) with the captures each was
// made from: source's tests read them frame by frame, the command's tests
// in every view. It imports nothing, so that source's own tests can use it
// (testcap imports source).
package converted

// Capture is one converted capture.
type Capture struct {
	// File is the capture's name in testdata/pcaps/converted.
	File string
	// From are the captures it was made from, in order, relative to
	// testdata/pcaps ("real/x.pcap"); none for a capture of nothing.
	From []string
	// SameTime: the tool kept the timestamps (dumpcap captured a replay,
	// at new times).
	SameTime bool
}

// Captures are the converted captures whose frames are those of the
// captures they were made from.
var Captures = []Capture{
	{"rxe-nfs42-rdma.editcap.pcapng", []string{"real/rxe-nfs42-rdma.pcap"}, true},
	{"rxe-nfs42-rdma.editcap.pcapng.gz", []string{"real/rxe-nfs42-rdma.pcap"}, true},
	{"siw-nfs42-rdma.tshark.pcapng", []string{"real/siw-nfs42-rdma.pcap"}, true},
	{"live-rxe4-reconnect.comments.pcapng", []string{"real/live-rxe4-reconnect.pcap"}, true},
	{"live-siw4-reconnect.nsec.pcap", []string{"real/live-siw4-reconnect.pcap"}, true},
	{"live-siw4-offset.pcap.gz", []string{"real/live-siw4-offset.pcap"}, true},
	{"rxe-nfs42-rdma.editcap.pcapng.zst", []string{"real/rxe-nfs42-rdma.pcap"}, true},
	{"siw-nfs42-rdma.tshark.pcapng.lz4", []string{"real/siw-nfs42-rdma.pcap"}, true},
	{"live-rxe4-nfs42-bulk.pcap.zst", []string{"real/live-rxe4-nfs42-bulk.pcap"}, true},
	{"live-siw4-nvme.pcap.lz4", []string{"real/live-siw4-nvme.pcap"}, true},
	{"live-siw4-offset.pcap.zst", []string{"real/live-siw4-offset.pcap"}, true},
	{"rxe-plus-erf.mergecap.pcapng", []string{"real/live-rxe4-reject.pcap", "synthetic/synth-ibcm-erf-cm-all.pcap"}, true},
	{"live-rxe4-rfc8797.dumpcap-lo.pcapng", []string{"real/live-rxe4-rfc8797.pcap"}, false},
	{"live-siw4-rfc8797.dumpcap-lo.pcapng", []string{"real/live-siw4-rfc8797.pcap"}, false},
	{"empty.dumpcap-lo.pcapng", nil, false},
	{"live-rxe4-rfc8797.tshark-nrb.pcapng", []string{"real/live-rxe4-rfc8797.pcap"}, true},
	{"live-siw4-rfc8797.tshark-nrb.pcapng", []string{"real/live-siw4-rfc8797.pcap"}, true},
	{"live-siw4-rfc8797.modpcap.pcap", []string{"real/live-siw4-rfc8797.pcap"}, true},
	{"live-siw4-rfc8797.suse6_3pcap.pcap", []string{"real/live-siw4-rfc8797.pcap"}, true},
	{"live-siw4-rfc8797.rh6_1pcap.pcap", []string{"real/live-siw4-rfc8797.pcap"}, true},
	{"live-siw4-rfc8797.nokiapcap.pcap", []string{"real/live-siw4-rfc8797.pcap"}, true},
	{"live-siw4-rfc8797.be.pcapng", []string{"real/live-siw4-rfc8797.pcap"}, true},
	{"rfc8797-rxe4-siw4.sections.pcapng", []string{"real/live-rxe4-rfc8797.pcap", "real/live-siw4-rfc8797.pcap"}, true},
	{"live-siw4-rfc8797.tsresol.pcapng", []string{"real/live-siw4-rfc8797.pcap"}, false},
}

// Reshaped are captures whose frames are those of the capture they were
// made from but for their lengths: the frames with their FCS, or an
// original length under the captured one (PROVENANCE.md). They decode to
// the same RDMA fields; their frame fields are compared with tshark's.
var Reshaped = []Capture{
	{"live-rxe4-rfc8797.fcs.pcapng", []string{"real/live-rxe4-rfc8797.pcap"}, true},
	{"live-rxe4-rfc8797.fcs.pcap", []string{"real/live-rxe4-rfc8797.pcap"}, true},
	{"live-rxe4-rfc8797.lenswap.pcap", []string{"real/live-rxe4-rfc8797.pcap"}, true},
}

// PcapVariants are the converted captures in the variants of classic pcap
// with longer record headers (editcap's modpcap, suse6_3pcap, rh6_1pcap,
// nokiapcap). The torture harness, which reads and writes only the plain
// layouts, leaves them out: its mutants of them would be those of the
// capture they were made from.
var PcapVariants = []string{"live-siw4-rfc8797.modpcap.pcap", "live-siw4-rfc8797.suse6_3pcap.pcap",
	"live-siw4-rfc8797.rh6_1pcap.pcap", "live-siw4-rfc8797.nokiapcap.pcap"}
