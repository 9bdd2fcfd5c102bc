package python

import (
	"os"
	"os/exec"
	"testing"
)

// TestPythonTypes checks the package's type annotations (it ships py.typed) with mypy
// --strict, Debian's python3-mypy. It skips when mypy is missing, unless CI is "true".
func TestPythonTypes(t *testing.T) {
	py := python(t)
	if err := exec.Command(py, "-c", "import mypy").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s has no mypy (%v); CI must install the Debian package python3-mypy", py, err)
		}
		t.Skipf("%s has no mypy (%v); apt-get install python3-mypy to run this test", py, err)
	}
	cmd := exec.Command(py, "-m", "mypy", "--strict", "--ignore-missing-imports", "--cache-dir", t.TempDir(), "src/neardup")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mypy --strict src/neardup: %v\n%s", err, out)
	}
}
