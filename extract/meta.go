package extract

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// metadata fills r's metadata from doc's head: the <title>, <meta> tags (the standard
// names, Open Graph and article: properties) and the canonical link, and the lang
// attribute of <html>. It reads what pages declare and parses nothing: Date is the
// declared publication date's first ten characters when they are a YYYY-MM-DD date.
func metadata(doc *html.Node, base *url.URL, r *Result) (ogTitle string) {
	var canonical, ogURL, date string
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode || n.Namespace != "" {
			continue
		}
		switch n.DataAtom {
		case atom.Html:
			if lang := attr(n, "lang"); lang != "" && r.Language == "" {
				tag, _, _ := strings.Cut(strings.TrimSpace(lang), "-")
				r.Language = normalize(strings.ToLower(tag))
			}
		case atom.Title:
			if r.Title == "" {
				r.Title = normalize(textOf(n))
			}
		case atom.Link:
			if canonical == "" && hasWord(attr(n, "rel"), "canonical") {
				canonical = attr(n, "href")
			}
		case atom.Meta:
			key := strings.ToLower(attr(n, "name"))
			if key == "" {
				key = strings.ToLower(attr(n, "property"))
			}
			val := normalize(attr(n, "content"))
			if val == "" {
				continue
			}
			set := func(dst *string) {
				if *dst == "" {
					*dst = val
				}
			}
			switch key {
			case "author", "article:author", "dc.creator", "parsely-author", "sailthru.author":
				if !strings.Contains(val, "://") {
					set(&r.Author)
				}
			case "description", "og:description", "twitter:description", "dc.description":
				set(&r.Description)
			case "og:site_name", "application-name":
				set(&r.SiteName)
			case "og:title", "twitter:title", "dc.title":
				set(&ogTitle)
			case "og:url":
				set(&ogURL)
			case "article:published_time", "datepublished", "date", "dc.date", "dc.date.issued", "publish-date", "pubdate", "sailthru.date", "parsely-pub-date":
				set(&date)
			}
		case atom.Body:
			// The head's elements sometimes end up in the body of broken pages, but
			// meta tags in the body are as often a widget's own; stop at the body.
			return finishMeta(r, base, canonical, ogURL, date, ogTitle)
		}
	}
	return finishMeta(r, base, canonical, ogURL, date, ogTitle)
}

func finishMeta(r *Result, base *url.URL, canonical, ogURL, date, ogTitle string) string {
	if len(date) >= 10 && isDate(date[:10]) {
		r.Date = date[:10]
	}
	for _, u := range []string{canonical, ogURL} {
		if abs := absolute(base, u); abs != "" {
			r.URL = abs
			break
		}
	}
	if r.URL == "" && base != nil {
		r.URL = base.String()
	}
	return ogTitle
}

// isDate reports whether s is shaped as YYYY-MM-DD with a plausible month and day.
func isDate(s string) bool {
	for i, c := range []byte(s) {
		if i == 4 || i == 7 {
			if c != '-' {
				return false
			}
		} else if c < '0' || c > '9' {
			return false
		}
	}
	m, d := (s[5]-'0')*10+s[6]-'0', (s[8]-'0')*10+s[9]-'0'
	return m >= 1 && m <= 12 && d >= 1 && d <= 31
}

// absolute returns ref resolved against base as an absolute http(s) URL, or "".
func absolute(base *url.URL, ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.String()
}

func hasWord(list, word string) bool {
	for f := range strings.FieldsSeq(list) {
		if strings.EqualFold(f, word) {
			return true
		}
	}
	return false
}

// baseURL returns s parsed when it is an absolute http(s) URL, else nil.
func baseURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil
	}
	return u
}
