package testcap

import (
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// SnapLengths are the snap lengths tests cut real captures at: from a cut
// inside the TCP header (64, 54 octets of IPv4 and UDP or TCP headers
// before it) to one inside the larger Sends (512), as tcpdump -s and
// editcap -s are used in the field.
var SnapLengths = []int{64, 100, 128, 200, 300, 512}

// SnapCut returns the frames of the capture at path as "editcap -s snap"
// leaves them: each one's first snap octets, its wire length kept
// (WritePcap writes them as editcap does).
func SnapCut(t testing.TB, path string, snap int) []source.Frame {
	t.Helper()
	frames := Frames(t, path)
	for i := range frames {
		f := &frames[i]
		f.Data = f.Data[:min(len(f.Data), snap)]
		f.CaptureLength = len(f.Data)
	}
	return frames
}
