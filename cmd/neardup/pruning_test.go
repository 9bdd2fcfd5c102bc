package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/testtool"
)

// TestMethodPruning checks that the linker can still drop the methods neardup never
// calls. A function that looks a method up by reflection with a name or index known only
// at run time (reflect.Value.Method, Type.Method, MethodByName with a variable: the
// compiler marks it REFLECTMETHOD) makes the linker keep every exported method of every
// type it links once that function is reachable; for neardup that was 13 MB of a 50 MB
// binary, brought by executing an html/template and by protobuf's descriptor formatter.
// The test links the binary with -dumpdep, which prints each reachable symbol once with
// the symbol that first reached it, and fails with the chain to any such function.
func TestMethodPruning(t *testing.T) {
	if testing.Short() {
		t.Skip("links the binary")
	}
	cmd := exec.Command(testtool.Go(t), "build", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "neardup"), ".")
	out, err := cmd.CombinedOutput() // go build passes on the linker's output
	if err != nil {
		t.Fatalf("go build: %v\n%.2000s", err, out)
	}
	parent := map[string]string{}
	var found []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			continue
		}
		from, to = symbol(from), symbol(to)
		if _, seen := parent[to]; !seen {
			parent[to] = from
		}
		if strings.Contains(sc.Text(), " -> "+to+" <ReflectMethod>") {
			found = append(found, to)
		}
	}
	if len(parent) < 1000 {
		t.Fatalf("read %d reachable symbols from the linker; has -dumpdep's output changed?\n%.2000s", len(parent), out)
	}
	if len(found) == 0 {
		return
	}
	// The linker keeps every exported method from the first one on, so the first is the
	// cause and the others may only be its consequence.
	chain := []string{}
	for s := found[0]; parent[s] != "" && parent[s] != "_" && len(chain) < 40; s = parent[s] {
		chain = append(chain, parent[s])
	}
	t.Errorf("%s looks methods up by reflection and is reachable, so the linker keeps every exported method; reached from:\n\t%s\n"+
		"(where the chain goes from a type to its method, the method is kept for its name: a MethodByName with that constant name, "+
		"or an interface method of a generic type; go build -ldflags=-v=2 . 2>&1 | grep 'generic iface method' lists the names)\n"+
		"reachable after it: %s", found[0], strings.Join(chain, "\n\t"), strings.Join(found[1:], ", "))
}

// symbol returns a -dumpdep symbol without its flags ("<ReflectMethod>", "<UsedInIface>").
func symbol(s string) string {
	if i := strings.Index(s, " <"); i >= 0 {
		return s[:i]
	}
	return s
}
