// Package app wires Kadu together: it builds every part from the
// configuration, serves the public and admin listeners, and shuts down
// gracefully.
//
// It owns: the only place that knows all parts (config → auth, devauth,
// mcp, catalog), the HTTP servers and their lifecycle, readiness.
//
// It must not: hold business rules or protocol rules (those live in the
// parts it wires), or read configuration anywhere but from *config.Config.
package app
