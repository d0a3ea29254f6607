//go:build !unix

package main

// privateUmask does nothing where there is no umask; file modes there come
// from the ACLs of the data directory.
func privateUmask() {}
