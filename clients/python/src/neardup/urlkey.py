"""Canonical URLs as the service makes them, for the common crawled URL only.

The service keys a page's URL by its canonical form (Go package ``urlnorm``, Aggressive
profile with its default lists unless the service was built otherwise). Reimplementing
the WHATWG URL parser, IDNA and every profile in Python would be a second copy that
drifts. Instead :func:`canonical_url` handles the URLs Go's own fast path handles, minus
internationalized hosts: an absolute ``http`` or ``https`` URL of printable ASCII whose
host is a plain domain name (no IP address, no userinfo, no Punycode) and whose path,
query and fragment hold only the bytes that the standard keeps as they are. For those it
applies the same steps as Go and gives the same string; for anything else it returns
None, and the pre-screen answers "maybe" (ask the service), which is always safe.

A Go test writes ``testdata/prescreen/vectors.json`` from the real canonicalizer, and
the Python tests check that every answer here is either None or Go's exact string.
"""

from __future__ import annotations

import re
from typing import Final, Iterable, Optional

__all__ = ["Canonicalizer", "canonical_url", "AGGRESSIVE", "SAFE"]

SAFE: Final = "safe"
AGGRESSIVE: Final = "aggressive"

DEFAULT_TRACKING_PARAMS: Final = (
    "utm_*", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "yclid",
    "twclid", "igshid", "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok",
)
DEFAULT_SESSION_PARAMS: Final = (
    "jsessionid", "phpsessid", "sid", "sessionid", "aspsessionid*", "cfid", "cftoken",
)
DEFAULT_INDEX_PAGES: Final = (
    "index.html", "index.htm", "index.shtml", "index.php", "index.asp", "index.aspx",
    "index.jsp", "index.cgi", "default.htm", "default.html", "default.asp", "default.aspx",
)

# The subset, in two matches. _URL_RE splits a URL into its head (scheme and authority,
# which a crawl repeats, so that its steps are cached) and a path and query of the bytes
# Go's fast path takes as they are (pathOK and queryOK in urlnorm/fastpath.go), then the
# fragment. _HOST_RE vets an authority once per head: ASCII labels, none empty but for a
# final dot, none starting with "xn--" or with or ending in "-", the last starting with a
# letter (so never an IP address), and port digits. Neither has a lookahead in the
# per-URL match, which is what makes it cheap.
_LABEL = r"(?!xn--)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
_URL_RE: Final = re.compile(
    r"(https?://[^/?#]*)(/[A-Za-z0-9\-._~!$&()*+,;=:@/%]*)?(?:\?([A-Za-z0-9\-._~!$&()*+,;=:@/%?]*))?(?:#(.*))?\Z",
    re.IGNORECASE | re.DOTALL | re.ASCII,  # ASCII: no Kelvin sign for a k
)
_HOST_RE: Final = re.compile(
    r"((?:" + _LABEL + r"\.)*(?!xn--)[a-z](?:[a-z0-9-]*[a-z0-9])?)\.?(?::([0-9]*))?\Z",
    re.IGNORECASE | re.ASCII,
)
_HEX: Final = "0123456789ABCDEF"


def _enc_set(extra: str) -> frozenset[str]:
    # Go's newSet(true, extra): C0 controls, space, DEL and above, and extra. Strings
    # here hold one byte per character (Latin-1), as Go's hold bytes.
    return frozenset([chr(c) for c in range(256) if c <= 0x20 or c >= 0x7F] + list(extra))


_SEM_PATH: Final = _enc_set("#%?")
_SEM_QUERY: Final = _enc_set("#%&=")


def _unhex(c: str) -> int:
    return int(c, 16) if c in "0123456789abcdefABCDEF" else -1


def _decode(s: str) -> str:
    """Percent-decode repeatedly until no escape is left (Go's decode)."""
    if "%" not in s:
        return s
    b: list[str] = []
    for ch in s:
        b.append(ch)
        while len(b) >= 3 and b[-3] == "%":
            hi, lo = _unhex(b[-2]), _unhex(b[-1])
            if hi < 0 or lo < 0:
                break
            del b[-3:]
            b.append(chr(hi << 4 | lo))
    return "".join(b)


def _encode(s: str, enc: frozenset[str]) -> str:
    if enc.isdisjoint(s):
        return s
    return "".join("%" + _HEX[ord(c) >> 4] + _HEX[ord(c) & 15] if c in enc else c for c in s)


def _is_dots(seg: str) -> tuple[bool, bool]:
    n = 0
    while seg:
        if seg[0] == ".":
            seg = seg[1:]
        elif len(seg) >= 3 and seg[0] == "%" and seg[1] == "2" and seg[2] in "eE":
            seg = seg[3:]
        else:
            return False, False
        n += 1
    return n == 1, n == 2


def _resolve_dots(path: str) -> str:
    # A dot segment starts right after a "/" with "." or "%2e": Go checks for any "."
    # or "%2", which gives the same answers, more slowly here.
    if not path.startswith("/") or ("/." not in path and "/%2" not in path):
        return path
    out: list[str] = []  # segments, each written after a "/"
    segs = path[1:].split("/")
    trailing = False
    for seg in segs:
        dot, dotdot = _is_dots(seg)
        if dotdot:
            if out:
                out.pop()
            trailing = True
        elif dot:
            trailing = True
        else:
            out.append(seg)
            trailing = False
    return "/" + "/".join(out) + ("/" if trailing and out else "")


class _Names:
    """Names matched without regard to ASCII case; an entry ending in "*" is a prefix."""

    def __init__(self, entries: Iterable[str]) -> None:
        exact, prefixes = set(), []
        for e in entries:
            e = e.lower()
            if e.endswith("*"):
                prefixes.append(e[:-1])
            else:
                exact.add(e)
        self.exact = frozenset(exact)
        self.prefixes = tuple(prefixes)
        # The characters a matching name of ASCII (or Latin-1) may start with: a test
        # that turns most names away without lowering them. An entry "*" matches all.
        if "" in prefixes:
            self.first = frozenset(chr(c) for c in range(256))
        else:
            self.first = frozenset(c for e in exact | set(prefixes) for c in (e[:1], e[:1].upper()) if c)

    def has(self, name: str) -> bool:
        # Go lowers ASCII letters only; str.lower() differs from that only on non-ASCII
        # letters, which no ASCII entry matches either way.
        low = name.lower()
        return low in self.exact or low.startswith(self.prefixes)  # False for no prefixes


class Canonicalizer:
    """Canonicalizes the common crawled URL as the service does, or declines.

    profile is "aggressive" (the service's default) or "safe"; the lists default to
    Go's defaults. A Canonicalizer may be shared by threads: its only state is caches of
    URL heads and parameter names, changed by single dict operations.
    """

    def __init__(
        self,
        profile: str = AGGRESSIVE,
        tracking_params: Iterable[str] = DEFAULT_TRACKING_PARAMS,
        session_params: Iterable[str] = DEFAULT_SESSION_PARAMS,
        index_pages: Iterable[str] = DEFAULT_INDEX_PAGES,
    ) -> None:
        if profile not in (SAFE, AGGRESSIVE):
            raise ValueError(f"neardup: URL profile {profile!r}: use 'aggressive' or 'safe' (whatwg is not supported here)")
        self.aggressive = profile == AGGRESSIVE
        self._heads: dict[str, str] = {}  # "scheme://authority" as given -> _head's answer
        self._dropped_names: dict[str, bool] = {}  # query parameter name -> dropped
        self._sessions = _Names(session_params)
        self._dropped = _Names(list(tracking_params) + list(session_params))
        self._index = _Names(index_pages)

    def canonicalize(self, raw: str) -> Optional[str]:
        """Return raw's canonical URL, or None when raw is outside the handled subset.

        None never means the URL is invalid, only that the service must be asked.
        """
        m = _URL_RE.match(raw)
        if m is None:
            return None
        head, path, query, frag = m.groups()
        # The fragment never reaches the server and every profile drops it, so what it
        # holds cannot change the key (the regular expression vetted the rest).
        if frag and not (frag.isascii() and frag.isprintable()):
            return None
        # A crawl meets few hosts, many times each: their steps are remembered.
        h = self._heads.get(head)
        if h is None:
            h = self._head(head)
            if len(self._heads) >= 4096:
                self._heads.clear()
            self._heads[head] = h
        if not h:
            return None
        # The common path (no escape, dot segment, parameter, session or doubled slash)
        # needs only the index-page step, which _path takes last.
        if path is None:
            path = "/"
        elif "%" in path or "/." in path or ";" in path or "/(" in path or "//" in path:
            path = self._path(path)
        elif self.aggressive and (path[-1] == "/" or path[path.rfind("/") + 1] in self._index.first):
            # The path is ASCII here (the match vetted it), which the first-character
            # test of _Names needs.
            path = self._drop_index_page(path)
        if query is None:
            return h + path
        if query:
            query = self._recode_query(query)
        elif self.aggressive:
            return h + path
        return h + path + "?" + query if query or not self.aggressive else h + path

    def _head(self, head: str) -> str:
        """Return the canonical "scheme://host[:port]" for a URL's head, or "" to decline."""
        scheme, _, authority = head.partition("://")
        m = _HOST_RE.match(authority)
        if m is None:
            return ""
        host, port = m.groups()
        scheme = scheme.lower()
        host = host.lower()
        if self.aggressive and host.startswith("www"):
            host = _strip_www(host)
        if port is not None:
            port = port.lstrip("0") or ("0" if port else "")
            if len(port) > 5 or (len(port) == 5 and port > "65535"):
                return ""
            if port == ("80" if scheme == "http" else "443"):
                port = ""
        if self.aggressive and scheme == "https":
            scheme = "http"
            if port == "80":
                port = ""
        return scheme + "://" + host + (":" + port if port else "")

    def _path(self, path: str) -> str:
        """Go's path steps: the parse's dot segments, then Safe's and Aggressive's."""
        if "/." in path or "/%2" in path:
            path = _resolve_dots(path)
        if "%" in path:  # else decoding is nothing, and no byte of pathOK is encoded
            path = _encode(_decode(path), _SEM_PATH)
            if not path.startswith("/"):
                path = "/" + path
        if self.aggressive:
            if ";" in path:
                path = self._drop_path_params(path)
            if "/(" in path:
                path = _drop_aspnet_session(path)
        if "/." in path or "/%2" in path:
            path = _resolve_dots(path)
        while "//" in path:
            path = path.replace("//", "/")
        if path == "":
            return "/"  # an ASP.NET session segment was the whole path
        if self.aggressive:
            path = self._drop_index_page(path)
        return path

    def _recode_query(self, query: str) -> str:
        kept = []
        aggressive = self.aggressive
        dropped = self._dropped_names
        for p in query.split("&"):
            name, eq, value = p.partition("=")
            if "%" in name:  # else only "=" and "&" of queryOK would be encoded: none here
                name = _encode(_decode(name), _SEM_QUERY)
            if aggressive:
                if p == "":
                    continue
                # Names repeat across a crawl's URLs; the answer for each is remembered.
                drop = dropped.get(name)
                if drop is None:
                    drop = self._dropped.has(name)
                    if len(dropped) >= 4096:
                        dropped.clear()
                    dropped[name] = drop
                if drop:
                    continue
            if "%" in value or "=" in value:
                kept.append(name + "=" + _encode(_decode(value), _SEM_QUERY))
            elif "%" in p:  # the name was recoded: p as it came is not name=value
                kept.append(name + "=" + value if eq else name)
            else:
                kept.append(p)
        # Go sorts the byte strings; Latin-1 code points sort the same way.
        kept.sort()
        return "&".join(kept)

    def _drop_path_params(self, path: str) -> str:
        if ";" not in path:
            return path
        out = []
        while True:
            i = path.find(";")
            if i < 0:
                out.append(path)
                return "".join(out)
            out.append(path[:i])
            end = len(path)
            for sep in ";/":
                j = path.find(sep, i + 1)
                if 0 <= j < end:
                    end = j
            name = path[i + 1 : end].partition("=")[0]
            if not self._sessions.has(name):
                out.append(path[i:end])
            path = path[end:]

    def _drop_index_page(self, path: str) -> str:
        if path[-1] != "/" and not self._index.has(path[path.rfind("/") + 1 :]):
            return path  # the common case, in one test
        while True:
            if len(path) > 1 and path.endswith("/"):
                path = path.rstrip("/") or "/"
            i = path.rfind("/")
            if i < 0 or not self._index.has(path[i + 1 :]):
                return path
            path = path[: i + 1]


def _strip_www(host: str) -> str:
    # Go also keeps a "www." whose rest is an IPv4 address; no host that reaches here
    # ends in a label starting with anything but a letter, so none is.
    while host.startswith("www"):
        i = 3
        while i < len(host) and host[i].isdigit():
            i += 1
        if i == len(host) or host[i] != "." or "." not in host[i + 1 :]:
            break
        host = host[i + 1 :]
    return host


def _is_session_id(s: str) -> bool:
    return len(s) >= 24 and s.isascii() and s.isalnum()


def _is_aspnet_session(seg: str) -> bool:
    if not (seg.startswith("(") and seg.endswith(")")) or len(seg) < 3:
        return False
    inner = seg[1:-1]
    if _is_session_id(inner):
        return True
    while inner:
        c = inner[0]
        ident, close, rest = inner[1:].partition(")")
        if not (c.isascii() and c.isalpha()) or not close or not ident.startswith("(") or not _is_session_id(ident[1:]):
            return False
        inner = rest
    return True


def _drop_aspnet_session(path: str) -> str:
    if "/(" not in path:
        return path
    out = []
    rest = path
    while rest:
        i = rest.find("/(")
        if i < 0:
            out.append(rest)
            break
        out.append(rest[:i])
        rest = rest[i:]
        seg = rest[1:].partition("/")[0]
        if _is_aspnet_session(seg):
            rest = rest[1 + len(seg) :]
            continue
        out.append("/")
        rest = rest[1:]
    return "".join(out)


_DEFAULT: Final = Canonicalizer()


def canonical_url(raw: str) -> Optional[str]:
    """Canonicalize raw with the service's default options (Aggressive), or return None."""
    return _DEFAULT.canonicalize(raw)
