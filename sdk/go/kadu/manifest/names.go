package manifest

import "strings"

// The name rules of sdk/ABI.md §10, checked by hand rather than with
// package-level regexps: a Go guest checks its names inside _initialize,
// where compiling the regexps (the semantic version's is large) was most of
// the SDK's share of an instance's start-up. names_test.go holds each check
// to the regexp it replaces.

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isLower(c) || isDigit(c) || (c >= 'A' && c <= 'Z') }

// IsBundleName reports whether s matches ^[a-z][a-z0-9_]{0,31}$.
func IsBundleName(s string) bool {
	if len(s) == 0 || len(s) > 32 || !isLower(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

// IsEntryName reports whether s matches ^[a-zA-Z0-9_.-]{1,64}$: the name
// of a tool, prompt or input request key.
func IsEntryName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// IsSemver reports whether s is a Semantic Version 2.0.0: MAJOR.MINOR.PATCH
// without leading zeros, then an optional -prerelease (dot-separated
// identifiers, numeric ones without leading zeros) and +build.
func IsSemver(s string) bool {
	for n := range 3 {
		i := 0
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == 0 || (i > 1 && s[0] == '0') {
			return false
		}
		s = s[i:]
		if n < 2 {
			if s == "" || s[0] != '.' {
				return false
			}
			s = s[1:]
		}
	}
	s, build, hasBuild := strings.Cut(s, "+")
	if hasBuild && !identifiers(build, false) {
		return false
	}
	if s == "" {
		return true
	}
	return s[0] == '-' && identifiers(s[1:], true)
}

// identifiers checks dot-separated non-empty identifiers of [0-9A-Za-z-];
// in a prerelease, an all-digit identifier has no leading zero.
func identifiers(s string, prerelease bool) bool {
	for id := range strings.SplitSeq(s, ".") {
		if id == "" {
			return false
		}
		digits := true
		for i := 0; i < len(id); i++ {
			c := id[i]
			if !isAlnum(c) && c != '-' {
				return false
			}
			digits = digits && isDigit(c)
		}
		if prerelease && digits && len(id) > 1 && id[0] == '0' {
			return false
		}
	}
	return true
}
