package manifest

import (
	"strings"
	"testing"
)

func TestTemplateMatch(t *testing.T) {
	tests := []struct {
		name     string
		template string
		uri      string
		want     bool
	}{
		{name: "one variable", template: "kobana://kadu/tasks/{id}", uri: "kobana://kadu/tasks/tsk_1", want: true},
		{name: "variable then literal", template: "kobana://kadu/executions/{id}/steps", uri: "kobana://kadu/executions/exe_1/steps", want: true},
		{name: "variable inside a segment", template: "test://x/items/{id}.json", uri: "test://x/items/7.json", want: true},
		{name: "variable spans no slash", template: "kobana://kadu/tasks/{id}", uri: "kobana://kadu/tasks/a/b", want: false},
		{name: "variable is not empty", template: "kobana://kadu/tasks/{id}", uri: "kobana://kadu/tasks/", want: false},
		{name: "literal must match", template: "kobana://kadu/tasks/{id}", uri: "kobana://kadu/files/f_1", want: false},
		{name: "regexp characters are literal", template: "test://a.b/{id}", uri: "test://aXb/1", want: false},
		{name: "no query in a variable", template: "kobana://kadu/tasks/{id}", uri: "kobana://kadu/tasks/1?x=2", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			td, err := ParseTemplate(tt.template)
			if err != nil {
				t.Fatalf("ParseTemplate(%q): %v", tt.template, err)
			}
			if got := td.Match(tt.uri); got != tt.want {
				t.Fatalf("%q matches %q = %v, want %v", tt.template, tt.uri, got, tt.want)
			}
		})
	}
}

func TestParseTemplateRefuses(t *testing.T) {
	tests := []struct {
		name, template, wantErr string
	}{
		{name: "empty", template: "", wantErr: "required"},
		{name: "not absolute", template: "tasks/{id}", wantErr: "absolute URI template"},
		{name: "level 2 expression", template: "kobana://kadu/tasks/{+id}", wantErr: "level-1"},
		{name: "query expression", template: "kobana://kadu/tasks{?q}", wantErr: "level-1"},
		{name: "unbalanced open", template: "kobana://kadu/tasks/{id", wantErr: "unbalanced {"},
		{name: "unbalanced close", template: "kobana://kadu/tasks/id}", wantErr: "unbalanced }"},
		{name: "adjacent variables", template: "kobana://kadu/{a}{b}", wantErr: "literal between"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseTemplate(tt.template)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ParseTemplate(%q) = %v, want an error containing %q", tt.template, err, tt.wantErr)
			}
		})
	}
}

// FuzzTemplate checks that parsing never panics and that a template with
// its variables filled with a simple value matches that URI.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"kobana://kadu/tasks/{id}", "a://{x}/b/{y}", "x://{", "x://}{", "x://a.b/{id}.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tmpl string) {
		td, err := ParseTemplate(tmpl)
		if err != nil {
			return
		}
		uri := tmpl
		for _, v := range td.Vars() {
			uri = strings.Replace(uri, "{"+v+"}", "v1", 1)
		}
		if !td.Match(uri) {
			t.Fatalf("template %q does not match its expansion %q", tmpl, uri)
		}
	})
}
