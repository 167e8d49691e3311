package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/replay"
)

func TestReplayWithoutRDMACM(t *testing.T) {
	if replay.Built {
		t.Skip("built with -tags rdmacm")
	}
	code, _, stderr := runCmd(t, "replay", "--role", "client", "--addr", "192.0.2.2", "--client-pd", "f6ab0e1801010303")
	if code != exitUsage || !strings.Contains(stderr, "built without rdmacm support") {
		t.Errorf("exit %d, stderr %q: want exit %d and the without-rdmacm message", code, stderr, exitUsage)
	}
}

func TestReplayUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"replay", "--list"},
		{"replay", "--from", testcap.RXE, "--conn", "2"},
		{"replay", "--from", testcap.Real("no-such.pcap"), "--list"},
	} {
		if code, _, stderr := runCmd(t, args...); code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q, want %d with a message", args, code, stderr, exitUsage)
		}
	}
	if replay.Built {
		for _, args := range [][]string{
			{"replay", "--role", "client", "--client-pd", "f6ab"},                       // no address
			{"replay", "--role", "client", "--addr", "192.0.2.2", "--client-pd", "f6a"}, // odd hex
			{"replay", "--role", "peer", "--addr", "192.0.2.2"},
		} {
			if code, _, _ := runCmd(t, args...); code != exitUsage {
				t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
			}
		}
	}
}

// replay --from CAPTURE --list reads the kernel's NFS connection from both
// real captures.
func TestReplayListRealCaptures(t *testing.T) {
	for _, f := range []string{"rxe-nfs42-rdma.pcap", "siw-nfs42-rdma.pcap"} {
		code, stdout, stderr := runCmd(t, "replay", "--from", testcap.Real(f), "--list")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", f, code, stderr)
		}
		var c replay.Conn
		if err := json.Unmarshal([]byte(stdout), &c); err != nil {
			t.Fatalf("%s: %v: %q", f, err, stdout)
		}
		if !strings.HasPrefix(c.ClientPrivateData.String(), "f6ab0e1801010303") ||
			!strings.HasPrefix(c.ServerPrivateData.String(), "f6ab0e1801000303") || c.Port != 20049 {
			t.Errorf("%s: %+v", f, c)
		}
	}
}

// Every live capture passes cmpd-dissect check against its expectation
// file, written from what was sent and what Linux is known to send.
func TestLiveCapturesPassCheck(t *testing.T) {
	caps := testcap.Glob(t, "pcaps/real/live-*.pcap")
	if len(caps) == 0 {
		t.Skip("no live captures (make live-traces)")
	}
	for _, c := range caps {
		name := strings.TrimSuffix(filepath.Base(c), ".pcap")
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, "check", "--expect", testcap.Path("expect", name+".yaml"), c)
			if code != exitOK {
				t.Errorf("exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}

func TestReplayPlan(t *testing.T) {
	plan, err := replayPlan([]string{"f6ab0e1801010303", "f6ab0e1801000f0f"}, []string{"f6ab0e1801000303"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != 2 || plan[1].server == nil || !bytes.Equal(plan[0].server, plan[1].server) ||
		bytes.Equal(plan[0].client, plan[1].client) {
		t.Errorf("pairing: %+v (the shorter list repeats its last value)", plan)
	}
	plan, err = replayPlan([]string{""}, nil, true, nil)
	if err != nil || len(plan) != 1 || len(plan[0].client) != 0 || plan[0].server != nil || !plan[0].reject {
		t.Errorf("empty client data, no server data, reject: %+v, %v", plan, err)
	}
	from := &replay.Conn{ClientPrivateData: replay.HexBytes{1}, ServerPrivateData: replay.HexBytes{2}, Rejected: true}
	plan, err = replayPlan(nil, nil, false, from)
	if err != nil || len(plan) != 1 || plan[0].client[0] != 1 || plan[0].server[0] != 2 || !plan[0].reject {
		t.Errorf("from a rejected capture connection: %+v, %v", plan, err)
	}
	if _, err := replayPlan([]string{"00"}, nil, false, from); err == nil {
		t.Error("--from with --client-pd: no error")
	}
	if _, err := replayPlan([]string{strings.Repeat("00", 256)}, nil, false, nil); err == nil {
		t.Error("256 octets: no error")
	}
}
