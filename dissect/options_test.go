package dissect

import (
	"reflect"
	"testing"
	"time"
)

// TestOptionsDefaults: every zero limit takes its default, a limit given
// is kept, and the default of every limit is positive (else a zero field
// would not be told from a default).
func TestOptionsDefaults(t *testing.T) {
	def := DefaultOptions()
	if got := (Options{}).withDefaults(); !reflect.DeepEqual(got, def) {
		t.Errorf("zero Options with defaults: %+v, want %+v", got, def)
	}
	v := reflect.ValueOf(def)
	for i := range v.NumField() {
		if f := v.Field(i); f.CanInt() && f.Int() <= 0 {
			t.Errorf("default %s is %d", v.Type().Field(i).Name, f.Int())
		}
	}
	o := Options{RoCEPorts: []uint16{1}, MaxQPs: 3, IdleTimeout: time.Millisecond, MaxPrivateData: -5}.withDefaults()
	if o.MaxQPs != 3 || o.IdleTimeout != time.Millisecond || o.MaxPrivateData != def.MaxPrivateData ||
		o.MaxSendBytes != def.MaxSendBytes || len(o.RoCEPorts) != 1 {
		t.Errorf("with defaults: %+v", o)
	}
}
