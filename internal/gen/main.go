// Command gen writes the repository's synthetic captures into
// testdata/pcaps/synthetic (make testdata). Every file it writes is named
// synth-*.pcap or synth-*.pcapng so nobody mistakes it for a real capture.
//
// Each protocol family adds its generators from its own file with register.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type generator struct {
	name string // file name written, e.g. "synth-rocev2-cm-all.pcap"
	desc string // one line for PROVENANCE.md
	// write creates the file at path.
	write func(path string) error
}

var generators []generator

func register(name, desc string, write func(path string) error) {
	if !strings.HasPrefix(name, "synth-") {
		panic("gen: synthetic capture names start with synth-: " + name)
	}
	generators = append(generators, generator{name: name, desc: desc, write: write})
}

func main() {
	dir := flag.String("dir", "testdata/pcaps/synthetic", "output directory")
	only := flag.String("only", "", "write only the generators whose name contains this")
	list := flag.Bool("list", false, "list the generators and exit")
	flag.Parse()
	sort.Slice(generators, func(i, j int) bool { return generators[i].name < generators[j].name })
	if *list {
		for _, g := range generators {
			fmt.Printf("%s\t%s\n", g.name, g.desc)
		}
		return
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	var prov strings.Builder
	prov.WriteString("# Synthetic captures\n\nWritten by `make testdata` (`go run ./internal/gen`) with the layers' own\n" +
		"SerializeTo: hand-made bytes, not traffic from a real stack. Do not edit by hand.\n\n| file | what it holds |\n| --- | --- |\n")
	for _, g := range generators {
		if *only != "" && !strings.Contains(g.name, *only) {
			continue
		}
		if err := g.write(filepath.Join(*dir, g.name)); err != nil {
			fmt.Fprintf(os.Stderr, "gen: %s: %v\n", g.name, err)
			os.Exit(1)
		}
		fmt.Fprintf(&prov, "| %s | %s |\n", g.name, g.desc)
	}
	if *only == "" {
		if err := os.WriteFile(filepath.Join(*dir, "PROVENANCE.md"), []byte(prov.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
