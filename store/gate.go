package store

import (
	"sync"
	"sync/atomic"
)

// gate lets Close wait for the calls in progress without a lock that a nested call could
// wait on: a call that starts once Close has begun fails at once with ErrClosed. Make one
// with newGate.
type gate struct {
	state atomic.Int64 // calls in progress, plus closedBit once close began
	once  sync.Once
	idle  chan struct{} // closed when the count of calls falls to 0 after close began
}

const closedBit = 1 << 62

func newGate() *gate { return &gate{idle: make(chan struct{})} }

// enter starts a call; if it returns nil, the caller calls leave when done.
func (g *gate) enter() error {
	if g.state.Add(1)&closedBit != 0 {
		g.leave()
		return ErrClosed
	}
	return nil
}

// leave ends a call that enter started.
func (g *gate) leave() {
	if g.state.Add(-1) == closedBit {
		g.once.Do(func() { close(g.idle) })
	}
}

// close shuts the gate and waits for the calls in progress; it returns ErrClosed if the
// gate was shut already.
func (g *gate) close() error {
	old := g.state.Or(closedBit)
	if old&closedBit != 0 {
		return ErrClosed
	}
	if old != 0 {
		<-g.idle
	}
	return nil
}
