// Package fieldtest holds what tests of field.Layers share: a Visitor that
// only counts.
package fieldtest

import (
	"net/netip"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// Counter is a field.Visitor that counts the values it is given and the
// groups left open. An End without its Begin sets Unbalanced.
type Counter struct {
	Values     int
	Open       int
	Unbalanced bool
}

func (c *Counter) Uint(*field.Field, uint64)     { c.Values++ }
func (c *Counter) Int(*field.Field, int64)       { c.Values++ }
func (c *Counter) Bool(*field.Field, bool)       { c.Values++ }
func (c *Counter) String(*field.Field, string)   { c.Values++ }
func (c *Counter) Bytes(*field.Field, []byte)    { c.Values++ }
func (c *Counter) Addr(*field.Field, netip.Addr) { c.Values++ }
func (c *Counter) Begin(*field.Field)            { c.Open++ }

// End closes the innermost group.
func (c *Counter) End() {
	c.Open--
	if c.Open < 0 {
		c.Unbalanced = true
	}
}
