package page

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   lang
	}{
		{name: "absent", header: "", want: langEN},
		{name: "Brazilian browser", header: "pt-BR,pt;q=0.9,en-US;q=0.8,en;q=0.7", want: langPT},
		{name: "Portugal", header: "pt-PT", want: langPT},
		{name: "English first", header: "en-GB,en;q=0.9,pt;q=0.8", want: langEN},
		{name: "weights beat order", header: "en;q=0.5, pt;q=0.9", want: langPT},
		{name: "tie keeps the first", header: "pt;q=0.8, en;q=0.8", want: langPT},
		{name: "unsupported first", header: "fr-FR,fr;q=0.9,pt;q=0.5", want: langPT},
		{name: "only unsupported", header: "de, fr", want: langEN},
		{name: "wildcard", header: "*", want: langEN},
		{name: "case-insensitive", header: "PT-br", want: langPT},
		{name: "q=0 excludes English", header: "en;q=0, *", want: langPT},
		{name: "q=0 excludes Portuguese", header: "pt;q=0, fr", want: langEN},
		{name: "malformed q skipped", header: "en;q=abc, pt;q=0.3", want: langPT},
		{name: "q above 1 skipped", header: "en;q=2, pt;q=0.1", want: langPT},
		{name: "spaces", header: "  pt ; q=0.7 ,  en ; q=0.6 ", want: langPT},
		{name: "garbage", header: ";;;,,,=", want: langEN},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := negotiate(tt.header); got != tt.want {
				t.Errorf("negotiate(%q) = %q, want %q", tt.header, got, tt.want)
			}
		})
	}
}

func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"", "pt-BR,pt;q=0.9,en;q=0.8", "en;q=0, *", "*;q=0.1", ";q=", "pt;q=1.0000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		got := negotiate(header)
		if got != langEN && got != langPT {
			t.Fatalf("negotiate(%q) = %q, not a page language", header, got)
		}
		if texts[got] == nil {
			t.Fatalf("no texts for %q", got)
		}
	})
}

// TestTextsComplete keeps both languages in step: every sentence is
// written in each, with the same %s placeholders.
func TestTextsComplete(t *testing.T) {
	en, pt := reflect.ValueOf(*texts[langEN]), reflect.ValueOf(*texts[langPT])
	for i := range en.NumField() {
		name := en.Type().Field(i).Name
		e, p := en.Field(i).String(), pt.Field(i).String()
		if e == "" || p == "" {
			t.Errorf("%s: missing in %s", name, map[bool]string{true: "en", false: "pt"}[e == ""])
		}
		if strings.Count(e, "%s") != strings.Count(p, "%s") || strings.Count(e, "%") != strings.Count(p, "%") {
			t.Errorf("%s: placeholders differ: %q vs %q", name, e, p)
		}
		if strings.HasSuffix(name, "F") != strings.Contains(e, "%s") {
			t.Errorf("%s: formats end in F, and only formats contain %%s", name)
		}
	}
}

func TestExpiry(t *testing.T) {
	now := time.Date(2026, 5, 4, 13, 50, 30, 0, time.UTC)
	tests := []struct {
		l    lang
		at   time.Time
		want string
	}{
		{langEN, now.Add(15 * time.Minute), "at 14:05 UTC (in 15 min)"},
		{langPT, now.Add(15 * time.Minute), "às 14:05 UTC (em 15 min)"},
		{langEN, now.Add(40 * time.Second), "at 13:51 UTC (in less than a minute)"},
		{langPT, now.Add(-time.Second), "às 13:50 UTC (em menos de um minuto)"},
	}
	for _, tt := range tests {
		if got := texts[tt.l].expiry(tt.at, now); got != tt.want {
			t.Errorf("%s expiry(%s) = %q, want %q", tt.l, tt.at.Sub(now), got, tt.want)
		}
	}
}

func TestParseLang(t *testing.T) {
	for in, want := range map[string]lang{"pt": langPT, "pt-BR": langPT, "EN": langEN, "en-US": langEN, "fr": "", "": "", "ptx": ""} {
		got, _ := parseLang(in)
		if got != want {
			t.Errorf("parseLang(%q) = %q, want %q", in, got, want)
		}
	}
	if got := fmt.Sprint(langPT.htmlLang(), " ", langEN.htmlLang()); got != "pt-BR en" {
		t.Errorf("htmlLang = %s", got)
	}
}

func TestEmphasis(t *testing.T) {
	tests := []struct {
		in   string
		want []span
	}{
		{"Run task *Conciliação diária* with 2 input files", []span{{"Run task ", false}, {"Conciliação diária", true}, {" with 2 input files", false}}},
		{"*Apagar* now", []span{{"Apagar", true}, {" now", false}}},
		{"no emphasis", []span{{"no emphasis", false}}},
		{"a *b* c *d*", []span{{"a *b* c *d*", false}}},
		{"one * only", []span{{"one * only", false}}},
		{"empty ** pair", []span{{"empty ** pair", false}}},
	}
	for _, tt := range tests {
		if got := emphasis(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("emphasis(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
