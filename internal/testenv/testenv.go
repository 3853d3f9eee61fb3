// Package testenv decides what a test does when something it needs from the
// machine — a database server, a browser — is absent.
//
// By default such a test skips, naming what is missing and how to provide
// it. With the environment variable TXRAY_REQUIRE_SERVICES=1 (set by
// .ci/run) it fails instead, so a green CI run means every database and
// browser test really ran.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// RequireEnv is the environment variable that turns Missing into a failure.
const RequireEnv = "TXRAY_REQUIRE_SERVICES"

// Required reports whether absent services must fail tests
// (TXRAY_REQUIRE_SERVICES set to 1, true or yes).
func Required() bool {
	switch os.Getenv(RequireEnv) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// Missing ends t because a service it needs is absent: t.Skip normally,
// t.Fatal when Required. The message should name the service, where it
// was looked for and why it is not usable.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("%s (%s=1: a required service is missing)", msg, RequireEnv)
		return
	}
	t.Skip(msg + " (skipping; " + RequireEnv + "=1 makes this a failure)")
}
