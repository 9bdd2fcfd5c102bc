package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progressEvery is how often a progress line is redrawn: often enough to look alive,
// seldom enough to cost nothing.
const progressEvery = 250 * time.Millisecond

// progress is the one-line progress display of a long command, redrawn on a timer on
// standard error when that is a terminal (and --quiet is off); otherwise every method
// does nothing. A command runs in stages, each with its own counter, so the count, the
// rate and the percentage shown are always those of the work being done now: dedup's
// fingerprinting counts documents fingerprinted, not bytes read ahead of it, and a
// stage's rate is its count over its own time, so it cannot jump when a stage starts.
// Its methods are safe for concurrent use.
type progress struct {
	w     io.Writer // nil when hidden
	now   func() time.Time
	width int // the terminal's columns; 0: unknown, lines are not cut

	mu    sync.Mutex
	st    progressStage
	since time.Time // when st started
	drawn bool      // whether a line is on the screen

	stop chan struct{}
	wg   sync.WaitGroup
}

// progressStage is what a stage counts. The line reads
// "NAME  DONE[/TOTAL] UNIT [PCT%]  (RATE UNIT/s)  ELAPSED[, ETA left]  EXTRA".
type progressStage struct {
	name  string
	unit  string       // "docs", "files", "requests"; "B" shows counts as bytes
	done  func() int64 // nil: the stage shows its name and time only
	total int64        // 0: unknown, no percentage
	extra func() string
	// describe, when set, replaces the name, count and rate (a command that words its
	// own line); the percentage and times still follow.
	describe func() string
}

// newProgress returns a progress display on w when show, else one that draws nothing.
// It redraws every progressEvery until done.
func newProgress(w io.Writer, show bool) *progress {
	if !show {
		return &progress{}
	}
	width := 0
	if f, ok := w.(*os.File); ok {
		width, _, _ = term.GetSize(int(f.Fd()))
	}
	t := time.NewTicker(progressEvery)
	p := newProgressClock(w, width, time.Now, t.C)
	stop := p.stop
	p.wg.Go(func() { <-stop; t.Stop() })
	return p
}

// newProgressClock returns a progress display on w, a terminal of width columns (0:
// unknown), that reads the time from now and redraws on each tick: newProgress with a
// clock and a timer a test can drive.
func newProgressClock(w io.Writer, width int, now func() time.Time, tick <-chan time.Time) *progress {
	stop := make(chan struct{})
	p := &progress{w: w, width: width, now: now, since: now(), stop: stop}
	p.wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-tick:
				p.draw()
			}
		}
	})
	return p
}

// newCountProgress returns a display of one stage: done() of total, described by
// describe.
func newCountProgress(w io.Writer, show bool, total int64, done func() int64, describe func() string) *progress {
	p := newProgress(w, show)
	p.stage(progressStage{done: done, total: total, describe: describe})
	return p
}

// stage starts a stage: its count and time start from here.
func (p *progress) stage(s progressStage) {
	p.mu.Lock()
	if p.w != nil {
		p.st, p.since = s, p.now()
	}
	p.mu.Unlock()
	p.draw()
}

// draw writes the current line over the previous one.
func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.w == nil {
		return
	}
	// "\r" returns to the start of the line and ESC [K clears what a longer line left;
	// a line wider than the terminal would wrap, and "\r" would then redraw only its
	// last row, so it is cut.
	line := p.line(p.now())
	if r := []rune(line); p.width > 1 && len(r) >= p.width {
		line = string(r[:p.width-1])
	}
	fmt.Fprintf(p.w, "\r%s\x1b[K", line)
	p.drawn = true
}

// line renders the stage at time now.
func (p *progress) line(now time.Time) string {
	s := p.st
	elapsed := max(now.Sub(p.since), 0)
	var b strings.Builder
	var n int64
	if s.done != nil {
		n = s.done()
	}
	if s.describe != nil {
		b.WriteString(s.describe())
	} else {
		fmt.Fprintf(&b, "%-11s", s.name)
		if s.done != nil {
			b.WriteString(" " + countString(n, s.unit))
			if s.total > 0 {
				b.WriteString(" of " + countString(s.total, s.unit))
			}
			if sec := elapsed.Seconds(); sec >= 0.5 { // a rate over less is noise
				b.WriteString(" (" + countString(int64(float64(n)/sec), s.unit) + "/s)")
			}
		}
	}
	if s.done != nil && s.total > 0 {
		frac := min(max(float64(n)/float64(s.total), 0), 1)
		const width = 20
		full := int(frac * width)
		fmt.Fprintf(&b, " [%s%s] %3.0f%%", strings.Repeat("=", full), strings.Repeat(" ", width-full), 100*frac)
	}
	b.WriteString("  " + clock(elapsed))
	if s.done != nil && s.total > 0 && n > 0 && n < s.total && elapsed >= time.Second {
		left := time.Duration(float64(elapsed) * float64(s.total-n) / float64(n))
		b.WriteString(", " + clock(left) + " left")
	}
	if s.extra != nil {
		if x := s.extra(); x != "" {
			b.WriteString("  " + x)
		}
	}
	return b.String()
}

// countString writes n in unit, bytes ("B") in kB, MB, ...
func countString(n int64, unit string) string {
	if unit == "B" {
		return humanBytes(n)
	}
	if unit == "" {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d %s", n, unit)
}

// clock formats d as m:ss, or h:mm:ss from an hour.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// above returns a writer for messages to w, the display's own stream, that clears the
// progress line before each write, so that a message never starts after it; the next
// tick draws the line again below the message.
func (p *progress) above(w io.Writer) io.Writer {
	if p.w == nil {
		return w
	}
	return aboveWriter{p, w}
}

type aboveWriter struct {
	p *progress
	w io.Writer
}

func (a aboveWriter) Write(b []byte) (int, error) {
	a.p.mu.Lock()
	defer a.p.mu.Unlock()
	if a.p.drawn {
		io.WriteString(a.w, "\r\x1b[K")
		a.p.drawn = false
	}
	return a.w.Write(b)
}

// isTerminal reports whether w is a terminal, where a progress line belongs.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// done stops the redrawing and clears the line, so that what is printed next starts on
// a clean line. It may be called more than once.
func (p *progress) done() {
	p.mu.Lock()
	stop := p.stop
	p.stop = nil
	p.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	p.wg.Wait()
	p.mu.Lock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	p.w = nil
	p.mu.Unlock()
}
