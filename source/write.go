package source

import (
	"fmt"
	"io"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Writer writes frames to a pcapng file, one interface per distinct link
// type seen (so frames of a multi-interface pcapng or of several files keep
// their link types).
type Writer struct {
	w      *pcapgo.NgWriter
	ifaces map[int]int // link type → interface id
	name   string
}

// NewWriter starts a pcapng stream on w; name labels the interfaces
// (the capture interface, or "cmpd-dissect").
func NewWriter(w io.Writer, firstLinkType int, name string) (*Writer, error) {
	ng, err := pcapgo.NewNgWriterInterface(w, pcapgo.NgInterface{
		Name:                name,
		LinkType:            layers.LinkType(firstLinkType),
		SnapLength:          0,
		TimestampResolution: 9,
	}, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "cmpd-dissect"}})
	if err != nil {
		return nil, fmt.Errorf("pcapng writer: %w", err)
	}
	return &Writer{w: ng, ifaces: map[int]int{firstLinkType: 0}, name: name}, nil
}

// Write appends one frame.
func (w *Writer) Write(f *Frame) error {
	id, ok := w.ifaces[f.LinkType]
	if !ok {
		var err error
		id, err = w.w.AddInterface(pcapgo.NgInterface{
			Name: w.name, LinkType: layers.LinkType(f.LinkType), TimestampResolution: 9,
		})
		if err != nil {
			return fmt.Errorf("pcapng writer: %w", err)
		}
		w.ifaces[f.LinkType] = id
	}
	ci := gopacket.CaptureInfo{
		Timestamp: f.Time, CaptureLength: len(f.Data), Length: f.Length, InterfaceIndex: id,
	}
	if ci.Length < ci.CaptureLength {
		ci.Length = ci.CaptureLength
	}
	if err := w.w.WritePacket(ci, f.Data); err != nil {
		return fmt.Errorf("pcapng writer: frame %d: %w", f.Number, err)
	}
	return nil
}

// Flush writes buffered blocks out.
func (w *Writer) Flush() error { return w.w.Flush() }
