// Package testtool finds the programs that some tests run: the go command, and those
// from Debian packages (headless Chromium, wrk). It is a test helper: its functions take
// a *testing.T and skip or fail the test.
package testtool

import (
	"os"
	"os/exec"
	"testing"
)

// Path returns the path of the program name, from the Debian package of the same name.
// It skips the test if there is none, unless CI is "true": CI installs the package
// (.ci/run), so there a missing program fails the test.
func Path(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed (%v); CI must install the Debian package %s", name, err, name)
	}
	t.Skipf("%s is not installed (%v); apt-get install %s to run this test", name, err, name)
	return ""
}

// Go returns the path of the go command of the toolchain running the test, for tests
// that ask it about the module (go list): go test puts its own GOROOT/bin first on the
// test's PATH. It skips the test if there is none, unless CI is "true".
func Go(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no go command on PATH: %v", err)
		}
		t.Skipf("no go command on PATH: %v", err)
	}
	return p
}
