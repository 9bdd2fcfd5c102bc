package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/bits"
	"os"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/store/redisstore"
)

// redisFlags are serve's flags for a Redis Cluster store.
type redisFlags struct {
	url      string
	user     string
	password string
	ca       string
	prefix   string
	wait     int
	docs     int
}

func (r *redisFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&r.url, "redis", "", "keep the index in the Redis Cluster at `URL`: redis://host:port[,host:port...], rediss://\nfor TLS; replicas on one cluster share it and give the same verdicts; --data is then\nunused (default \"\": the embedded store in --data)")
	r.defineAuth(fs)
	fs.StringVar(&r.prefix, "redis-prefix", "nd", "start every Redis key with `PREFIX`, so that several indexes share a cluster (default nd)")
	fs.IntVar(&r.docs, "redis-documents", 0, "size a new store for about `N` documents: a bucket (a Redis hash of some 50 postings) for\neach, rounded up to a power of two; a store keeps the size it was created with\n(default 0: 1048576)")
	fs.IntVar(&r.wait, "redis-wait", 0, "acknowledge an add only once `N` replicas of each master it wrote to have it (Redis WAIT)\n(default 0: once the masters have it)")
}

// defineAuth defines the flags that say how to reach the cluster beyond its URL: the
// credentials and the TLS certificates, the same for every command that talks to Redis.
func (r *redisFlags) defineAuth(fs *flag.FlagSet) {
	fs.StringVar(&r.user, "redis-user", "", "authenticate to Redis as `USER` (ACL) (default \"\": the URL's, or none)")
	fs.StringVar(&r.password, "redis-password", "", "authenticate to Redis with `PASSWORD` (default \"\": the URL's, or none)")
	fs.StringVar(&r.ca, "redis-ca", "", "verify the Redis servers' TLS certificates against the PEM certificates in `FILE`\ninstead of the system's (default \"\")")
}

// options returns the store options the flags give, or nil without --redis.
func (r *redisFlags) options() (*redisstore.Options, error) {
	if r.url == "" {
		return nil, nil
	}
	o, err := redisstore.ParseURL(r.url)
	if err != nil {
		return nil, usagef("--redis: %v", err)
	}
	if r.user != "" {
		o.Username = r.user
	}
	if r.password != "" {
		o.Password = r.password
	}
	if r.ca != "" {
		pem, err := os.ReadFile(r.ca)
		if err != nil {
			return nil, usagef("--redis-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("--redis-ca %s: no PEM certificate in it", r.ca)
		}
		o.TLS = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	}
	if r.wait < 0 {
		return nil, usagef("--redis-wait %d: use 0 or a number of replicas", r.wait)
	}
	if r.docs < 0 || r.docs > 1<<40 {
		return nil, usagef("--redis-documents %d: use the number of documents the store is to hold, at most 2^40", r.docs)
	}
	if r.docs > 0 {
		// An add posts some 50 postings, and a bucket is best at some 50 of them.
		o.Buckets = 1 << bits.Len(uint(r.docs-1))
	}
	o.Prefix, o.Wait = r.prefix, r.wait
	return &o, nil
}

// openRedisDetector opens the detector over the Redis Cluster store, logging a warning
// for each cluster setting that falls short of the durability the service promises.
func openRedisDetector(cfg serveConfig, log *slog.Logger) (*neardup.Detector, serveStore, error) {
	s, err := redisstore.Open(*cfg.redis)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	warnings, err := s.CheckConfig(ctx)
	cancel()
	if err != nil {
		// A managed Redis may refuse CONFIG GET: say so, and go on.
		log.Warn("cannot read the Redis settings the service depends on (appendonly, appendfsync, maxmemory-policy, cluster-node-timeout); check them by hand", "err", err)
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	if want := cfg.redis.Buckets; want != 0 && s.Buckets() != want {
		log.Warn(fmt.Sprintf("--redis-documents sizes a new store: this one keeps the %d buckets it was created with (for about as many documents); start a new one under another --redis-prefix to size it", s.Buckets()))
	}
	d, err := neardup.OpenDetector(s, cfg.opt)
	if err != nil {
		s.Close()
		return nil, nil, fmt.Errorf("redis %v: %w", cfg.redis.Addrs, err)
	}
	return d, redisServeStore{s}, nil
}

// redisServeStore is a Redis Cluster store as serve uses it: its Health is the
// masters' memory (redisstore.DB.Health), and Redis keeps its own backups: a replica
// keeps no state, so there is nothing of its own to copy.
type redisServeStore struct{ *redisstore.DB }

// Checkpoint refuses: back a Redis Cluster up with Redis's own means.
func (redisServeStore) Checkpoint(string) error {
	return errors.New("a Redis Cluster store is backed up by Redis itself (BGSAVE or the AOF files of each master), not by neardup")
}
