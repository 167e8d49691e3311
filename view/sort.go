package view

import "sort"

func sortStrings(s []string) { sort.Strings(s) }
