package testenv

import (
	"testing"
)

// fakeTB records how Missing ended a test.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()                  {}
func (f *fakeTB) Skip(args ...any)         { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any)    { f.failed = true }
func (f *fakeTB) Skipf(string, ...any)     { f.skipped = true }
func (f *fakeTB) Fatal(args ...any)        { f.failed = true }
func (f *fakeTB) Logf(string, ...any)      {}
func (f *fakeTB) Errorf(string, ...any)    { f.failed = true }
func (f *fakeTB) Setenv(key, value string) {}
func (f *fakeTB) Cleanup(func())           {}
func (f *fakeTB) Name() string             { return "fake" }
func (f *fakeTB) Failed() bool             { return f.failed }
func (f *fakeTB) Skipped() bool            { return f.skipped }
func (f *fakeTB) TempDir() string          { return "" }
func (f *fakeTB) Log(args ...any)          {}
func (f *fakeTB) Error(args ...any)        { f.failed = true }
func (f *fakeTB) Fail()                    { f.failed = true }
func (f *fakeTB) FailNow()                 { f.failed = true }
func (f *fakeTB) SkipNow()                 { f.skipped = true }

func TestMissingFailsWhenServicesRequired(t *testing.T) {
	for _, tc := range []struct {
		env        string
		fail, skip bool
	}{
		{"", false, true},
		{"0", false, true},
		{"1", true, false},
		{"true", true, false},
		{"yes", true, false},
	} {
		t.Setenv(RequireEnv, tc.env)
		f := &fakeTB{}
		Missing(f, "PostgreSQL not reachable at %s", "127.0.0.1:5432")
		if f.failed != tc.fail || f.skipped != tc.skip {
			t.Errorf("%s=%q: failed=%v skipped=%v, want failed=%v skipped=%v", RequireEnv, tc.env, f.failed, f.skipped, tc.fail, tc.skip)
		}
	}
}
