package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kobana/kadu/core/app"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/config"
)

// maxTokenTTL caps --ttl (auth.max_token_lifetime may cap it further).
const maxTokenTTL = 24 * time.Hour

// tokenFlags are the values of token's own flags.
type tokenFlags struct {
	org, role, scope, sub, clientID string
	ttl                             time.Duration
}

func newTokenCmd(d deps) *cobra.Command {
	var tf tokenFlags
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Print an access token from the embedded development issuer",
		Long: `Print one access token, signed by the embedded development authorization
server, that the matching 'kadu serve' accepts: same --config, --data-dir
(signing keys), --addr, --public-url and --mcp-path (issuer and audience).

Only the token and a newline go to standard output, so it can be captured:
  TOKEN=$(kadu token --scope "kadu.read")
A description of the token goes to standard error.

It refuses when auth.issuer is set: tokens then come from that issuer.`,
		Example: `  kadu token
  kadu token --role viewer --scope "kadu.read" --ttl 10m
  curl -H "Authorization: Bearer $(kadu token)" http://127.0.0.1:8080/api/v1/tasks`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if cfg.Auth.Issuer != "" {
				return fmt.Errorf("kadu token only mints tokens for the embedded development issuer; "+
					"auth.issuer is set to %q, so get tokens from that issuer "+
					"(or unset auth.issuer to use the development sign-in)", cfg.Auth.Issuer)
			}
			opts, err := tf.options(cmd.Flags(), cfg)
			if err != nil {
				return err
			}
			tok, err := d.mint(cfg, opts)
			if err != nil {
				return fmt.Errorf("minting token: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			fmt.Fprintf(cmd.ErrOrStderr(), "kadu: token for %s in %s, role %s, scope %q, valid %s, audience %s\n",
				opts.Subject, opts.OrgID, opts.Role, strings.Join(opts.Scopes, " "), opts.TTL, cfg.MCPURL())
			return nil
		},
	}
	addConfigFlags(cmd, sharedConfigFlags)
	f := cmd.Flags()
	f.StringVar(&tf.org, "org", "", `organisation id (default auth.dev.default_org, "org_dev")`)
	f.StringVar(&tf.role, "role", "", `role: viewer, member, admin or owner (default auth.dev.default_role, "owner")`)
	f.StringVar(&tf.scope, "scope", strings.Join(auth.SupportedScopes(), " "), "space-separated scopes")
	f.StringVar(&tf.sub, "sub", "", `subject, the user id (default auth.dev.default_subject, "dev-user")`)
	f.DurationVar(&tf.ttl, "ttl", time.Hour, "lifetime, at most 24h and auth.max_token_lifetime")
	f.StringVar(&tf.clientID, "client-id", "kadu-cli", "OAuth client id recorded in the token")
	return cmd
}

// options resolves defaults from cfg and checks every flag, reporting all
// problems at once.
func (tf tokenFlags) options(fs *pflag.FlagSet, cfg *config.Config) (app.TokenOptions, error) {
	o := app.TokenOptions{
		Subject:  tf.sub,
		OrgID:    tf.org,
		Role:     tf.role,
		ClientID: tf.clientID,
		TTL:      tf.ttl,
	}
	dev := cfg.Auth.Dev
	if !fs.Changed("org") {
		o.OrgID = dev.DefaultOrg
	}
	if !fs.Changed("role") {
		o.Role = dev.DefaultRole
	}
	if !fs.Changed("sub") {
		o.Subject = dev.DefaultSubject
	}

	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch {
	case strings.TrimSpace(o.OrgID) == "":
		bad("--org must not be empty")
	case auth.CheckOrgID(o.OrgID) != nil:
		// The rule every token's organisation claim is verified against.
		bad("--org %q is not an organisation id: want %s", o.OrgID, auth.OrgIDRule)
	}
	if strings.TrimSpace(o.Subject) == "" {
		bad("--sub must not be empty")
	}
	if strings.TrimSpace(o.ClientID) == "" {
		bad("--client-id must not be empty")
	}
	if !auth.Role(o.Role).Valid() {
		roles := make([]string, 0, 4)
		for _, r := range auth.Roles() {
			roles = append(roles, string(r))
		}
		bad("--role %q is not a role (want one of %s)", o.Role, strings.Join(roles, ", "))
	}
	badScope := false
	for _, s := range strings.FieldsFunc(tf.scope, func(r rune) bool { return r == ' ' || r == ',' }) {
		switch {
		case !slices.Contains(auth.SupportedScopes(), s):
			bad("--scope %q is not a Kadu scope (want some of %s)", s, strings.Join(auth.SupportedScopes(), ", "))
			badScope = true
		case !slices.Contains(o.Scopes, s):
			o.Scopes = append(o.Scopes, s)
		}
	}
	if len(o.Scopes) == 0 && !badScope {
		bad("--scope must name at least one scope (%s)", strings.Join(auth.SupportedScopes(), ", "))
	}
	limit := min(maxTokenTTL, cfg.Auth.MaxTokenLifetime)
	switch {
	case o.TTL <= 0:
		bad("--ttl %s must be positive (e.g. 10m, 1h)", o.TTL)
	case o.TTL > limit:
		bad("--ttl %s is longer than the limit %s (at most 24h and auth.max_token_lifetime)", o.TTL, limit)
	}
	return o, errors.Join(errs...)
}
