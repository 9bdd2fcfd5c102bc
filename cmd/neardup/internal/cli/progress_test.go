package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTerminal records what a progress display writes and signals each write.
type fakeTerminal struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes chan struct{}
}

func (f *fakeTerminal) Write(p []byte) (int, error) {
	f.mu.Lock()
	f.buf.Write(p)
	f.mu.Unlock()
	select {
	case f.writes <- struct{}{}:
	default:
	}
	return len(p), nil
}

// last returns the last line drawn: the text after the last "\r", without the ESC [K
// that ends it.
func (f *fakeTerminal) last() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.buf.String()
	s = s[strings.LastIndexByte(s, '\r')+1:]
	return strings.TrimSuffix(s, "\x1b[K")
}

// fakeClock is a clock a test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestProgressRedrawsOnTimer(t *testing.T) {
	term := &fakeTerminal{writes: make(chan struct{}, 1)}
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	tick := make(chan time.Time)
	p := newProgressClock(term, 0, clock.now, tick)
	var docs atomic.Int64
	var bytesRead atomic.Int64
	p.stage(progressStage{name: "fingerprint", unit: "docs", done: docs.Load, extra: func() string {
		return "read " + humanBytes(bytesRead.Load())
	}})
	<-term.writes
	if got := term.last(); got != "fingerprint 0 docs  0:00  read 0 B" {
		t.Fatalf("first line %q", got)
	}
	// The count moves between ticks; the line follows on the next tick only, and the
	// rate is the stage's count over the stage's time.
	docs.Store(1000)
	bytesRead.Store(5e6)
	clock.advance(4 * time.Second)
	tick <- time.Time{}
	<-term.writes
	if got, want := term.last(), "fingerprint 1000 docs (250 docs/s)  0:04  read 5.0 MB"; got != want {
		t.Fatalf("after 4 s: %q, want %q", got, want)
	}
	// A new stage starts its own count and clock: a rate is never a total divided by
	// another stage's time.
	clock.advance(10 * time.Second)
	var files atomic.Int64
	p.stage(progressStage{name: "copy", unit: "B", done: files.Load, total: 8e6})
	<-term.writes
	files.Store(2e6)
	clock.advance(2 * time.Second)
	tick <- time.Time{}
	<-term.writes
	if got, want := term.last(), "copy        2.0 MB of 8.0 MB (1.0 MB/s) [=====               ]  25%  0:02, 0:06 left"; got != want {
		t.Fatalf("copy stage: %q, want %q", got, want)
	}
	p.done()
	if s := term.buf.String(); !strings.HasSuffix(s, "\r\x1b[K") {
		t.Fatalf("done left the line: %q", s)
	}
	n := term.buf.Len()
	p.stage(progressStage{name: "late"})
	p.done()
	if term.buf.Len() != n {
		t.Fatal("a progress display drew after done")
	}
}

func TestProgressHiddenDrawsNothing(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, false)
	p.stage(progressStage{name: "x", done: func() int64 { return 1 }, total: 2})
	p.draw()
	p.done()
	if out.Len() != 0 {
		t.Fatalf("a hidden display wrote %q", out.String())
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(&out) || isTerminal(f) {
		t.Fatal("a buffer or a regular file is taken for a terminal")
	}
}

func TestCountProgress(t *testing.T) {
	term := &fakeTerminal{writes: make(chan struct{}, 1)}
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	p := newProgressClock(term, 0, clock.now, nil)
	var n atomic.Int64
	p.stage(progressStage{done: n.Load, total: 200, describe: func() string { return "warmup requests" }})
	n.Store(50)
	clock.advance(time.Second)
	p.draw()
	p.done()
	if got, want := term.last(), ""; got != want { // cleared
		t.Fatalf("after done %q", got)
	}
	s := term.buf.String()
	if !strings.Contains(s, "warmup requests [=====               ]  25%  0:01, 0:03 left") {
		t.Fatalf("progress %q", s)
	}
}

// TestProgressCutToWidth: a line wider than the terminal is cut, so that "\r" redraws it
// whole instead of leaving wrapped rows behind.
func TestProgressCutToWidth(t *testing.T) {
	term := &fakeTerminal{writes: make(chan struct{}, 1)}
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	p := newProgressClock(term, 20, clock.now, nil)
	p.stage(progressStage{name: "fingerprint", unit: "docs", done: func() int64 { return 123456 }})
	p.done()
	s := term.buf.String()
	if first := strings.SplitN(s, "\x1b[K", 2)[0]; first != "\rfingerprint 123456 " {
		t.Errorf("line %q, want it cut to 19 columns", first)
	}
}

// runOnTerminal runs a command whose standard error is taken for a terminal.
func runOnTerminal(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, isTerminal: func(io.Writer) bool { return true }}
	code = e.main(args)
	return out.String(), errOut.String(), code
}

// TestProgressOnTerminal: on a terminal, dedup shows its stages, and check and extract
// over several files their files; --quiet draws nothing; every line is cleared before
// what follows it.
func TestProgressOnTerminal(t *testing.T) {
	dir := t.TempDir()
	input, _ := dedupCorpus(t, dir)
	a := writeTemp(t, dir, "a.html", "<html><body><p>"+strings.Repeat("Some words of a page. ", 30)+"</p></body></html>")
	b := writeTemp(t, dir, "b.html", "<html><body><p>"+strings.Repeat("Other words of a page. ", 30)+"</p></body></html>")
	for _, c := range []struct {
		args  []string
		lines []string
	}{
		{[]string{"dedup", "--no-corpus", "--out", filepath.Join(dir, "out"), input}, []string{"\rfingerprint 0 docs", "\rfind duplicates ", "\rcluster ", "\rwrite lists ", "\rreport "}},
		{[]string{"check", a, b}, []string{"\rcheck       0 files of 2 files [  "}},
		{[]string{"extract", a, b}, []string{"\rextract     0 files of 2 files [  "}},
	} {
		_, stderr, code := runOnTerminal(t, c.args...)
		if code != ExitOK {
			t.Fatalf("%q: exit %d: %s", c.args, code, stderr)
		}
		for _, l := range c.lines {
			if !strings.Contains(stderr, l) {
				t.Errorf("%s: no %q in %q", c.args[0], l, stderr)
			}
		}
		// The line is cleared before the summary, which starts a line of its own.
		if i := strings.LastIndexByte(stderr, '\r'); i < 0 || !strings.HasPrefix(stderr[i:], "\r\x1b[K") {
			t.Errorf("%s: the last progress line is not cleared: %q", c.args[0], stderr)
		}
		quiet := append([]string{c.args[0], "--quiet", "--force"}, c.args[1:]...)
		if c.args[0] != "dedup" {
			quiet = slices.Delete(quiet, 2, 3)
		}
		_, stderr, _ = runOnTerminal(t, quiet...)
		if strings.ContainsAny(stderr, "\r\x1b") {
			t.Errorf("%q drew %q", quiet, stderr)
		}
	}
	// One file: no progress for check and extract.
	if _, stderr, _ := runOnTerminal(t, "check", a); strings.Contains(stderr, "\r") {
		t.Errorf("check of one file drew %q", stderr)
	}
}
