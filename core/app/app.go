package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kobana/kadu/core/api"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/confirm"
	"github.com/kobana/kadu/core/devauth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/metrics"
	"github.com/kobana/kadu/core/origin"
	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/tracing"
)

// Options are the parts of an App that do not come from configuration.
type Options struct {
	Version string       // build version, shown as serverInfo.version
	Logger  *slog.Logger // default: JSON or text on stderr per cfg.Log
	// Catalog serves the tools, resources and prompts. Default: the
	// configured bundles (plugins.bundles).
	Catalog mcp.Catalog
	// ConfigPath is the configuration file, watched for bundle changes when
	// plugins.watch is on. Empty: only bundle files are watched.
	ConfigPath string
	// ReloadConfig reads the configuration again (from the same file,
	// environment and flags), for bundle reloads. Nil: reloads keep the
	// configuration the App started with and reread the bundle files.
	ReloadConfig func() (*config.Config, error)
	// DevAuthAutoApprove approves every sign-in of the embedded
	// authorization server without its consent page. Tests only: it is not
	// reachable from configuration.
	DevAuthAutoApprove bool
	// SkipDrain, when closed, ends a drain delay in progress at once (kadu
	// serve closes it on a second signal). Nil: the delay runs its course.
	SkipDrain <-chan struct{}
	// TokenCommand is the command line that mints a token this server
	// accepts, named in the ready banner (kadu serve: its own path and the
	// configuration flags it was given). Default DefaultTokenCommand.
	TokenCommand string
	// Tracing adjusts the trace pipeline (tests: a short batch delay).
	// The endpoint and the rest come from cfg.Tracing and OTEL_*.
	Tracing tracing.Options
}

// ErrTerminated, as the cause of Serve's context (context.WithCancelCause),
// asks for the stop of a rolling restart: first http.drain_delay, during
// which the listener keeps accepting and answers 503 with Retry-After while
// /readyz fails, then the graceful shutdown. kadu serve cancels with it on
// SIGTERM. Any other end of the context (SIGINT, a test) skips the delay.
var ErrTerminated = errors.New("terminated: draining before shutdown")

// App is a wired Kadu server. Build it with New, then Serve it or use its
// handlers directly (tests). Safe for concurrent use.
type App struct {
	cfg      *config.Config
	log      *slog.Logger
	public   *echo.Echo
	admin    *http.ServeMux
	opts     Options
	backend  *backend
	dispatch *apiDispatcher   // /api/v1 in-process, for bundles
	plugins  *plugin.Registry // nil when Options.Catalog replaced it
	// watcher watches the configuration and bundle files (plugins.watch);
	// nil when off. Each reload gives it the paths of the configuration
	// it read.
	watcher  atomic.Pointer[plugin.Watcher]
	confirm  *confirm.Confirmer
	dev      *devauth.Server // the embedded issuer; nil with auth.issuer
	tracing  *tracing.Tracing
	handler  http.Handler   // public, inside the server span
	verifier *auth.Verifier // of auth.issuer, for readiness; nil with the embedded issuer
	draining atomic.Bool
	registry *prometheus.Registry // served at GET /metrics (metrics.go)
	metrics  *metrics.Metrics
}

// New builds every part from cfg: it opens (and migrates) the store, so
// Close the App when done with it. Nothing is listening yet.
func New(ctx context.Context, cfg *config.Config, opts Options) (_ *App, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = newLogger(cfg.Log, os.Stderr)
	}
	// A full disk fails every write: one log line per kind every 10 s.
	log = slog.New(tracing.LogHandler(store.ThrottleHandler(log.Handler(), 0)))
	a := &App{cfg: cfg, log: log, opts: opts, public: echo.New(), admin: http.NewServeMux()}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if a.tracing, err = newTracing(ctx, cfg, opts.Version, opts.Tracing); err != nil {
		return nil, err
	}
	a.public.Use(routeSpan)
	a.handler = a.tracing.Middleware(a.public)
	a.public.HideBanner, a.public.HidePort = true, true
	a.public.HTTPErrorHandler = a.httpError
	if a.registry, a.metrics, err = newMetrics(); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	// One rule for the client address (http.trusted_proxies): echo's
	// RealIP and every reader of clientip.FromRequest agree.
	clients, err := clientResolver(cfg.HTTP.TrustedProxies)
	if err != nil {
		return nil, err
	}
	a.public.IPExtractor = clients.IP
	a.public.Pre(clients.Middleware)
	a.public.Use(requestDeadline(cfg.HTTP.WriteTimeout))

	verifier, err := a.mountAuth(opts)
	if err != nil {
		return nil, err
	}
	aliases := cfg.MCPURLAliases()
	authn := auth.NewAuthenticator(countingVerifier{auth.NewCachingVerifier(verifier, auth.CacheOptions{}), a.metrics}, cfg.MCPURL(), log, aliases...)
	prm := echo.WrapHandler(auth.MetadataHandler(cfg.MCPURL(), cfg.IssuerURL(), aliases...))
	for _, p := range auth.MetadataPaths(cfg.MCPURL()) {
		a.public.Any(p, prm)
	}

	if a.backend, err = openBackend(ctx, cfg, log, a.metrics, a.tracing); err != nil {
		return nil, err
	}
	// The Confirmer is built below, over the plugins that call this API;
	// approvals are read once serving, when it is there.
	rest, err := newAPI(cfg, a.backend, authn, log, func(ctx context.Context, ap store.Approval) (store.Approval, error) {
		if a.confirm == nil {
			return ap, nil
		}
		return a.confirm.Settle(ctx, ap)
	})
	if err != nil {
		return nil, err
	}
	// One limiter for REST and MCP: a plan's requests_per_minute counts both.
	var restLimiter api.Limiter
	var mcpLimiter mcp.Limiter
	if a.backend.limiter != nil {
		l := countingLimiter{a.backend.limiter, a.metrics}
		restLimiter, mcpLimiter = l, l
	}
	rest.Register(a.public.Group(api.BasePath, rest.Middlewares(api.LimitedAuth(authn, restLimiter))...))
	rest.RegisterDocument(a.public)
	a.dispatch = newAPIDispatcher(rest)
	a.dispatch.h.Pre(observeRoutes(a.dispatch.h, func(route, method string, status int, _ time.Duration) {
		a.metrics.BundleAPICall(route, method, status)
	}))
	if a.backend.blobs.Local() {
		a.public.Any(blobsPath+"/*", echo.WrapHandler(a.backend.blobs.Handler()))
	}

	origins, err := origin.NewPolicy(cfg.PublicOrigin(), cfg.Loopback())
	if err != nil {
		return nil, fmt.Errorf("public_url: %w", err)
	}
	catalog := opts.Catalog
	if catalog == nil {
		if a.plugins, err = a.openPlugins(ctx, opts); err != nil {
			return nil, err
		}
		catalog = a.plugins
		a.admin.Handle("/admin/plugins", a.plugins.AdminHandler())
		a.admin.Handle("/admin/plugins/", a.plugins.AdminHandler())
	}
	// Every destructive tool, first-party or partner, passes through the
	// confirmation: a bundle cannot opt out.
	if a.confirm, err = confirm.New(confirm.Options{
		Next:           auditTools(catalog, a.backend.db, log),
		Store:          a.backend.db,
		Keys:           a.backend.keys.confirmState,
		PublicURL:      cfg.PublicOrigin(),
		StateTTL:       cfg.Confirm.StateTTL,
		ApprovalTTL:    cfg.Confirm.ApprovalTTL,
		RunLimit:       confirmRunLimit(cfg),
		Logger:         log,
		Metrics:        a.metrics,
		TracerProvider: a.tracing.Provider(),
	}); err != nil {
		return nil, fmt.Errorf("confirm: %w", err)
	}
	catalog = a.confirm
	approvals, err := a.mountApprovalPage(verifier, origins)
	if err != nil {
		return nil, err
	}
	engine, err := mcp.New(mcp.Options{
		Catalog:       catalog,
		Authenticator: authn,
		Origins:       origins,
		Limiter:       mcpLimiter,
		ServerVersion: opts.Version,
		Logger:        log,
		// A full or unreachable store is the same 503 on MCP as on REST.
		StoreUnavailable: store.Unavailable,
		Metrics:          a.metrics,
		TracerProvider:   a.tracing.Provider(),
	})
	if err != nil {
		return nil, err
	}
	a.public.Any(cfg.MCPPath, echo.WrapHandler(engine))
	// One guard and one drain answer in front of every route (edge.go).
	g := &edge{origins: origins, mcpPath: cfg.MCPPath, engine: engine, page: approvals, draining: a.draining.Load, log: log}
	a.public.Pre(observeRoutes(a.public, a.metrics.HTTPRequest), g.middleware)
	a.mountMetrics()

	a.admin.HandleFunc("GET /healthz", a.healthz)
	a.admin.HandleFunc("GET /readyz", a.readyz) // ready.go
	return a, nil
}

// mountAuth builds the token verifier: against the configured issuer, or,
// when none is configured, against the embedded development authorization
// server it mounts on the public listener.
func (a *App) mountAuth(opts Options) (*auth.Verifier, error) {
	cfg := a.cfg
	vo := auth.Options{
		Issuer:           cfg.IssuerURL(),
		Resource:         cfg.MCPURL(),
		Audiences:        cfg.Auth.Audiences,
		Algorithms:       cfg.Auth.Algorithms,
		OrgClaim:         cfg.Auth.OrgClaim,
		RoleClaim:        cfg.Auth.RoleClaim,
		ScopeClaim:       cfg.Auth.ScopeClaim,
		RequireATJWT:     cfg.Auth.RequireATJWT,
		MaxTokenLifetime: cfg.Auth.MaxTokenLifetime,
		JWKSURL:          cfg.Auth.JWKSURL,
		Logger:           a.log,
	}
	if cfg.Auth.Issuer == "" {
		dev, err := newDevAuth(cfg, a.log, opts.DevAuthAutoApprove)
		if err != nil {
			return nil, err
		}
		dev.Register(a.public)
		a.dev = dev
		// The embedded server's tokens go through the production verifier;
		// only the key source differs (in-process, nothing to fetch), and
		// the claim names are the ones it issues.
		vo.KeySet, vo.Algorithms = dev.KeySet(), dev.Algorithms()
		vo.OrgClaim, vo.RoleClaim, vo.ScopeClaim = "", "", ""
		// A client may type localhost or [::1] instead of 127.0.0.1.
		vo.Audiences = append(vo.Audiences, cfg.MCPURLAliases()...)
		// A token minted for another --addr or public URL is signed with
		// the same key but names another issuer: say how to mint a match.
		vo.IssuerHint = "mint a matching token with kadu token run with the same --config, --addr and --public-url as kadu serve"
		a.log.Info("embedded development authorization server mounted; configure auth.issuer for production",
			slog.String("issuer", cfg.IssuerURL()))
	}
	v, err := auth.NewVerifier(vo)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	if a.dev == nil {
		a.verifier = v
	}
	return v, nil
}

func newDevAuth(cfg *config.Config, log *slog.Logger, autoApprove bool) (*devauth.Server, error) {
	return devauth.New(devauth.Options{
		Issuer:          cfg.PublicOrigin(),
		Resource:        cfg.MCPURL(),
		ResourceAliases: cfg.MCPURLAliases(),
		DataDir:         cfg.DataDir,
		DefaultOrg:      cfg.Auth.Dev.DefaultOrg,
		DefaultRole:     auth.Role(cfg.Auth.Dev.DefaultRole),
		// Off unless configured: registering a client must not be enough
		// for a token (devauth RATIONALE.md).
		ClientCredentialsRole: auth.Role(cfg.Auth.Dev.ClientCredentialsRole),
		DefaultSubject:        cfg.Auth.Dev.DefaultSubject,
		AccessTokenTTL:        cfg.Auth.Dev.AccessTokenTTL,
		RefreshTokenTTL:       cfg.Auth.Dev.RefreshTokenTTL,
		AutoApprove:           autoApprove,
		Logger:                log,
	})
}

// Close releases what New opened (the bundles, the store). Serve calls it
// when it returns; call it yourself for an App you never serve.
func (a *App) Close() error {
	var err error
	if a.plugins != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = a.plugins.Close(ctx)
	}
	err = errors.Join(err, a.backend.close())
	if a.tracing != nil {
		// Last: the spans of everything closed above are exported too.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = errors.Join(err, a.tracing.Shutdown(ctx))
	}
	return err
}

// Handler is the public listener's handler: MCP endpoint, metadata and,
// in development, the embedded authorization server.
func (a *App) Handler() http.Handler { return a.handler }

// AdminHandler is the admin listener's handler: /healthz, /readyz (ready.go),
// /metrics (metrics.go) and /admin/plugins.
func (a *App) AdminHandler() http.Handler { return a.admin }

// httpError renders Echo's own errors (unknown route, 405 on a route) as
// JSON without leaking internals.
func (a *App) httpError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, msg := http.StatusInternalServerError, "internal error"
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code = he.Code
		msg = http.StatusText(code)
	} else {
		a.log.Error("unhandled error", slog.Any("error", err))
	}
	_ = c.JSON(code, map[string]string{"error": msg})
}

// Serve listens on the public and admin addresses until ctx is done, then
// drains: readiness turns false and every public route answers 503 with
// Retry-After — for http.drain_delay with the listener still accepting, if
// ctx ended with cause ErrTerminated —, then the listener closes, in-flight
// requests finish within http.shutdown_timeout and running executions go
// back to the queue.
func (a *App) Serve(ctx context.Context, stdout io.Writer) error {
	pub, err := net.Listen("tcp", a.cfg.Addr)
	if err != nil {
		a.Close()
		return fmt.Errorf("addr: %w", err)
	}
	adm, err := net.Listen("tcp", a.cfg.AdminAddr)
	if err != nil {
		pub.Close()
		a.Close()
		return fmt.Errorf("admin_addr: %w", err)
	}
	return a.serveOn(ctx, pub, adm, stdout)
}

func (a *App) serveOn(ctx context.Context, pub, adm net.Listener, stdout io.Writer) error {
	h := a.cfg.HTTP
	newServer := func(handler http.Handler) *http.Server {
		return &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: h.ReadHeaderTimeout,
			ReadTimeout:       h.ReadTimeout,
			WriteTimeout:      h.WriteTimeout,
			IdleTimeout:       h.IdleTimeout,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
		}
	}
	public, admin := newServer(a.Handler()), newServer(a.admin)
	// Not ctx: its end starts the graceful stop below, which drains the queue.
	if err := a.backend.queue.Start(context.WithoutCancel(ctx)); err != nil {
		pub.Close()
		adm.Close()
		a.Close()
		return fmt.Errorf("starting the job queue: %w", err)
	}
	if a.plugins != nil {
		a.watchPlugins(ctx, a.opts)
	}
	errc := make(chan error, 2)
	go func() { errc <- public.Serve(pub) }()
	go func() { errc <- admin.Serve(adm) }()

	a.log.Info("listening", slog.String("addr", pub.Addr().String()), slog.String("admin_addr", adm.Addr().String()))
	// The banner (banner.go) waits for readiness; it is done before the
	// store closes below.
	annCtx, stopAnnounce := context.WithCancel(ctx)
	announced := make(chan struct{})
	go func() {
		defer close(announced)
		a.announceReady(annCtx, pub.Addr(), adm.Addr(), stdout)
	}()

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	stopAnnounce()
	<-announced
	a.draining.Store(true)
	if serveErr == nil && errors.Is(context.Cause(ctx), ErrTerminated) && h.DrainDelay > 0 {
		// Keep accepting, so that a load balancer that has not yet seen
		// /readyz fail gets 503 + Retry-After, never a refused connection;
		// without keep-alive, each client's next request opens a new
		// connection, which the balancer sends elsewhere.
		public.SetKeepAlivesEnabled(false)
		a.log.Info("draining: answering 503 until the listener closes", slog.Duration("drain_delay", h.DrainDelay))
		serveErr = a.waitDrain(h.DrainDelay, errc)
	}
	sctx, cancel := context.WithTimeout(context.Background(), h.ShutdownTimeout)
	defer cancel()
	err := errors.Join(public.Shutdown(sctx), admin.Shutdown(sctx))
	// Running executions not done by the deadline go back to the queue and
	// resume on another replica (or this one, after a restart).
	err = errors.Join(err, a.backend.queue.Stop(sctx), a.Close())
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return errors.Join(serveErr, err)
	}
	a.log.Info("stopped")
	return err
}

// waitDrain waits out the drain delay, or less if Options.SkipDrain closes
// or a listener fails.
func (a *App) waitDrain(d time.Duration, errc <-chan error) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-a.opts.SkipDrain:
		a.log.Info("draining: delay cut short")
	case err := <-errc:
		return err
	}
	return nil
}

// Run builds Kadu from cfg and serves it until ctx is done.
func Run(ctx context.Context, cfg *config.Config, opts Options, stdout io.Writer) error {
	// Before New, which opens the store and compiles the bundles: the one
	// slow step of a first start, silent otherwise.
	fmt.Fprintf(stdout, "Starting Kadu: opening the store and loading the bundles (first start: compiling them takes a few seconds; cached in %s afterwards)\n",
		cfg.PluginCacheDir())
	a, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	return a.Serve(ctx, stdout)
}

func newLogger(l config.Log, w io.Writer) *slog.Logger {
	o := &slog.HandlerOptions{Level: l.SlogLevel()}
	if l.Format == "text" {
		return slog.New(slog.NewTextHandler(w, o))
	}
	return slog.New(slog.NewJSONHandler(w, o))
}
