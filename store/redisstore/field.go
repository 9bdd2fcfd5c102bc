package redisstore

import "encoding/binary"

// A field of a bucket holds its committed value and, while a transaction is writing
// it, that transaction's intent, in one value, so that a script reads a field and its
// intent with one HGET and places or resolves an intent with one HSET (or HDEL): the
// masters' CPU goes to the calls a script makes, and an intent in a hash of its own
// took twice as many. The forms:
//
//	committed   the value as it is: a posting's ids (digits and commas), or a record,
//	            escaped (escRecord) so that it never starts with pendingMark alone
//	pending     pendingMark, the transaction (16 bytes), the intent's length (4 bytes,
//	            big-endian), the intent, then '1' and the committed value, or '0' when
//	            the field has none (a record not yet put, a posting without ids)
//
// A transaction id starts with its start time's high byte, never 0xff (that is some
// thousand years off), so a value that starts with pendingMark followed by anything
// but pendingMark is pending. Once resolved, a field holds its committed value alone:
// a posting of one id is an integer to Redis again, 2 to 9 bytes in a listpack.
const pendingMark = 0xff

// pendingHead is the start of a field's value while transaction txn's intent is on it:
// the scripts append '1' and the committed value, or '0'.
func pendingHead(txn, intent string) string {
	b := make([]byte, 0, 1+len(txn)+4+len(intent))
	b = append(b, pendingMark)
	b = append(b, txn...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(intent)))
	return string(append(b, intent...))
}

// splitField reads a field's stored value raw (present: the field exists) into its
// committed value and the intent on it; false when raw is in neither form.
func splitField(raw string, present bool) (fieldValue, bool) {
	if !present || len(raw) == 0 || raw[0] != pendingMark || len(raw) > 1 && raw[1] == pendingMark {
		return fieldValue{v: raw, has: present}, true
	}
	const head = 1 + 16 + 4
	if len(raw) < head+1 {
		return fieldValue{}, false
	}
	n := binary.BigEndian.Uint32([]byte(raw[17:head]))
	if uint64(n) >= uint64(len(raw)-head) {
		return fieldValue{}, false
	}
	e := head + int(n) // the byte that says whether a committed value follows
	lock := raw[1:17] + raw[head:e]
	switch raw[e] {
	case '1':
		return fieldValue{v: raw[e+1:], has: true, lock: lock}, true
	case '0':
		return fieldValue{lock: lock}, e+1 == len(raw)
	}
	return fieldValue{}, false
}

// escRecord returns the committed form of a record: rec itself, unless it starts with
// pendingMark, which it then doubles. Records of neardup start with a version byte,
// so the escape costs nothing in practice.
func escRecord(rec []byte) []byte {
	if len(rec) > 0 && rec[0] == pendingMark {
		return append([]byte{pendingMark}, rec...)
	}
	return rec
}

// unescRecord undoes escRecord; false for a value escRecord does not make.
func unescRecord(v string) (string, bool) {
	if len(v) == 0 || v[0] != pendingMark {
		return v, true
	}
	return v[1:], len(v) > 1 && v[1] == pendingMark
}
