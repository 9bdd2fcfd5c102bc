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
	f := startFleet(t)
	ctx := context.Background()
	cl, err := client.New(f.base, client.Options{Retries: 8})
	if err != nil {
		t.Fatal(err)
	}
	const docs = 400
	verdicts := addWhileKilling(t, cl, docs, 150, func() {
		if err := f.replicas[0].Process.Kill(); err != nil {
			t.Error(err)
		}
	})
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
		if o := fleetOriginal(i); o != i {
			if v := verdicts[i]; v.Kind != api.ExactDuplicate || v.Survivor != fmt.Sprint("f", o) {
				t.Errorf("copy %s of f%d: %s, survivor %s", id, o, v.Kind, v.Survivor)
			}
		}
	}

	// A replica started again answers at once for what the other added meanwhile, with
	// no data to move.
	f.replicas[0] = f.start(0)
	if err := f.replicas[1].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	direct, err := client.NewReplicas([]string{"http://" + f.ports[1], "http://" + f.ports[0]}, client.Options{Retries: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := docs - 20; i < docs; i++ {
		if _, ok, err := direct.Get(ctx, fmt.Sprint("f", i)); err != nil || !ok {
			t.Fatalf("document f%d on the restarted replica, the other dead: %v, %v", i, ok, err)
		}
	}
	v, err := direct.Add(ctx, api.Document{ID: "late", Text: fleetText(2)})
	if err != nil || v.Kind != api.ExactDuplicate || v.Survivor != "f2" {
		t.Fatalf("a copy of f2 on the restarted replica: %+v, %v", v, err)
	}
}

// fleet is TestServeFleet's: a Redis Cluster, two replicas and haproxy in front.
type fleet struct {
	t        *testing.T
	c        *redistest.Cluster
	ports    []string // the replicas' addresses, then the proxy's
	replicas []*exec.Cmd
	base     string // the proxy's URL
}

// startFleet starts the cluster, the two replicas and haproxy with scripts/haproxy.cfg,
// and waits until the proxy answers /readyz.
func startFleet(t *testing.T) *fleet {
	haproxy := testtool.Path(t, "haproxy")
	f := &fleet{t: t, c: redistest.Start(t), ports: freePorts(t, 3)}
	f.replicas = []*exec.Cmd{f.start(0), f.start(1)}
	cfg, err := filepath.Abs("../../../../scripts/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	lb := exec.Command(haproxy, "-f", cfg, "-db")
	lb.Env = append(os.Environ(), "NEARDUP_LB="+f.ports[2], "NEARDUP_REPLICA_1="+f.ports[0], "NEARDUP_REPLICA_2="+f.ports[1])
	startProcess(t, lb, "haproxy")
	f.base = "http://" + f.ports[2]
	waitReady(t, f.base)
	return f
}

// start starts replica i, a process of its own (this test binary running Main), and
// waits until it is ready.
func (f *fleet) start(i int) *exec.Cmd {
	t := f.t
	t.Helper()
	args := []string{"serve", "--addr", f.ports[i], "--redis", f.c.URL(), "--redis-prefix", "fleet", "--redis-documents", "5000"}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestServeFleet$")
	cmd.Env = append(os.Environ(), serveFleetArgs+"="+strings.Join(args, "\n"))
	startProcess(t, cmd, fmt.Sprint("replica ", i+1))
	waitReady(t, "http://"+f.ports[i])
	return cmd
}

// startProcess starts cmd, and at the end of the test kills it and, if the test failed,
// logs its output under name.
func startProcess(t *testing.T, cmd *exec.Cmd, name string) {
	t.Helper()
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s's output:\n%s", name, logs)
		}
	})
}

// addWhileKilling adds documents f0 to f<docs-1> (fleetText) through cl from four
// goroutines, calls kill once killAfter are acknowledged, and returns their verdicts.
// A call that fails fails the test.
func addWhileKilling(t *testing.T, cl *client.Client, docs, killAfter int, kill func()) []api.Verdict {
	var next, acked atomic.Int64
	verdicts := make([]api.Verdict, docs)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < docs; i = int(next.Add(1) - 1) {
				v, err := cl.Add(context.Background(), api.Document{ID: fmt.Sprint("f", i), Text: fleetText(i)})
				if err != nil {
					t.Errorf("add %d through the proxy: %v", i, err)
					return
				}
				verdicts[i] = v
				if acked.Add(1) == int64(killAfter) {
					kill()
				}
			}
		})
	}
	wg.Wait()
	return verdicts
}

// fleetOriginal is the document that document i of TestServeFleet copies: an even one
// added some 100 adds before when i is odd and at least 100; i itself otherwise.
func fleetOriginal(i int) int {
	if i%2 == 1 && i >= 100 {
		return i - 99
	}
	return i
}

// fleetText is the text of document i of TestServeFleet: its original's.
func fleetText(i int) string {
	i = fleetOriginal(i)
	return fmt.Sprintf("document %d of the fleet test, with words enough to be fingerprinted: %s", i, strings.Repeat(fmt.Sprintf("w%d ", i), 20))
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
