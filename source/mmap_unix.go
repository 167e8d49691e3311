//go:build linux || darwin || freebsd || netbsd || openbsd

package source

import (
	"os"
	"syscall"
)

// mmapFile maps a regular file read-only; ok is false when it cannot be
// (empty, not regular, mapping refused), and the caller reads it instead.
func mmapFile(f *os.File, size int64) (data []byte, unmap func() error, ok bool) {
	if size <= 0 || size > 1<<40 || int64(int(size)) != size {
		return nil, nil, false
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	return b, func() error { return syscall.Munmap(b) }, true
}

// dropPages tells the kernel the pages of b will not be needed again, so
// the mapped file does not add to the resident set as it is read (the
// pages stay in the page cache and fault back in if touched).
func dropPages(b []byte) { syscall.Madvise(b, syscall.MADV_DONTNEED) }
