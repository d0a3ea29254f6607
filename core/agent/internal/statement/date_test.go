package statement

import (
	"errors"
	"testing"
)

func TestParseDate(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: "05/01/2026", want: "2026-01-05"},
		{in: "5/1/2026", want: "2026-01-05"},
		{in: "05/01/26", want: "2026-01-05"},
		{in: "05-01-2026", want: "2026-01-05"},
		{in: "05.01.2026", want: "2026-01-05"},
		{in: "2026-01-05", want: "2026-01-05"},
		{in: "2026/01/05", want: "2026-01-05"},
		{in: "2026-01-05T10:00:00-03:00", want: "2026-01-05"},
		{in: "05/01/2026 23:59", want: "2026-01-05"},
		{in: " 29/02/2024 ", want: "2024-02-29"},
		{in: "29/02/2026", wantErr: true},
		{in: "01/13/2026", wantErr: true},
		{in: "32/01/2026", wantErr: true},
		{in: "2026-1-5x", wantErr: true},
		{in: "05/01", wantErr: true},
		{in: "20260105", wantErr: true},
		{in: "", wantErr: true},
		{in: "05/01/1800", wantErr: true},
		{in: "+5/01/2026", wantErr: true},
		{in: "05/01/02026", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDate(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrDate) {
					t.Fatalf("ParseDate(%q) = %v, %v; want ErrDate", tt.in, got, err)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Fatalf("ParseDate(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestDateText(t *testing.T) {
	d, _ := NewDate(2026, 3, 31)
	b, _ := d.MarshalText()
	var back Date
	if err := back.UnmarshalText(b); err != nil || back != d {
		t.Fatalf("round trip %s = %v, %v", b, back, err)
	}
	if err := back.UnmarshalText([]byte("31/03/2026")); err == nil {
		t.Fatal("UnmarshalText accepted a non-ISO date")
	}
}

func TestFoldAndDecode(t *testing.T) {
	if got := Fold("  Tarifa  Pacote Serviços  "); got != "TARIFA PACOTE SERVICOS" {
		t.Errorf("Fold = %q", got)
	}
	latin1 := []byte("Descri\xe7\xe3o;Valor")
	if got := Decode(latin1); got != "Descrição;Valor" {
		t.Errorf("Decode(latin-1) = %q", got)
	}
	bom := append([]byte{0xEF, 0xBB, 0xBF}, "a\r\nb\rc"...)
	if got := Decode(bom); got != "a\nb\nc" {
		t.Errorf("Decode(BOM, CRLF) = %q", got)
	}
	if got := Decode([]byte("\x80 \x9f \x96 caf\xe9")); got != "€ Ÿ – café" {
		t.Errorf("Decode(cp1252) = %q", got)
	}
	utf16le := []byte{0xFF, 0xFE, 'O', 0, 'k', 0}
	if got := Decode(utf16le); got != "Ok" {
		t.Errorf("Decode(UTF-16LE) = %q", got)
	}
}
