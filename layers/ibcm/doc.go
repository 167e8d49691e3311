// Package ibcm decodes and encodes the InfiniBand packets that carry RDMA
// connection setup, on all the encodings users capture them in: RoCEv2
// (UDP port 4791 over IPv4 or IPv6, with or without 802.1Q tags), RoCEv1
// (ethertype 0x8915, GRH first), native InfiniBand (LINKTYPE_INFINIBAND 247,
// LRH first) and Mellanox ibdump's ERF records (LINKTYPE_ERF 197, record
// type 21).
//
// Layers: LRH, GRH, BTH, DETH, RETH, AETH, IETH, ImmDt, AtomicETH,
// AtomicAckETH, the MAD common header, and one CM layer for every
// Communication Management message (ClassPortInfo, REQ, MRA, REJ, REP, RTU,
// DREQ, DREP, SIDR_REQ, SIDR_REP, LAP, APR), each field as laid out in IBTA
// volume 1 chapter 12 (Linux include/rdma/ibta_vol1_c12.h). The rdma_cm IP
// CM header in REQ and SIDR_REQ is decoded and the ULP private data after it
// (or the raw private data of the other messages) is handed to pvtdata.
//
// ICRC (RoCEv2, RoCEv1, native IB) and VCRC (native IB) are verified and
// reported as verdict fields (bth.icrc.status, lrh.vcrc.status) and the
// finding CodeICRCBad / CodeVCRCBad; they are never silently ignored.
//
// Importing the package registers the layers with gopacket: UDP port 4791,
// ethertype 0x8915, link types 247 and 197, so gopacket.NewPacket decodes
// all four encodings. RegisterRoCEPort adds more RoCE UDP ports.
//
// Decoding slices the input without copying. For a fast path, NewStack
// returns every layer value linked together for a gopacket
// DecodingLayerParser: decoding non-CM traffic allocates nothing.
package ibcm
