// Package gate lets a store's Close wait for the calls in progress without a lock that a
// nested call (one made from a callback of the call in progress) could wait on.
package gate

import (
	"sync"
	"sync/atomic"
)

// Gate counts the calls in progress; once Close has begun, Enter fails at once. Its
// methods are safe for concurrent use and cost one atomic add each. Make one with New.
type Gate struct {
	state atomic.Int64 // calls in progress, plus closedBit once close began
	once  sync.Once
	idle  chan struct{} // closed when the count of calls falls to 0 after close began
}

const closedBit = 1 << 62

// New returns an open gate.
func New() *Gate { return &Gate{idle: make(chan struct{})} }

// Enter starts a call and reports whether the gate is open; if it returns true, the
// caller calls Leave when done, and otherwise returns its ErrClosed.
func (g *Gate) Enter() bool {
	if g.state.Add(1)&closedBit != 0 {
		g.Leave()
		return false
	}
	return true
}

// Leave ends a call that Enter started.
func (g *Gate) Leave() {
	if g.state.Add(-1) == closedBit {
		g.once.Do(func() { close(g.idle) })
	}
}

// Close shuts the gate and waits for the calls in progress. It reports false, without
// waiting, if the gate was shut already.
func (g *Gate) Close() bool {
	old := g.state.Or(closedBit)
	if old&closedBit != 0 {
		return false
	}
	if old != 0 {
		<-g.idle
	}
	return true
}
