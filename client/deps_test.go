package client

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/testtool"
)

// TestDeps holds the package's promise to a crawler that imports it: it links HTTP and
// JSON, not the detector. Package api's one heavy-looking import, minhash, stays (the
// Signature type of Query and Fingerprints; a few hundred lines of arithmetic).
func TestDeps(t *testing.T) {
	out, err := exec.Command(testtool.Go(t), "list", "-deps", "github.com/neardup/neardup/client").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/neardup/neardup/api") {
		t.Fatalf("go list -deps did not list package api, which the client needs:\n%s", out)
	}
	const m = "github.com/neardup/neardup"
	for _, bad := range []string{
		m, m + "/extract", m + "/store", m + "/urlnorm", m + "/shingle", m + "/hamming",
		m + "/lsh", m + "/simhash", m + "/client/prescreen",
		"github.com/cockroachdb/pebble", "golang.org/x/net/html",
	} {
		for _, dep := range deps {
			if dep == bad || (bad != m && strings.HasPrefix(dep, bad+"/")) {
				t.Errorf("package client links %s", dep)
			}
		}
	}
}
