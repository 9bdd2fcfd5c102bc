package neardup_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/testtool"
)

// The layers of the module, lowest first. A package may import packages of its own layer
// and of the layers below it, never above: core packages know nothing of documents, the
// document layer nothing of batch runs and the service, and nothing but the application
// knows the application. docs/design.md ("Layers") draws them.
var layers = []string{"core", "document", "service", "application"}

// layerOf places every package of the module in a layer by the longest prefix of its
// path below the module that matches a row ("" is the root package alone; a row ending in
// "/" matches a folder and everything under it). A package no row matches fails
// TestLayers: a new package is placed here on purpose, not by default.
var layerOf = []struct {
	path  string
	layer string
}{
	// core: one package per pipeline step, the stores, and the leaf helpers of internal/.
	{"shingle/", "core"},
	{"simhash/", "core"},
	{"minhash/", "core"},
	{"hamming/", "core"},
	{"lsh/", "core"},
	{"urlnorm/", "core"},
	{"extract/", "core"},
	{"store/", "core"},
	{"internal/", "core"},
	// document: the façade, its value types, and what it is built from.
	{"", "document"},
	{"api/", "document"},
	{"internal/engine/", "document"},
	{"internal/keyfilter/", "document"}, // the engine's filter of URL and exact keys, over api.Hash
	{"mirror/", "document"},
	// service: batch runs and the HTTP service with its client.
	{"corpus/", "service"},
	{"dedup/", "service"},
	{"server/", "service"},
	{"client/", "service"},
	{"clients/", "service"}, // the clients in other languages, with their Go tests
	// application: the command and everything only it uses.
	{"cmd/", "application"},
}

// importRules are checked on top of the layer order: a package matching to may be
// imported only by packages matching onlyFrom (patterns as in layerOf), by their own
// files and by their tests.
var importRules = []struct {
	to, onlyFrom string
	why          string
}{
	{"cmd/neardup/internal/", "cmd/neardup/",
		"the application's packages serve cmd/neardup alone; move what another package needs to a lower layer (internal/ or a library package)"},
}

// testExceptions are the imports from a package's tests (from, to: patterns as in
// layerOf) that may point upward, each with its reason. Keep it short: a test that needs
// a higher layer usually belongs to that layer.
var testExceptions = []struct {
	from, to string
	why      string
}{
	{"store/redisstore", "", "BenchmarkShared measures the detector's check-and-add on a real Redis Cluster; it would sit better beside the detector"},
}

const module = "github.com/neardup/neardup"

// listedPackage is what TestLayers reads of `go list -json`.
type listedPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// TestLayers holds the layer order of the module's packages: it lists every package
// with its imports (go list) and fails for each import that points to a higher layer or
// breaks an importRule.
func TestLayers(t *testing.T) {
	out, err := exec.Command(testtool.Go(t), "list", "-json=ImportPath,Imports,TestImports,XTestImports", module+"/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		n++
		for _, msg := range checkImports(p) {
			t.Error(msg)
		}
	}
	if n < 10 {
		t.Fatalf("go list gave %d packages; expected the whole module", n)
	}
}

// checkImports returns what is wrong with the imports of p, one message an import.
func checkImports(p listedPackage) []string {
	from, ok := rel(p.ImportPath)
	if !ok {
		return nil
	}
	fromLayer, ok := layerFor(from)
	if !ok {
		return []string{p.ImportPath + ": in no layer; place it in layerOf (layers_test.go) and in docs/design.md"}
	}
	var msgs []string
	check := func(imports []string, test bool) {
		for _, imp := range imports {
			to, ok := rel(imp)
			if !ok || to == from {
				continue
			}
			toLayer, ok := layerFor(to)
			if !ok {
				continue // reported as a package of its own
			}
			where := p.ImportPath
			if test {
				where += " (tests)"
			}
			if rank(toLayer) > rank(fromLayer) && !(test && excepted(from, to)) {
				msgs = append(msgs, where+" ("+fromLayer+") imports "+imp+" ("+toLayer+"), a higher layer: move the code it needs down, or the importer up")
			}
			for _, r := range importRules {
				if matches(r.to, to) && !matches(r.onlyFrom, from) {
					msgs = append(msgs, where+" imports "+imp+": "+r.why)
				}
			}
		}
	}
	check(p.Imports, false)
	check(slices.Concat(p.TestImports, p.XTestImports), true)
	return msgs
}

// excepted reports whether a test of the package at from may import the higher one at to.
func excepted(from, to string) bool {
	for _, e := range testExceptions {
		if matches(e.from, from) && matches(e.to, to) {
			return true
		}
	}
	return false
}

// rel returns path below the module ("" for the root package), and false for a
// package outside it.
func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// matches reports whether the package at rel (below the module) is what pattern names:
// "" the root package, "x/" the folder x and everything under it, else the package
// itself.
func matches(pattern, rel string) bool {
	if pattern == "" || !strings.HasSuffix(pattern, "/") {
		return rel == pattern
	}
	return rel+"/" == pattern || strings.HasPrefix(rel, pattern)
}

// layerFor returns the layer of the longest row of layerOf that matches rel.
func layerFor(rel string) (string, bool) {
	best, layer := -1, ""
	for _, row := range layerOf {
		if matches(row.path, rel) && len(row.path) > best {
			best, layer = len(row.path), row.layer
		}
	}
	return layer, best >= 0
}

// rank is the position of a layer in layers, lowest first.
func rank(layer string) int {
	i := slices.Index(layers, layer)
	if i < 0 {
		panic("layers_test: layer " + layer + " is not in layers")
	}
	return i
}

// TestLayerRules checks the matching TestLayers relies on with a made-up module: an
// upward import, a folder prefix that must not match a sibling name, and the rules.
func TestLayerRules(t *testing.T) {
	for _, c := range []struct {
		pkg     string
		imports []string
		test    []string
		want    int // messages
	}{
		{"shingle", []string{module + "/minhash", "fmt"}, nil, 0},
		{"shingle", []string{module}, nil, 1},                                    // core -> document
		{"store/pebblestore", []string{module + "/server"}, nil, 1},              // core -> service
		{"", []string{module + "/store", module + "/api"}, nil, 0},               // document -> core, document
		{"dedup", []string{module + "/cmd/neardup/internal/cli"}, nil, 2},        // upward, and the rule
		{"internal/mix", nil, []string{module + "/cmd/neardup/internal/cli"}, 2}, // tests too
		{"cmd/neardup/internal/cli", []string{module + "/dedup", module}, nil, 0},
		{"cmd/neardup", []string{module + "/cmd/neardup/internal/cli"}, nil, 0},
		{"storefront", nil, nil, 1}, // in no layer: "store/" must not match it
		{"internal/engine", []string{module + "/store", module + "/api"}, nil, 0},
		{"internal/engine", []string{module + "/dedup"}, nil, 1},
		{"store/redisstore", nil, []string{module}, 0}, // a test exception
		{"store/redisstore", []string{module}, nil, 1}, // for tests only
		{"store/pebblestore", nil, []string{module}, 1},
	} {
		p := listedPackage{ImportPath: strings.TrimSuffix(module+"/"+c.pkg, "/"), Imports: c.imports, XTestImports: c.test}
		if got := checkImports(p); len(got) != c.want {
			t.Errorf("%q importing %v, tests %v: %d messages, want %d: %q", c.pkg, c.imports, c.test, len(got), c.want, got)
		}
	}
}
