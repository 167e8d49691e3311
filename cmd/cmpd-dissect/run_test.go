package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// runCmd runs one command line in-process with an empty stdin.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runStdin(t, nil, args...)
}

// runStdin runs one command line in-process reading stdin (empty when nil).
func runStdin(t *testing.T, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errb bytes.Buffer
	code = run(args, stdin, &out, &errb)
	return code, out.String(), errb.String()
}
