//go:build !unix

package cli

// openFilesLimit returns 0: the limit is not known here, and --max-conns falls back to
// server.DefaultMaxConns.
func openFilesLimit() uint64 { return 0 }
