//go:build !(linux && cgo)

package cli

// limitMallocArenas does nothing here: without cgo, or off Linux, the store allocates its
// block cache and memtables from the Go heap or from a C library without glibc's arenas.
func limitMallocArenas(int) (ok, supported bool) { return false, false }
