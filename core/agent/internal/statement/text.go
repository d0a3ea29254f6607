package statement

import (
	"bytes"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Decode turns the bytes of an exported file into text: it drops a UTF-8 BOM,
// decodes UTF-16 with a BOM, and reads bytes that are not valid UTF-8 as
// Windows-1252 (what most Brazilian banks still export). Line endings are
// normalised to "\n".
func Decode(b []byte) string {
	var s string
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		s = decode8(b[3:])
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		s = decode16(b[2:], false)
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		s = decode16(b[2:], true)
	default:
		s = decode8(b)
	}
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return s
}

func decode8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/8)
	for _, c := range b {
		if c >= 0x80 && c < 0xA0 {
			sb.WriteRune([]rune(cp1252)[c-0x80])
			continue
		}
		sb.WriteRune(rune(c)) // Latin-1 is the identity on the rest
	}
	return sb.String()
}

// cp1252 holds the characters of bytes 0x80–0x9F in Windows-1252; undefined
// bytes become U+FFFD. (Rare in practice: the conversion per byte is fine.)
const cp1252 = "€\uFFFD‚ƒ„…†‡ˆ‰Š‹Œ\uFFFDŽ\uFFFD\uFFFD‘’“”•–—˜™š›œ\uFFFDžŸ"

func decode16(b []byte, bigEndian bool) string {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		if bigEndian {
			u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
		} else {
			u = append(u, uint16(b[i+1])<<8|uint16(b[i]))
		}
	}
	return string(utf16.Decode(u))
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
		sb.WriteString(foldRune(r))
	}
	return strings.TrimRight(sb.String(), " ")
}

func foldRune(r rune) string {
	switch r {
	case 'á', 'à', 'â', 'ã', 'ä', 'å', 'Á', 'À', 'Â', 'Ã', 'Ä', 'Å', 'ª':
		return "A"
	case 'ç', 'Ç':
		return "C"
	case 'é', 'è', 'ê', 'ë', 'É', 'È', 'Ê', 'Ë':
		return "E"
	case 'í', 'ì', 'î', 'ï', 'Í', 'Ì', 'Î', 'Ï':
		return "I"
	case 'ñ', 'Ñ':
		return "N"
	case 'ó', 'ò', 'ô', 'õ', 'ö', 'Ó', 'Ò', 'Ô', 'Õ', 'Ö', 'º':
		return "O"
	case 'ú', 'ù', 'û', 'ü', 'Ú', 'Ù', 'Û', 'Ü':
		return "U"
	case 'ý', 'ÿ', 'Ý':
		return "Y"
	}
	return strings.ToUpper(string(r))
}
