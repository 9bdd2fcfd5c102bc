//go:build unix

// Package chromium runs Debian's headless Chromium for tests that check a page as a
// browser builds it: report.html (dedup/internal/report) and the service's web page (server).
// It is a test helper: its functions take a *testing.T and fail or skip the test.
package chromium

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/neardup/neardup/internal/testtool"
)

// Timeout bounds each run of the browser; past it its whole process group is killed.
const Timeout = 60 * time.Second

// Path returns the path of Debian's headless-capable Chromium. It skips the test if there
// is none, unless CI is "true": CI installs it (.ci/run), so there a missing browser
// fails the test.
func Path(t testing.TB) string {
	t.Helper()
	return testtool.Path(t, "chromium")
}

// Run runs headless Chromium (browser, from Path) on the URL with the extra arguments
// ("--dump-dom", "--screenshot=FILE") and returns its standard output. Every run has its
// own profile directory and no network use of its own (updates, sync, metrics), so it
// loads the URL and what the page asks for, nothing else.
func Run(t testing.TB, browser, url string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	args = append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-quic", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--disable-crash-reporter", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(),
	}, args...)
	cmd := exec.CommandContext(ctx, browser, append(args, url)...)
	// Chromium starts helper processes: on timeout kill the whole group, not just the
	// first one.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("chromium did not finish within %v; killed. Its errors:\n%s", Timeout, stderr.Bytes())
	}
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// Inventory returns the ids and the count of each element of a DOM (as Chromium built
// it), failing the test for an element not in allowed and for any event-handler
// attribute: the pages under test are made of known elements and run no script.
func Inventory(t testing.TB, doc *html.Node, allowed map[string]bool) (ids map[string]bool, elements map[string]int) {
	t.Helper()
	ids, elements = map[string]bool{}, map[string]int{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		elements[n.Data]++
		if !allowed[n.Data] {
			t.Errorf("chromium's DOM has a <%s> element", n.Data)
		}
		for _, a := range n.Attr {
			if a.Key == "id" {
				ids[a.Val] = true
			}
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("chromium's DOM has %s=%q on <%s>", a.Key, a.Val, n.Data)
			}
		}
	}
	return ids, elements
}
