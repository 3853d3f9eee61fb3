// Package findings holds the regression tests for real isolation
// violations txray found in databases (docs/findings.md): every checker
// able to see a finding must keep reporting it. The histories are under
// testdata/findings at the repository root.
package findings
