// Package webhook is the outbound side of Kadu's webhooks (docs/files-webhooks-limits.md#webhooks): it
// signs event deliveries the Standard Webhooks way and sends them over a
// transport that cannot be pointed at the server's own network.
//
// It owns: the whsec_ secret format (NewSecret, ParseSecret), the
// webhook-signature header (Sign, one v1 signature per secret so a rotation
// overlap verifies with either), the URL policy an endpoint must meet
// (ValidateURL), the SSRF-safe Client that checks every resolved address at
// connect time and never follows redirects or uses a proxy, and the retry
// decision after each attempt (Next over RetryDelays, 410 disables, 429/503
// honour Retry-After).
//
// It must not: touch the store, queue jobs or serve HTTP. The delivery
// worker in core/jobs loads the endpoint and event, calls Client.Send, records
// the Result and schedules what Next decides; core/api calls NewSecret and
// ValidateURL. Secrets never appear in an error, a log line or a Result, and a
// receiver's response body is kept only as truncated data for the delivery
// log, never read as instructions.
//
// RATIONALE.md records why the package is shaped as it is.
package webhook
