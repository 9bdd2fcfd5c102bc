package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/testtool"
)

// initLine is a line of GODEBUG=inittrace=1: "init PKG @T ms, C ms clock, B bytes, A allocs".
var initLine = regexp.MustCompile(`^init (\S+) @.* clock, (\d+) bytes, (\d+) allocs`)

// TestInitCost holds the start-up goal: no package linked into neardup does work at
// initialization that allocates more than 1 MB (go-dateparser, linked through
// go-trafilatura, allocated 78 MB before main ran). It builds the binary and runs
// "neardup version" with GODEBUG=inittrace=1.
func TestInitCost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "neardup")
	if out, err := exec.Command(testtool.Go(t), "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("neardup version: %v\n%s", err, stderr.String())
	}
	total, n := 0, 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		m := initLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n++
		bytes, _ := strconv.Atoi(m[2])
		total += bytes
		if bytes > 1<<20 {
			t.Errorf("package %s allocates %d bytes at init; the limit is 1 MB: move the work to first use (sync.OnceValue)", m[1], bytes)
		}
	}
	if n == 0 {
		t.Fatalf("no inittrace lines in neardup's standard error:\n%s", stderr.String())
	}
	t.Logf("%d packages initialized, %d bytes allocated in all", n, total)
}

// TestDeps holds what the main module links: no package of it imports go-trafilatura,
// go-readability or their date and language parsers (they live in the eval module).
func TestDeps(t *testing.T) {
	out, err := exec.Command(testtool.Go(t), "list", "-deps", "-test", "github.com/neardup/neardup/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, bad := range []string{"go-trafilatura", "go-readability", "go-dateparser", "go-htmldate", "whatlanggo", "go-domdistiller"} {
		for line := range strings.Lines(string(out)) {
			if strings.Contains(line, bad) {
				t.Errorf("the main module links %s", strings.TrimSpace(line))
			}
		}
	}
}
