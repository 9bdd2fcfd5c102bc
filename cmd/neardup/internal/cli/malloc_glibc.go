//go:build linux && cgo

package cli

/*
#include <malloc.h>

// neardup_limit_arenas caps glibc malloc's arenas at n: 1 when set, 0 when mallopt
// refused, -1 where the C library is not glibc.
static int neardup_limit_arenas(int n) {
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
	return mallopt(M_ARENA_MAX, n);
#else
	return -1;
#endif
}
*/
import "C"

// limitMallocArenas caps the C allocator's arenas at n (glibc's M_ARENA_MAX), which the
// store's block cache and memtables are allocated from. ok reports that it did;
// supported is false where the C library is not glibc, which has no such setting.
func limitMallocArenas(n int) (ok, supported bool) {
	switch C.neardup_limit_arenas(C.int(n)) {
	case 1:
		return true, true
	case 0:
		return false, true
	}
	return false, false
}
