// Command cmpd-dissect dissects and analyses RDMA connection setup: IB CM
// over RoCE and InfiniBand, iWARP MPA, the RFC 8797 private data they carry
// and the RPC-over-RDMA traffic that follows.
//
// This file builds the command tree (newRootCommand): the root command,
// whose own Run is the packet view (packets.go), and the subcommands, each
// made by the constructor in its own file.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Exit codes, stable for scripts and CI.
const (
	exitOK       = 0 // done (findings or not)
	exitFindings = 1 // --check / check: an error finding or a mismatch
	exitUsage    = 2 // bad usage or unusable input
)

// exitError carries an exit code up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr makes a bad-usage or bad-input error (exit 2).
func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// findingsErr makes an exit-1 error: the run worked, but a check failed.
func findingsErr(format string, args ...any) error {
	return &exitError{code: exitFindings, err: fmt.Errorf(format, args...)}
}

// newRootCommand builds a fresh command tree, so tests can run many in one
// process.
func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "cmpd-dissect",
		Short:         "Dissect RDMA connection setup and the RFC 8797 private data in it",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	setVersion(root)
	setupPacketView(root)
	root.AddCommand(
		newCheckCommand(),
		newConnsCommand(),
		newExplainCommand(),
		newExportCommand(),
		newFieldsCommand(),
		newFindingsCommand(),
		newGenDocsCommand(),
		newPvtdataCommand(),
		newReplayCommand(),
		newReportCommand(),
		newRPCCommand(),
		newStatsCommand(),
		newVersionCommand(),
	)
	return root
}

// run executes one command line and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.code != exitFindings || ee.err.Error() != "" {
			fmt.Fprintln(stderr, "cmpd-dissect:", ee.err)
		}
		return ee.code
	}
	// cobra's own errors (unknown flag, bad arguments) are usage errors.
	fmt.Fprintln(stderr, "cmpd-dissect:", err)
	return exitUsage
}

// gcPercent is the collector's GOGC unless the environment sets one. Each
// collection marks gopacket's 5 MB of pointer-holding globals
// (layers.EthernetTypeMetadata, PPPTypeMetadata): ~45 ms of CPU whatever
// the heap. With the default 100 the first falls due at 4 MB, which the
// read-ahead ring (dissect.Ahead, 3.4 MB) alone nearly fills, so every run
// of stats or the packet view paid one at start, a fifth of stats' CPU
// on 200k packets. At 150 the first is due at 6 MB: stats, conns and the
// views on the bench captures collect once or never, with the same peak
// RSS; commands whose heap grows (export) peak about a sixth higher.
const gcPercent = 150

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
