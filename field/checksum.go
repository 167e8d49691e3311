package field

// ChecksumStatus is the verdict on a CRC or checksum, for every verdict
// field (bth.icrc.status, lrh.vcrc.status, fpdu.crc.status): the values are
// Wireshark's proto_checksum_enum_e, those of tshark's *.checksum.status
// fields (udp.checksum.status: 0 Bad, 1 Good, 2 Unverified, 3 Not present,
// 4 Illegal).
type ChecksumStatus uint8

const (
	// ChecksumBad: the CRC carried differs from the one computed.
	ChecksumBad ChecksumStatus = iota
	// ChecksumGood: they match.
	ChecksumGood
	// ChecksumUnverified: there is a CRC but it could not be checked
	// (no IP/UDP context for a RoCEv2 BTH decoded alone, a truncated
	// packet, an iWARP stream whose MPA negotiation was not seen).
	ChecksumUnverified
	// ChecksumNotPresent: the packet carries none (MPA CRC not
	// negotiated).
	ChecksumNotPresent
	// ChecksumIllegal: Wireshark's value for a checksum field that may
	// not be set; declared so that the names are tshark's whole set.
	ChecksumIllegal
)

// ChecksumStatusNames names the values, as tshark does (lower case).
var ChecksumStatusNames = map[uint64]string{
	uint64(ChecksumBad): "bad", uint64(ChecksumGood): "good", uint64(ChecksumUnverified): "unverified",
	uint64(ChecksumNotPresent): "not present", uint64(ChecksumIllegal): "illegal",
}

func (s ChecksumStatus) String() string {
	if n, ok := ChecksumStatusNames[uint64(s)]; ok {
		return n
	}
	return "illegal"
}
