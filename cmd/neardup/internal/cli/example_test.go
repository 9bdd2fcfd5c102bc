package cli_test

import (
	"os"
	"strings"

	"github.com/neardup/neardup/cmd/neardup/internal/cli"
)

// Main runs a command line in-process: here findall on four fingerprints, two of them
// written in hex, finding the pairs within 3 bits.
func ExampleMain() {
	input := strings.NewReader("255\n0xef\n0x33\n206\n")
	code := cli.Main([]string{"findall", "--distance", "3"}, input, os.Stdout, os.Stderr)
	if code != cli.ExitOK {
		os.Exit(code)
	}
	// Output:
	// [206, 239]
	// [206, 255]
	// [239, 255]
}

// With --clusters, findall writes the connected components of the pairs instead.
func ExampleMain_clusters() {
	input := strings.NewReader("255\n239\n51\n206\n65280\n61184\n")
	cli.Main([]string{"findall", "--distance", "2", "--clusters"}, input, os.Stdout, os.Stderr)
	// Output:
	// [206, 239, 255]
	// [61184, 65280]
}
