package statement

import (
	"context"
	"fmt"
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

// Parse reads a statement in the given format ("csv", "ofx", or "" / "auto"
// to detect it with DetectFormat).
func Parse(ctx context.Context, data []byte, format, filename string, opts CSVOptions) (*Statement, error) {
	if format == "" || format == "auto" {
		format = DetectFormat(data, filename)
	}
	switch format {
	case "csv":
		return ParseCSV(ctx, data, opts)
	case "ofx":
		return ParseOFX(ctx, data, opts.Limits)
	}
	return nil, fmt.Errorf("unknown statement format %q", format)
}
