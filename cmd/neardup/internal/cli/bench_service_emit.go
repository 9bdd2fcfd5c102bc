package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/cmd/neardup/internal/bench"
)

// runEmit writes the request bodies of --requests requests to c.emit, one a line, and a
// wrk script that sends them, in order, to c.emit + ".lua". No service is needed.
func (c *benchServiceCmd) runEmit(e *env, docs *bench.Docs) error {
	abs, err := filepath.Abs(c.emit)
	if err != nil {
		return err
	}
	ops := bench.ParseMode(c.mode)
	w := bench.NewWorkload(bench.WorkloadConfig{Docs: docs, Ops: ops, Start: c.start, Batch: c.batch})
	if err := c.preparePool(e, w, ops); err != nil {
		return err
	}
	f, err := os.Create(abs)
	if err != nil {
		return err
	}
	path, size, err := w.Emit(f, c.requests)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", abs, err)
	}
	script := abs + ".lua"
	perm := os.FileMode(0o644)
	if c.token != "" {
		perm = 0o600 // it holds the token
	}
	if err := os.WriteFile(script, bench.WrkScript(abs, path, c.token), perm); err != nil {
		return fmt.Errorf("writing the wrk script: %w", err)
	}
	what, next := "documents", w.Next()
	if c.mode == "query" {
		what = "queries of documents"
	}
	_, err = fmt.Fprintf(e.stdout, "wrote %d request bodies for POST %s to %s (%s), %s doc-%d to doc-%d\n"+
		"(next --start %d), and a wrk script that sends each once, in order, to %s.\n"+
		"Run it with one wrk thread:\n\n"+
		"  wrk -t1 -c%d -d60s --latency -s %s %s\n\n"+
		"The script stops wrk with an error when the bodies run out, before any is sent twice.\n",
		c.requests, path, abs, humanBytes(size), what, c.start, next-1, next,
		script, c.clients, shellQuote(script), c.addr)
	return err
}

// shellQuote returns s quoted for a POSIX shell when it needs to be.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
