// Package confirm makes every destructive tool call wait for its person
// (docs/reference/confirmation.md): in the chat, when the client can ask (era 2026-07-28 with form
// elicitation), or through an approval link otherwise.
//
// It owns: the Confirmer, an mcp.Catalog that wraps the next one (the
// plugin registry) and intercepts tools/call for every tool whose
// annotations say destructiveHint: true — first-party or partner, a bundle
// cannot opt out —; the sealed requestState of in-chat confirmations
// ("kc1." + AES-256-GCM under a key ring shared by replicas) and its
// single use, recorded in the shared store, with the definitive answer
// for a confirmed call whose server stopped mid-run (interrupted.go,
// Options.RunLimit); approval records and their
// decision (Decide runs the call in-process as the stored principal); and
// the plain-words description of a call (Describe), in English and
// Portuguese.
//
// It must not: run a destructive tool before its person said yes, keep or
// log a token or a requestState, open another package's requestState (any
// requestState without the "kc1." prefix goes to the next Catalog
// untouched; the plugin registry verifies its own), render the approval
// page (core/confirm/page does, through Approval and Decide), or know
// HTTP.
//
// Wiring, once per process (core/app), between the engine and the bundles:
//
//	reg, err := plugin.New(ctx, &plugin.Options{…})
//	conf, err := confirm.New(confirm.Options{Next: reg, Store: db, Keys: keyRing,
//		PublicURL: cfg.PublicOrigin(), RunLimit: longestBundleCall, Logger: log})
//	engine, err := mcp.New(mcp.Options{Catalog: conf, …})
//	// the approval page gets conf (Approval, Decide, ToolTitle, Describe);
//	// maintenance calls db.ExpireApprovals(ctx, now, record) and
//	// db.PurgeConfirmations(ctx, now) periodically.
//
// Each answer in the chat and each approval issued or decided is recorded
// in the audit trail (core/audit's Confirmation and Approval records) in
// the transaction that records the answer or the decision
// (docs/audit.md#confirmations-and-approvals).
//
// The in-chat message is in English: a tools/call carries no language
// signal (no Accept-Language reaches a Catalog, and clientInfo says nothing
// about the person). The approval page, which has Accept-Language, calls
// Describe or Explain with the person's language.
package confirm
