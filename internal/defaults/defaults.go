// Package defaults holds the one rule of the configuration structs
// (dissect.Options, conn.Config, transport.Config): an integer or duration
// limit left zero or negative means its default.
package defaults

import "reflect"

// Fill returns c with every integer or duration field (of any int kind)
// that is zero or negative set to the same field of def. T is a struct
// type; fields of other kinds are kept as they are.
func Fill[T any](c, def T) T {
	v, d := reflect.ValueOf(&c).Elem(), reflect.ValueOf(def)
	for i := range v.NumField() {
		if f := v.Field(i); f.CanSet() && f.CanInt() && f.Int() <= 0 {
			f.SetInt(d.Field(i).Int())
		}
	}
	return c
}
