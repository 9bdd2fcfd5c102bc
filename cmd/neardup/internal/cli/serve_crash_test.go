package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveCrashData is the environment variable that turns TestServeCrash into the child:
// "neardup serve" on the --data directory it names.
const serveCrashData = "NEARDUP_TEST_SERVE_CRASH_DATA"

// serveCrashClients is how many clients post documents at once.
const serveCrashClients = 12

// TestServeCrash checks the service's promise that a document acknowledged as added (200
// with "added": true) survives kill -9. Each round re-executes the test binary as a child
// that runs "neardup serve" through Main on one data directory, waits for /readyz,
// checks with GET /v1/documents/{id} that every document acknowledged in the round
// before is there, then posts documents from 12 clients and kills the child with SIGKILL
// 50 to 400 ms after the first acknowledgement, with requests in flight. After the last
// round one more child checks the documents of every round, and /v1/stats. 20 rounds
// (about 40 s with -race on 2 cores); 3 with -short.
//
// The documents are a few hundred random words; some are exact or near copies of earlier
// ones (added too: only a URL duplicate is not), some have a URL, and some repeat an
// earlier document's URL and text (a URL duplicate, not added, unless the first was lost
// unacknowledged). A URL never comes with two texts, so no document replaces another
// ("changed"), and ids are never reused: every acknowledged id must stay.
//
// Killing the process does not lose the operating system's page cache, so this checks
// that an acknowledged document had been written to pebble's log file, not that it had
// reached the disk (the fsync, against power loss, which a process kill cannot test).
// With Detector.CheckEntry acknowledging before its Sync (a scratch edit) it fails.
func TestServeCrash(t *testing.T) {
	if dir := os.Getenv(serveCrashData); dir != "" {
		serveCrashChild(dir)
		return
	}
	rounds := 20
	if testing.Short() {
		rounds = 3
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	pool := &crashPool{}
	var acked []string // every id acknowledged as added, in all rounds so far
	lastRound := 0     // where the last round's ids start in acked
	start := time.Now()
	// Children are started two rounds ahead, so that their package initialization, which
	// takes seconds with -race, overlaps earlier rounds; they wait to be told to serve.
	var children []*crashChild
	for round := 0; round <= rounds; round++ {
		for n := len(children); n < min(round+3, rounds+1); n++ {
			children = append(children, spawnCrashChild(t, dir))
		}
		child := children[round]
		child.serve(t)
		// The documents acknowledged before the last kill; a document lost earlier
		// would not come back, and the last round checks them all: checking all of
		// them every round would cost rounds² lookups, at milliseconds each with -race.
		check := acked[lastRound:]
		if round == rounds {
			check = acked
		}
		if lost := child.missing(t, check); len(lost) > 0 {
			t.Fatalf("after kill -9 in round %d: %d of %d acknowledged documents lost: %s",
				round-1, len(lost), len(check), crashIDs(lost))
		}
		if round == rounds {
			// Every add was an unknown id whose URL, if any, was stored with the same
			// text or not at all, so nothing acknowledged was replaced or removed: the
			// count has every acknowledged document, and those lost unacknowledged.
			var st struct{ Documents int }
			if code, body := child.get("/v1/stats"); code != 200 || json.Unmarshal(body, &st) != nil {
				t.Fatalf("stats: %d %s", code, body)
			} else if st.Documents < len(acked) {
				t.Errorf("stats: %d documents, but %d were acknowledged and none replaced", st.Documents, len(acked))
			}
			child.kill()
			break
		}
		delay := time.Duration(50+r.IntN(351)) * time.Millisecond
		ids, dups := child.load(t, round, pool, delay)
		if len(ids) == 0 {
			t.Fatalf("round %d: no document acknowledged\n%s", round, child.logs)
		}
		lastRound = len(acked)
		acked = append(acked, ids...)
		t.Logf("round %d: killed %v after the first acknowledgement; %d added, %d URL duplicates",
			round, delay, len(ids), dups)
	}
	t.Logf("%d rounds, %d acknowledged documents, all present, in %v", rounds, len(acked), time.Since(start).Round(time.Millisecond))
}

// serveCrashChild waits for a line on its standard input, then runs "neardup serve" on
// dir until it is killed, or until its standard input closes: the parent died without
// killing it. The wait lets the parent start it before the child serving dir is killed:
// the test binary can take long to start with -race on a loaded machine.
func serveCrashChild(dir string) {
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		os.Exit(3)
	}
	go func() {
		io.Copy(io.Discard, in)
		os.Exit(3)
	}()
	os.Exit(Main([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0", "--log-format", "json",
		"--max-inflight", "64"}, strings.NewReader(""), os.Stdout, os.Stderr))
}

// crashChild is one child of TestServeCrash.
type crashChild struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd.Wait has returned
	stdin  io.WriteCloser
	base   string // "http://127.0.0.1:PORT"
	client *http.Client
	logs   *syncBuffer // the child's standard error
}

// spawnCrashChild starts a child that will serve dir once told to by serve.
func spawnCrashChild(t *testing.T, dir string) *crashChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeCrash$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NEARDUP_") { // flags from the environment would change serve
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, serveCrashData+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &crashChild{cmd: cmd, exited: make(chan struct{}), stdin: stdin, logs: &syncBuffer{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: serveCrashClients}, Timeout: 30 * time.Second}}
	cmd.Stderr = c.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(c.exited) }()
	t.Cleanup(c.kill)
	return c
}

// serve tells the child to run "neardup serve" and returns once /readyz answers 200.
func (c *crashChild) serve(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, "serve\n"); err != nil {
		t.Fatalf("starting the child: %v\n%s", err, c.logs)
	}
	// The child listens on port 0 and logs the address.
	for deadline := time.Now().Add(30 * time.Second); c.base == ""; time.Sleep(5 * time.Millisecond) {
		for line := range strings.Lines(c.logs.String()) {
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "listening" {
				c.base = "http://" + l.Addr
			}
		}
		select {
		case <-c.exited:
			if c.base == "" {
				t.Fatalf("the child stopped before listening\n%s", c.logs)
			}
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child did not listen within 30 s\n%s", c.logs)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if code, _ := c.get("/readyz"); code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready within 30 s\n%s", c.logs)
		}
	}
}

// kill kills the child with SIGKILL and waits for it; killing it twice is harmless.
func (c *crashChild) kill() {
	c.cmd.Process.Kill()
	<-c.exited
	c.stdin.Close()
	c.client.CloseIdleConnections()
}

// get returns the status and body of GET path, or 0 when the request failed.
func (c *crashChild) get(path string) (int, []byte) {
	resp, err := c.client.Get(c.base + path)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil
	}
	return resp.StatusCode, b
}

// missing returns the ids GET /v1/documents/{id} does not find, sorted; it fails the
// test on an answer other than 200 or 404.
func (c *crashChild) missing(t *testing.T, ids []string) []string {
	t.Helper()
	var (
		mu   sync.Mutex
		lost []string
		bad  string
		wg   sync.WaitGroup
	)
	next := make(chan string)
	for range 8 {
		wg.Go(func() {
			for id := range next {
				code, body := c.get("/v1/documents/" + id)
				var doc struct{ ID string }
				if code == 200 && json.Unmarshal(body, &doc) == nil && doc.ID == id {
					continue
				}
				mu.Lock()
				if code == 404 {
					lost = append(lost, id)
				} else if bad == "" {
					bad = fmt.Sprintf("GET /v1/documents/%s: %d %s", id, code, body)
				}
				mu.Unlock()
			}
		})
	}
	for _, id := range ids {
		next <- id
	}
	close(next)
	wg.Wait()
	if bad != "" {
		t.Fatalf("%s\n%s", bad, c.logs)
	}
	slices.Sort(lost)
	return lost
}

// load posts documents from serveCrashClients clients until it kills the child, delay
// after the first acknowledgement, and returns the ids acknowledged as added and the
// number of URL duplicates.
func (c *crashChild) load(t *testing.T, round int, pool *crashPool, delay time.Duration) (added []string, urlDups int) {
	t.Helper()
	var (
		mu    sync.Mutex
		bad   string
		first = make(chan struct{})
		once  sync.Once
		wg    sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for client := range serveCrashClients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(round<<8|client)))
			for n := 0; ctx.Err() == nil; n++ {
				doc := pool.next(r, fmt.Sprintf("r%02d-c%02d-%05d", round, client, n))
				body, _ := json.Marshal(doc)
				req, _ := http.NewRequestWithContext(ctx, "POST", c.base+"/v1/documents", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := c.client.Do(req)
				if err != nil {
					continue // killed, or 30 s passed: not acknowledged
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					continue // cut off, or 429 or 503: not acknowledged
				}
				var v struct {
					ID, Verdict string
					Added       bool
				}
				mu.Lock()
				switch {
				case json.Unmarshal(b, &v) != nil || v.ID != doc.ID:
					bad = fmt.Sprintf("POST %s: 200 %s", body, b)
				case v.Added:
					added = append(added, doc.ID)
					once.Do(func() { close(first) })
				case v.Verdict == "url-duplicate":
					urlDups++
				default:
					bad = fmt.Sprintf("POST %s: 200 %s, not added and not a URL duplicate", body, b)
				}
				mu.Unlock()
			}
		})
	}
	select {
	case <-first:
		time.Sleep(delay)
	case <-time.After(30 * time.Second):
	}
	c.kill()
	cancel()
	wg.Wait()
	if bad != "" {
		t.Fatalf("round %d: %s", round, bad)
	}
	return added, urlDups
}

// crashDoc is the body of POST /v1/documents.
type crashDoc struct {
	ID   string `json:"id"`
	URL  string `json:"url,omitempty"`
	Text string `json:"text"`
}

// crashPool makes TestServeCrash's documents, remembering recent ones to copy; it is
// safe for concurrent use.
type crashPool struct {
	mu     sync.Mutex
	recent []crashDoc // the last documents made, with their URLs, for copies
}

// next returns a new document with the id: half the time new text, else an exact or a
// near copy of a recent document, or its URL and text again. A URL is always stored with
// one text, so a document never replaces another.
func (p *crashPool) next(r *rand.Rand, id string) crashDoc {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := crashDoc{ID: id}
	var from crashDoc
	if len(p.recent) > 0 {
		from = p.recent[r.IntN(len(p.recent))]
	}
	switch k := r.IntN(10); {
	case from.Text == "" || k < 5:
		d.Text = crashText(r, 150+r.IntN(250))
	case k < 7: // exact copy
		d.Text = from.Text
	case k < 9: // near copy: a few words changed
		w := strings.Fields(from.Text)
		for range 1 + len(w)/100 {
			w[r.IntN(len(w))] = crashWord(r)
		}
		d.Text = strings.Join(w, " ")
	default: // the same page again: a URL duplicate, if the first was stored
		if from.URL != "" {
			d.URL = from.URL
		}
		d.Text = from.Text
	}
	if d.URL == "" && r.IntN(3) == 0 {
		d.URL = "https://example.com/page/" + id
	}
	if len(p.recent) < 256 {
		p.recent = append(p.recent, d)
	} else {
		p.recent[r.IntN(len(p.recent))] = d
	}
	return d
}

// crashText returns n random words.
func crashText(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(crashWord(r))
	}
	return b.String()
}

// crashWord returns one of 8,000 made-up words.
func crashWord(r *rand.Rand) string {
	const c, v = "bcdfghklmnprstvz", "aeiou"
	i := r.IntN(8000)
	return string([]byte{c[i%16], v[i/16%5], c[i/80%16], v[i/1280%5], c[i/6400%16]})
}

// crashIDs lists ids for a failure message, the first 50 of them.
func crashIDs(ids []string) string {
	if len(ids) > 50 {
		return strings.Join(ids[:50], " ") + fmt.Sprintf(" ... (%d more)", len(ids)-50)
	}
	return strings.Join(ids, " ")
}
