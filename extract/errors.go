package extract

import "errors"

// ErrTooLarge reports a page longer than Options.MaxBytes. Nothing was extracted; raise
// MaxBytes, or cut the page before calling. Test for it with errors.Is.
var ErrTooLarge = errors.New("extract: page too large")

// ErrBinary reports a page that is not text: an image, a PDF, an archive, audio, video
// or a font served as a page, or bytes that no text holds. Nothing was extracted; see
// the package Limits for how a page is told apart. Test for it with errors.Is.
var ErrBinary = errors.New("extract: binary content, not a page")

// ErrTooDeep reports a page whose elements nest deeper than Options.MaxDepth (at most
// 512, the HTML parser's own limit). Nothing was extracted: deep nesting is how hostile
// pages make tree-walking extractors slow. VisibleText builds no tree and still reads
// such a page. Test for it with errors.Is.
var ErrTooDeep = errors.New("extract: page nested too deeply")

// ErrTimeout reports that the extraction of a page did not finish within
// Options.Timeout. Test for it with errors.Is; see the package Caveats for what keeps
// running after it is returned.
var ErrTimeout = errors.New("extract: time budget exceeded")
