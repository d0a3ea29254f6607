package confirm

// Metrics counts confirmation events for the operator (core/metrics).
// Events of in-chat confirmations: asked, accepted, declined, cancelled,
// expired (a requestState answered after its expiry), refused (a
// requestState that is forged, damaged or bound to another call),
// interrupted (the server running the confirmed call stopped before
// recording its outcome: interrupted.go). Events of approval links: issued,
// approved, cancelled, expired, interrupted. Implementations must
// be safe for concurrent use.
type Metrics interface {
	Confirmation(event string)
	Approval(event string)
}

func (c *Confirmer) confirmation(event string) {
	if c.metrics != nil {
		c.metrics.Confirmation(event)
	}
}

func (c *Confirmer) approval(event string) {
	if c.metrics != nil {
		c.metrics.Approval(event)
	}
}

// refusedEvent tells an expired requestState from one that never matched.
func (c *Confirmer) refusedEvent(claims stateClaims, err error) string {
	if err == nil && c.now().Unix() >= claims.Expiry {
		return "expired"
	}
	return "refused"
}
