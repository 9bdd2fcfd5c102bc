// Command neardup finds near-duplicate fingerprints and computes SimHash fingerprints.
// Run "neardup help" for its commands; the commands live in internal/cli.
package main

import (
	"os"

	"github.com/neardup/neardup/cmd/neardup/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
