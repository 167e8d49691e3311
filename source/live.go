package source

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/packetcap/go-pcap/filter"
	"golang.org/x/net/bpf"
)

// LiveOptions configure a live capture.
type LiveOptions struct {
	// Interface is the network interface name ("eth0", "lo").
	Interface string
	// Filter is a capture filter in tcpdump syntax ("udp port 4791 or
	// tcp"), compiled to BPF in pure Go and attached to the socket; empty
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

// CompileFilter compiles a tcpdump-syntax capture filter to BPF
// instructions, without libpcap.
func CompileFilter(expr string) ([]bpf.RawInstruction, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, nil
	}
	e := filter.NewExpression(expr)
	if e == nil {
		return nil, nil
	}
	var f filter.Filter
	if err := catchPanic(func() { f = e.Compile() }); err != nil {
		return nil, fmt.Errorf("capture filter %q: %v", expr, err)
	}
	if f == nil {
		return nil, fmt.Errorf("capture filter %q: not understood", expr)
	}
	var ins []bpf.Instruction
	var err error
	if perr := catchPanic(func() { ins, err = f.Compile() }); perr != nil {
		return nil, fmt.Errorf("capture filter %q: %v", expr, perr)
	}
	if err != nil {
		return nil, fmt.Errorf("capture filter %q: %w", expr, err)
	}
	if len(ins) == 0 {
		return nil, fmt.Errorf("capture filter %q: compiles to nothing", expr)
	}
	raw, err := bpf.Assemble(ins)
	if err != nil {
		return nil, fmt.Errorf("capture filter %q: %w", expr, err)
	}
	return raw, nil
}

// catchPanic turns a panic of a third-party parser into an error: a bad
// filter typed by a user must be a message, never a crash.
func catchPanic(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// checkInterface gives the clear message for a missing interface.
func checkInterface(name string) error {
	if name == "" {
		return errors.New("no interface given")
	}
	if _, err := net.InterfaceByName(name); err != nil {
		names := []string{}
		if ifs, err := net.Interfaces(); err == nil {
			for _, i := range ifs {
				names = append(names, i.Name)
			}
		}
		return fmt.Errorf("no such interface %q (have: %s)", name, strings.Join(names, ", "))
	}
	return nil
}

// permissionHint explains a capture socket refused for lack of privilege.
func permissionHint(iface string, err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("capture on %s: %w: live capture needs root or CAP_NET_RAW (try sudo, or setcap cap_net_raw+ep on the binary)", iface, err)
	}
	return fmt.Errorf("capture on %s: %w", iface, err)
}
