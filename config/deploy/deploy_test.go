// Package deploy holds no code: its test checks the deployment material
// beside it (systemd/, kubernetes/) against the configuration rules in
// core/config, so that a manifest cannot promise what the server refuses.
package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kobana/kadu/core/config"
)

// manifest is the part of a Kubernetes object the checks read.
type manifest struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Resources  []string          `yaml:"resources"`
	Spec       struct {
		Replicas       int `yaml:"replicas"`
		MaxUnavailable any `yaml:"maxUnavailable"`
		Selector       struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Ports []struct {
			Name       string `yaml:"name"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type podSpec struct {
	TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
	SecurityContext               struct {
		RunAsNonRoot   bool `yaml:"runAsNonRoot"`
		RunAsUser      int  `yaml:"runAsUser"`
		SeccompProfile struct {
			Type string `yaml:"type"`
		} `yaml:"seccompProfile"`
	} `yaml:"securityContext"`
	Containers []struct {
		Args    []string `yaml:"args"`
		EnvFrom []struct {
			SecretRef struct {
				Name string `yaml:"name"`
			} `yaml:"secretRef"`
		} `yaml:"envFrom"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		ReadinessProbe probe `yaml:"readinessProbe"`
		LivenessProbe  probe `yaml:"livenessProbe"`
		Lifecycle      struct {
			PreStop struct {
				Sleep struct {
					Seconds int `yaml:"seconds"`
				} `yaml:"sleep"`
			} `yaml:"preStop"`
		} `yaml:"lifecycle"`
		SecurityContext struct {
			AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
			ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
			Capabilities             struct {
				Drop []string `yaml:"drop"`
			} `yaml:"capabilities"`
		} `yaml:"securityContext"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	} `yaml:"containers"`
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

// readManifests decodes every YAML document under kubernetes/, by kind.
func readManifests(t *testing.T) (map[string]manifest, []string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no manifests in kubernetes/: %v", err)
	}
	byKind := map[string]manifest{}
	var files []string
	for _, p := range paths {
		files = append(files, filepath.Base(p))
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		dec.KnownFields(false)
		for {
			var m manifest
			err := dec.Decode(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if m.Kind == "" || m.APIVersion == "" {
				t.Fatalf("%s: a document without kind or apiVersion", p)
			}
			if _, dup := byKind[m.Kind]; dup {
				t.Fatalf("%s: a second %s; the checks expect one of each", p, m.Kind)
			}
			byKind[m.Kind] = m
		}
	}
	return byKind, files
}

// loadConfigMap loads the ConfigMap's kadu.yaml with core/config, the
// Secret's variables in the environment, as a pod would.
func loadConfigMap(t *testing.T, cm, secret manifest) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kadu.yaml")
	if err := os.WriteFile(path, []byte(cm.Data["kadu.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range secret.StringData {
		t.Setenv(k, v)
	}
	cfg, err := config.Load(path, true, nil)
	if err != nil {
		t.Fatalf("the ConfigMap's kadu.yaml with the Secret's variables: %v", err)
	}
	return cfg
}

func port(t *testing.T, addr string) string {
	t.Helper()
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	if host != "0.0.0.0" && host != "" {
		t.Errorf("%s listens on %q only; the kubelet reaches the pod IP", addr, host)
	}
	return p
}

func TestKubernetesManifests(t *testing.T) {
	m, files := readManifests(t)
	for _, kind := range []string{"Kustomization", "ConfigMap", "Secret", "Deployment", "Service", "PodDisruptionBudget"} {
		if _, ok := m[kind]; !ok {
			t.Fatalf("no %s among %q", kind, files)
		}
	}
	var listed []string
	for _, f := range files {
		if f != "kustomization.yaml" {
			listed = append(listed, f)
		}
	}
	if got := slices.Sorted(slices.Values(m["Kustomization"].Resources)); !slices.Equal(got, listed) {
		t.Errorf("kustomization resources %q, want every manifest %q", got, listed)
	}

	cfg := loadConfigMap(t, m["ConfigMap"], m["Secret"])
	if cfg.SingleNode || cfg.Store.Driver != config.DriverPostgres || !strings.HasPrefix(cfg.Files.URL, "s3://") ||
		cfg.Auth.Issuer == "" || cfg.RateLimitBackend() != config.RateLimitPostgres {
		t.Errorf("the ConfigMap is not for replicas: single_node %v, store %s, files %q, issuer %q, limits %s",
			cfg.SingleNode, cfg.Store.Driver, cfg.Files.URL, cfg.Auth.Issuer, cfg.RateLimitBackend())
	}
	if cfg.DataDir != "/data" {
		t.Errorf("data_dir %q, want /data (the image's volume)", cfg.DataDir)
	}

	d := m["Deployment"]
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	ports := map[string]string{}
	for _, p := range c.Ports {
		ports[p.Name] = strconv.Itoa(p.ContainerPort)
	}
	if ports["admin"] != port(t, cfg.AdminAddr) || ports["http"] != port(t, cfg.Addr) {
		t.Errorf("container ports %v, want admin on admin_addr %s and http on addr %s", ports, cfg.AdminAddr, cfg.Addr)
	}
	if r := c.ReadinessProbe.HTTPGet; r.Path != "/readyz" || r.Port != "admin" {
		t.Errorf("readinessProbe %+v, want /readyz on the admin port", r)
	}
	if l := c.LivenessProbe.HTTPGet; l.Path != "/healthz" || l.Port != "admin" {
		t.Errorf("livenessProbe %+v, want /healthz on the admin port", l)
	}
	if !slices.Equal(c.Args, []string{"serve", "--config", "/etc/kadu/kadu.yaml"}) {
		t.Errorf("args %q", c.Args)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef.Name != m["Secret"].Metadata.Name {
		t.Errorf("envFrom %+v, want the Secret %s", c.EnvFrom, m["Secret"].Metadata.Name)
	}

	// Stopping: preStop, then the drain, then the shutdown, within the grace period.
	preStop := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	grace := time.Duration(pod.TerminationGracePeriodSeconds) * time.Second
	if need := preStop + cfg.HTTP.DrainDelay + cfg.HTTP.ShutdownTimeout; grace <= need {
		t.Errorf("terminationGracePeriodSeconds %s, want more than preStop %s + http.drain_delay %s + http.shutdown_timeout %s",
			grace, preStop, cfg.HTTP.DrainDelay, cfg.HTTP.ShutdownTimeout)
	}

	sc := pod.SecurityContext
	if !sc.RunAsNonRoot || sc.RunAsUser != 65532 || sc.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("pod securityContext %+v, want runAsNonRoot, the image's user 65532, seccomp RuntimeDefault", sc)
	}
	csc := c.SecurityContext
	if !csc.ReadOnlyRootFilesystem || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation ||
		!slices.Equal(csc.Capabilities.Drop, []string{"ALL"}) {
		t.Errorf("container securityContext %+v, want a read-only root, no privilege escalation, every capability dropped", csc)
	}
	mounts := map[string]bool{}
	for _, v := range c.VolumeMounts {
		mounts[v.MountPath] = true
	}
	for _, p := range []string{"/data", "/tmp", "/etc/kadu"} {
		if !mounts[p] {
			t.Errorf("no volume at %s; with a read-only root the server could not write there", p)
		}
	}

	sel := d.Spec.Selector.MatchLabels
	for k, v := range sel {
		if d.Spec.Template.Metadata.Labels[k] != v || m["PodDisruptionBudget"].Spec.Selector.MatchLabels[k] != v {
			t.Errorf("label %s=%s: the pods, the Deployment and the PodDisruptionBudget must agree", k, v)
		}
	}
	svc := m["Service"]
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != "http" {
		t.Errorf("Service ports %+v, want only the http port (never admin)", svc.Spec.Ports)
	}
	if d.Spec.Replicas < 2 {
		t.Errorf("replicas %d: the manifests are for several", d.Spec.Replicas)
	}
}

// unit reads a systemd unit's Key=Value lines (later values win, as in
// systemd for the keys checked here).
func unit(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is not Key=Value", path, line)
		}
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSystemdUnit(t *testing.T) {
	u := unit(t, filepath.Join("systemd", "kadu.service"))
	want := map[string]string{
		"DynamicUser":             "yes",
		"StateDirectory":          "kadu",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"NoNewPrivileges":         "yes",
		"PrivateTmp":              "yes",
		"SystemCallFilter":        "@system-service",
		"CapabilityBoundingSet":   "",
		"KillSignal":              "SIGTERM",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
		// wazero maps compiled bundles executable.
		"MemoryDenyWriteExecute": "no",
	}
	for k, v := range want {
		if got, ok := u[k]; !ok || got != v {
			t.Errorf("%s=%q, want %q", k, got, v)
		}
	}
	if !strings.Contains(u["Environment"], "KADU_DATA_DIR=%S/kadu") {
		t.Errorf("Environment=%q: data_dir must be the state directory, the only writable place", u["Environment"])
	}
	stop, err := time.ParseDuration(u["TimeoutStopSec"])
	if err != nil {
		t.Fatalf("TimeoutStopSec=%q: %v", u["TimeoutStopSec"], err)
	}
	// The built-in defaults and the production example's timeouts must both fit.
	def := config.Defaults()
	t.Setenv("KADU_API__SIGNING_KEY", "0123456789abcdef0123456789abcdef-test")
	prod, err := config.Load(filepath.Join("..", "production.example.yaml"), true, nil)
	if err != nil {
		t.Fatalf("config/production.example.yaml: %v", err)
	}
	for _, h := range []config.HTTP{def.HTTP, prod.HTTP} {
		if need := h.DrainDelay + h.ShutdownTimeout; stop <= need {
			t.Errorf("TimeoutStopSec %s, want more than http.drain_delay %s + http.shutdown_timeout %s", stop, h.DrainDelay, h.ShutdownTimeout)
		}
	}
}
