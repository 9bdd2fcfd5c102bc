package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/testtool"
)

var update = flag.Bool("update", false, "rewrite the shown output of every example whose output differs with what it printed")

// exampleDocs are the files whose console examples TestExamples runs, from the
// repository root.
var exampleDocs = []string{"README.md", "docs/*.md"}

// An example is one fenced ```console block of the documentation: commands after "$ "
// (a line ending in a backslash continues on the next), each followed by the output it
// should print, standard output and standard error together.
type example struct {
	file string // as in exampleDocs, for messages
	line int    // of the opening fence
	cmds []exampleCmd
}

type exampleCmd struct {
	text  string   // the command, as bash reads it
	want  []string // the lines it prints
	first int      // the index in the file of want's first line
}

// TestExamples runs every console example of the documentation with neardup built from
// this checkout (without -race even under it: the race detector would make each run's
// start-up several times slower, and it is the commands' output that is tested here), in
// a copy of the repository (so that relative paths mean what they mean from
// the root of a checkout), and compares what each command prints with what the example
// shows. In the shown output, a line "..." stands for any number of lines, and "..."
// within a line for any text (timings, temporary paths). The commands of one block share
// one bash process, so a variable or a cd carries to the next command. A block that
// leaves a file in the copy fails: the examples must write their outputs to temporary
// directories, as a user's checkout should stay clean.
func TestExamples(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var examples []example
	texts := map[string][]string{} // each file's lines, for -update
	for _, pattern := range exampleDocs {
		files, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, f)
			rel = filepath.ToSlash(rel)
			texts[rel] = strings.Split(string(text), "\n")
			ex, err := parseExamples(rel, string(text))
			if err != nil {
				t.Fatal(err)
			}
			examples = append(examples, ex...)
		}
	}
	if len(examples) == 0 {
		t.Fatal("no console examples found in", exampleDocs)
	}

	bin := t.TempDir()
	build := exec.Command(testtool.Go(t), "build", "-o", filepath.Join(bin, "neardup"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := filepath.Join(t.TempDir(), "neardup")
	if err := copyTree(root, work); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+tmp, "LC_ALL=C.UTF-8", "NO_COLOR=1")

	printed := make([][][]string, len(examples))
	for n, ex := range examples {
		t.Run(fmt.Sprintf("%s:%d", ex.file, ex.line), func(t *testing.T) {
			before, err := listTree(work)
			if err != nil {
				t.Fatal(err)
			}
			outs, err := runExample(ex, work, env)
			if err != nil {
				t.Fatal(err)
			}
			printed[n] = outs
			for i, c := range ex.cmds {
				got := outs[i]
				if !matchLines(c.want, got) && !*update {
					t.Errorf("$ %s\n%s\n(go test ./cmd/neardup -run Examples -update rewrites the example with what it printed)", c.text, firstDifference(c.want, got))
				}
			}
			after, err := listTree(work)
			if err != nil {
				t.Fatal(err)
			}
			if added := slices.DeleteFunc(after, func(p string) bool { _, found := slices.BinarySearch(before, p); return found }); len(added) > 0 {
				t.Errorf("the example left files in the checkout: %s; write them to a temporary directory", strings.Join(added, ", "))
			}
		})
	}
	if *update {
		if err := updateExamples(root, texts, examples, printed); err != nil {
			t.Fatal(err)
		}
	}
}

// updateExamples rewrites, in each file, the shown output of every command whose output
// did not match with what it printed, from the last command up so that the line indexes
// of the earlier ones stay valid.
func updateExamples(root string, texts map[string][]string, examples []example, printed [][][]string) error {
	changed := map[string]bool{}
	for n := len(examples) - 1; n >= 0; n-- {
		ex := examples[n]
		if printed[n] == nil {
			continue // the example did not run
		}
		for i := len(ex.cmds) - 1; i >= 0; i-- {
			c, got := ex.cmds[i], printed[n][i]
			if matchLines(c.want, got) {
				continue
			}
			lines := texts[ex.file]
			texts[ex.file] = slices.Concat(lines[:c.first], got, lines[c.first+len(c.want):])
			changed[ex.file] = true
		}
	}
	for file := range changed {
		if err := os.WriteFile(filepath.Join(root, file), []byte(strings.Join(texts[file], "\n")), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// parseExamples returns the console blocks of a Markdown file.
func parseExamples(file, text string) ([]example, error) {
	var out []example
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```console" {
			continue
		}
		ex := example{file: file, line: i + 1}
		for i++; ; i++ {
			if i == len(lines) {
				return nil, fmt.Errorf("%s:%d: the console block is not closed", file, ex.line)
			}
			line := lines[i]
			if strings.TrimSpace(line) == "```" {
				break
			}
			if cmd, ok := strings.CutPrefix(line, "$ "); ok {
				for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
					i++
					cmd += "\n" + lines[i]
				}
				ex.cmds = append(ex.cmds, exampleCmd{text: cmd, first: i + 1})
				continue
			}
			if len(ex.cmds) == 0 {
				return nil, fmt.Errorf("%s:%d: output before the first \"$ \" command", file, i+1)
			}
			c := &ex.cmds[len(ex.cmds)-1]
			c.want = append(c.want, line)
		}
		out = append(out, ex)
	}
	return out, nil
}

// runExample runs the commands of ex in one bash process in dir and returns the lines
// each printed.
func runExample(ex example, dir string, env []string) ([][]string, error) {
	var b [8]byte
	rand.Read(b[:])
	marker := "@@example-" + hex.EncodeToString(b[:]) + "@@"
	var script strings.Builder
	script.WriteString("exec 2>&1\n")
	for _, c := range ex.cmds {
		fmt.Fprintf(&script, "printf '\\n%s\\n'\n%s\n", marker, c.text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", script.String())
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("the example took over 2 minutes: %v\n%s", err, out.String())
	}
	parts := strings.Split(out.String(), "\n"+marker+"\n")
	if len(parts) != len(ex.cmds)+1 || parts[0] != "" {
		return nil, fmt.Errorf("the shell printed %q; expected one output for each of the %d commands", out.String(), len(ex.cmds))
	}
	outs := make([][]string, len(ex.cmds))
	for i, p := range parts[1:] {
		if p != "" {
			outs[i] = strings.Split(strings.TrimSuffix(p, "\n"), "\n")
		}
	}
	return outs, nil
}

// matchLines reports whether got matches want, where a want line "..." matches any
// number of lines and "..." within a line any text.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for k := 0; k <= len(got); k++ {
			if matchLines(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && lineRegexp(want[0]).MatchString(got[0]) && matchLines(want[1:], got[1:])
}

// firstDifference describes where got first departs from want, line by line up to the
// first "..." line of want, for a failure message that stays short for long outputs.
func firstDifference(want, got []string) string {
	for i := 0; ; i++ {
		switch {
		case i < len(want) && want[i] == "...":
			return fmt.Sprintf("printed %d lines, which do not match the %d the example shows past its line %d:\n%s", len(got), len(want), i+1, strings.Join(got[min(i, len(got)):], "\n"))
		case i == len(want) && i == len(got):
			return "the outputs match" // not reached: matchLines said they differ
		case i == len(want):
			return fmt.Sprintf("printed %d more lines than the example shows, from line %d: %q", len(got)-i, i+1, got[i])
		case i == len(got):
			return fmt.Sprintf("printed %d lines, fewer than the %d the example shows; line %d should be %q", len(got), len(want), i+1, want[i])
		case !lineRegexp(want[i]).MatchString(got[i]):
			return fmt.Sprintf("line %d printed:\n\t%s\nthe example shows:\n\t%s", i+1, got[i], want[i])
		}
	}
}

func lineRegexp(want string) *regexp.Regexp {
	parts := strings.Split(want, "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// copyTree copies the regular files of the repository at src to dst, leaving out .git.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
}

// listTree returns the paths of every file and directory under dir, sorted.
func listTree(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(out)
	return out, err
}
