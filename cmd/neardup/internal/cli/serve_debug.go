package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/neardup/neardup/server"
)

// serveDebug serves Go's pprof profiles at addr, a listener apart from the API's so that
// they are never on the public one, and returns what stops it. It refuses an address
// other machines can reach: the profiles have no authentication (the API's rule without
// tokens), and they expose the command line and the heap.
func serveDebug(addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--debug-addr %s: %w", addr, err)
	}
	if !server.Loopback(ln.Addr()) {
		ln.Close()
		return nil, usagef("--debug-addr %s is reachable from other machines, and pprof has no authentication: listen on 127.0.0.1 (and reach it through an SSH tunnel)", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("debug listener failed", "err", err)
		}
	}()
	log.Info("pprof listening", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		hs.Shutdown(ctx)
	}, nil
}
