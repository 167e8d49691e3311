package rpcrdma

import (
	"reflect"
	"testing"
	"unsafe"
)

// fill sets every field reachable in v (exported or not) to a non-zero
// value: slices get one element and room for another.
func fill(t *testing.T, v reflect.Value) {
	if !v.CanSet() {
		v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.String:
		v.SetString("x")
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 2))
		fill(t, v.Index(0))
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(t, v.Index(i))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(t, v.Field(i))
		}
	default:
		t.Fatalf("fill: field of kind %s: teach the test (and the reset) about it", v.Kind())
	}
}

// emptied checks that the slice *s has length 0 and kept its capacity,
// then sets it to nil (so the caller can check the rest is zero).
func emptied[T any](t *testing.T, name string, s *[]T) {
	t.Helper()
	if len(*s) != 0 || cap(*s) != 2 {
		t.Errorf("%s: len %d cap %d after reset, want 0 and the capacity kept (2)", name, len(*s), cap(*s))
	}
	*s = nil
}

// The field-by-field resets leave a layer as a zero value would be, but
// for what each keeps on purpose; a field added to a layer and not to its
// reset fails here.
func TestResets(t *testing.T) {
	t.Run("Header", func(t *testing.T) {
		var h Header
		fill(t, reflect.ValueOf(&h).Elem())
		h.reset()
		if h.MaxSegments != 7 {
			t.Errorf("MaxSegments %d after reset, want it kept", h.MaxSegments)
		}
		h.MaxSegments = 0
		emptied(t, "Reads", &h.Reads)
		emptied(t, "Writes", &h.Writes)
		emptied(t, "segs", &h.segs)
		emptied(t, "spans", &h.spans)
		emptied(t, "Chunks", &h.Chunks)
		zeroAfterReset(t, &h, &h.notes)
	})
	t.Run("RPC", func(t *testing.T) {
		var r RPC
		fill(t, reflect.ValueOf(&r).Elem())
		r.reset()
		zeroAfterReset(t, &r, &r.notes)
	})
	t.Run("NFS", func(t *testing.T) {
		var n NFS
		fill(t, reflect.ValueOf(&n).Elem())
		n.reset()
		if n.Program != 7 || n.Version != 7 || n.Procedure != 7 || !n.Reply || n.MaxOps != 7 {
			t.Errorf("reset changed what Set fixed or MaxOps: %+v", n)
		}
		n.Program, n.Version, n.Procedure, n.Reply, n.MaxOps = 0, 0, 0, false, 0
		emptied(t, "Ops", &n.Ops)
		zeroAfterReset(t, &n, &n.notes)
	})
}

// zeroAfterReset checks that reset cleared the notes of l and, those set
// aside, left every field of l zero (the caller has zeroed what reset keeps).
func zeroAfterReset[L any](t *testing.T, l *L, ns *notes) {
	t.Helper()
	if ns.n != 0 {
		t.Errorf("%d notes after reset", ns.n)
	}
	*ns = notes{}
	if !reflect.ValueOf(*l).IsZero() {
		t.Errorf("after reset: %+v", *l)
	}
}
