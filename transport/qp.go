package transport

import (
	"encoding/binary"
	"net/netip"
	"time"
)

// Host names a node the way the wire does: its IP address (RoCEv2), its
// GID (RoCEv1, native IB with a GRH) or its LID (native IB).
type Host struct {
	Addr netip.Addr
	LID  uint16
}

// String renders the address, or "LID n".
func (h Host) String() string {
	if h.Addr.IsValid() {
		return h.Addr.String()
	}
	return "LID " + itoa(uint64(h.LID))
}

// qpKey is a queue pair: the host it lives on and its number. Packets are
// keyed by where they are delivered (the BTH's DestQP at the destination).
type qpKey struct {
	host hostKey
	qpn  uint32
}

func (k qpKey) Hash() uint32 {
	h := uint32(k.host.lo)*0x9e3779b1 ^ uint32(k.host.lo>>32)*0x85ebca6b ^ uint32(k.host.hi) ^
		uint32(k.host.lid)<<7 ^ k.qpn*0xc2b2ae35
	return h ^ h>>16
}

// tag is k's tag in Analyzer.cache: for a queue pair at an IPv4 address
// (RoCEv2's common case) the key itself in one word (ipv4Tag), else 0,
// which no cache entry matches by tag.
func (k qpKey) tag() uint64 {
	if k.host.hi != 0 || k.host.lid != 0 || k.host.lo>>32 != 0xffff {
		return 0
	}
	return ipv4Tag(uint32(k.host.lo), k.qpn)
}

// ipv4Tag is the tag of the queue pair qpn (24 bits) at the IPv4 address
// ip: both, and a bit that makes it non-zero.
func ipv4Tag(ip, qpn uint32) uint64 { return uint64(ip)<<32 | 1<<24 | uint64(qpn) }

// slot is k's entry in Analyzer.cache: a multiplicative hash of its tag
// (of the words that tell a capture's queue pairs apart where it has
// none).
func (k qpKey) slot() uint32 {
	t := k.tag()
	if t == 0 {
		t = k.host.lo ^ k.host.hi ^ uint64(k.qpn)<<32 ^ uint64(k.host.lid)
	}
	return cacheSlot(t)
}

// cacheSlot is the entry of Analyzer.cache for tag t.
func cacheSlot(t uint64) uint32 { return uint32(t*0x9e3779b97f4a7c15>>(64-cacheBits)) & cacheMask }

// hostKey is a Host as the tables key it: the address's 16 octets (IPv4
// mapped into IPv6) as two words, and the LID; built from the packet's
// bytes without a netip.Addr.
type hostKey struct {
	hi, lo uint64
	lid    uint16
}

// ipKey is the key of a 4- or 16-octet IP address.
func ipKey(ip []byte) hostKey {
	switch len(ip) {
	case 4:
		return hostKey{lo: 0xffff<<32 | uint64(binary.BigEndian.Uint32(ip))}
	case 16:
		return hostKey{hi: binary.BigEndian.Uint64(ip), lo: binary.BigEndian.Uint64(ip[8:])}
	}
	return hostKey{}
}

func addrKey(a netip.Addr) hostKey {
	if !a.IsValid() {
		return hostKey{}
	}
	b := a.As16()
	return ipKey(b[:])
}

func hostKeyOf(h Host) hostKey {
	k := addrKey(h.Addr)
	k.lid = h.LID
	return k
}

// Host returns the host the key names (an IPv4-mapped address as IPv4).
func (k hostKey) Host() Host {
	var h Host
	if k.hi != 0 || k.lo != 0 {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:], k.hi)
		binary.BigEndian.PutUint64(b[8:], k.lo)
		h.Addr = netip.AddrFrom16(b).Unmap()
	}
	h.LID = k.lid
	return h
}

func (k hostKey) String() string { return k.Host().String() }

// QPSummary is what the analysis counted for one queue pair: the packets
// delivered to it (the peer's requests and the responses to its own
// requests) and what they showed.
type QPSummary struct {
	Host Host   `json:"-"`
	QPN  uint32 `json:"qpn"`
	// Packets and Bytes count the RC/UC/UD packets delivered to the QP and
	// their payload octets; Requests and Responses split the RC ones.
	Packets   uint64 `json:"packets"`
	Bytes     uint64 `json:"bytes"`
	Requests  uint64 `json:"requests"`
	Responses uint64 `json:"responses"`
	// PSNGaps counts the gaps in the sequence of requests delivered to the
	// QP, Missing the PSNs they skipped, CaptureLoss the gaps that a later
	// ACK showed the capture (not the network) lost.
	PSNGaps         uint64 `json:"psn_gaps"`
	Missing         uint64 `json:"psns_missing"`
	CaptureLoss     uint64 `json:"capture_loss"`
	Retransmissions uint64 `json:"retransmissions"`
	// NAKs counts the NAKs delivered to the QP (answers to its own
	// requests) by NAK code; RNRNAKs the RNR NAKs.
	NAKs    [NAKCodes]uint64 `json:"-"`
	RNRNAKs uint64           `json:"rnr_naks"`
	// MSNRegress counts ACKs whose MSN went back.
	MSNRegress uint64 `json:"msn_regress"`
	// AckLatency is from each of the QP's requests to the ACK (or read
	// response) that answered it, retransmitted requests left out.
	AckLatency Latency `json:"ack_latency"`
	// Congestion marks on the packets delivered to the QP.
	ECNCE uint64 `json:"ecn_ce"`
	CNPs  uint64 `json:"cnps"`
	FECN  uint64 `json:"fecn"`
	BECN  uint64 `json:"becn"`
	// Frame is the CM REP that seeded the QP's sequence (0: not seeded).
	Frame int `json:"-"`
}

// NAKCodes is how many NAK codes are counted (0–4 named, 5 for the
// reserved ones).
const NAKCodes = 6

// nakNames are the IBTA NAK codes (AETH syndrome 011xxxxx), index 5 the
// reserved values.
var nakNames = [NAKCodes]string{"PSN Sequence Error", "Invalid Request", "Remote Access Error",
	"Remote Operational Error", "Invalid RD Request", "reserved code"}

// NAKName names a NAK code.
func NAKName(code int) string {
	if code < 0 || code >= NAKCodes {
		code = NAKCodes - 1
	}
	return nakNames[code]
}

// NAKCount is one NAK code's count, for JSON and text.
type NAKCount struct {
	Code  int    `json:"code"`
	Name  string `json:"name"`
	Count uint64 `json:"count"`
}

// NAKList lists the NAK codes seen, in code order.
func (s *QPSummary) NAKList() []NAKCount {
	var out []NAKCount
	for i, n := range s.NAKs {
		if n > 0 {
			out = append(out, NAKCount{Code: i, Name: nakNames[i], Count: n})
		}
	}
	return out
}

// Latency is a min/avg/max over samples.
type Latency struct {
	Samples uint64        `json:"samples"`
	Min     time.Duration `json:"-"`
	Max     time.Duration `json:"-"`
	Sum     time.Duration `json:"-"`
}

func (l *Latency) add(d time.Duration) {
	if d < 0 {
		return
	}
	if l.Samples == 0 || d < l.Min {
		l.Min = d
	}
	if d > l.Max {
		l.Max = d
	}
	l.Samples++
	l.Sum += d
}

// Avg is the mean (0 without samples).
func (l Latency) Avg() time.Duration {
	if l.Samples == 0 {
		return 0
	}
	return l.Sum / time.Duration(l.Samples)
}

// Milliseconds renders a duration in ms with microsecond resolution.
func Milliseconds(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// Pair counts the congestion marks between two IP addresses, per direction
// as seen (Src sent the packets).
type Pair struct {
	Src   netip.Addr `json:"src"`
	Dst   netip.Addr `json:"dst"`
	ECNCE uint64     `json:"ecn_ce"`
	CNPs  uint64     `json:"cnps"`
}

type pairKey struct{ src, dst hostKey }

func (k pairKey) Hash() uint32 {
	h := uint32(k.src.lo)*0x9e3779b1 ^ uint32(k.dst.lo)*0x85ebca6b ^ uint32(k.src.hi^k.dst.hi)
	return h ^ h>>16
}

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return string(b[i:])
}
