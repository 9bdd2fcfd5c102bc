//go:build unix

package pebblestore

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// lockHolder returns the id of the process holding pebble's lock on the file at path (a
// POSIX record lock, which pebble takes with fcntl F_SETLK), asking with F_GETLK; 0
// when it cannot tell.
func lockHolder(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	spec := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &spec); err != nil || spec.Type == unix.F_UNLCK {
		return 0
	}
	return int(spec.Pid)
}
