package dissect

import "github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"

// icrcAt is where decodeChain found the layers an ICRC covers: frame
// offsets of the IP header (RoCEv2), GRH (RoCEv1) and LRH (native IB), -1
// when absent, and the BTH.
type icrcAt struct {
	ip, grh, lrh int
	v6           bool
	bth          *ibcm.BTH
}

// checkICRC checks the ICRC of the IB transport packet decodeChain found
// (RoCEv2 from the IP header, RoCEv1 from the GRH, native IB from the
// LRH). It returns the BTH, nil when there is none.
func (d *Dissector) checkICRC(at *icrcAt) *ibcm.BTH {
	r := &d.rec
	bth := at.bth
	ipOff, grhOff, lrhOff, v6 := at.ip, at.grh, at.lrh, at.v6
	if bth == nil {
		return nil
	}
	data := r.Data
	var computed uint32
	ok := false
	found := false
	switch {
	case lrhOff >= 0:
		if computed, ok, found = d.aheadICRC(aheadIB, lrhOff); !found {
			_, computed, ok = ibcm.CheckIBICRC(data[lrhOff:])
		}
	case grhOff >= 0 && ipOff < 0:
		if computed, ok, found = d.aheadICRC(aheadRoCEv1, grhOff); !found {
			_, computed, ok = ibcm.CheckRoCEv1ICRC(data[grhOff:])
		}
	case ipOff >= 0:
		kind := aheadRoCEv2IPv4
		if v6 {
			kind = aheadRoCEv2IPv6
		}
		if computed, ok, found = d.aheadICRC(kind, ipOff); !found {
			_, computed, ok = d.icrc.CheckRoCEv2(data[ipOff:], v6)
		}
	}
	if ok {
		bth.SetICRCComputed(computed)
	}
	return bth
}
