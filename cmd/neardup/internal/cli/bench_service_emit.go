package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// runEmit writes the request bodies of --requests requests to c.emit, one a line, and a
// wrk script that sends them, in order, to c.emit + ".lua". No service is needed.
func (c *benchServiceCmd) runEmit(e *env, docs *loadDocs) error {
	abs, err := filepath.Abs(c.emit)
	if err != nil {
		return err
	}
	w := &loadWorkload{docs: docs, ops: loadOps(c.mode), start: c.start, batch: c.batch}
	if err := c.preparePool(e, w); err != nil {
		return err
	}
	f, err := os.Create(abs)
	if err != nil {
		return err
	}
	cl := &loadClient{w: w, corpus: docs.corpus.Clone()}
	bw := bufio.NewWriterSize(f, 1<<20)
	var path string
	var size int64
	for range c.requests {
		var body []byte
		path, body, _ = cl.request(w.ops[0])
		bw.Write(body) // a JSON body holds no raw line break
		bw.WriteByte('\n')
		size += int64(len(body)) + 1
	}
	err = bw.Flush()
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
	if err := os.WriteFile(script, wrkScript(abs, path, c.token), perm); err != nil {
		return fmt.Errorf("writing the wrk script: %w", err)
	}
	what, next := "documents", c.start+int(w.docSeq.Load())
	if w.ops[0] == opQuery {
		what, next = "queries of documents", c.start+int(w.querySeq.Load())
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

// wrkScript is a wrk script that POSTs the lines of the file bodies, in order, to path,
// and stops wrk when they run out. wrk gives each of its threads a Lua state of its
// own, and each would send the file from its start, so a second thread stops it too.
func wrkScript(bodies, path, token string) []byte {
	var b strings.Builder
	b.WriteString("-- Written by neardup bench service --emit: sends each line of the bodies file once,\n")
	b.WriteString("-- in order, as the body of a POST. Run it with one thread: wrk -t1 -cN -dD -s THIS URL.\n")
	fmt.Fprintf(&b, "local file = %s\n", luaQuote(bodies))
	b.WriteString("local bodies = assert(io.open(file, \"r\"))\n")
	b.WriteString("local threads = 0\n")
	b.WriteString("wrk.method = \"POST\"\n")
	fmt.Fprintf(&b, "wrk.path = %s\n", luaQuote(path))
	b.WriteString("wrk.headers[\"Content-Type\"] = \"application/json\"\n")
	if token != "" {
		fmt.Fprintf(&b, "wrk.headers[\"Authorization\"] = %s\n", luaQuote("Bearer "+token))
	}
	b.WriteString(`function setup(thread)
  threads = threads + 1
  if threads > 1 then
    io.stderr:write("neardup: run this script with one wrk thread (-t1): each thread would send every body\n")
    os.exit(2)
  end
end
-- wrk calls request() once to check the script before it sends anything: that call's
-- body is the first one sent.
local checked, pending = false, nil
function request()
  local body = pending or bodies:read("*l")
  pending = nil
  if not checked then
    checked, pending = true, body
  end
  if body == nil then
    io.stderr:write("neardup: the bodies in " .. file .. " ran out; emit more with a larger --requests\n")
    os.exit(1)
  end
  return wrk.format(nil, nil, nil, body)
end
`)
	return []byte(b.String())
}

// luaQuote returns s as a Lua string literal: printable ASCII as it is, other bytes as
// decimal escapes, which every Lua reads.
func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '"' || ch == '\\':
			b.WriteByte('\\')
			b.WriteByte(ch)
		case ch >= ' ' && ch <= '~':
			b.WriteByte(ch)
		default:
			fmt.Fprintf(&b, "\\%03d", ch)
		}
	}
	b.WriteByte('"')
	return b.String()
}
