#!/usr/bin/env python3
"""Generates ../../pytables.go: the parts of Python's str semantics that PyFingerprint needs.

Run from the simhash directory with `go generate` (or `python3 internal/pytables/gen.py`).

Everything is read from the running interpreter's own behaviour, not from Unicode data files,
so the tables reproduce Python exactly, quirks included:

  pyWord            code points c with c.isalnum() or c == '_': what re's \\w matches in a str
                    pattern (checked against re for every code point).
  pyLowerRanges     c.lower() for every c other than U+03A3 (handled by the final sigma rule)
  pyLowerMulti      whose lower-case form differs from c; multi-code-point results (U+0130) go
                    to pyLowerMulti.
  pyCaseIgnorable   the two classes the final sigma rule of str.lower() looks at. The rule
  pyCased           (CPython's handle_capital_sigma) skips Case_Ignorable code points and then
                    tests Cased, so only "Cased and not Case_Ignorable" matters for the second
                    class; both are measured by lowering probe strings around U+03A3.
  pyASCII           the three classes for code points below 0x80, as pyFlag* bit sets, for the
                    fast path (ASCII lower-cases A-Z only; checked here).

The interpreter is pinned: a different Python has a different Unicode version, and with it
different fingerprints. Change PINNED only together with the golden vectors in testdata.
"""

import os
import re
import shutil
import subprocess
import sys
import unicodedata

PINNED_PYTHON = (3, 11)
PINNED_UNICODE = '14.0.0'
SIGMA = 0x3A3
MAX = 0x110000

if sys.version_info[:2] != PINNED_PYTHON or unicodedata.unidata_version != PINNED_UNICODE:
    sys.exit('pytables: need Python %d.%d (Unicode %s), have Python %s (Unicode %s); '
             'the tables and the golden vectors in testdata are pinned to it'
             % (PINNED_PYTHON + (PINNED_UNICODE, sys.version.split()[0], unicodedata.unidata_version)))

word_re = re.compile(r'\w')


def ranges(pred):
    """Returns the maximal [lo, hi] runs of code points where pred holds."""
    out, start = [], None
    for cp in range(MAX):
        if pred(cp):
            if start is None:
                start = cp
        elif start is not None:
            out.append((start, cp - 1))
            start = None
    if start is not None:
        out.append((start, MAX - 1))
    return out


def is_word(cp):
    ch = chr(cp)
    w = ch.isalnum() or ch == '_'
    if w != bool(word_re.fullmatch(ch)):
        sys.exit('pytables: str.isalnum and re \\w disagree on U+%04X' % cp)
    return w


def final_sigma(s, i):
    """Reports whether s.lower() turns the U+03A3 at index i into final sigma U+03C2."""
    out = s.lower()
    # Only the probe code point can change length; index from the nearer end.
    if i == len(s) - 1:
        c = out[-1]
    else:
        c = out[i]
    assert c in '\u03c2\u03c3', (s, out)
    return c == '\u03c2'


def classes():
    """Returns (case_ignorable, cased_not_ignorable) as predicates measured through lower()."""
    ci, cased = bytearray(MAX), bytearray(MAX)
    for cp in range(MAX):
        if cp == SIGMA:
            ci[cp], cased[cp] = 0, 1
            continue
        c = chr(cp)
        p1 = final_sigma(c + '\u03a3', len(c))          # !CI(c) && Cased(c)
        p2 = final_sigma('A' + c + '\u03a3', 1 + len(c))  # CI(c) || Cased(c)
        p3 = final_sigma('A\u03a3' + c, 1)              # CI(c) || !Cased(c)
        is_ci = p2 and p3
        if is_ci and p1:
            sys.exit('pytables: inconsistent sigma probes at U+%04X' % cp)
        ci[cp], cased[cp] = int(is_ci), int(p1)
    return ci, cased


def lower_tables():
    single, multi = [], []
    for cp in range(MAX):
        if cp == SIGMA:
            continue
        lo = chr(cp).lower()
        if lo == chr(cp):
            continue
        if len(lo) == 1:
            single.append((cp, ord(lo) - cp))
        else:
            multi.append((cp, lo))
    # Merge entries with equal deltas into runs of stride 1 or 2 (alternating upper/lower).
    runs = []  # [lo, hi, delta, stride]
    for cp, d in single:
        if runs:
            r = runs[-1]
            if r[2] == d and r[0] == r[1] and cp - r[1] in (1, 2):
                r[1], r[3] = cp, cp - r[1]
                continue
            if r[2] == d and cp - r[1] == r[3]:
                r[1] = cp
                continue
        runs.append([cp, cp, d, 1])
    return runs, multi


def go_string(s):
    """Returns s as a Go string literal with non-ASCII code points escaped."""
    out = []
    for c in s:
        o = ord(c)
        if 0x20 <= o < 0x7f and c not in '"\\':
            out.append(c)
        elif o <= 0xFFFF:
            out.append('\\u%04x' % o)
        else:
            out.append('\\U%08x' % o)
    return '"' + ''.join(out) + '"'


def go_table(name, doc, rs):
    r16 = [r for r in rs if r[1] <= 0xFFFF]
    r32 = [r for r in rs if r[0] > 0xFFFF]
    split = [r for r in rs if r[0] <= 0xFFFF < r[1]]
    for lo, hi in split:
        r16.append((lo, 0xFFFF))
        r32.insert(0, (0x10000, hi))
    latin = sum(1 for r in r16 if r[1] <= 0xFF)
    out = ['// %s' % line if line else '//' for line in doc]
    out.append('var %s = &unicode.RangeTable{' % name)
    out.append('\tR16: []unicode.Range16{')
    out += ['\t\t{0x%04x, 0x%04x, 1},' % r for r in r16]
    out.append('\t},')
    if r32:
        out.append('\tR32: []unicode.Range32{')
        out += ['\t\t{0x%05x, 0x%05x, 1},' % r for r in r32]
        out.append('\t},')
    out.append('\tLatinOffset: %d,' % latin)
    out.append('}')
    return '\n'.join(out) + '\n'


def main():
    word = ranges(is_word)
    ci, cased = classes()
    runs, multi = lower_tables()
    # Self-checks of facts the Go code relies on.
    assert chr(SIGMA).lower() == '\u03c3' and 'A\u03a3'.lower() == 'a\u03c2'
    for cp in range(0x80):
        ch = chr(cp)
        assert is_word(cp) == (ch.isascii() and (ch.isalnum() or ch == '_'))
        assert ch.lower() == (chr(cp + 32) if 'A' <= ch <= 'Z' else ch)
    py = sys.version.split()[0]
    src = []
    src.append('// Code generated by internal/pytables/gen.py from Python %s (Unicode %s); DO NOT EDIT.\n' % (py, PINNED_UNICODE))
    src.append('\npackage simhash\n\nimport "unicode"\n\n')
    src.append('// pyUnicodeVersion is the Unicode version of the Python these tables were read from.\n')
    src.append('const pyUnicodeVersion = "%s"\n\n' % PINNED_UNICODE)
    src.append('// pyASCII holds the pyFlag* classes of the code points below 0x80.\n')
    src.append('var pyASCII = [128]uint8{\n')
    for cp in range(0x80):
        flags = [n for n, on in (('pyFlagWord', is_word(cp)), ('pyFlagCaseIgnorable', ci[cp]), ('pyFlagCased', cased[cp])) if on]
        if flags:
            src.append('\t0x%02x: %s, // %r\n' % (cp, ' | '.join(flags), chr(cp)))
    src.append('}\n\n')
    src.append(go_table('pyWord', [
        'pyWord holds the code points c for which Python %s has c.isalnum() or c == \'_\':' % py,
        'the word characters of re\'s \\w in a str pattern.'], word))
    src.append('\n')
    src.append(go_table('pyCaseIgnorable', [
        'pyCaseIgnorable holds the code points that Python %s\'s final sigma rule skips' % py,
        '(Unicode Case_Ignorable).'], ranges(lambda c: ci[c])))
    src.append('\n')
    src.append(go_table('pyCased', [
        'pyCased holds the code points that are Cased and not Case_Ignorable in Python %s:' % py,
        'the ones the final sigma rule tests after skipping pyCaseIgnorable.'], ranges(lambda c: cased[c])))
    src.append('\n// pyLowerRanges maps code points to Python %s\'s str.lower(): r in [lo, hi] with\n' % py)
    src.append('// (r-lo)%stride == 0 becomes r+delta, stride 0 means the result is pyLowerMulti[delta]\n')
    src.append('// (several code points). Code points not listed, and U+03A3, lower-case to themselves.\n')
    src.append('var pyLowerRanges = []lowerRange{\n')
    for i, (cp, s) in enumerate(multi):
        runs.append([cp, cp, i, 0])
    runs.sort()
    for lo, hi, d, st in runs:
        src.append('\t{0x%04x, 0x%04x, %d, %d},\n' % (lo, hi, d, st))
    src.append('}\n\n')
    src.append('// pyLowerMulti holds the lower-case forms longer than one code point.\n')
    src.append('var pyLowerMulti = []string{\n')
    for cp, s in multi:
        src.append('\t%s, // U+%04X\n' % (go_string(s), cp))
    src.append('}\n')
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'pytables.go')
    with open(path, 'w') as f:
        f.write(''.join(src))
    gofmt = shutil.which('gofmt')
    if gofmt is None:
        goroot = subprocess.run(['go', 'env', 'GOROOT'], capture_output=True, text=True, check=True).stdout.strip()
        gofmt = os.path.join(goroot, 'bin', 'gofmt')
    subprocess.run([gofmt, '-w', path], check=True)


if __name__ == '__main__':
    main()
