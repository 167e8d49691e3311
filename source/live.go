package source

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/bpf"

	"github.com/cmpd-dissect/cmpd-dissect/capfilter"
)

// AnyInterface is the interface name that captures on every interface,
// as libpcap's: frames are LINKTYPE_LINUX_SLL (the packets arrive without
// their link-layer headers, which differ between interfaces).
const AnyInterface = "any"

// LinkTypeLinuxSLL is LINKTYPE_LINUX_SLL, the link type of "-i any" frames.
const LinkTypeLinuxSLL = 113

// LiveOptions configure a live capture.
type LiveOptions struct {
	// Interface is the network interface name ("eth0", "lo"), or
	// AnyInterface.
	Interface string
	// Filter is a capture filter in tcpdump syntax ("udp port 4791 or
	// tcp"), compiled by capfilter and attached to the socket (run here
	// instead when the socket cannot: VLAN tests, "-i any"); empty
	// captures everything.
	Filter string
	// Count stops after that many frames (0: no limit).
	Count int
	// Duration stops after that long (0: no limit).
	Duration time.Duration
	// Snaplen is the largest frame kept (0: 65535).
	Snaplen int
	// Promiscuous puts the interface into promiscuous mode.
	Promiscuous bool
}

// acceptAll is the program of an empty filter.
var acceptAll = []bpf.Instruction{bpf.RetConstant{Val: capfilter.Accept}}

// dropOutgoing prepends to prog a test that rejects packets the host sends
// (PACKET_OUTGOING): on the loopback interface every packet is seen twice,
// leaving and arriving, and libpcap drops the first copy too.
func dropOutgoing(prog []bpf.Instruction) []bpf.Instruction {
	if prog == nil {
		prog = acceptAll
	}
	const packetOutgoing = 4
	out := []bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtType},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: packetOutgoing, SkipTrue: 0, SkipFalse: 1},
		bpf.RetConstant{Val: 0},
	}
	return append(out, prog...)
}

// checkInterface gives the clear message for a missing interface and
// reports whether it is a loopback interface.
func checkInterface(name string) (loopback bool, err error) {
	if name == "" {
		return false, errors.New("no interface given")
	}
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		names := []string{}
		if ifs, err := net.Interfaces(); err == nil {
			for _, i := range ifs {
				names = append(names, i.Name)
			}
		}
		return false, fmt.Errorf("no such interface %q (have: %s)", name, strings.Join(names, ", "))
	}
	return ifc.Flags&net.FlagLoopback != 0, nil
}

// permissionHint explains a capture socket refused for lack of privilege.
func permissionHint(iface string, err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("capture on %s: %w: live capture needs root or CAP_NET_RAW (try sudo, or setcap cap_net_raw+ep on the binary)", iface, err)
	}
	return fmt.Errorf("capture on %s: %w", iface, err)
}

// PrivUser is the user -Z names, looked up before the capture opens so
// that an unknown name fails before anything is done.
type PrivUser struct {
	Name     string
	UID, GID int
	Groups   []int
}

// LookupUser finds name (or a numeric uid) in the user database, with
// its supplementary groups.
func LookupUser(name string) (*PrivUser, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if _, nerr := strconv.Atoi(name); nerr == nil {
			u, err = user.LookupId(name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("-Z %s: no such user", name)
	}
	pu := &PrivUser{Name: name}
	if pu.UID, err = strconv.Atoi(u.Uid); err != nil {
		return nil, fmt.Errorf("-Z %s: uid %q is not a number", name, u.Uid)
	}
	if pu.GID, err = strconv.Atoi(u.Gid); err != nil {
		return nil, fmt.Errorf("-Z %s: gid %q is not a number", name, u.Gid)
	}
	pu.Groups = []int{pu.GID}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.Atoi(id); err == nil && g != pu.GID {
				pu.Groups = append(pu.Groups, g)
			}
		}
	}
	return pu, nil
}

// CaptureReport is what a live capture says on stderr when it ends, as
// tshark: the packets captured, then, if the kernel dropped some (its ring
// was full), how many.
func CaptureReport(iface string, captured int, dropped uint) string {
	s := fmt.Sprintf("%d packet%s captured\n", captured, plural(uint(captured)))
	if dropped > 0 {
		s += fmt.Sprintf("%d packet%s dropped from %s\n", dropped, plural(dropped), iface)
	}
	return s
}

func plural(n uint) string {
	if n == 1 {
		return ""
	}
	return "s"
}
