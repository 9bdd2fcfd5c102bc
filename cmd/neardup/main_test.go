package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/testtool"
)

// initLine is a line of GODEBUG=inittrace=1: "init PKG @T ms, C ms clock, B bytes, A allocs".
var initLine = regexp.MustCompile(`^init (\S+) @.* clock, (\d+) bytes, (\d+) allocs`)

// Budgets of the work done before main runs, in bytes allocated by package
// initialization (GODEBUG=inittrace=1). A process that only prints its version pays all
// of it, and the pages it touches are most of that process's peak RSS.
const (
	// initPackageBudget bounds one package: go-dateparser, linked through go-trafilatura,
	// allocated 78 MB compiling regular expressions before main ran.
	initPackageBudget = 1 << 20
	// initTotalBudget bounds all packages together: the libraries the service links
	// (protobuf descriptors, prometheus, x/net/html's tables) take about 0.9 MB.
	initTotalBudget = 1280 << 10
	// initOwnBudget bounds this module's packages together: tables a command needs are
	// built on first use (sync.OnceValue), not at init.
	initOwnBudget = 64 << 10
)

// TestInitCost holds the start-up budgets above. It builds the binary and runs
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
	inits, err := parseInitTrace(&stderr)
	if err != nil {
		t.Fatal(err)
	}
	total, own := 0, 0
	for _, in := range inits {
		total += in.bytes
		if strings.HasPrefix(in.pkg, "github.com/neardup/neardup") {
			own += in.bytes
		}
		if in.bytes > initPackageBudget {
			t.Errorf("package %s allocates %d bytes at init; the limit is %d: move the work to first use (sync.OnceValue)", in.pkg, in.bytes, initPackageBudget)
		}
	}
	if total > initTotalBudget {
		t.Errorf("package initialization allocates %d bytes in all; the budget is %d: find the package that grew with GODEBUG=inittrace=1 neardup version", total, initTotalBudget)
	}
	if own > initOwnBudget {
		t.Errorf("neardup's own packages allocate %d bytes at init; the budget is %d: build tables on first use (sync.OnceValue)", own, initOwnBudget)
	}
	t.Logf("%d packages initialized, %d bytes allocated in all, %d by neardup's own", len(inits), total, own)
}

// initCost is one package's line of GODEBUG=inittrace=1.
type initCost struct {
	pkg   string
	bytes int
}

// parseInitTrace returns the packages initialized in r, which holds a process's standard
// error under GODEBUG=inittrace=1; other lines are skipped. It fails when there are none.
func parseInitTrace(r io.Reader) ([]initCost, error) {
	var inits []initCost
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := initLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return nil, fmt.Errorf("inittrace line %q: %w", sc.Text(), err)
		}
		inits = append(inits, initCost{m[1], n})
	}
	if len(inits) == 0 {
		return nil, errors.New("no inittrace lines in the standard error")
	}
	return inits, sc.Err()
}

// TestParseInitTrace checks the parser TestInitCost depends on, so that a change of the
// runtime's format fails here rather than passing with nothing counted.
func TestParseInitTrace(t *testing.T) {
	trace := "neardup (devel)\n" +
		"init internal/bytealg @0.005 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/neardup/neardup/server @6.7 ms, 0.23 ms clock, 42328 bytes, 877 allocs\n"
	got, err := parseInitTrace(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	want := []initCost{{"internal/bytealg", 0}, {"github.com/neardup/neardup/server", 42328}}
	if !slices.Equal(got, want) {
		t.Errorf("parseInitTrace = %v, want %v", got, want)
	}
	if _, err := parseInitTrace(strings.NewReader("neardup (devel)\n")); err == nil {
		t.Error("parseInitTrace found packages in a trace without any")
	}
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
