package redisstore

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/store"
)

// TestKeys pins the key layout: keys outlive the process, so a change here needs a new
// store (another prefix).
func TestKeys(t *testing.T) {
	db := &DB{prefix: "nd"}
	for _, c := range []struct{ got, want string }{
		{db.postingKey(2, []byte("https://example.com/")), "nd:{262b77de6df3c7ee}:p2:https://example.com/"},
		{db.postingKey(0, nil), "nd:{9aaba41ffa2da101}:p0:"},
		{db.recordKey(1), "nd:{9f1ffc793b8a47da}:r\x00\x00\x00\x00\x00\x00\x00\x01"},
		{db.counterKey(), "nd:{id}:n"},
		{db.statusKey("0123456789abcdef"), "nd:{30313233343536373839616263646566}:t"},
	} {
		if c.got != c.want {
			t.Errorf("key %q, want %q", c.got, c.want)
		}
	}
	// Braces in the caller's bytes do not move the slot: the tag comes first.
	k := db.postingKey(1, []byte("{x}"))
	if !strings.HasPrefix(k, "nd:{") || strings.Index(k, "}") != 20 {
		t.Errorf("posting key %q: the hash tag is not the leading {hex}", k)
	}
	for _, key := range [][]byte{nil, []byte("a"), []byte("}:p7:x"), []byte("\x00\xff{}")} {
		for _, ns := range []uint16{0, 7, 65535} {
			gns, gkey, ok := db.parseKey(db.postingKey(store.Namespace(ns), key))
			if !ok || uint16(gns) != ns || string(gkey) != string(key) {
				t.Errorf("parseKey(postingKey(%d, %q)) = %d, %q, %v", ns, key, gns, gkey, ok)
			}
		}
	}
	for _, k := range []string{db.recordKey(5), db.counterKey(), "nd:{0123}:p1:x", "xx:{1c9f5b3c40a6c4bb}:p2:a", "nd:{1c9f5b3c40a6c4bb}:pX:a"} {
		if _, _, ok := db.parseKey(k); ok {
			t.Errorf("parseKey(%q) took it for a posting key", k)
		}
	}
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in         string
		addrs      []string
		user, pass string
		tls        bool
	}{
		{"redis://127.0.0.1:7000", []string{"127.0.0.1:7000"}, "", "", false},
		{"redis://a:1,b:2,c:3/", []string{"a:1", "b:2", "c:3"}, "", "", false},
		{"rediss://u:p%40ss@h:6379,h2:6380", []string{"h:6379", "h2:6380"}, "u", "p@ss", true},
		{"redis://:secret@h:1", []string{"h:1"}, "", "secret", false},
	} {
		o, err := ParseURL(c.in)
		if err != nil || !slices.Equal(o.Addrs, c.addrs) || o.Username != c.user || o.Password != c.pass || (o.TLS != nil) != c.tls {
			t.Errorf("ParseURL(%q) = %+v, %v", c.in, o, err)
		}
	}
	for _, in := range []string{"", "h:1", "http://h:1", "redis://", "redis://h", "redis://h:1,", "redis://h:x", "redis://h:70000", "redis://:1", "redis://u:%zz@h:1"} {
		if _, err := ParseURL(in); !errors.Is(err, ErrOptions) {
			t.Errorf("ParseURL(%q): %v, want ErrOptions", in, err)
		}
	}
}

// FuzzParseURL checks that ParseURL never panics, and that what it accepts has
// addresses of host:port each.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"redis://a:1,b:2", "rediss://u:p@h:1", "redis://@:", "redis://a@b@c:1", "redis://h:1/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseURL(s)
		if err != nil {
			if !errors.Is(err, ErrOptions) {
				t.Fatalf("ParseURL(%q): %v, not ErrOptions", s, err)
			}
			return
		}
		if len(o.Addrs) == 0 {
			t.Fatalf("ParseURL(%q) accepted no address", s)
		}
		for _, a := range o.Addrs {
			if h, p, ok := strings.Cut(a, ":"); !ok || h == "" || p == "" {
				t.Fatalf("ParseURL(%q) accepted address %q", s, a)
			}
		}
	})
}
