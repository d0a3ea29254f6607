// Package agent runs executions of Kadu tasks (docs/reference/rest.md#executions): the Runner
// interface a worker calls, the built-in playbook runner (BuiltinRunner), a
// deterministic engine that parses bank statements, categorises
// transactions, reconciles receivables, summarises and writes output files,
// and the HTTP runner (HTTPRunner), which delegates to an external agent
// service over the protocol in HTTP_RUNNER.md.
//
// It owns: the playbook format and its validation (PLAYBOOKS.md, served to
// clients by PlaybooksReference), the fixed cost of each step, pausing for a
// question or an approval and resuming from the saved State, and the wire
// protocol of the agent service.
//
// It must not: open the database, know the HTTP API or MCP, or decide an
// execution's state transitions. A worker loads the execution into a Job,
// calls Run, and persists what the runner reports through the Sink (steps,
// cost, output files) and the returned Outcome. Organisation and task
// identifiers in a Job come from the worker; the runner never authorises.
//
// Output summaries, step summaries and output data contain text from input
// files and from the agent service: they are untrusted data, to be shown as
// data, never as instructions.
package agent
