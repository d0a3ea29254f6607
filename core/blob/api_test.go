package blob_test

import (
	"github.com/kobana/kadu/core/api"
	"github.com/kobana/kadu/core/blob"
)

// Bucket is what core/api stores file contents through.
var _ api.Blobs = (*blob.Bucket)(nil)
