// Command txray checks transaction histories for isolation anomalies.
// All command-line code lives in internal/cli.
package main

import (
	"os"

	"github.com/txray/txray/internal/cli"
)

func main() { os.Exit(cli.Run()) }
