package ibcm

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// TestICRCCheckerMatches: ICRCChecker gives CheckRoCEv2ICRC's results on
// every RoCEv2 packet of the real and synthetic captures, and on damaged
// ones, without allocating.
func TestICRCCheckerMatches(t *testing.T) {
	files := testcap.Glob(t, "pcaps/synthetic/synth-ibcm-rocev2-*.pcap")
	files = append(files, testcap.RXE)
	var c ICRCChecker
	n := 0
	for _, name := range files {
		for _, data := range testcap.Data(t, name) {
			ipAt := 14
			if len(data) > 14 && data[12] == 0x81 {
				ipAt = 18
			}
			if len(data) <= ipAt {
				continue
			}
			v6 := data[ipAt]>>4 == 6
			for cut := 0; cut < 3; cut++ {
				pkt := data[ipAt : len(data)-cut*7]
				s1, c1, ok1 := CheckRoCEv2ICRC(pkt, v6)
				s2, c2, ok2 := c.CheckRoCEv2(pkt, v6)
				if s1 != s2 || c1 != c2 || ok1 != ok2 {
					t.Fatalf("%s: (%08x %08x %v) vs checker (%08x %08x %v)", name, s1, c1, ok1, s2, c2, ok2)
				}
				n++
			}
			if a := testing.AllocsPerRun(10, func() { c.CheckRoCEv2(data[ipAt:], v6) }); a != 0 {
				t.Fatalf("%.1f allocations", a)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d packets compared", n)
	}
}

// FuzzICRCChecker: ICRCChecker and CheckRoCEv2ICRC agree on any bytes.
func FuzzICRCChecker(f *testing.F) {
	raw, err := os.ReadFile(testcap.RXE)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw[24+16+14:24+16+322], false)
	f.Add(make([]byte, 80), true)
	var c ICRCChecker
	f.Fuzz(func(t *testing.T, pkt []byte, v6 bool) {
		s1, c1, ok1 := CheckRoCEv2ICRC(pkt, v6)
		s2, c2, ok2 := c.CheckRoCEv2(pkt, v6)
		if s1 != s2 || c1 != c2 || ok1 != ok2 {
			t.Fatalf("(%08x %08x %v) vs checker (%08x %08x %v)", s1, c1, ok1, s2, c2, ok2)
		}
	})
}

// BenchmarkICRCChecker checks the ICRC of every RoCEv2 packet of the real
// rxe capture in turn; BenchmarkCheckRoCEv2ICRC is the same with the
// allocation-free, buffer-free function, for comparison.
func BenchmarkICRCChecker(b *testing.B) {
	var c ICRCChecker
	benchICRC(b, func(pkt []byte) { c.CheckRoCEv2(pkt, false) })
}

func BenchmarkCheckRoCEv2ICRC(b *testing.B) {
	benchICRC(b, func(pkt []byte) { CheckRoCEv2ICRC(pkt, false) })
}

func benchICRC(b *testing.B, check func(pkt []byte)) {
	var pkts [][]byte
	bytes := 0
	for _, data := range testcap.Data(b, testcap.RXE) {
		if len(data) > 14 && data[12] == 0x08 && data[13] == 0x00 {
			pkts = append(pkts, data[14:])
			bytes += len(data) - 14
		}
	}
	if len(pkts) == 0 {
		b.Fatal("no IPv4 packets")
	}
	b.SetBytes(int64(bytes / len(pkts)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		check(pkts[i%len(pkts)])
	}
}

// TestICRCCheckerEveryLength: the checker agrees with CheckRoCEv2ICRC on
// synthetic RoCEv2 packets (random octets under valid IPv4 and IPv6 and
// UDP headers) of every length from the shortest to beyond icrcCopyMax,
// so every split into zeros, copied part and in-place rest is compared.
func TestICRCCheckerEveryLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var c ICRCChecker
	for _, v6 := range []bool{false, true} {
		for _, opts := range []int{0, 4, 40} {
			if v6 && opts > 0 {
				continue
			}
			hdr := 20 + opts
			if v6 {
				hdr = 40
			}
			for payload := 0; payload <= icrcCopyMax+100; payload++ {
				n := hdr + udpLen + bthLen + payload + icrcLen
				pkt := make([]byte, n+rng.IntN(8)) // Ethernet padding after
				for i := range pkt {
					pkt[i] = byte(rng.Uint32())
				}
				if v6 {
					pkt[0] = 0x60 | pkt[0]&0x0f
					pkt[4], pkt[5] = byte((n-40)>>8), byte(n-40)
					pkt[6] = 17
				} else {
					pkt[0] = 0x40 | byte(hdr/4)
					pkt[2], pkt[3] = byte(n>>8), byte(n)
					pkt[9] = 17
				}
				s1, c1, ok1 := CheckRoCEv2ICRC(pkt, v6)
				s2, c2, ok2 := c.CheckRoCEv2(pkt, v6)
				if !ok1 || s1 != s2 || c1 != c2 || ok1 != ok2 {
					t.Fatalf("v6=%v options %d payload %d: (%08x %08x %v) vs checker (%08x %08x %v)", v6, opts, payload, s1, c1, ok1, s2, c2, ok2)
				}
			}
		}
	}
}
