// Package redistest starts a real Redis Cluster for tests: six redis-server processes on
// free loopback ports (three masters, one replica each) in a temporary directory, joined
// with redis-cli --cluster create, and killed when the test ends. It is a test helper:
// Start takes a *testing.T and skips the test when redis-server or redis-cli is missing,
// or fails it under CI=true, where .ci/run installs them.
package redistest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/testtool"
)

// Cluster is a running Redis Cluster of local processes.
type Cluster struct {
	// Addrs are the nodes' host:port, masters first as redis-cli assigned them at
	// creation (it makes the first len(Addrs)/2 masters).
	Addrs  []string
	procs  []*exec.Cmd
	args   [][]string // each node's redis-server command line, for Restart
	cli    string
	server string
	dir    string       // the nodes' directories are dir/0, dir/1, ...
	drawn  map[int]bool // ports already given to a node, so no two nodes share one
}

// Masters and Replicas are the shape of every cluster Start makes.
const (
	Masters  = 3
	Replicas = 1
)

// Start starts a cluster of Masters masters with Replicas replicas each, with
// appendonly on, appendfsync everysec, a cluster-node-timeout of 2 s and
// hash-max-listpack-entries 512 (what package redisstore asks for), waits until
// every node reports cluster_state:ok, and registers a cleanup that kills the processes.
// It takes a few seconds; a test package should start one and share it, separating its
// tests by key prefix.
func Start(t testing.TB) *Cluster {
	t.Helper()
	server := testtool.Path(t, "redis-server")
	cli := testtool.Path(t, "redis-cli")
	dir := t.TempDir()
	c := &Cluster{cli: cli, server: server, dir: dir}
	t.Cleanup(c.stop)
	n := Masters * (1 + Replicas)
	for range n {
		c.startNode(t)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(Replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		fail(t, "redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	for i, a := range c.Addrs {
		c.waitFor(t, a, []string{"cluster", "info"}, "cluster_state:ok", filepath.Join(dir, strconv.Itoa(i), "log"))
	}
	// A replica syncs with its master after the cluster forms; until then WAIT counts
	// no replica.
	for i, a := range c.Addrs {
		c.waitFor(t, a, []string{"info", "replication"}, "connected_slaves:"+strconv.Itoa(Replicas)+"|master_link_status:up", filepath.Join(dir, strconv.Itoa(i), "log"))
	}
	return c
}

// startNode starts one more node, in a directory of its own, and waits until it answers
// PING. A port that was free when drawn can be taken before redis-server binds it (by
// another test package starting its own cluster at the same moment); the node then
// exits with "Address already in use", and it is started again on other ports.
func (c *Cluster) startNode(t testing.TB) {
	t.Helper()
	nodeDir := filepath.Join(c.dir, strconv.Itoa(len(c.Addrs)))
	if err := os.Mkdir(nodeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(nodeDir, "log")
	for attempt := 0; ; attempt++ {
		port, bus := c.freePort(t), c.freePort(t)
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		cmd := exec.Command(c.server,
			"--port", strconv.Itoa(port), "--cluster-port", strconv.Itoa(bus),
			"--bind", "127.0.0.1", "--dir", nodeDir, "--daemonize", "no",
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000", "--appendonly", "yes", "--appendfsync", "everysec",
			"--hash-max-listpack-entries", "512", "--save", "", "--logfile", logFile)
		if err := cmd.Start(); err != nil {
			fail(t, "redistest: start redis-server: %v", err)
		}
		c.procs = append(c.procs, cmd)
		c.args = append(c.args, cmd.Args)
		c.Addrs = append(c.Addrs, addr)
		if c.answers(addr, logFile) || attempt == 4 {
			c.waitFor(t, addr, []string{"ping"}, "PONG", logFile)
			return
		}
		last := len(c.procs) - 1
		_ = c.Kill(last)
		c.procs, c.args, c.Addrs = c.procs[:last], c.args[:last], c.Addrs[:last]
		_ = os.Remove(logFile)
		_ = os.Remove(filepath.Join(nodeDir, "nodes.conf"))
	}
}

// answers waits until the node at addr answers PING, and reports false at once when its
// log says it could not bind its ports.
func (c *Cluster) answers(addr, logFile string) bool {
	host, port, _ := net.SplitHostPort(addr)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, err := exec.Command(c.cli, "-h", host, "-p", port, "ping").CombinedOutput()
		if err == nil && bytes.Contains(out, []byte("PONG")) {
			return true
		}
		if log, _ := os.ReadFile(logFile); bytes.Contains(log, []byte("Address already in use")) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true // waitFor reports the failure with the node's log
}

// fail skips the test, or fails it under CI=true: a cluster that cannot start on a
// developer's machine is not this test's failure, but in CI it is.
func fail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format+" (the test needs a local Redis Cluster)", args...)
}

// waitFor runs redis-cli args against addr until its output contains want (or one of
// its alternatives, separated by |), for up to 30 s; then it fails with the node's log.
func (c *Cluster) waitFor(t testing.TB, addr string, args []string, want, logFile string) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.Command(c.cli, append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
		for w := range strings.SplitSeq(want, "|") {
			if err == nil && bytes.Contains(out, []byte(w)) {
				return
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logFile)
			fail(t, "redistest: node %s did not answer %q to %v within 30 s (last: %q, %v); its log:\n%s",
				addr, want, args, out, err, log)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// URL returns the nodes as neardup serve's --redis takes them:
// redis://host:port,host:port,...
func (c *Cluster) URL() string { return "redis://" + strings.Join(c.Addrs, ",") }

// Kill kills node i with SIGKILL, as a crash would, and waits for it to exit.
func (c *Cluster) Kill(i int) error {
	p := c.procs[i]
	if p == nil {
		return fmt.Errorf("redistest: node %d is not running", i)
	}
	c.procs[i] = nil
	if err := p.Process.Kill(); err != nil {
		return err
	}
	_ = p.Wait() // a killed process reports "signal: killed"
	return nil
}

// Restart starts node i again after Kill, with its data and its nodes.conf: it rejoins
// the cluster, as a replica if another node took over its slots meanwhile.
func (c *Cluster) Restart(i int) error {
	if c.procs[i] != nil {
		return fmt.Errorf("redistest: node %d is running", i)
	}
	cmd := exec.Command(c.args[i][0], c.args[i][1:]...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: restart node %d: %w", i, err)
	}
	c.procs[i] = cmd
	return nil
}

// Reshard moves n slots from node from to node to (both masters) with redis-cli
// --cluster reshard, which migrates their keys one by one (MIGRATE): clients meanwhile get
// MOVED and ASK redirects.
func (c *Cluster) Reshard(from, to, n int) error {
	id := func(i int) (string, error) {
		host, port, _ := net.SplitHostPort(c.Addrs[i])
		out, err := exec.Command(c.cli, "-h", host, "-p", port, "cluster", "myid").Output()
		return strings.TrimSpace(string(out)), err
	}
	src, err := id(from)
	if err != nil {
		return fmt.Errorf("redistest: node %d id: %w", from, err)
	}
	dst, err := id(to)
	if err != nil {
		return fmt.Errorf("redistest: node %d id: %w", to, err)
	}
	// redis-cli refuses, before it moves anything, while the nodes' views of the slots
	// differ, as they do for a moment after an earlier move: wait for gossip then.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, err := exec.Command(c.cli, "--cluster", "reshard", c.Addrs[from], "--cluster-from", src, "--cluster-to", dst,
			"--cluster-slots", strconv.Itoa(n), "--cluster-yes", "--cluster-pipeline", "10").CombinedOutput()
		switch {
		case err == nil:
			return nil
		case !bytes.Contains(out, []byte("Nodes don't agree about configuration")) || time.Now().After(deadline):
			return fmt.Errorf("redistest: reshard: %w\n%s", err, out)
		}
	}
}

// AddMaster starts a new node and adds it to the cluster as a master with no slots
// (redis-cli --cluster add-node), and returns its index in Addrs once every node knows
// it: Reshard then moves slots to it.
func (c *Cluster) AddMaster(t testing.TB) int {
	t.Helper()
	c.startNode(t)
	i := len(c.Addrs) - 1
	if out, err := exec.Command(c.cli, "--cluster", "add-node", c.Addrs[i], c.Addrs[0]).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster add-node: %v\n%s", err, out)
	}
	for j, a := range c.Addrs {
		if c.procs[j] != nil {
			c.waitFor(t, a, []string{"cluster", "nodes"}, c.Addrs[i]+"@", filepath.Join(c.dir, strconv.Itoa(j), "log"))
		}
	}
	c.waitFor(t, c.Addrs[i], []string{"cluster", "info"}, "cluster_state:ok", filepath.Join(c.dir, strconv.Itoa(i), "log"))
	return i
}

func (c *Cluster) stop() {
	for i, p := range c.procs {
		if p != nil {
			_ = c.Kill(i)
		}
	}
}

// freePort returns a loopback TCP port that was free a moment ago and that this cluster
// has not drawn before, below the kernel's ephemeral range (32768 and up on Linux): the
// other tests running meanwhile are given ephemeral ports, one of which could be the one
// drawn. Another process can still take it before redis-server binds it; startNode
// retries then.
func (c *Cluster) freePort(t testing.TB) int {
	t.Helper()
	for range 1000 {
		port := 10000 + rand.IntN(20000)
		if c.drawn[port] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		l.Close()
		if c.drawn == nil {
			c.drawn = map[int]bool{}
		}
		c.drawn[port] = true
		return port
	}
	t.Fatal("redistest: no free loopback port between 10000 and 30000")
	return 0
}
