package evaldata

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
)

// TB is the part of testing.TB that Need uses (this package is linked into the neardup
// binary, which should not link package testing).
type TB interface {
	Helper()
	Skip(args ...any)
	Fatal(args ...any)
}

// skipped counts the tests Need skipped in this process, for Main.
var skipped atomic.Int64

// Need handles err, the error of loading the evaluation sets for a test: nothing when it
// is nil; when the sets are absent (ErrNoData), it skips the test, counting the skip for
// Main, unless the environment has CI=true, where the sets are part of the set-up and
// their absence fails the test; any other error fails the test. It is safe for
// concurrent use.
func Need(tb TB, err error) {
	if err == nil {
		return
	}
	tb.Helper()
	if !errors.Is(err, ErrNoData) {
		tb.Fatal(err)
	}
	if os.Getenv("CI") == "true" {
		tb.Fatal(err, " (CI must provide the evaluation data)")
	}
	skipped.Add(1)
	tb.Skip(err)
}

// Main runs a package's tests and benchmarks (m is the *testing.M of its TestMain) and
// returns their exit code, having printed one line to standard output if Need skipped
// any of them for want of the evaluation sets. go test shows the line with -v, or when
// run in the package's directory; run over many packages, it keeps the output of those
// that pass to itself.
func Main(m interface{ Run() int }) int {
	code := m.Run()
	if n := skipped.Load(); n > 0 {
		fmt.Printf("evaldata: %d tests skipped without the evaluation data (../shared/eval beside the checkout, or $NEARDUP_EVAL)\n", n)
	}
	return code
}
