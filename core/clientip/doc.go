// Package clientip decides which address a request came from: the direct
// peer, or, when that peer is a configured trusted proxy
// (http.trusted_proxies), the rightmost X-Forwarded-For hop that is not a
// trusted proxy. It owns that one rule and the request-context value that
// carries its answer to the REST API, the MCP engine and the logs.
//
// It must not decide anything from the address (rate limits, logging are
// their packages' business), and it must never believe X-Forwarded-For
// from a peer that is not in the list: a client could then pick its own
// rate-limit bucket.
package clientip
