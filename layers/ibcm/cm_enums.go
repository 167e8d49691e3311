package ibcm

// The names of the values of CM fields that several messages declare.
// They are declared in a file that sorts before the message files: Go
// initializes a message's layout, which declares its fields, only once the
// names it uses are, and the fields must register (and so list, in
// "fields" and -G) in the order of the message files.

var (
	transportServiceNames = map[uint64]string{0: "RC", 1: "UC", 2: "RD", 3: "XRC (see extended transport type)"}
	extTransportNames     = map[uint64]string{0: "none", 1: "XRC"}
	mtuNames              = map[uint64]string{1: "256", 2: "512", 3: "1024", 4: "2048", 5: "4096"}
	rateNames             = map[uint64]string{2: "2.5 Gb/s", 3: "10 Gb/s", 4: "30 Gb/s", 5: "5 Gb/s", 6: "20 Gb/s",
		7: "40 Gb/s", 8: "60 Gb/s", 9: "80 Gb/s", 10: "120 Gb/s", 11: "14 Gb/s", 12: "56 Gb/s", 13: "112 Gb/s",
		14: "168 Gb/s", 15: "25 Gb/s", 16: "100 Gb/s", 17: "200 Gb/s", 18: "300 Gb/s", 19: "28 Gb/s",
		20: "50 Gb/s", 21: "400 Gb/s", 22: "600 Gb/s"}
)

var portSpaceNames = map[uint64]string{PortSpaceIPoIB: "IPoIB", PortSpaceTCP: "TCP", PortSpaceUDP: "UDP", PortSpaceIB: "IB"}
