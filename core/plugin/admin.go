package plugin

import (
	"encoding/json"
	"net/http"
)

// AdminHandler serves the operator's view of the bundles, for the admin
// listener (loopback by default; it has no authentication of its own):
//
//	GET  /admin/plugins         {"bundles":[BundleStatus…],"memory":MemoryStatus}
//	POST /admin/plugins/reload  reloads from Options.ReloadConfig, then answers
//	                            like GET, plus "error" when a bundle failed (422)
//
// Errors name bundles and files, never config values.
func (r *Registry) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/plugins", func(w http.ResponseWriter, _ *http.Request) {
		writeAdmin(w, http.StatusOK, adminBody{Bundles: r.Status(), Memory: r.MemoryStatus()})
	})
	mux.HandleFunc("POST /admin/plugins/reload", func(w http.ResponseWriter, req *http.Request) {
		if r.reloadCfg == nil {
			writeAdmin(w, http.StatusNotImplemented, adminBody{Error: "reload is not configured (Options.ReloadConfig is nil)"})
			return
		}
		cfg, err := r.reloadCfg(req.Context())
		if err != nil {
			writeAdmin(w, http.StatusUnprocessableEntity, adminBody{Error: "reading the configuration: " + err.Error(),
				Bundles: r.Status(), Memory: r.MemoryStatus()})
			return
		}
		status := http.StatusOK
		body := adminBody{}
		if err := r.Reload(req.Context(), cfg); err != nil {
			status, body.Error = http.StatusUnprocessableEntity, err.Error()
		}
		body.Bundles, body.Memory = r.Status(), r.MemoryStatus()
		writeAdmin(w, status, body)
	})
	return mux
}

type adminBody struct {
	Bundles []BundleStatus `json:"bundles"`
	Memory  MemoryStatus   `json:"memory"`
	Error   string         `json:"error,omitempty"`
}

// MemoryStatus describes the plugin memory budget now.
func (r *Registry) MemoryStatus() MemoryStatus { return r.budget.status() }

func writeAdmin(w http.ResponseWriter, status int, body adminBody) {
	if body.Bundles == nil {
		body.Bundles = []BundleStatus{}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
