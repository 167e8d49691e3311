//go:build !(rdmacm && linux && cgo)

package replay

// Built reports whether this build can open connections.
const Built = false

// Dial returns ErrNoRDMACM: this build has no librdmacm.
func Dial(cfg Config, report func(Report)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	return ErrNoRDMACM
}

// Listener is a server listening on an rdma_cm port (never made in a
// build without librdmacm).
type Listener struct{}

// Listen returns ErrNoRDMACM: this build has no librdmacm.
func Listen(cfg Config, report func(Report)) (*Listener, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return nil, ErrNoRDMACM
}

// Accept returns ErrNoRDMACM.
func (l *Listener) Accept(pd []byte, reject bool, report func(Report)) error { return ErrNoRDMACM }

// Close does nothing.
func (l *Listener) Close() error { return nil }
