//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package source

import "os"

// mmapFile is not used on this system: files are read.
func mmapFile(f *os.File, size int64) ([]byte, func() error, bool) { return nil, nil, false }

func dropPages(b []byte) {}
