package docs

import (
	"maps"
	"slices"
	"testing"
)

func TestSlug(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"9. Input required, and state", "9-input-required-and-state"},
		{"Files: presigned URLs, never bytes in a tool", "files-presigned-urls-never-bytes-in-a-tool"},
		{"`api(method_ptr i32, path_ptr i32) -> i64`", "apimethod_ptr-i32-path_ptr-i32---i64"},
		{"Era 2026-07-28 headers", "era-2026-07-28-headers"},
		{"Why check `Origin` exactly on posts?", "why-check-origin-exactly-on-posts"},
		{"[Linked](x.md) *heading* §3 → ok", "linked-heading-3--ok"},
		{"Organização", "organização"},
	}
	for _, tt := range tests {
		if got := Slug(tt.heading); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

func TestAnchors(t *testing.T) {
	doc := "# Title\n\n## Limits\n\ntext\n\n## Limits\n\n```\n## not a heading\n```\n\n<a id=\"custom\"></a>\n\nSetext\n======\n\n| a | b |\n|---|---|\n"
	got := slices.Sorted(maps.Keys(Anchors(doc)))
	want := []string{"custom", "limits", "limits-1", "setext", "title"}
	if !slices.Equal(got, want) {
		t.Errorf("Anchors = %v, want %v", got, want)
	}
}

func TestSections(t *testing.T) {
	doc := "# The ABI\n\n## 1. Shape, and why\n\n### 6.1 not a section\n\n## 10. Manifest JSON\n\n```\n## 11. in a fence\n```\n"
	got := slices.Sorted(maps.Keys(Sections(doc)))
	want := []string{"1", "10"}
	if !slices.Equal(got, want) {
		t.Errorf("Sections = %v, want %v", got, want)
	}
}
