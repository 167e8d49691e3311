//go:build !unix

package source

import "io"

// pollableStdin returns r: Files.Stop cannot wake a read of standard input
// here.
func pollableStdin(r io.Reader) io.Reader { return r }
