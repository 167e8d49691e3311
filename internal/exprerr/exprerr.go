// Package exprerr is the error of the two filter languages (display
// filters, capture filters): where in the expression the problem is, shown
// with a caret under it.
package exprerr

import (
	"fmt"
	"strings"
)

// Error is an expression that is not understood: Pos is the 0-based byte
// offset in Expr where the problem is; Lang names the language ("display
// filter", "capture filter").
type Error struct {
	Lang string
	Expr string
	Pos  int
	Msg  string
}

// Error renders the language, the message, the expression and a caret
// under the position:
//
//	display filter: expected a value after "==" at column 15
//	  bth.opcode ==
//	                ^
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s at column %d\n  %s\n  %s^", e.Lang, e.Msg, e.Pos+1, e.Expr, strings.Repeat(" ", e.Pos))
}
