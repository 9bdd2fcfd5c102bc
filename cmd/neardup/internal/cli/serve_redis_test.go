package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/store/redisstore"
)

// TestServeRedis runs two serve replicas over one real Redis Cluster, as behind a load
// balancer: what one adds the other finds, and the same content posted to both at the
// same instant is unique on exactly one.
func TestServeRedis(t *testing.T) {
	c := redistest.Start(t)
	var bases []string
	for range 2 {
		base, stop, logs := startServe(t, nil, "--addr", "127.0.0.1:0", "--redis", c.URL(), "--redis-prefix", "serve", "--redis-wait", "1", "--redis-documents", "5000")
		t.Cleanup(func() {
			if err := stop(); err != nil {
				t.Errorf("serve: %v\n%s", err, logs)
			}
		})
		waitReady(t, base)
		if out := logs.String(); strings.Contains(out, "msg=\"redis ") || strings.Contains(out, "band-memory") {
			t.Errorf("warnings on a cluster set up as the service needs:\n%s", out)
		}
		bases = append(bases, base)
	}
	post := func(base, id, text string) string {
		t.Helper()
		body := fmt.Sprintf(`{"id":%q,"text":%q}`, id, text)
		resp, err := http.Post(base+"/v1/documents", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v struct{ Verdict string }
		if resp.StatusCode != 200 || json.Unmarshal(b, &v) != nil {
			t.Fatalf("POST %s: %d %s", id, resp.StatusCode, b)
		}
		return v.Verdict
	}
	checkRedisDocuments(t, c)
	if v := post(bases[0], "a", "hello there world, a page"); v != "unique" {
		t.Errorf("first add: %s", v)
	}
	if v := post(bases[1], "b", "hello there world, a page"); v != "exact-duplicate" {
		t.Errorf("the same text on the other replica: %s, want exact-duplicate", v)
	}
	for i := range 50 {
		var vs [2]string
		var wg sync.WaitGroup
		for j := range 2 {
			wg.Go(func() {
				vs[j] = post(bases[j], fmt.Sprintf("r%d-%d", i, j), fmt.Sprintf("race number %d of the serve test", i))
			})
		}
		wg.Wait()
		if (vs[0] == "unique") == (vs[1] == "unique") {
			t.Fatalf("race %d: verdicts %q; want exactly one unique", i, vs)
		}
	}
	testServeRedisFull(t, c, bases[0])
	resp, err := http.Get(bases[1] + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Store struct{ Path, Kind string } }
	if json.NewDecoder(resp.Body).Decode(&st) != nil || st.Store.Kind != "redis" || st.Store.Path != strings.Join(c.Addrs, ",") {
		t.Errorf("stats store = %+v, want kind redis at the cluster's nodes", st.Store)
	}
}

// checkRedisDocuments checks the store TestServeRedis's replicas made with
// --redis-documents 5000: a bucket a document, a power of two; and that a replica
// asking another size for it says it keeps its own.
func checkRedisDocuments(t *testing.T, c *redistest.Cluster) {
	t.Helper()
	o, err := redisstore.ParseURL(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	o.Prefix = "serve"
	s, err := redisstore.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Buckets(); n != 8192 {
		t.Errorf("a store made with --redis-documents 5000 has %d buckets, want 8192", n)
	}
	s.Close()
	// A replica that asks another size for the existing store says it keeps its own.
	base, stop, logs := startServe(t, nil, "--addr", "127.0.0.1:0", "--redis", c.URL(), "--redis-prefix", "serve", "--redis-documents", "100000")
	waitReady(t, base)
	if err := stop(); err != nil {
		t.Fatalf("serve: %v\n%s", err, logs)
	}
	if !strings.Contains(logs.String(), "keeps the 8192 buckets it was created with") {
		t.Errorf("no warning that --redis-documents 100000 does not resize the store:\n%s", logs)
	}
}

// testServeRedisFull sets every master's maxmemory below what it uses, as a cluster
// that filled up: an add gets 507, /readyz 503 no_space naming the masters, reads go
// on; once maxmemory is lifted the replica is ready again with no write, and adds are
// taken.
func testServeRedisFull(t *testing.T, c *redistest.Cluster, base string) {
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: slices.Clone(c.Addrs)})
	defer cc.Close()
	setMax := func(half bool) {
		t.Helper()
		if err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			m := int64(0) // no limit
			if half {
				used, _ := strconv.ParseInt(n.InfoMap(ctx, "memory").Val()["Memory"]["used_memory"], 10, 64)
				m = used / 2
			}
			return n.ConfigSet(ctx, "maxmemory", fmt.Sprint(m)).Err()
		}); err != nil {
			t.Fatal(err)
		}
	}
	defer setMax(false)
	setMax(true)
	if code, body := httpDo(t, "POST", base+"/v1/documents", docJSON(1)); code != http.StatusInsufficientStorage || !strings.Contains(body, "maxmemory") {
		t.Fatalf("add to a full cluster: %d %s, want 507 naming maxmemory", code, body)
	}
	if code, body := httpDo(t, "POST", base+"/v1/check", docJSON(1)); code != 200 {
		t.Errorf("check on a full cluster: %d %s, want it answered", code, body)
	}
	waitStatus(t, base, 503, `"no_space"`)
	setMax(false)
	waitStatus(t, base, 200, `"ready"`)
	if code, body := httpDo(t, "POST", base+"/v1/documents", docJSON(2)); code != 200 {
		t.Fatalf("add once the masters have room: %d %s", code, body)
	}
}

// waitStatus waits up to 15 s for /readyz to answer code with a body holding want.
func waitStatus(t *testing.T, base string, code int, want string) {
	t.Helper()
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got, body := httpDo(t, "GET", base+"/readyz", "")
		if got == code && strings.Contains(body, want) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("/readyz: %d %s; want %d with %s", got, body, code, want)
		}
	}
}
