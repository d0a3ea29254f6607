package blob

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// BenchmarkUpload measures signed-URL uploads end to end: a PUT over
// loopback HTTP, the handler's checks, and the write into a fileblob
// directory (temporary file, rename). One URL is reused, as a retrying
// client would, so every iteration overwrites the same key.
//
//	go test -run '^$' -bench BenchmarkUpload -benchtime 2s ./core/blob/
func BenchmarkUpload(b *testing.B) {
	for _, size := range []int{1 << 20, 8 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			f := newFixture(b)
			data := payload(size)
			u, _, err := f.bucket.SignedUpload(b.Context(), "org_bench/file_bench", "application/octet-stream", int64(size), t0.Add(time.Hour))
			if err != nil {
				b.Fatal(err)
			}
			client := f.srv.Client()
			b.SetBytes(int64(size))
			for b.Loop() {
				req, err := http.NewRequestWithContext(b.Context(), http.MethodPut, u, bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/octet-stream")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("PUT = %d", resp.StatusCode)
				}
			}
		})
	}
}
