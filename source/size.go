package source

import "os"

// fileSize is the size of the named file on disk, 0 if unknown.
func fileSize(name string) int64 {
	st, err := os.Stat(name)
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	return st.Size()
}

// TotalSize is the summed size on disk of the named capture files, 0 when
// one of them is stdin or not a regular file (size unknown).
func TotalSize(names []string) int64 {
	var t int64
	for _, n := range names {
		s := fileSize(n)
		if n == "-" || s == 0 {
			return 0
		}
		t += s
	}
	return t
}
