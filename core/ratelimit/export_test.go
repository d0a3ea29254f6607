package ratelimit

// Test hooks for package ratelimit_test.
var ApplyMigration = applyMigration
