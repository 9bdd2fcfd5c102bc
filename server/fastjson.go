package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// parsers are the fastjson parsers of decodeDocumentJSON.
var parsers fastjson.ParserPool

// maxPooledBody is the largest body whose parser goes back to the pool: a parser keeps
// its copy of the largest body it has parsed, and pooled parsers of 31 MiB bodies held
// hundreds of megabytes past their requests, outside the body memory.
const maxPooledBody = 1 << 20

// decodeDocumentJSON is decodeStrict for a document, the service's commonest body, in
// a fraction of its time (encoding/json scans a body twice, a cost that showed in
// profiles of a closed loop of adds). A body of string members under the lower-case
// names is read by decodeFlat in one pass. It takes what fastjson validates and parses
// when every field is as decodeStrict would take it; anything else, and every body with
// an escaped UTF-16 surrogate (which fastjson decodes otherwise), goes to decodeStrict,
// which then decodes it or says what is wrong. FuzzDecodeDocumentJSON holds the three
// to the same results.
func decodeDocumentJSON(body []byte, dj *documentJSON) error {
	if decodeFlat(body, dj) {
		return nil
	}
	*dj = documentJSON{}
	if withObject(body, dj.setFast) {
		return nil
	}
	*dj = documentJSON{}
	if err := decodeStrict(body, dj); err != nil {
		return err
	}
	if hasSurrogateEscape(body) {
		return checkKeyEscapes(body)
	}
	return nil
}

// checkKeyEscapes refuses a document whose id or url escapes a lone UTF-16 surrogate:
// encoding/json turns every one into U+FFFD, so "a\ud800" and "a\udbff" would become
// the same id and the second would silently replace the first. body has been decoded
// by decodeStrict; its id and url are found as it found them (names matched ignoring
// case, the last one kept).
func checkKeyEscapes(body []byte) error {
	var keys struct {
		ID  json.RawMessage `json:"id"`
		URL json.RawMessage `json:"url"`
	}
	if err := json.Unmarshal(body, &keys); err != nil {
		return errorf(http.StatusBadRequest, "invalid_json", "%v", err)
	}
	for _, k := range []struct {
		name string
		lit  json.RawMessage
	}{{"id", keys.ID}, {"url", keys.URL}} {
		if loneSurrogate(k.lit) {
			return errorf(http.StatusBadRequest, "invalid_document", "the %s %s escapes a UTF-16 surrogate that is not half of a pair: give it as Unicode text", k.name, k.lit)
		}
	}
	return nil
}

// loneSurrogate reports whether the JSON string literal lit escapes a UTF-16 surrogate
// (\uD800 to \uDFFF) that is not half of a high-low pair.
func loneSurrogate(lit []byte) bool {
	high := false // the previous escape was a high surrogate awaiting its low half
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			if high {
				return true
			}
			continue
		}
		if i+1 >= len(lit) || lit[i+1] != 'u' || i+6 > len(lit) {
			if high {
				return true
			}
			i++
			continue
		}
		u, err := strconv.ParseUint(string(lit[i+2:i+6]), 16, 16)
		if err != nil {
			return false // not JSON: decodeStrict has refused it
		}
		i += 5
		switch {
		case u >= 0xD800 && u < 0xDC00:
			if high {
				return true
			}
			high = true
		case u >= 0xDC00 && u < 0xE000:
			if !high {
				return true
			}
			high = false
		default:
			if high {
				return true
			}
		}
	}
	return high
}

// withObject parses body with fastjson and calls fn with its object, when the body is
// valid UTF-8 and JSON nested at most maxDepth deep (fastjson recurses once a level),
// an object, and holds no escaped UTF-16 surrogate and no control character in a string
// (fastjson.Validate looks for them only after a string's last escape): what
// decodeStrict would read as fastjson does. It returns fn's result, or false without
// calling fn. The object is the parser's: fn must copy what it keeps.
func withObject(body []byte, fn func(o *fastjson.Object) bool) bool {
	if !utf8.Valid(body) || hasSurrogateEscape(body) || tooDeep(body) || controlInString(body) || fastjson.ValidateBytes(body) != nil {
		return false
	}
	p := parsers.Get()
	if len(body) <= maxPooledBody {
		defer parsers.Put(p)
	}
	v, err := p.ParseBytes(body)
	if err != nil || v.Type() != fastjson.TypeObject {
		return false
	}
	return fn(v.GetObject())
}

// setFast sets dj's fields from o as decodeStrict would, or reports false (leaving dj
// partly set) when a field is one it leaves to decodeStrict.
func (dj *documentJSON) setFast(o *fastjson.Object) bool {
	ok := true
	var num []byte
	o.Visit(func(key []byte, v *fastjson.Value) {
		f := dj.field(key)
		priority := f == nil && asciiEqualFold(key, "priority")
		switch {
		case !ok:
		case f == nil && !priority:
			ok = false
		case v.Type() == fastjson.TypeNull: // null leaves a field as it is
		case priority:
			if v.Type() != fastjson.TypeNumber {
				ok = false
				return
			}
			num = v.MarshalTo(num[:0]) // the number as written
			p, err := strconv.ParseFloat(string(num), 64)
			ok = err == nil
			dj.Priority = p
		case v.Type() != fastjson.TypeString:
			ok = false
		default:
			*f = string(v.GetStringBytes())
		}
	})
	return ok
}

// field returns the string field of dj whose JSON name is key, matched as encoding/json
// matches an ASCII name (exactly or ignoring case), or nil: for "priority", another
// name, or a name not in ASCII, which decodeDocumentJSON leaves to encoding/json.
func (dj *documentJSON) field(key []byte) *string {
	for _, f := range [...]struct {
		name string
		p    *string
	}{{"id", &dj.ID}, {"url", &dj.URL}, {"html", &dj.HTML}, {"html_base64", &dj.HTMLBase64},
		{"text", &dj.Text}, {"content_type", &dj.ContentType}, {"fetch_time", &dj.FetchTime}} {
		if asciiEqualFold(key, f.name) {
			return f.p
		}
	}
	return nil
}

// asciiEqualFold reports whether key, all ASCII, equals the lower-case ASCII name
// ignoring case.
func asciiEqualFold(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i, c := range key {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// hasSurrogateEscape reports whether body may hold an escaped UTF-16 surrogate (\uD800
// to \uDFFF); an escaped backslash before "uD8" counts too, which only costs speed. It
// looks for "\ud" and "\uD" rather than for every "\u": an HTML page encoded by
// encoding/json escapes each "<", ">" and "&" as \u003c..., thousands of escapes a page.
func hasSurrogateEscape(body []byte) bool {
	return surrogateEscape(body, []byte(`\ud`)) || surrogateEscape(body, []byte(`\uD`))
}

// surrogateEscape reports whether body holds prefix ("\ud" or "\uD") followed by a hex
// digit from 8 to F.
func surrogateEscape(body, prefix []byte) bool {
	for {
		i := bytes.Index(body, prefix)
		if i < 0 || i+3 >= len(body) {
			return false
		}
		if strings.IndexByte("89abcdefABCDEF", body[i+3]) >= 0 {
			return true
		}
		body = body[i+3:]
	}
}

// setFast sets qj's fields from o as decodeStrict would, or reports false (leaving qj
// partly set) when a field is one it leaves to decodeStrict: another name, a name
// outside ASCII, a value not a string or null.
func (qj *queryJSON) setFast(o *fastjson.Object) bool {
	ok := true
	o.Visit(func(key []byte, v *fastjson.Value) {
		var f *string
		switch {
		case asciiEqualFold(key, "simhash"):
			f = &qj.SimHash
		case asciiEqualFold(key, "minhash"):
			f = &qj.MinHash
		}
		switch {
		case !ok:
		case f == nil:
			ok = false
		case v.Type() == fastjson.TypeNull: // null leaves a field as it is
		case v.Type() != fastjson.TypeString:
			ok = false
		default:
			*f = string(v.GetStringBytes())
		}
	})
	return ok
}

// setQueriesFast sets *qs from o, a query batch, as decodeStrict would, or reports false
// (leaving *qs partly set) when the batch holds anything it leaves to decodeStrict: a
// name other than "queries" or repeated (encoding/json would decode the second array
// into the first one's elements), an item not an object, a query setFast refuses. A
// null "queries" leaves *qs nil, as encoding/json does.
func setQueriesFast(o *fastjson.Object, qs *[]queryJSON) bool {
	ok, seen := true, false
	o.Visit(func(key []byte, v *fastjson.Value) {
		switch {
		case !ok:
		case !asciiEqualFold(key, "queries") || seen:
			ok = false
		case v.Type() == fastjson.TypeNull:
			seen = true
		case v.Type() != fastjson.TypeArray:
			ok = false
		default:
			seen = true
			items := v.GetArray()
			*qs = make([]queryJSON, len(items))
			for i, item := range items {
				if item.Type() != fastjson.TypeObject || !(*qs)[i].setFast(item.GetObject()) {
					ok = false
					return
				}
			}
		}
	})
	return ok
}
