//go:build unix

package main

import "syscall"

// privateUmask makes every file and directory the process creates
// readable by its owner only, whatever umask kadu was started with: the
// SQLite database and its WAL, the local blobs (gocloud's fileblob asks for
// 0666 and leaves the rest to the umask), output files, keys. Kadu's own
// code asks for 0600/0700 anyway; this covers the libraries that do not.
func privateUmask() { syscall.Umask(0o077) }
