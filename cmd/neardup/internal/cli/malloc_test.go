package cli

import "testing"

// TestLimitMallocArenas checks that the cap serve sets is taken where glibc is the C
// library (as on the Debian machines the service is measured on).
func TestLimitMallocArenas(t *testing.T) {
	ok, supported := limitMallocArenas(serveArenas)
	if !supported {
		t.Skip("no glibc malloc here (no cgo, not Linux, or another C library)")
	}
	if !ok {
		t.Fatalf("mallopt(M_ARENA_MAX, %d) was refused", serveArenas)
	}
}
