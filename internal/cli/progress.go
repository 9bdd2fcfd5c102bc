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

// progress is the progress bar of a long command: the input bytes read of the total (with
// MB/s and ETA) and the documents done per second, with the stage. Commands show it on
// standard error when that is a terminal and --quiet is off; otherwise every method does
// nothing.
type progress struct {
	bar   *progressbar.ProgressBar
	stats func() corpus.Stats
	docs  *atomic.Int64
	start time.Time
	name  atomic.Value // the stage
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newProgress(w io.Writer, show bool, stats func() corpus.Stats, docs *atomic.Int64) *progress {
	p := &progress{stats: stats, docs: docs, start: time.Now()}
	if !show {
		return p
	}
	p.bar = progressbar.NewOptions64(stats().Total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	)
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
	return p
}

func (p *progress) update() {
	n := p.docs.Load()
	rate := float64(n) / max(time.Since(p.start).Seconds(), 1e-3)
	stage, _ := p.name.Load().(string)
	p.bar.Describe(fmt.Sprintf("%-8s %d docs (%.0f/s)", stage, n, rate))
	p.bar.Set64(p.stats().Bytes)
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
