package blob

import (
	"mime"
	"testing"
)

func TestContentDisposition(t *testing.T) {
	tests := []struct {
		filename string
		want     string
	}{
		{"extrato.csv", `attachment; filename*=UTF-8''extrato.csv`},
		{"extrato de março.csv", `attachment; filename*=UTF-8''extrato%20de%20mar%C3%A7o.csv`},
		{`a"b;c\d.csv`, `attachment; filename*=UTF-8''a%22b%3Bc%5Cd.csv`},
		{"../../etc/passwd", `attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd`},
		{"100%'s.txt", `attachment; filename*=UTF-8''100%25%27s.txt`},
		{"!#$&+-.^_`|~", "attachment; filename*=UTF-8''!#$&+-.^_`|~"},
	}
	for _, tt := range tests {
		got := contentDisposition(tt.filename)
		if got != tt.want {
			t.Errorf("contentDisposition(%q) = %q, want %q", tt.filename, got, tt.want)
		}
		// What a browser does with it: the standard library's reader of
		// RFC 2231 parameters gives the name back.
		disp, params, err := mime.ParseMediaType(got)
		if err != nil || disp != "attachment" || params["filename"] != tt.filename {
			t.Errorf("parsing %q = %q, %v, %v; want attachment and filename %q", got, disp, params, err, tt.filename)
		}
	}
}
