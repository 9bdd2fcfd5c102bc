// Package htmlpage builds HTML pages from Go code: the page's markup is written as it
// is, every value escaped. It stands in for html/template where a binary must stay small:
// executing a template evaluates fields and methods by reflection
// (text/template's evalField calls reflect.Value.Method with an index known only at run
// time), and once a program can do that the linker keeps every exported method of every
// type it links. For neardup that was 13 MB of a 50 MB binary.
//
//	var b htmlpage.Builder
//	b.Printf(`<tr><th scope="row">%s</th><td class="num">%d</td></tr>`, name, n)
//	b.Markup("</table>\n")
//	w.Write(b.Bytes())
//
// Values are escaped exactly as html/template escapes them in element text and in quoted
// attribute values (the tests check this against html/template itself): '<', '>', '&',
// the quotes and '+' become character references and NUL becomes U+FFFD.
//
// # Caveats
//
// A Builder does not parse the markup it is given, so unlike html/template it cannot
// escape by context. Values belong in element text (RCDATA such as <title> and <textarea>
// included) and in attribute values within double quotes, nowhere else: not in <script>
// or <style>, not in unquoted attributes, not as an attribute's name, and not as a whole
// URL (a value can make "javascript:" of an href); a URL is built from constant markup
// and values escaped for it first (url.QueryEscape for a query parameter). Values are
// written as given, so the caller makes them valid UTF-8 (strings.ToValidUTF8).
package htmlpage

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/neardup/neardup/internal/measure"
)

// HTML is markup that a Builder writes as it is. An untyped string constant converts to
// it implicitly; a string variable does not, so data cannot pass for markup by accident.
type HTML string

// Builder accumulates a page. The zero value is an empty page ready to use. A Builder is
// not safe for concurrent use; it holds the whole page in memory.
type Builder struct {
	buf bytes.Buffer
}

// escaper is html/template's table for element text and quoted attribute values.
var escaper = strings.NewReplacer(
	"\x00", "\uFFFD",
	`"`, "&#34;",
	"&", "&amp;",
	"'", "&#39;",
	"+", "&#43;",
	"<", "&lt;",
	">", "&gt;",
)

// Markup appends h as it is.
func (b *Builder) Markup(h HTML) { b.buf.WriteString(string(h)) }

// Text appends s escaped. It allocates nothing beyond the page's own growth.
func (b *Builder) Text(s string) { escaper.WriteString(&b.buf, s) }

// Printf appends format, which is markup, with its verbs replaced by args as fmt formats
// them; each formatted arg is escaped unless it is of type HTML.
func (b *Builder) Printf(format HTML, args ...any) {
	xs := make([]any, len(args))
	for i, a := range args {
		if h, ok := a.(HTML); ok {
			xs[i] = string(h)
		} else {
			xs[i] = escaped{a}
		}
	}
	fmt.Fprintf(&b.buf, string(format), xs...)
}

// Segments appends one side of a word diff, its changed segments each inside an element
// named tag (del on the left, ins on the right), all of them escaped.
func (b *Builder) Segments(segs []measure.Segment, tag HTML) {
	for _, s := range segs {
		if s.Changed {
			b.Printf("<%s>%s</%s>", tag, s.Text, tag)
		} else {
			b.Text(s.Text)
		}
	}
}

// Bytes returns the page so far. The slice aliases the Builder's buffer: it is valid
// until the next call that appends.
func (b *Builder) Bytes() []byte { return b.buf.Bytes() }

// escaped formats its value with the verb it is given, then escapes the result.
type escaped struct{ v any }

// Format implements fmt.Formatter.
func (e escaped) Format(f fmt.State, verb rune) {
	escaper.WriteString(f, fmt.Sprintf(fmt.FormatString(f, verb), e.v))
}
