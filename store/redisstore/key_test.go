package redisstore

import (
	"cmp"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/store"
)

// TestKeys pins the key layout: keys outlive the process, so a change here needs a new
// store (another prefix).
func TestKeys(t *testing.T) {
	db := &DB{prefix: "nd", buckets: 1 << 16}
	pk, pf := db.postingBucket(6, []byte("12345678"))
	rk, rf := db.recordBucket(1)
	lk, _ := db.postingBucket(2, []byte("https://example.com/a/path/longer/than/forty/bytes"))
	for _, c := range []struct{ got, want string }{
		{pk, "nd:{s13135}"},
		{pf, "\x0612345678"},
		{lk, "nd:{p2.1228}"},
		{rk, "nd:{r18394}"},
		{rf, "\x00\x00\x00\x00\x00\x00\x00\x01"},
		{db.counterKey(), "nd:{id}:n"},
		{db.metaKey(), "nd:{meta}:buckets"},
		{db.layoutKey(), "nd:{meta}:layout"},
		{db.statusKey("0123456789abcdef"), "nd:{30313233343536373839616263646566}:t"},
	} {
		if c.got != c.want {
			t.Errorf("key %q, want %q", c.got, c.want)
		}
	}
	// Braces in the caller's bytes do not move the slot: they are in the field.
	if k, f := db.postingBucket(1, []byte("{x}")); strings.ContainsAny(k[4:len(k)-1], "{}") || f != "\x01{x}" {
		t.Errorf("posting bucket %q, field %q: the caller's braces are in the key", k, f)
	}
	for _, ns := range []uint16{0, 7, 65535} {
		k, f := db.postingBucket(store.Namespace(ns), []byte("a"))
		gns, key, ok := sharedField(f)
		if kind, _, ok2 := db.parseBucket(k); !ok || !ok2 || kind != kindShared || uint16(gns) != ns || key != "a" {
			t.Errorf("a short key of namespace %d: bucket %q (kind %c, %v), field %q -> %d, %q, %v", ns, k, kind, ok2, f, gns, key, ok)
		}
		long := strings.Repeat("x", shortKey+1)
		k, f = db.postingBucket(store.Namespace(ns), []byte(long))
		if kind, gns, ok := db.parseBucket(k); !ok || kind != kindPosting || uint16(gns) != ns || f != long {
			t.Errorf("a long key of namespace %d: bucket %q (kind %c, ns %d, %v), field %q", ns, k, kind, gns, ok, f)
		}
	}
	if kind, _, ok := db.parseBucket(rk); !ok || kind != kindRecord {
		t.Errorf("parseBucket(%q) = %c, %v, want a record bucket", rk, kind, ok)
	}
	for _, k := range []string{indexKey(db.orderedBucket(1, 3)), pk + "L", db.counterKey(), db.metaKey(), "nd:{p1}", "nd:{px.1}", "xx:{p2.1}", "nd:{r1x}", "nd:{s}", "nd:{q1}"} {
		if _, _, ok := db.parseBucket(k); ok {
			t.Errorf("parseBucket(%q) took it for a bucket", k)
		}
	}
}

// TestIDs pins the encoding of a posting's ids and checks applyIntent against a set.
func TestIDs(t *testing.T) {
	for _, c := range []struct {
		ids  []uint64
		want string
	}{{nil, ""}, {[]uint64{7}, "7"}, {[]uint64{1, 10, 18446744073709551615}, "1,10,18446744073709551615"}} {
		got := string(appendIDs(nil, c.ids))
		back, ok := parseIDs(got)
		if got != c.want || !ok || !slices.Equal(back, c.ids) {
			t.Errorf("appendIDs(%v) = %q, parsed back %v, %v; want %q", c.ids, got, back, ok, c.want)
		}
	}
	for _, bad := range []string{",", "1,", "01", "2,1", "x", "1,,2", "18446744073709551616", "-1"} {
		if ids, ok := parseIDs(bad); ok {
			t.Errorf("parseIDs(%q) = %v, want a failure", bad, ids)
		}
	}
	got, ok := applyIntent([]uint64{1, 5, 9}, "+3,-5,+9,-4,+12")
	if !ok || !slices.Equal(got, []uint64{1, 3, 9, 12}) {
		t.Errorf("applyIntent = %v, %v", got, ok)
	}
	for _, bad := range []string{"", "3", "+", "+x", "*3"} {
		if _, ok := applyIntent(nil, bad); ok {
			t.Errorf("applyIntent(%q) succeeded", bad)
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

// FuzzIDs checks that what parseIDs accepts is canonical (appendIDs gives it back),
// that applyIntent's answer is ascending and distinct, that a batch's changes to a
// posting give the same ids whether the client applies them to its condition (the
// prepare of a conditioned posting) or the scripts apply their intent (an
// unconditioned one), and that sharedField never panics: the decoders of what the
// store reads back from Redis.
func FuzzIDs(f *testing.F) {
	for _, s := range []string{"", "7", "1,10,18446744073709551615", "01", "2,1", "+3,-5"} {
		f.Add(s, "+1,-2")
	}
	f.Fuzz(func(t *testing.T, s, intent string) {
		ids, ok := parseIDs(s)
		if ok && string(appendIDs(nil, ids)) != s {
			t.Fatalf("parseIDs(%q) = %v, which appendIDs encodes as %q", s, ids, appendIDs(nil, ids))
		}
		canonical := ok
		ids = slices.Compact(ids)
		got, ok := applyIntent(ids, intent)
		if ok && (!slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got)) {
			t.Fatalf("applyIntent(%v, %q) = %v: not ascending and distinct", ids, intent, got)
		}
		if ok && canonical {
			p := &posting{cond: ids, conditioned: true}
			for op := range strings.SplitSeq(intent, ",") {
				id, _ := strconv.ParseUint(op[1:], 10, 64)
				p.set(id, op[0] == '+')
			}
			again, _ := applyIntent(ids, string(p.intent()))
			if next := p.apply(); !slices.Equal(next, got) || !slices.Equal(again, got) {
				t.Fatalf("changes %q to %v: the client applies them as %v, its intent %q as %v; the scripts' model gives %v", intent, ids, next, p.intent(), again, got)
			}
		}
		if ns, key, ok := sharedField(s); ok && string(append(binary.AppendUvarint(nil, uint64(ns)), key...)) != s && len(s) > 0 && s[0] < 0x80 {
			t.Fatalf("sharedField(%q) = %d, %q", s, ns, key)
		}
	})
}

// applyIntent applies a posting intent ("+id" and "-id" joined by commas) to ids, as
// the prepare script's apply does, and returns them ascending; false for a malformed
// intent: the model the client's posting.apply and posting.intent are checked against.
func applyIntent(ids []uint64, intent string) ([]uint64, bool) {
	set := map[uint64]bool{}
	for _, id := range ids {
		set[id] = true
	}
	for f := range strings.SplitSeq(intent, ",") {
		if len(f) < 2 || (f[0] != '+' && f[0] != '-') {
			return nil, false
		}
		id, err := strconv.ParseUint(f[1:], 10, 64)
		if err != nil {
			return nil, false
		}
		set[id] = f[0] == '+'
	}
	out := make([]uint64, 0, len(set))
	for id, in := range set {
		if in {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, cmp.Compare)
	return out, true
}
