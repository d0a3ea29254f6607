module example.com/kadu-failures

go 1.25.0

require github.com/kobana/kadu/sdk/go v0.1.0
