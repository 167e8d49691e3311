package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/replay"
)

func newReplayCommand() *cobra.Command {
	var (
		role, addr, src, from string
		port, connN           int
		clientPDs, serverPDs  []string
		reject, list          bool
		hold, timeout         time.Duration
		sendNull              bool
	)
	cmd := &cobra.Command{
		Use:   "replay --role client|server [--addr ADDR] [--client-pd HEX]… [--server-pd HEX]… [--reject] [--from CAPTURE [--conn N]]",
		Short: "Open real RDMA connections (librdmacm) with the private data given or taken from a capture",
		Long: `replay opens real RC connections through librdmacm (RDMA_PS_TCP) over any RDMA device
(rxe, siw, hardware), IPv4 or IPv6, with the connection private data given, then disconnects.
Run it twice: --role server on one host (it listens on --addr/--port), --role client on the
other (--addr is the server). The client sends --client-pd in rdma_connect, the server answers
with --server-pd in rdma_accept, or in rdma_reject with --reject. Give --client-pd/--server-pd
several times for several connections in a row between the same peers (reconnections with
changed values); both sides take the same flags. An empty value sends no private data.

--from CAPTURE --conn N takes the private data (and port, and whether it was rejected) of
connection N of a capture, to re-drive a connection seen in the field; --from CAPTURE --list
prints the connections the capture holds.

Each side prints one JSON object per event (listening, established, rejected, disconnected)
with what its librdmacm handed up: received_private_data_len and received_private_data.

The librdmacm part needs a build with -tags rdmacm (cgo, librdmacm-dev).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			var fromConn *replay.Conn
			if from != "" {
				conns, err := connsFromCapture(cmd, from)
				if err != nil {
					return err
				}
				if list {
					for _, c := range conns {
						if err := writeJSONLine(out, c); err != nil {
							return err
						}
					}
					return nil
				}
				if connN < 1 || connN > len(conns) {
					return usageErr("replay: %s: connection %d: the capture holds %d connection(s)", from, connN, len(conns))
				}
				fromConn = &conns[connN-1]
			} else if list {
				return usageErr("replay: --list needs --from CAPTURE")
			}
			if !replay.Built {
				return usageErr("replay: %v", replay.ErrNoRDMACM)
			}
			plan, err := replayPlan(clientPDs, serverPDs, reject, fromConn)
			if err != nil {
				return usageErr("replay: %v", err)
			}
			if fromConn != nil && !cmd.Flags().Changed("port") && fromConn.Port != 0 {
				port = fromConn.Port
			}
			cfg := replay.Config{Role: replay.Role(role), Addr: addr, Source: src, Port: port,
				Timeout: timeout, Hold: hold, SendNull: sendNull}
			if err := cfg.Validate(); err != nil {
				return usageErr("replay: %v", err)
			}
			emit := func(r replay.Report) { _ = writeJSONLine(out, r) }
			if cfg.Role == replay.RoleServer {
				l, err := replay.Listen(cfg, emit)
				if err != nil {
					return usageErr("replay: %v", err)
				}
				defer l.Close()
				for _, p := range plan {
					if err := l.Accept(p.server, p.reject, emit); err != nil {
						return findingsErr("replay: %v", err)
					}
				}
				return nil
			}
			for _, p := range plan {
				cfg.PrivateData = p.client
				if err := replay.Dial(cfg, emit); err != nil {
					return findingsErr("replay: %v", err)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&role, "role", "", "client or server")
	f.StringVar(&addr, "addr", "", "client: the server's address; server: the address to listen on (default any)")
	f.StringVar(&src, "source", "", "client: the local address to connect from (default chosen by routing)")
	f.IntVar(&port, "port", replay.DefaultPort, "rdma_cm port (service ID 0x0106<<16|port on IB/RoCE, TCP port on iWARP)")
	f.StringArrayVar(&clientPDs, "client-pd", nil, "private data the client sends, in hex (repeat for several connections)")
	f.StringArrayVar(&serverPDs, "server-pd", nil, "private data the server answers with, in hex (repeat for several connections)")
	f.BoolVar(&reject, "reject", false, "the server refuses every connection (rdma_reject) with its private data (the client ignores it: both sides take the same flags)")
	f.StringVar(&from, "from", "", "take the private data of a connection of this capture")
	f.IntVar(&connN, "conn", 1, "with --from: the connection's number (1-based, in request order)")
	f.BoolVar(&list, "list", false, "with --from: print the capture's connections as JSON and exit")
	f.DurationVar(&hold, "hold", 200*time.Millisecond, "client: how long to keep each connection before disconnecting")
	f.DurationVar(&timeout, "timeout", 10*time.Second, "longest wait for each rdma_cm event")
	f.BoolVar(&sendNull, "send-null", false, "client: post one Send (an RPC-over-RDMA NFSv4 NULL call) once connected; the server posts no receive buffer, so the peer answers RNR NAK and the client retries until it disconnects (the server ignores it)")
	return cmd
}

// connsFromCapture follows the connections of a capture with the project's
// dissector and connection tracker, as "conns" does (so every link type and
// transport it reads), and returns what replay needs of each.
func connsFromCapture(cmd *cobra.Command, path string) ([]replay.Conn, error) {
	var tf trackFlags
	tf.register(&cobra.Command{}) // the defaults "conns" runs with
	t, err := trackCaptures(cmd, []string{path}, &tf)
	if err != nil {
		return nil, err
	}
	return replay.FromConnections(t.tracker.Connections()), nil
}

// replayStep is what one connection of a replay sends.
type replayStep struct {
	client, server []byte
	reject         bool
}

// replayPlan pairs the --client-pd and --server-pd values (the shorter list
// repeats its last value) or takes them from a captured connection.
func replayPlan(clientPDs, serverPDs []string, reject bool, from *replay.Conn) ([]replayStep, error) {
	if from != nil {
		if len(clientPDs)+len(serverPDs) > 0 {
			return nil, fmt.Errorf("--from and --client-pd/--server-pd exclude each other")
		}
		return []replayStep{{client: from.ClientPrivateData, server: from.ServerPrivateData,
			reject: reject || from.Rejected}}, nil
	}
	n := max(len(clientPDs), len(serverPDs), 1)
	parse := func(list []string, i int, name string) ([]byte, error) {
		if len(list) == 0 {
			return nil, nil
		}
		b, err := replay.ParseHex(list[min(i, len(list)-1)])
		if err != nil {
			return nil, fmt.Errorf("--%s: %v", name, err)
		}
		if len(b) > replay.MaxPrivateData {
			return nil, fmt.Errorf("--%s: %d octets, librdmacm carries at most %d", name, len(b), replay.MaxPrivateData)
		}
		return b, nil
	}
	plan := make([]replayStep, n)
	for i := range plan {
		var err error
		if plan[i].client, err = parse(clientPDs, i, "client-pd"); err != nil {
			return nil, err
		}
		if plan[i].server, err = parse(serverPDs, i, "server-pd"); err != nil {
			return nil, err
		}
		plan[i].reject = reject
	}
	return plan, nil
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
