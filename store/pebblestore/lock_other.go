//go:build !unix

package pebblestore

// lockHolder returns 0: where record locks do not say their holder, the process is not
// named.
func lockHolder(string) int { return 0 }
