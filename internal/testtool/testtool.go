// Package testtool finds the programs from Debian packages that some tests run (headless
// Chromium, wrk). It is a test helper: Path takes a *testing.T and skips or fails the
// test.
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
