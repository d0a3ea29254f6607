package main

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/kobana/kadu/core/app"
	"github.com/kobana/kadu/core/store"
)

// installationName is how the commands name the installation's own chain
// (store.InstallationChain, whose id is empty) in what they print.
const installationName = "installation"

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Verify and export the audit trail",
		Long: `Verify and export the audit trail (docs/audit.md): each organisation's
events, and the installation's own (bundles, configuration reloads), form a
hash chain. Both commands open the database the server uses, from the same
configuration (--config, KADU_* environment).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newAuditVerifyCmd(), newAuditExportCmd())
	return cmd
}

// chainFlags are --org and --installation, which name one chain.
type chainFlags struct {
	org          string
	installation bool
}

func (f *chainFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.org, "org", "", "organisation id of the chain")
	cmd.Flags().BoolVar(&f.installation, "installation", false,
		"the installation's own chain (bundle loads, swaps, refusals and quarantines, configuration reloads)")
}

// chain returns the chain the flags name; ok is false when neither is set.
func (f *chainFlags) chain(cmd *cobra.Command) (org string, ok bool, err error) {
	orgSet := cmd.Flags().Changed("org")
	switch {
	case orgSet && f.installation:
		return "", false, errors.New("--org and --installation each name a chain; give one of them")
	case orgSet && f.org == "":
		return "", false, errors.New("--org: empty; give an organisation id, or --installation for the installation's chain")
	case orgSet:
		return f.org, true, nil
	case f.installation:
		return store.InstallationChain, true, nil
	}
	return "", false, nil
}

// chainName names a chain in output.
func chainName(org string) string {
	if org == store.InstallationChain {
		return installationName
	}
	return org
}

// openAuditStore opens the store from cmd's configuration, as the server
// does; logs below warnings are not shown.
func openAuditStore(cmd *cobra.Command) (*store.DB, error) {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	return app.OpenStore(cmd.Context(), cfg, log)
}

func newAuditVerifyCmd() *cobra.Command {
	var f chainFlags
	cmd := &cobra.Command{
		Use:   "verify [--org ID | --installation]",
		Short: "Recompute the audit hash chains and name the first broken link",
		Long: `Recompute each audit chain from its start (or from the signed checkpoint a
retention purge left) to its head, and print for each chain the number of
events checked and OK with the chain's head (seq and hash: record it
elsewhere, and a later run shows whether the tail was rewritten), or the first
broken link: its sequence number, event
id and what is wrong (an event edited, deleted or out of order, a checkpoint
whose signature does not hold). Without a flag every chain is verified.

Exits 0 when every chain verified is intact, 1 otherwise.`,
		Example: `  kadu audit verify
  kadu audit verify --org org_123
  kadu audit verify --installation --config /etc/kadu/kadu.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			org, one, err := f.chain(cmd)
			if err != nil {
				return err
			}
			db, err := openAuditStore(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			chains := []string{org}
			if !one {
				if chains, err = db.AuditChains(cmd.Context()); err != nil {
					return fmt.Errorf("listing the audit chains: %w", err)
				}
			}
			return verifyChains(cmd, db, chains)
		},
	}
	f.add(cmd)
	addConfigFlags(cmd, sharedConfigFlags)
	return cmd
}

// verifyChains verifies each chain, printing a line per chain, and returns
// an error naming the broken ones.
func verifyChains(cmd *cobra.Command, db *store.DB, chains []string) error {
	out := cmd.OutOrStdout()
	var broken []string
	for _, org := range chains {
		// The head is read first: what verification then checks reaches at
		// least up to it, so the head printed is one verified.
		headSeq, headHash, err := db.AuditHead(cmd.Context(), org)
		if err != nil {
			return fmt.Errorf("reading the head of the audit chain of %s: %w", chainName(org), err)
		}
		n, brk, err := db.VerifyAudit(cmd.Context(), org)
		if err != nil {
			return fmt.Errorf("verifying the audit chain of %s: %w", chainName(org), err)
		}
		if brk != nil {
			id := brk.ID
			if id == "" {
				id = "no row"
			}
			fmt.Fprintf(out, "%s: BROKEN at seq %d (%s): %s (%d events checked before it)\n", chainName(org), brk.Seq, id, brk.Reason, n)
			broken = append(broken, chainName(org))
			continue
		}
		fmt.Fprintf(out, "%s: %d events checked, OK (head: seq %d, hash %s)\n", chainName(org), n, headSeq, headHash)
	}
	if len(chains) == 0 {
		fmt.Fprintln(out, "no audit events yet")
	}
	if len(broken) > 0 {
		return fmt.Errorf("audit chain broken: %v", broken)
	}
	return nil
}
