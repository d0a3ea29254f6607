// Package metrics owns Kadu's Prometheus collectors: one Metrics value per
// App, registered on a registry the App owns (never the process-wide
// default registry, so that two Apps in one test process do not collide),
// served by core/app on the admin listener at GET /metrics.
//
// Every label value is bounded: names come from the configuration or from
// the bundle registry, route templates from the router, classes from fixed
// tables. This package must never take an organisation id, a token, a
// request, execution or file id, a raw URL path or any free text as a label
// value; the packages it observes (core/mcp, core/plugin, core/jobs, …)
// define small interfaces that *Metrics satisfies, so they do not import
// Prometheus. docs/metrics.md lists the families.
package metrics
