package storetest

// webhookTests are the tests of webhooks, events and deliveries (SPEC §7.5).
var webhookTests = []suiteTest{}
