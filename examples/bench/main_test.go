package main

import (
	"os"
	"strings"
	"testing"
)

func TestParseFlags(t *testing.T) {
	repo, err := findRepo(".")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.Executable() // any file that exists stands for a kadu binary
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"--kadu", bin, "--only", "echo, micro"})
	if err != nil {
		t.Fatal(err)
	}
	if o.repo != repo || !o.only["echo"] || !o.only["micro"] || o.only["postgres"] || o.conns != 16 {
		t.Errorf("options %+v", o)
	}
	o, err = parseFlags([]string{"--kadu", bin})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range allGroups {
		if !o.only[g] {
			t.Errorf("without --only, group %s must run", g)
		}
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kadu", bin, "--only", "echo,pg"}, `unknown group "pg"`},
		{[]string{"--kadu", bin, "-c", "0"}, "-c must be at least 1"},
		{[]string{"--kadu", bin + ".missing"}, "no kadu binary"},
		{[]string{"--kadu", bin, "extra"}, "unexpected arguments"},
	} {
		if _, err := parseFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseFlags(%q): %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}
