//go:build unix

package source

import (
	"io"
	"os"
	"syscall"
)

// pollableStdin returns a pipe or FIFO on standard input as an *os.File in
// the runtime's poller, so that Files.Stop can wake a read waiting on it
// through a read deadline (os.Stdin itself is blocking: a deadline cannot
// be set). Anything else is returned as it is. The descriptor stays open
// as long as the returned file is referenced.
func pollableStdin(r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok || f != os.Stdin {
		return r
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return r
	}
	fd := int(f.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		return r
	}
	return os.NewFile(uintptr(fd), f.Name())
}
