package cli

import (
	"strings"
	"testing"
)

func TestURLNorm(t *testing.T) {
	const in = "HTTP://www.Example.COM:80/a/./b/../c?y=2&x=1#top\r\n\nhttps://www.example.com/a/index.html?utm_source=x\nhttp://x:99999/\n"
	for _, tc := range []struct {
		name         string
		args         []string
		stdin        string
		code         int
		stdout       string
		stderr       string // substring
		stderrAbsent bool
	}{
		{
			name: "arguments", args: []string{"example.com/a/../b", "HTTPS://Example.com:443"},
			stdout: "http://example.com/b\nhttps://example.com/\n", stderrAbsent: true,
		},
		{
			name: "stdin", stdin: in, code: ExitError,
			stdout: "http://www.example.com/a/c?x=1&y=2\nhttps://www.example.com/a/index.html?utm_source=x\n",
			stderr: "neardup urlnorm: stdin:2: invalid URL \"\": nothing but spaces and control characters\n" +
				"neardup urlnorm: stdin:4: invalid URL \"http://x:99999/\": the input's port is outside the range [0-65535]\n",
		},
		{
			name: "aggressive, dash among arguments", args: []string{"--profile", "aggressive", "http://www.a.com/?sid=1", "-", "http://a.com:1x"},
			stdin: "https://www.example.com/a/index.html?utm_source=x\n", code: ExitError,
			stdout: "http://a.com/\nhttp://example.com/a\n",
			stderr: "neardup urlnorm: argument 3: invalid URL \"http://a.com:1x\"",
		},
		{
			name: "whatwg, keep fragment", args: []string{"http://example.com/%7e#x", "--keep-fragment", "--profile=whatwg", "http://A.com/#y"},
			stdout: "http://example.com/%7e#x\nhttp://a.com/#y\n", stderrAbsent: true,
		},
		{
			name: "rejected as the standard rejects", args: []string{"http://example example.com/", "http://256.256.256.256", "http://[::1.2.3.]", "../i", "http://ok.com"},
			code: ExitError, stdout: "http://ok.com/\n",
			stderr: "neardup urlnorm: argument 1: invalid URL \"http://example example.com/\": the host contains a forbidden domain code point: \" \"\n" +
				"neardup urlnorm: argument 2: invalid URL \"http://256.256.256.256\": an IPv4 address contains a part that is greater than 255\n",
		},
		{
			name: "relative reference without a base", args: []string{"--profile=whatwg", "../i"}, code: ExitError,
			stderr: "neardup urlnorm: argument 1: invalid URL \"../i\": a relative reference and no base URL; give an absolute URL (with a scheme, as in http://example.com/) or a base URL\n",
		},
		{
			name: "base", args: []string{"--base", "https://Example.com/news/", "../about?b=2&a=1", "#top", "//cdn.example.com/x.js"},
			stdout: "https://example.com/about?a=1&b=2\nhttps://example.com/news/\nhttps://cdn.example.com/x.js\n", stderrAbsent: true,
		},
		{
			name: "bad base", args: []string{"--base", "news/", "a"}, code: ExitUsage,
			stderr: `neardup urlnorm: --base: invalid options: Base: invalid URL: base URL "news/"`,
		},
		{
			name: "json", args: []string{"--json", "-"}, stdin: "a.com/<b>\nhttp://\xff:x\n", code: ExitError,
			stdout: `{"input":"a.com/<b>","url":"http://a.com/<b>"}` + "\n" +
				`{"input":"http://\ufffd:x","error":"urlnorm: invalid URL \"http://\\xff:x\": the input's port is not a number"}` + "\n",
			stderr: "neardup urlnorm: stdin:2: ",
		},
		{
			name: "bad profile", args: []string{"--profile", "gentle", "a.com"}, code: ExitUsage,
			stderr: `invalid value "gentle" for flag --profile: invalid options: unknown profile "gentle"; use "safe", "aggressive" or "whatwg"`,
		},
		{
			name: "line too long", stdin: "http://a.com/" + strings.Repeat("a", 1<<20) + "\n", code: ExitError,
			stderr: "neardup urlnorm: stdin:1: line longer than 1 MiB; one URL per line\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tc.stdin, append([]string{"urlnorm"}, tc.args...)...)
			if code != tc.code || stdout != tc.stdout {
				t.Errorf("exit code %d, stdout\n%s\nwant exit code %d, stdout\n%s", code, stdout, tc.code, tc.stdout)
			}
			if !strings.Contains(stderr, tc.stderr) || tc.stderrAbsent && stderr != "" {
				t.Errorf("stderr %q, want it to contain %q", stderr, tc.stderr)
			}
		})
	}
}

func TestURLNormHelp(t *testing.T) {
	stdout, _, code := run(t, "", "urlnorm", "--help")
	for _, want := range []string{"usage: neardup urlnorm [options] [URL...|-]", "--profile PROFILE", "(default safe)", "--keep-fragment", "--json", "aggressive  safe, plus"} {
		if code != ExitOK || !strings.Contains(stdout, want) {
			t.Errorf("help (exit code %d) lacks %q:\n%s", code, want, stdout)
		}
	}
	if stdout, _, _ := run(t, "", "help"); !strings.Contains(stdout, "urlnorm         canonicalize URLs into dedup keys") {
		t.Errorf("command list lacks urlnorm:\n%s", stdout)
	}
}
