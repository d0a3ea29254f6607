package blob_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/kobana/kadu/core/blob"
)

// A local bucket signs its own URLs and serves them with Handler, mounted
// at PublicURL's path. The signature in the output is pinned on purpose:
// replicas of different versions must keep verifying each other's URLs.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "kadu-blob-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	b, err := blob.Open(ctx, blob.Options{
		URL:        "file://" + filepath.Join(dir, "blobs"),
		PublicURL:  "http://127.0.0.1:8080/blobs",
		SigningKey: []byte("an example key of at least 32 bytes, random in real life"),
		Now:        func() time.Time { return now },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	mux := http.NewServeMux()
	if b.Local() {
		mux.Handle("/blobs/", b.Handler())
	}

	url, headers, err := b.SignedUpload(ctx, "org_1/file_1", "text/csv", 1234, now.Add(15*time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(url)
	fmt.Println(headers)
	// Output:
	// http://127.0.0.1:8080/blobs/org_1/file_1?content_type=text%2Fcsv&expires=1785240900&method=PUT&signature=N9ugc1O-AguwNZllPLsXxxh-4D6ZIbZUKMDwlmkuxpk&size=1234
	// map[Content-Length:1234 Content-Type:text/csv]
}
