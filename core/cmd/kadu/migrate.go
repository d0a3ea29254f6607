package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/kobana/kadu/core/config"
)

func newMigrateCmd(d deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the database tables, then exit",
		Long: `Create or upgrade the tables of the store and of the job queue in the
configured database (store.driver, store.dsn), then exit. kadu serve does the
same at start; run it alone to migrate before rolling out new replicas.
Replicas starting at once migrate once: PostgreSQL serialises them.`,
		Example: `  kadu migrate
  KADU_STORE__DRIVER=postgres KADU_STORE__DSN=postgres://kadu@db/kadu kadu migrate`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			if err := d.migrate(cmd.Context(), cfg, log); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "migrated %s database %s\n", cfg.Store.Driver, config.RedactDSN(cfg.StoreDSN()))
			return nil
		},
	}
	addConfigFlags(cmd, sharedConfigFlags)
	return cmd
}
