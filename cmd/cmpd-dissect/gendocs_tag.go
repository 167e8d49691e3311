//go:build gendocs

package main

import "github.com/cmpd-dissect/cmpd-dissect/internal/gendocs"

func init() { genDocs = gendocs.Generate }
