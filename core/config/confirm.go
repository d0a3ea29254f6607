package config

import (
	"strings"
	"time"
)

// Confirm configures the confirmation of destructive tools (docs/reference/confirmation.md): the
// sealed requestState of in-chat confirmations and the approval page.
type Confirm struct {
	// SealingKeys seal and open requestState: comma-separated secrets of at
	// least 32 characters each; the first seals, every one opens, so a key
	// is rotated by putting the new one first and dropping the old one after
	// state_ttl. Every replica must use the same list. Empty (default): a key
	// derived from api.signing_key. Prints redacted.
	SealingKeys Secret `koanf:"sealing_keys"`

	// StateTTL is how long an in-chat confirmation may be answered. Default 5m.
	StateTTL time.Duration `koanf:"state_ttl"`

	// ApprovalTTL is how long an approval link stays valid. Default 15m.
	ApprovalTTL time.Duration `koanf:"approval_ttl"`

	// ClientID is the OAuth client the approval page signs people in with at
	// auth.issuer (authorization code + PKCE, redirect URI
	// <public_url>/approve/callback). Empty (default): the page registers
	// its own client, in-process with the embedded issuer, through dynamic
	// client registration with an external one.
	ClientID string `koanf:"client_id"`

	// ClientSecret is ClientID's secret, for a confidential client. Default
	// empty (a public client). Prints redacted.
	ClientSecret Secret `koanf:"client_secret"`
}

// SealingKeyList returns confirm.sealing_keys split at commas, empty
// entries dropped. The values are secrets: never log them.
func (c Confirm) SealingKeyList() []string {
	var out []string
	for _, k := range strings.Split(c.SealingKeys.Reveal(), ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

func (p *problems) confirm(c *Confirm) {
	for i, k := range c.SealingKeyList() {
		if len(k) < 32 {
			p.add("confirm.sealing_keys", "entry %d is too short (want at least 32 characters); the value is not shown", i)
		}
	}
	p.positive("confirm.state_ttl", c.StateTTL)
	p.positive("confirm.approval_ttl", c.ApprovalTTL)
}
