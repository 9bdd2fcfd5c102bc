package bench

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Emit writes the bodies of requests requests of w's first operation to out, one a
// line, as the clients would send them, and returns the path they go to and the bytes
// written. No service is needed. Call Prepare first: bodies past the prepared ones are
// encoded here.
func (w *Workload) Emit(out io.Writer, requests int) (path string, size int64, err error) {
	cl := &loadClient{w: w, corpus: w.docs.corpus.Clone()}
	bw := bufio.NewWriterSize(out, 1<<20)
	for range requests {
		var body []byte
		path, body, _ = cl.request(w.ops[0])
		bw.Write(body) // a JSON body holds no raw line break
		bw.WriteByte('\n')
		size += int64(len(body)) + 1
	}
	return path, size, bw.Flush()
}

// Next returns the index of the first document, or with --mode query the first
// query's document, that no request of w has carried yet.
func (w *Workload) Next() int {
	if w.ops[0] == OpQuery {
		return w.start + int(w.querySeq.Load())
	}
	return w.start + int(w.docSeq.Load())
}

// WrkScript is a wrk script that POSTs the lines of the file bodies, in order, to path,
// and stops wrk when they run out. wrk gives each of its threads a Lua state of its
// own, and each would send the file from its start, so a second thread stops it too.
func WrkScript(bodies, path, token string) []byte {
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
