package page

import (
	"strconv"
	"strings"
)

// lang is a language the page is written in.
type lang string

const (
	langEN lang = "en"
	langPT lang = "pt"
)

// defaultLang answers when the browser names neither language: the page
// stays readable to the widest audience, and Describe gets "en".
const defaultLang = langEN

// maxAcceptLanguage bounds how much of the header is read; real browsers
// send well under 200 bytes.
const maxAcceptLanguage = 1024

// htmlLang is the value of the <html lang> attribute.
func (l lang) htmlLang() string {
	if l == langPT {
		return "pt-BR"
	}
	return "en"
}

// parseLang reads an explicit choice ("pt", "pt-BR", "en-GB", …); ok is
// false for anything else.
func parseLang(s string) (lang, bool) {
	primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "-")
	switch primary {
	case "pt":
		return langPT, true
	case "en":
		return langEN, true
	}
	return "", false
}

// negotiate picks the page's language from an Accept-Language header
// (RFC 9110 §12.5.4): the supported language with the highest weight, the
// first listed on a tie; "*" stands for the default; q=0 excludes. A
// malformed entry is skipped, never an error.
func negotiate(header string) lang {
	if len(header) > maxAcceptLanguage {
		header = header[:maxAcceptLanguage]
	}
	best, bestQ := defaultLang, 0.0
	excluded := map[lang]bool{}
	for _, entry := range strings.Split(header, ",") {
		tag, params, _ := strings.Cut(entry, ";")
		tag = strings.TrimSpace(tag)
		q, ok := weight(params)
		if !ok || tag == "" {
			continue
		}
		l, ok := parseLang(tag)
		if tag == "*" {
			l, ok = defaultLang, true
		}
		if !ok {
			continue
		}
		if q == 0 {
			excluded[l] = true
			continue
		}
		if q > bestQ && !excluded[l] {
			best, bestQ = l, q
		}
	}
	if excluded[best] {
		for _, l := range []lang{langEN, langPT} {
			if !excluded[l] {
				return l
			}
		}
	}
	return best
}

// weight parses the parameters of one Accept-Language entry, returning its
// q (1 when absent) and false when q is malformed.
func weight(params string) (float64, bool) {
	params = strings.TrimSpace(params)
	if params == "" {
		return 1, true
	}
	name, value, ok := strings.Cut(params, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
		return 0, false
	}
	q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil || q < 0 || q > 1 {
		return 0, false
	}
	return q, true
}
