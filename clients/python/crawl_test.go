package python

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/testsite"
	"github.com/neardup/neardup/internal/testtool"
)

// TestPythonUnit runs the Python client's unit tests (clients/python/tests) against a
// real neardup serve: the scripted-server tests, the OpenAPI and cross-language vector
// tests, the service tests, and the Scrapy component tests when Scrapy is installed.
func TestPythonUnit(t *testing.T) {
	py := python(t)
	base := startServe(t, buildNeardup(t))
	cmd := exec.Command(py, "-m", "unittest", "discover", "-s", "tests", "-v")
	cmd.Env = append(os.Environ(), "PYTHONPATH=src", "NEARDUP_TEST_URL="+base, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestScrapyCrawl crawls the generated site (internal/testsite) with Scrapy and both
// neardup components against a real neardup serve, and checks the crawl against the
// planted truth: exactly one page of each group is kept (no unique page dropped, every
// planted copy and URL variant dropped), the verdict counts are the planted ones, and the
// service stores what was posted. A second crawl of the grown site, whose old pages the
// service knows, fetches none of them and keeps exactly the new ones.
func TestScrapyCrawl(t *testing.T) {
	scrapy := testtool.Path(t, "scrapy")
	base := startServe(t, buildNeardup(t))
	site := testsite.New(1, 200)
	siteURL, serve := testsite.Serve(t, site)

	c1 := runCrawl(t, scrapy, siteURL, base, true)
	checkKept(t, site, c1.items, site.Groups())
	for name, want := range map[string]int{
		"neardup/unique":          site.Groups(),
		"neardup/near-duplicate":  site.NearCopies,
		"neardup/exact-duplicate": site.ExactCopies,
		"neardup/changed":         0,
		"neardup/error":           0,
	} {
		if got := c1.stat(name); got != want {
			t.Errorf("first crawl: %s = %d, want %d", name, got, want)
		}
	}
	if got, want := c1.stat("neardup/dropped"), c1.stat("neardup/near-duplicate")+c1.stat("neardup/exact-duplicate")+c1.stat("neardup/url-duplicate"); got != want {
		t.Errorf("first crawl: neardup/dropped = %d, want the %d duplicates", got, want)
	}
	added := site.Groups() + site.NearCopies + site.ExactCopies // URL duplicates are not stored
	if got := serviceDocuments(t, base); got != added {
		t.Errorf("the service stores %d documents after the first crawl, want %d", got, added)
	}

	// The grown site: two new sections of new articles; everything else is known.
	before := site.Requests()
	grown := testsite.New(1, 220)
	serve(grown)
	c2 := runCrawl(t, scrapy, siteURL+"section/20/,"+siteURL+"section/21/,"+siteURL, base, true)
	// A start request is never screened (Scrapy marks it dont_filter): the home page is
	// fetched again, and is changed, since it lists the new sections.
	var newItems []item
	for _, it := range c2.items {
		if g, _ := grown.GroupOf(it.URL); g == "home" {
			t.Logf("second crawl: the home page again: %s", it.Neardup.Verdict)
			continue
		}
		newItems = append(newItems, it)
	}
	checkKept(t, grown, newItems, 22)
	for _, it := range newItems {
		if g, _ := grown.GroupOf(it.URL); g != "section/20" && g != "section/21" && !strings.HasPrefix(g, "article/2") {
			t.Errorf("second crawl kept %s (%s), which the first crawl stored", it.URL, g)
		}
	}
	for uri, n := range grown.Requests() {
		g, _ := grown.GroupOf(uri)
		if uri == "/" && n == 1 {
			continue // the start request
		}
		if g == "home" || g < "section/20" && strings.HasPrefix(g, "section/") {
			t.Errorf("second crawl fetched %s, whose URL the service knows", uri)
		}
	}
	if c2.stat("neardup/url-known") < 1+20 || c2.stat("neardup/url-new") < 22 {
		t.Errorf("second crawl: %d known URLs dropped (want the home page and 20 sections at least), %d pre-screened as new (want 22 at least)",
			c2.stat("neardup/url-known"), c2.stat("neardup/url-new"))
	}
	if len(site.Requests()) != len(before) {
		t.Errorf("the first site was fetched from again")
	}
}

// checkKept checks that the kept items are exactly one page of each of n groups.
func checkKept(t *testing.T, site *testsite.Site, items []item, n int) {
	t.Helper()
	seen := make(map[string]string)
	for _, it := range items {
		g, ok := site.GroupOf(it.URL)
		if !ok {
			t.Errorf("kept %s, which is not a page of the site", it.URL)
			continue
		}
		if prev, dup := seen[g]; dup {
			t.Errorf("kept both %s and %s of group %s: a planted duplicate was not dropped", prev, it.URL, g)
		}
		seen[g] = it.URL
		if it.Neardup.Verdict != "unique" {
			t.Errorf("kept %s with verdict %q", it.URL, it.Neardup.Verdict)
		}
	}
	if len(seen) != n {
		t.Errorf("kept pages of %d groups, want %d: a unique page was dropped", len(seen), n)
	}
}

type item struct {
	URL     string `json:"url"`
	Neardup struct {
		Verdict string `json:"verdict"`
	} `json:"neardup"`
}

type crawl struct {
	items []item
	stats map[string]any
}

func (c crawl) stat(name string) int {
	v, _ := c.stats[name].(float64)
	return int(v)
}

// runCrawl runs tests/site_spider.py from start (comma-separated URLs) with Scrapy, with
// or without the neardup components, and returns its items and stats.
func runCrawl(t testing.TB, scrapy, start, service string, withNeardup bool) crawl {
	t.Helper()
	dir := t.TempDir()
	itemsFile, statsFile := filepath.Join(dir, "items.jsonl"), filepath.Join(dir, "stats.json")
	args := []string{"runspider", "tests/site_spider.py", "-a", "start=" + start, "-a", "stats_out=" + statsFile,
		"-O", itemsFile + ":jsonlines", "-s", "FEED_EXPORT_FIELDS=url,neardup", "-s", "LOG_LEVEL=ERROR",
		"-s", "TELNETCONSOLE_ENABLED=False", "-s", "REQUEST_FINGERPRINTER_IMPLEMENTATION=2.7"}
	if withNeardup {
		args = append(args, "-s", "NEARDUP_URL="+service,
			"-s", `DOWNLOADER_MIDDLEWARES={"neardup.scrapy.NeardupDownloaderMiddleware": 950}`,
			"-s", `ITEM_PIPELINES={"neardup.scrapy.NeardupPipeline": 300}`)
	}
	cmd := exec.Command(scrapy, args...)
	cmd.Env = append(os.Environ(), "PYTHONPATH=src", "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scrapy %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var c crawl
	b, err := os.ReadFile(statsFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &c.stats); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(itemsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var it item
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatalf("%s: %v", itemsFile, err)
		}
		c.items = append(c.items, it)
	}
	return c
}

// python returns the interpreter of the scrapy command when there is one (Debian's
// python3-scrapy runs /usr/bin/python3, which a python3 earlier on the PATH may not
// be), so that the Scrapy component tests run too, or else the first python3.
func python(t testing.TB) string {
	t.Helper()
	if s, err := exec.LookPath("scrapy"); err == nil {
		if b, err := os.ReadFile(s); err == nil {
			line, _, _ := strings.Cut(string(b), "\n")
			if f := strings.Fields(strings.TrimPrefix(line, "#!")); len(f) == 1 && filepath.IsAbs(f[0]) {
				return f[0]
			}
		}
	}
	return testtool.Path(t, "python3")
}

// buildNeardup builds the neardup command into a temporary directory.
func buildNeardup(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "neardup")
	if out, err := exec.Command(testtool.Go(t), "build", "-o", bin, "github.com/neardup/neardup/cmd/neardup").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startServe runs bin serve over a new data directory on a free loopback port until the
// test ends, and returns its base URL once /readyz answers 200.
func startServe(t testing.TB, bin string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // serve takes the port; nothing else on loopback is expected to grab it meanwhile
	cmd := exec.Command(bin, "serve", "--addr", addr, "--data", filepath.Join(t.TempDir(), "data"), "--log-level", "warn")
	var logs strings.Builder
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	base := "http://" + addr
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("neardup serve at %s is not ready after a minute: %v\n%s", addr, err, logs.String())
		}
	}
}

// serviceDocuments returns the service's stored document count (GET /v1/stats).
func serviceDocuments(t testing.TB, base string) int {
	t.Helper()
	resp, err := http.Get(base + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Documents int `json:"documents"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.Documents
}
