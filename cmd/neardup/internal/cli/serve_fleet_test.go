package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/client"
	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/internal/testtool"
)

// serveFleetArgs is the environment variable that turns TestServeFleet into a replica:
// the arguments of Main, separated by newlines.
const serveFleetArgs = "NEARDUP_TEST_SERVE_FLEET_ARGS"

// TestServeFleet runs the fleet README shows: two `neardup serve --redis` replicas, each
// a process of its own, over one real Redis Cluster, behind Debian's haproxy with
// scripts/haproxy.cfg, and the Go client in front. Clients add documents, some exact
// copies of earlier ones, through the proxy from four goroutines; one replica is killed
// with SIGKILL meanwhile, and not one call fails. Then every document acknowledged is
// found, each copy added after the kill was found a duplicate of its original (the
// index is the cluster's, not the dead replica's), a replica started again answers at
// once for documents added while it was down, and a client of both replicas without
// the proxy (client.NewReplicas) rides over the other one's death too.
func TestServeFleet(t *testing.T) {
	if args := os.Getenv(serveFleetArgs); args != "" {
		os.Exit(Main(strings.Split(args, "\n"), strings.NewReader(""), os.Stdout, os.Stderr))
	}
	haproxy := testtool.Path(t, "haproxy")
	c := redistest.Start(t)
	ports := freePorts(t, 3)
	replica := func(i int) *exec.Cmd {
		t.Helper()
		args := []string{"serve", "--addr", ports[i], "--redis", c.URL(), "--redis-prefix", "fleet", "--redis-documents", "5000"}
		cmd := exec.Command(os.Args[0], "-test.run", "^TestServeFleet$")
		cmd.Env = append(os.Environ(), serveFleetArgs+"="+strings.Join(args, "\n"))
		logs := &syncBuffer{}
		cmd.Stderr = logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
			if t.Failed() {
				t.Logf("replica %d's log:\n%s", i+1, logs)
			}
		})
		waitReady(t, "http://"+ports[i])
		return cmd
	}
	replicas := []*exec.Cmd{replica(0), replica(1)}

	cfg, err := filepath.Abs("../../../../scripts/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	lb := exec.Command(haproxy, "-f", cfg, "-db")
	lb.Env = append(os.Environ(), "NEARDUP_LB="+ports[2], "NEARDUP_REPLICA_1="+ports[0], "NEARDUP_REPLICA_2="+ports[1])
	lbLogs := &syncBuffer{}
	lb.Stdout, lb.Stderr = lbLogs, lbLogs
	if err := lb.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		lb.Process.Kill()
		lb.Wait()
		if t.Failed() {
			t.Logf("haproxy's log:\n%s", lbLogs)
		}
	})
	base := "http://" + ports[2]
	waitReady(t, base)

	ctx := context.Background()
	cl, err := client.New(base, client.Options{Retries: 8})
	if err != nil {
		t.Fatal(err)
	}
	// Document i is an exact copy of document original(i), an even one added some 100
	// adds before, when i is odd and at least 100; a text of its own otherwise.
	original := func(i int) int {
		if i%2 == 1 && i >= 100 {
			return i - 99
		}
		return i
	}
	text := func(i int) string {
		i = original(i)
		return fmt.Sprintf("document %d of the fleet test, with words enough to be fingerprinted: %s", i, strings.Repeat(fmt.Sprintf("w%d ", i), 20))
	}
	const docs = 400
	var next, acked atomic.Int64
	verdicts := make([]api.Verdict, docs)
	kill := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < docs; i = int(next.Add(1) - 1) {
				v, err := cl.Add(ctx, api.Document{ID: fmt.Sprint("f", i), Text: text(i)})
				if err != nil {
					t.Errorf("add %d through the proxy: %v", i, err)
					return
				}
				verdicts[i] = v
				if acked.Add(1) == 150 {
					close(kill)
				}
			}
		})
	}
	<-kill
	if err := replicas[0].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i := range docs {
		id := fmt.Sprint("f", i)
		if _, ok, err := cl.Get(ctx, id); err != nil || !ok {
			t.Fatalf("document %s, acknowledged, not found through the proxy: %v, %v", id, ok, err)
		}
		// A copy is a duplicate of its original, whichever replica answered each, before
		// the kill and after.
		if o := original(i); o != i {
			if v := verdicts[i]; v.Kind != api.ExactDuplicate || v.Survivor != fmt.Sprint("f", o) {
				t.Errorf("copy %s of f%d: %s, survivor %s", id, o, v.Kind, v.Survivor)
			}
		}
	}

	// A replica started again answers at once for what the other added meanwhile, with
	// no data to move.
	replicas[0] = replica(0)
	if err := replicas[1].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	direct, err := client.NewReplicas([]string{"http://" + ports[1], "http://" + ports[0]}, client.Options{Retries: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := docs - 20; i < docs; i++ {
		if _, ok, err := direct.Get(ctx, fmt.Sprint("f", i)); err != nil || !ok {
			t.Fatalf("document f%d on the restarted replica, the other dead: %v, %v", i, ok, err)
		}
	}
	v, err := direct.Add(ctx, api.Document{ID: "late", Text: text(2)})
	if err != nil || v.Kind != api.ExactDuplicate || v.Survivor != "f2" {
		t.Fatalf("a copy of f2 on the restarted replica: %+v, %v", v, err)
	}
}

// freePorts returns n addresses on the loopback interface, each with a port free when
// asked for, for processes that must be told their address before they start.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l.Addr().String())
		defer l.Close()
	}
	return out
}
