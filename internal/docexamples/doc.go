// Package docexamples holds the test that runs the examples of README.md and
// docs/*.md as written: every line of a fenced block tagged `sh` is a
// command, run with bash in a scratch directory where ./txray is the binary
// built from this checkout and every other top-level entry of the checkout
// is a symbolic link to it (so what examples write lands in the scratch
// directory). A command passes when it exits 0, 1 (invalid) or 3
// (unknown): the verdict exit codes of docs/json-output.md; 2 (usage or
// input error) or anything else fails. Untagged blocks are output, formats
// or records of measurements and are not run. docs/design.md, the historical
// design, is not scanned.
//
// Commands are run as written except: `go build -o txray ./cmd/txray` is
// the build the test already did; `go run ./cmd/txray ARGS` runs ./txray
// ARGS; `go install`, `go test` (recursive) and `.ci/run` (reconfigures the
// database servers) are skipped with the reason; commands naming a
// postgres:// or mysql:// URL are skipped when that server is not
// reachable.
package docexamples
