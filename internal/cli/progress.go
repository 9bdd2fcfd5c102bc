package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/neardup/neardup/corpus"
)

// progress is the progress bar of a long command. newProgress makes dedup's: the input
// bytes read of the total (with MB/s and ETA) and the documents done per second, with the
// stage; newCountProgress makes one of any count (requests, documents, milliseconds of a
// timed run) with a description the command writes. Commands show it on standard error
// when that is a terminal and --quiet is off; otherwise every method does nothing.
type progress struct {
	bar      *progressbar.ProgressBar
	current  func() int64  // how far along, of the bar's total
	describe func() string // the text before the bar
	name     atomic.Value  // the stage
	stop     chan struct{}
	wg       sync.WaitGroup
}

// newProgress returns dedup's bar: stats' Bytes of Total, and docs per second.
func newProgress(w io.Writer, show bool, stats func() corpus.Stats, docs *atomic.Int64) *progress {
	p := &progress{current: func() int64 { return stats().Bytes }}
	start := time.Now()
	p.describe = func() string {
		n := docs.Load()
		rate := float64(n) / max(time.Since(start).Seconds(), 1e-3)
		return fmt.Sprintf("%-8s %d docs (%.0f/s)", p.stageName(), n, rate)
	}
	if show {
		p.start(w, stats().Total, progressbar.OptionShowBytes(true))
	}
	return p
}

// newCountProgress returns a bar of done() out of total, described by describe (which
// may call stageName). The bar shows the elapsed and the estimated remaining time.
func newCountProgress(w io.Writer, show bool, total int64, done func() int64, describe func() string) *progress {
	p := &progress{current: done, describe: describe}
	if show {
		p.start(w, total)
	}
	return p
}

func (p *progress) start(w io.Writer, total int64, opts ...progressbar.Option) {
	p.bar = progressbar.NewOptions64(total, append([]progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	}, opts...)...)
	p.stop = make(chan struct{})
	p.wg.Go(func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.update()
			}
		}
	})
}

func (p *progress) update() {
	p.bar.Describe(p.describe())
	p.bar.Set64(p.current())
}

// isTerminal reports whether w is a terminal, where a progress bar belongs.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// stage names what is being done now.
func (p *progress) stage(name string) {
	p.name.Store(name)
}

// stageName returns the name given to stage, or "".
func (p *progress) stageName() string {
	s, _ := p.name.Load().(string)
	return s
}

// done removes the bar.
func (p *progress) done() {
	if p.bar == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	p.bar.Finish()
	p.bar = nil
}
