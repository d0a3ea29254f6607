//go:build unix

package kadutest

import (
	"os"
	"syscall"
)

// lockDir holds an exclusive lock, shared with other processes, on path
// until unlock is called: `go test ./...` runs packages in parallel
// processes, and two builds of one directory (npm ci, cargo, go build)
// must not run at once.
func lockDir(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
