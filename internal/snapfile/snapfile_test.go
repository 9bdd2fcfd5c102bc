package snapfile

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

var errBad = errors.New("bad snapshot")

func write(t *testing.T, records int) []byte {
	t.Helper()
	var b bytes.Buffer
	w := NewWriter(&b, "test", "TESTSNAP", 7, 16)
	w.Buf = append(w.Buf, 'h', 'h')
	for i := range records {
		if err := w.Room(4); err != nil {
			t.Fatal(err)
		}
		w.Buf = append(w.Buf, byte(i), byte(i), byte(i), byte(i))
	}
	n, err := w.Finish()
	if err != nil || n != int64(b.Len()) || n != 8+4+2+4*int64(records)+4 {
		t.Fatalf("Finish = %d, %v; wrote %d", n, err, b.Len())
	}
	return b.Bytes()
}

func read(data []byte, records int) error {
	r := NewReader(bytes.NewReader(data), "test", errBad)
	var rest [2]byte
	if err := r.Header("TESTSNAP", 7, rest[:]); err != nil {
		return err
	}
	if err := r.ReadRecords(make([]byte, 4*records), 4, 0, records); err != nil {
		return err
	}
	return r.Verify()
}

func TestRoundTripAndErrors(t *testing.T) {
	good := write(t, 10) // several flushes through a 16-byte buffer
	if err := read(good, 10); err != nil {
		t.Fatal(err)
	}
	corrupt := bytes.Clone(good)
	corrupt[20] ^= 1
	wrongMagic := bytes.Clone(good)
	wrongMagic[0] = 'X'
	wrongVersion := bytes.Clone(good)
	wrongVersion[8] = 8
	for _, c := range []struct {
		name, want string
		data       []byte
	}{
		{"empty", "truncated in the header", nil},
		{"mid record", "truncated in the record 3 of 10", good[:14+9]},
		{"no checksum", "truncated in the checksum", good[:len(good)-4]},
		{"corrupt", "does not match", corrupt},
		{"magic", "not an index snapshot", wrongMagic},
		{"version", "version 8 is unknown", wrongVersion},
	} {
		err := read(c.data, 10)
		if !errors.Is(err, errBad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want errBad saying %q", c.name, err, c.want)
		}
	}
}
