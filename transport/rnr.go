package transport

import (
	"strconv"
	"time"
)

// rnrTimerMicros is the IBTA table of RNR NAK timer field values (Vol 1
// §9.7.5.2.8, Table 45; Linux's IB_RNR_TIMER_*): the minimum time the
// requester waits before retrying, in microseconds. 0 is the longest.
var rnrTimerMicros = [32]uint32{
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
}

// RNRTimer decodes an RNR NAK timer field (5 bits).
func RNRTimer(v uint8) time.Duration {
	return time.Duration(rnrTimerMicros[v&0x1f]) * time.Microsecond
}

// RNRTimerText renders a decoded RNR timer in ms: "0.64 ms", "655.36 ms".
func RNRTimerText(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64) + " ms"
}
