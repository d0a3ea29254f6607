package statement

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path"
	"strings"
)

// DetectFormat returns "ofx" or "csv" for a statement file, from its content
// (an OFX header or an <OFX> element in the first 4 KiB) and then its name.
func DetectFormat(data []byte, filename string) string {
	head := data[:min(len(data), 4096)]
	h := strings.ToUpper(string(head))
	if strings.Contains(h, "OFXHEADER") || strings.Contains(h, "<OFX>") {
		return "ofx"
	}
	switch strings.ToLower(path.Ext(filename)) {
	case ".ofx", ".qfx":
		return "ofx"
	}
	return "csv"
}

// Parse reads a statement from r in the given format ("csv", "ofx", or "" /
// "auto" to detect it with DetectFormat from the first 4 KiB), in one pass.
func Parse(ctx context.Context, r io.Reader, format, filename string, opts CSVOptions) (*Statement, error) {
	if format == "" || format == "auto" {
		br := bufio.NewReaderSize(r, 4096)
		head, _ := br.Peek(4096) // a read error comes back from the parser
		format = DetectFormat(head, filename)
		r = br
	}
	switch format {
	case "csv":
		return ParseCSV(ctx, r, opts)
	case "ofx":
		return ParseOFX(ctx, r, opts.Limits)
	}
	return nil, fmt.Errorf("unknown statement format %q", format)
}
