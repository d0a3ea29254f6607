package manifest

import (
	"regexp"
	"testing"
)

// The regexps the hand-written checks replace.
var (
	bundleNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	entryNameRE  = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)
	semverRE     = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
)

// FuzzNames holds each name check to the regexp of sdk/ABI.md §10 it
// replaces.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"", "a", "tasks_1", "A", "1.0.0", "1.0.0-rc.1+b.5", "01.0.0", "1.0.0-01", "1.0.0-0a", "1.0.0+", "1.0.0-",
		"1.0.0-a..b", "{id}", "{1d}", "{}", "x{id}", "a%2F", "a/b", "kadu_tasks.get-2", "1.2", "1.2.3.4", "0.0.0-0", "1.0.0-x-y+z-1.02"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range []struct {
			name string
			got  bool
			re   *regexp.Regexp
		}{
			{"IsBundleName", IsBundleName(s), bundleNameRE},
			{"IsEntryName", IsEntryName(s), entryNameRE},
			{"IsSemver", IsSemver(s), semverRE},
		} {
			if want := c.re.MatchString(s); c.got != want {
				t.Errorf("%s(%q) = %v; the regexp says %v", c.name, s, c.got, want)
			}
		}
	})
}
