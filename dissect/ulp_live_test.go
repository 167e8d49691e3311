package dissect

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// The lab's captures of the kernel's other ULPs (live/scenarios.sh): each
// CM message's or MPA frame's private data is read as its ULP's, the CM
// REP's too (it names no service: the port comes from the REQ it
// answers), and no frame gets an RPC-over-RDMA finding or RFC 8797's "no
// Format Identifier" note, not even where there is no private data.
func TestLiveOtherULPCaptures(t *testing.T) {
	for _, tc := range []struct {
		file string
		// want lists the private data of the CM REQs and REPs (RoCE) or
		// the MPA Requests and Replies (iWARP) in capture order.
		want []string
	}{
		{"live-rxe4-nvme.pcap", nvmeQueues},
		{"live-siw4-nvme.pcap", nvmeQueues},
		{"live-rxe6-nvme.pcap", nvmeQueues},
		{"live-siw6-nvme.pcap", nvmeQueues},
		// ib_iser and ib_isert: zero-based virtual addresses not
		// supported, Send with Invalidate supported.
		{"live-rxe4-iser.pcap", []string{"REQ iser flags=0x80", "REP iser flags=0x80"}},
		{"live-rxe6-iser.pcap", []string{"REQ iser flags=0x80", "REP iser flags=0x80"}},
		// rping and perftest set no private data: RoCE's CM pads with
		// zeros, iWARP's MPA frames carry IRD/ORD only.
		{"live-rxe4-rping.pcap", []string{"REQ zero", "REP zero"}},
		{"live-siw4-rping.pcap", []string{"REQ empty", "REP empty"}},
		{"live-rxe4-perftest-send.pcap", []string{"REQ zero", "REP zero", "REQ zero", "REP zero"}},
		{"live-siw4-perftest-send.pcap", []string{"REQ empty", "REP empty", "REQ empty", "REP empty"}},
		{"live-rxe4-perftest-write.pcap", []string{"REQ zero", "REP zero", "REQ zero", "REP zero"}},
		{"live-siw4-perftest-write.pcap", []string{"REQ empty", "REP empty", "REQ empty", "REP empty"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			d := New(Options{})
			var got []string
			for _, f := range testcap.Frames(t, testcap.Real(tc.file)) {
				r := d.Dissect(&f)
				for _, fd := range r.Findings {
					if strings.HasPrefix(fd.Code, "rpcrdma") || fd.Code == pvtdata.CodeNotFound {
						t.Errorf("frame %d: %s", r.Frame, fd)
					}
				}
				for _, l := range r.Layers {
					switch l := l.(type) {
					case *ibcm.CM:
						if l.AttributeID == ibcm.AttrREQ || l.AttributeID == ibcm.AttrREP {
							got = append(got, describeULP(l.AttributeID == ibcm.AttrREQ, l.PD.ULP))
						}
					case *mpa.Frame:
						got = append(got, describeULP(l.Kind == mpa.FrameRequest, l.PD.ULP))
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("CM private data:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// nvmeQueues is what nvme-rdma and nvmet-rdma put in the CM private data
// (include/linux/nvme-rdma.h): the admin queue (qid 0, NVME_AQ_DEPTH 32),
// then one I/O queue (qid 1, the default queue size 128); the target
// answers with its receive queue size.
var nvmeQueues = []string{
	"REQ nvmeof qid=0 hrqsize=32 hsqsize=31", "REP nvmeof crqsize=32",
	"REQ nvmeof qid=1 hrqsize=128 hsqsize=127", "REP nvmeof crqsize=128",
}

func describeULP(req bool, u pvtdata.ULP) string {
	s := "REP "
	if req {
		s = "REQ "
	}
	s += u.Kind.String()
	switch {
	case u.Kind == pvtdata.ULPNVMe && req:
		s += fmt.Sprintf(" qid=%d hrqsize=%d hsqsize=%d", u.NVMe.QID, u.NVMe.HRQSize, u.NVMe.HSQSize)
	case u.Kind == pvtdata.ULPNVMe:
		s += fmt.Sprintf(" crqsize=%d", u.NVMe.CRQSize)
	case u.Kind == pvtdata.ULPISER:
		s += fmt.Sprintf(" flags=0x%02x", u.ISER.Flags)
	}
	return s
}
