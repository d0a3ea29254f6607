package money

import (
	"errors"
	"testing"
)

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "1.234,56", want: 123456},
		{in: "-1.234,56", want: -123456},
		{in: "1234,56", want: 123456},
		{in: "-1234.56", want: -123456},
		{in: "1,234.56", want: 123456},
		{in: "1.234.567,8", want: 123456780},
		{in: "0,05", want: 5},
		{in: "10", want: 1000},
		{in: "1.234", want: 123400},
		{in: "1,234", want: 123400},
		{in: "12,5", want: 1250},
		{in: "R$ 1.234,56", want: 123456},
		{in: "-R$ 1.234,56", want: -123456},
		{in: "R$ -10,00", want: -1000},
		{in: "(1.234,56)", want: -123456},
		{in: "1.234,56-", want: -123456},
		{in: "1.234,56 D", want: -123456},
		{in: "1.234,56 C", want: 123456},
		{in: "1.234,56C", want: 123456},
		{in: "+50,00", want: 5000},
		{in: "  7,00  ", want: 700},
		{in: "BRL 7.00", want: 700},
		{in: "", wantErr: true},
		{in: "-", wantErr: true},
		{in: "abc", wantErr: true},
		{in: "1,234,5", wantErr: true},
		{in: "1.2345", wantErr: true},
		{in: "12.34.56", wantErr: true},
		{in: "1,2.3", wantErr: true},
		{in: "--5", wantErr: true},
		{in: "-5-", wantErr: true},
		{in: "5,", wantErr: true},
		{in: ",50", wantErr: true},
		{in: "1 234,56", wantErr: true},
		{in: "1e3", wantErr: true},
		{in: "99999999999999999999", wantErr: true},
		{in: "(-5)", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseAmount(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrAmount) {
					t.Fatalf("ParseAmount(%q) = %d, %v; want an ErrAmount", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseAmount(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		cents        int64
		brl, decimal string
	}{
		{0, "R$ 0,00", "0.00"},
		{5, "R$ 0,05", "0.05"},
		{-123456, "-R$ 1.234,56", "-1234.56"},
		{100000000, "R$ 1.000.000,00", "1000000.00"},
	}
	for _, tt := range tests {
		if got := FormatBRL(tt.cents); got != tt.brl {
			t.Errorf("FormatBRL(%d) = %q, want %q", tt.cents, got, tt.brl)
		}
		if got := FormatDecimal(tt.cents); got != tt.decimal {
			t.Errorf("FormatDecimal(%d) = %q, want %q", tt.cents, got, tt.decimal)
		}
	}
}

// FuzzParseAmount checks that ParseAmount never panics and that what it
// accepts survives a round trip through FormatBRL and FormatDecimal.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"1.234,56", "-1234.56", "(1,00)", "R$ 5", "1.234,56 D", "", "1,2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseAmount(s)
		if err != nil {
			if !errors.Is(err, ErrAmount) {
				t.Fatalf("error %v does not wrap ErrAmount", err)
			}
			return
		}
		for _, out := range []string{FormatBRL(c), FormatDecimal(c)} {
			back, err := ParseAmount(out)
			if err != nil || back != c {
				t.Fatalf("ParseAmount(%q) = %d; round trip via %q = %d, %v", s, c, out, back, err)
			}
		}
	})
}
