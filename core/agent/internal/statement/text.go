package statement

import (
	"bytes"
	"io"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Decode turns the bytes of an exported file into text: it drops a UTF-8 BOM,
// decodes UTF-16 with a BOM, and reads lines that are not valid UTF-8 as
// Windows-1252 (what most Brazilian banks still export). Line endings are
// normalised to "\n". Parsers use the streaming form, textReader.
func Decode(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	_, _ = io.Copy(&sb, newTextReader(bytes.NewReader(b), math.MaxInt64)) // reading memory never fails
	return sb.String()
}

// cp1252 holds the characters of bytes 0x80–0x9F in Windows-1252; undefined
// bytes become U+FFFD.
var cp1252 = [32]string{
	"€", "\uFFFD", "‚", "ƒ", "„", "…", "†", "‡", "ˆ", "‰", "Š", "‹", "Œ", "\uFFFD", "Ž", "\uFFFD",
	"\uFFFD", "‘", "’", "“", "”", "•", "–", "—", "˜", "™", "š", "›", "œ", "\uFFFD", "ž", "Ÿ",
}

// Fold returns s in upper case with Portuguese (and other Latin-1) accents
// removed and runs of spaces collapsed: "Tarifa  Pacote Serviços" →
// "TARIFA PACOTE SERVICOS". Used to match descriptions and header names.
func Fold(s string) string {
	var sb strings.Builder
	sb.Grow(len(s))
	space := true // drop leading spaces
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '\u00A0' {
			if !space {
				sb.WriteByte(' ')
				space = true
			}
			continue
		}
		space = false
		sb.WriteRune(foldRune(r))
	}
	return strings.TrimRight(sb.String(), " ")
}

// foldRune upper-cases r and removes its accent; it allocates nothing.
func foldRune(r rune) rune {
	switch r {
	case 'á', 'à', 'â', 'ã', 'ä', 'å', 'Á', 'À', 'Â', 'Ã', 'Ä', 'Å', 'ª':
		return 'A'
	case 'ç', 'Ç':
		return 'C'
	case 'é', 'è', 'ê', 'ë', 'É', 'È', 'Ê', 'Ë':
		return 'E'
	case 'í', 'ì', 'î', 'ï', 'Í', 'Ì', 'Î', 'Ï':
		return 'I'
	case 'ñ', 'Ñ':
		return 'N'
	case 'ó', 'ò', 'ô', 'õ', 'ö', 'Ó', 'Ò', 'Ô', 'Õ', 'Ö', 'º':
		return 'O'
	case 'ú', 'ù', 'û', 'ü', 'Ú', 'Ù', 'Û', 'Ü':
		return 'U'
	case 'ý', 'ÿ', 'Ý':
		return 'Y'
	}
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		return r
	}
	return unicode.ToUpper(r)
}
