package neardup_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Size limits of the repository's Go files, generated ones aside: a file that passes
// maxFileLines mixes concerns that want files of their own, and a function that passes
// maxFuncLines does several things that want names.
const (
	maxFileLines = 600
	maxFuncLines = 80
)

// longFuncs are the functions allowed past maxFuncLines, by "path:Name" ("path:(*T).Name"
// for a method), each with its reason; the function's own comment must say it too.
var longFuncs = map[string]string{
	"shingle/segment.go:(*Shingler).segment": "the tokenizer's hot loop keeps its cursor in registers across every kind of segment",
}

// TestSizes holds the size limits over every Go file of the repository (eval/ included).
func TestSizes(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		path = filepath.ToSlash(path)
		if d.IsDir() {
			if path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		if ast.IsGenerated(f) {
			return nil
		}
		for _, msg := range oversized(fset, path, f) {
			t.Error(msg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files; expected the whole repository (is the test running from its root?)", files)
	}
}

// oversized returns a message for the file f at path if it is too long, and one for each
// function of it that is too long and not in longFuncs.
func oversized(fset *token.FileSet, path string, f *ast.File) []string {
	var msgs []string
	if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
		msgs = append(msgs, fmt.Sprintf("%s: %d lines, over %d: split it by concern", path, n, maxFileLines))
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
		name := path + ":" + funcName(fn)
		why, allowed := longFuncs[name]
		switch {
		case n > maxFuncLines && !allowed:
			msgs = append(msgs, fmt.Sprintf("%s: %d lines, over %d: give its parts names (or, for a hot state machine, say why in its comment and in longFuncs)", name, n, maxFuncLines))
		case allowed && n <= maxFuncLines:
			msgs = append(msgs, fmt.Sprintf("%s is within %d lines now: remove it from longFuncs", name, maxFuncLines))
		case allowed && !strings.Contains(fn.Doc.Text(), "on purpose"):
			msgs = append(msgs, fmt.Sprintf("%s is long (%s) but its comment does not say so (\"... on purpose\")", name, why))
		}
	}
	return msgs
}

// funcName is fn's name as longFuncs writes it.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	return "(" + typeName(fn.Recv.List[0].Type) + ")." + fn.Name.Name
}

// typeName is the receiver type of a method as written, without type parameters.
func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + typeName(t.X)
	case *ast.IndexExpr:
		return typeName(t.X)
	case *ast.IndexListExpr:
		return typeName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return fmt.Sprintf("%T", e)
}
