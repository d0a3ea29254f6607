// Package app wires Kadu together: it builds every part from the
// configuration, serves the public and admin listeners, and shuts down
// gracefully.
//
// It owns: the only place that knows all parts (config → auth, devauth,
// mcp, catalog), the HTTP servers and their lifecycle, readiness, and the
// edge of the public listener (edge.go): the Host and Origin guard of
// core/origin and the drain answer, in front of every route.
//
// It must not: hold business rules or protocol rules (those live in the
// parts it wires), or read configuration anywhere but from *config.Config.
package app
