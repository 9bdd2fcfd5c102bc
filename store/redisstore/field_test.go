package redisstore

import (
	"strings"
	"testing"
)

// TestFields pins the value of a field with and without an intent: it outlives the
// process, so a change here needs a new store (another prefix).
func TestFields(t *testing.T) {
	txn := "0123456789abcdef"
	if got, want := pendingHead(txn, "3,7,9", true), "\xff"+txn+"\x00\x00\x00\x051"+"3,7,9"; got != want {
		t.Errorf("pendingHead = %q, want %q", got, want)
	}
	if got, want := pendingHead(txn, "", false), "\xff"+txn+"\x00\x00\x00\x000"; got != want {
		t.Errorf("pendingHead of a field that goes = %q, want %q", got, want)
	}
	for _, c := range []struct {
		raw     string
		present bool
		want    fieldValue
	}{
		{"", false, fieldValue{}},
		{"7", true, fieldValue{v: "7", has: true}},
		{"", true, fieldValue{v: "", has: true}},
		{"\xff\xffrec", true, fieldValue{v: "\xff\xffrec", has: true}},
		{pendingHead(txn, "7", true) + "0", true, fieldValue{txn: txn, next: "7", nextHas: true}},
		{pendingHead(txn, "3,7,9", true) + "13,9", true, fieldValue{v: "3,9", has: true, txn: txn, next: "3,7,9", nextHas: true}},
		{pendingHead(txn, "", false) + "17", true, fieldValue{v: "7", has: true, txn: txn}},
		{pendingHead(txn, "", true) + "1", true, fieldValue{has: true, txn: txn, nextHas: true}},
		{pendingHead(txn, "rec", true) + "1\xff\xffold", true, fieldValue{v: "\xff\xffold", has: true, txn: txn, next: "rec", nextHas: true}},
	} {
		got, ok := splitField(c.raw, c.present)
		if !ok || got != c.want {
			t.Errorf("splitField(%q, %v) = %+v, %v; want %+v", c.raw, c.present, got, ok, c.want)
		}
	}
	for _, bad := range []string{
		"\xff", "\xffx", "\xff" + txn, "\xff" + txn + "\x00\x00\x00\x011",
		pendingHead(txn, "7", true) + "2", pendingHead(txn, "7", true) + "0x", "\xff" + txn + "\x00\x00\x00\x002" + "0",
		"\xff" + txn + "\x00\x00\x00\x010" + "70", "\xff" + txn + "\xff\xff\xff\xff1" + "70",
	} {
		if v, ok := splitField(bad, true); ok {
			t.Errorf("splitField(%q) = %+v, want a failure", bad, v)
		}
	}
	for _, rec := range []string{"", "a", "\x03rec", "\xff", "\xff\xff", "\xffa"} {
		esc := string(escRecord([]byte(rec)))
		back, ok := unescRecord(esc)
		if v, ok2 := splitField(esc, true); !ok || back != rec || !ok2 || v.txn != "" {
			t.Errorf("record %q escaped as %q: read back %q, %v; as a field %+v, %v", rec, esc, back, ok, v, ok2)
		}
	}
	if _, ok := unescRecord("\xffa"); ok {
		t.Error(`unescRecord("\xffa") succeeded: escRecord never makes it`)
	}
}

// FuzzFields checks that splitField never panics, that what it reads as pending is
// what pendingHead and the scripts make of it, and that escaped records round-trip:
// the decoders of what the store reads back from Redis.
func FuzzFields(f *testing.F) {
	txn := "0123456789abcdef"
	for _, s := range []string{"", "7", "1,2", "\xff\xffx", pendingHead(txn, "7", true) + "0", pendingHead(txn, "", false) + "1\x03x", "\xff" + txn + "\x7f\xff\xff\xff1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, ok := splitField(raw, true)
		if ok && v.txn != "" {
			rest := "0"
			if v.has {
				rest = "1" + v.v
			}
			if w := pendingHead(v.txn, v.next, v.nextHas) + rest; w != raw {
				t.Fatalf("splitField(%q) = %+v, which is written %q", raw, v, w)
			}
		}
		if ok && v.txn == "" && (v.v != raw || !v.has) {
			t.Fatalf("splitField(%q) = %+v: a committed value changed", raw, v)
		}
		if back, ok := unescRecord(string(escRecord([]byte(raw)))); !ok || back != raw {
			t.Fatalf("record %q escaped reads back as %q, %v", raw, back, ok)
		}
		if rec, ok := unescRecord(raw); ok && string(escRecord([]byte(rec))) != raw {
			t.Fatalf("unescRecord(%q) = %q, which escRecord writes %q", raw, rec, escRecord([]byte(rec)))
		}
		if strings.HasPrefix(raw, "\xff\xff") && (!ok || v.txn != "") {
			t.Fatalf("splitField(%q) = %+v, %v: an escaped record read as pending", raw, v, ok)
		}
	})
}
