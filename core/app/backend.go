package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/api"
	"github.com/kobana/kadu/core/blob"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/jobs"
	"github.com/kobana/kadu/core/metrics"
	"github.com/kobana/kadu/core/plans"
	"github.com/kobana/kadu/core/ratelimit"
	"github.com/kobana/kadu/core/seal"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/tracing"
)

// backend is what serves /api/v1: the store, the job queue, the runner and
// the blobs.
type backend struct {
	db      *store.DB
	queue   *jobs.Queue
	blobs   *blob.Bucket
	keys    useKeys // derived from the master signing key
	limiter *ratelimit.Limiter
	plans   *plans.Resolver // every package's organisation → plan, one cache
}

// openBackend opens the store (migrating it), the bucket and the rate
// limiter, and builds the queue. On error nothing stays open.
func openBackend(ctx context.Context, cfg *config.Config, log *slog.Logger, m *metrics.Metrics, tr *tracing.Tracing) (_ *backend, err error) {
	b := &backend{}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	master, err := signingKey(cfg)
	if err != nil {
		return nil, err
	}
	if b.keys, err = deriveUseKeys(cfg, master); err != nil {
		return nil, err
	}
	keys, err := secretKeys(cfg, master)
	if err != nil {
		return nil, err
	}
	b.db, err = store.Open(ctx, store.Options{Driver: cfg.Store.Driver, DSN: cfg.StoreDSN(), Logger: log, SecretKeys: keys,
		Observer:        store.Observers(storeObserver(m), tr.StoreObserver(dbSystem(cfg.Store.Driver))),
		OnTransition:    transitionCounter(m),
		IdempotencyLock: idempotencyLock(cfg)})
	if err != nil {
		return nil, fmt.Errorf("store (%s %s): %w", cfg.Store.Driver, config.RedactDSN(cfg.StoreDSN()), err)
	}
	b.plans, err = plans.New(plans.Options{Plans: cfg.Plans, Default: cfg.Orgs.DefaultPlan,
		Lookup: b.db.PlanOf, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("plans: %w", err)
	}
	b.blobs, err = blob.Open(ctx, blob.Options{
		URL:        cfg.FilesURL(),
		PublicURL:  cfg.PublicOrigin() + blobsPath,
		SigningKey: b.keys.blobURLs,
		Logger:     log,
	})
	if err != nil {
		return nil, fmt.Errorf("files.url: %w", err)
	}
	if cfg.RateLimits.Enabled {
		lo := ratelimit.Options{
			PerMinute:   requestsPerMinute(b.plans),
			IPPerMinute: cfg.RateLimits.IPPerMinute,
			Logger:      log,
		}
		if cfg.RateLimitBackend() == config.RateLimitPostgres {
			lo.DB = b.db.Writer()
			if m != nil {
				lo.OnLocalDecision = m.RateLimitLocal
			}
		}
		if b.limiter, err = ratelimit.New(lo); err != nil {
			return nil, fmt.Errorf("rate_limits: %w", err)
		}
	}
	runner, err := newRunner(cfg, tr)
	if err != nil {
		return nil, err
	}
	opts := jobs.Options{
		Store:             b.db,
		Runner:            runner,
		Plans:             cfg.Plans,
		PlanResolver:      b.plans,
		RescueAfter:       cfg.Runner.RescueAfter,
		Blobs:             b.blobs,
		Logger:            log,
		ExecutionJSON:     executionJSON(b.plans),
		FileJSON:          api.FileJSON,
		WebhookJSON:       api.WebhookJSON,
		WebhookAllowHosts: cfg.Webhooks.AllowHosts,
		WebhookTimeout:    cfg.Webhooks.Timeout,
		Metrics:           m,
	}
	if tr.Enabled() {
		opts.TracerProvider, opts.Propagator = tr.Provider(), tr.Propagator()
	}
	if cfg.Store.Driver == config.DriverPostgres {
		opts.ListenerDSN = cfg.StoreDSN()
	}
	if b.queue, err = jobs.New(ctx, opts); err != nil {
		return nil, err
	}
	return b, nil
}

// blobsPath is where the public listener serves the signed URLs of a local
// bucket.
const blobsPath = "/blobs"

// executionJSON renders an execution for its events as the API does, with
// the per-execution maximum of the organisation's plan (the default plan's
// when the organisation cannot be read).
func executionJSON(r *plans.Resolver) func(store.Execution) json.RawMessage {
	return func(e store.Execution) json.RawMessage {
		res, err := r.For(context.Background(), e.OrgID)
		if err != nil {
			res = r.Default()
		}
		return api.ExecutionJSON(e, res.Plan.MaxCostPerExecutionCents)
	}
}

// useKeys are the keys of each use of the master signing key, derived
// apart (seal.DeriveKey) so that a cursor signature can never pass for a
// blob URL signature, nor a plugin state open as a confirmation.
type useKeys struct {
	blobURLs     []byte
	apiCursors   []byte
	approvalPage []byte
	pluginState  []byte
	// confirmState is the key ring of in-chat confirmations: one key per
	// confirm.sealing_keys entry (the first seals), or one derived from the
	// master key.
	confirmState [][]byte
}

// deriveUseKeys derives every useKeys from master and
// confirm.sealing_keys. The info strings are part of what was signed or
// sealed: changing one invalidates the cursors, URLs and states in flight.
func deriveUseKeys(cfg *config.Config, master []byte) (useKeys, error) {
	var k useKeys
	var errs []error
	derive := func(m []byte, use string) []byte {
		key, err := seal.DeriveKey(m, "kadu/"+use+"/v1")
		errs = append(errs, err)
		return key
	}
	k.blobURLs = derive(master, "blob-urls")
	k.apiCursors = derive(master, "api-cursors")
	k.approvalPage = derive(master, "approval-page")
	k.pluginState = derive(master, "plugin-state")
	entries := cfg.Confirm.SealingKeyList()
	if len(entries) == 0 {
		k.confirmState = [][]byte{derive(master, "confirm-state")}
	}
	for _, e := range entries {
		k.confirmState = append(k.confirmState, derive([]byte(e), "confirm-state"))
	}
	if err := errors.Join(errs...); err != nil {
		return useKeys{}, fmt.Errorf("api.signing_key, confirm.sealing_keys: %w", err)
	}
	return k, nil
}

func newRunner(cfg *config.Config, tr *tracing.Tracing) (agent.Runner, error) {
	if cfg.Runner.Kind == config.RunnerHTTP {
		r, err := agent.NewHTTPRunner(cfg.Runner.HTTP.URL, cfg.Runner.HTTP.Token.Reveal(), &agent.HTTPOptions{
			RequestTimeout: cfg.Runner.HTTP.Timeout,
			PollInterval:   cfg.Runner.HTTP.PollInterval,
			Propagate:      tr.Inject,
		})
		if err != nil {
			return nil, fmt.Errorf("runner.http: %w", err)
		}
		return r, nil
	}
	return agent.NewBuiltinRunner(nil), nil
}

func (b *backend) close() error {
	if b == nil {
		return nil
	}
	var errs []error
	if b.queue != nil {
		b.queue.Close()
	}
	if b.limiter != nil {
		errs = append(errs, b.limiter.Close())
	}
	if b.blobs != nil {
		errs = append(errs, b.blobs.Close())
	}
	if b.db != nil {
		errs = append(errs, b.db.Close())
	}
	return errors.Join(errs...)
}

// newAPI builds the /api/v1 handlers over the backend.
func newAPI(cfg *config.Config, b *backend, challenger api.ScopeChallenger, log *slog.Logger,
	settle func(context.Context, store.Approval) (store.Approval, error)) (*api.API, error) {
	return api.New(api.Options{
		SettleApproval:    settle,
		Store:             b.db,
		PlanResolver:      b.plans,
		AutoProvision:     cfg.AutoProvision(),
		ExampleTasks:      cfg.ExampleTasks(),
		CursorKey:         b.keys.apiCursors,
		Queue:             queueAdapter{b.queue},
		Blobs:             b.blobs,
		WebhookAllowHosts: cfg.Webhooks.AllowHosts,
		Challenger:        challenger,
		ValidatePlaybook: func(pb json.RawMessage) (int64, error) {
			if cfg.Runner.Kind == config.RunnerHTTP {
				return 0, nil // the agent service owns the playbook's meaning
			}
			return agent.ValidatePlaybook(pb)
		},
		Logger: log,
	})
}

// queueAdapter lets the API use the queue without either package knowing
// the other.
type queueAdapter struct{ q *jobs.Queue }

func (a queueAdapter) EnqueueExecution(ctx context.Context, tx *store.Tx, orgID, id string) error {
	return a.q.EnqueueExecution(ctx, tx, orgID, id)
}

func (a queueAdapter) EnqueueResume(ctx context.Context, tx *store.Tx, orgID, id string, r api.Resume) error {
	return a.q.EnqueueResume(ctx, tx, orgID, id, jobs.ResumeAnswer{StepID: r.StepID, Answer: r.Answer})
}

func (a queueAdapter) CancelRunning(ctx context.Context, orgID, id string) error {
	return a.q.CancelRunning(ctx, orgID, id)
}

func (a queueAdapter) EnqueueReplay(ctx context.Context, tx *store.Tx, orgID, deliveryID string) error {
	return a.q.EnqueueReplay(ctx, tx, orgID, deliveryID)
}

func (a queueAdapter) Emit(ctx context.Context, tx *store.Tx, orgID, code string, object json.RawMessage) error {
	return a.q.Emit(ctx, tx, orgID, code, object)
}

// secretKeys encrypts the secrets the store keeps: under the master key,
// decrypting also under api.previous_signing_keys and, once api.signing_key
// is set, under the random key a single node generated before it was.
func secretKeys(cfg *config.Config, master []byte) (*store.SecretKeys, error) {
	masters := [][]byte{master}
	for _, k := range cfg.API.PreviousSigningKeyList() {
		masters = append(masters, []byte(k))
	}
	if cfg.API.SigningKey != "" && cfg.DataDir != "" {
		if b, err := os.ReadFile(filepath.Join(cfg.DataDir, "api", "signing-key")); err == nil {
			if key, err := base64.StdEncoding.DecodeString(string(b)); err == nil && len(key) >= 32 {
				masters = append(masters, key)
			}
		}
	}
	keys, err := store.NewSecretKeys(masters...)
	if err != nil {
		return nil, fmt.Errorf("api.previous_signing_keys: %w", err)
	}
	return keys, nil
}

// signingKey is api.signing_key, or on a single node a random key kept in
// <data_dir>/api/signing-key so that cursors survive restarts.
func signingKey(cfg *config.Config) ([]byte, error) {
	key, path, err := existingSigningKey(cfg)
	if key != nil || err != nil {
		return key, err
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("writing the API signing key: %w", err)
	}
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(key)), 0o600); err != nil {
		return nil, fmt.Errorf("writing the API signing key: %w", err)
	}
	return key, nil
}

// existingSigningKey returns the configured API signing key, or the one in
// the data directory; nil and the file's path when there is none yet.
func existingSigningKey(cfg *config.Config) (key []byte, path string, err error) {
	if k := cfg.API.SigningKey.Reveal(); k != "" {
		return []byte(k), "", nil
	}
	path = filepath.Join(cfg.DataDir, "api", "signing-key")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, path, nil
	}
	if err != nil {
		return nil, path, fmt.Errorf("reading the API signing key: %w", err)
	}
	key, err = base64.StdEncoding.DecodeString(string(b))
	if err != nil || len(key) < 32 {
		return nil, path, fmt.Errorf("%s is damaged: delete it to generate a new key (API cursors already handed out stop working)", path)
	}
	return key, path, nil
}

// Migrate creates or upgrades the store's and the queue's tables, for
// `kadu migrate`.
func Migrate(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	b, err := openBackend(ctx, cfg, log, nil, tracing.Noop()) // Open and jobs.New both migrate
	if err != nil {
		return err
	}
	return b.close()
}
