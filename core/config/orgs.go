package config

import (
	"maps"
	"slices"
	"strings"
)

// Values of orgs.auto_provision and orgs.example_tasks. "true" and "false"
// are accepted for on and off (a YAML 1.1 tool may have turned on into true);
// Load stores the canonical word.
const (
	toggleAuto = "auto"
	toggleOn   = "on"
	toggleOff  = "off"
)

var allowedToggles = []string{toggleAuto, toggleOn, toggleOff}

// Orgs configures organisations, which come from verified tokens.
type Orgs struct {
	// AutoProvision says whether an organisation seen for the first time is
	// created, on DefaultPlan: auto (default: on when auth.issuer is empty,
	// the embedded setup; off otherwise), on or off. When off, a token for an
	// unknown organisation gets 403. See Config.AutoProvision.
	AutoProvision string `koanf:"auto_provision"`

	// DefaultPlan is the plan a provisioned organisation gets, and the plan of
	// the development organisation (auth.dev.default_org). It must name a
	// plan under plans. Default "developer".
	DefaultPlan string `koanf:"default_plan"`

	// ExampleTasks says whether a newly provisioned organisation receives the
	// example tasks (playbooks whose input_schema carries valid examples):
	// auto (default: on when auth.issuer is empty; off otherwise), on or off.
	// See Config.ExampleTasks.
	ExampleTasks string `koanf:"example_tasks"`
}

// AutoProvision reports whether an organisation seen for the first time is
// provisioned with orgs.default_plan (orgs.auto_provision; auto means: only
// with the embedded development issuer).
func (c *Config) AutoProvision() bool { return c.toggle(c.Orgs.AutoProvision) }

// ExampleTasks reports whether a newly provisioned organisation receives the
// example tasks (orgs.example_tasks; auto means: only with the embedded
// development issuer).
func (c *Config) ExampleTasks() bool { return c.toggle(c.Orgs.ExampleTasks) }

// toggle resolves an auto|on|off value; auto (and anything Validate rejects)
// is on exactly when auth.issuer is empty.
func (c *Config) toggle(v string) bool {
	switch canonicalToggle(v) {
	case toggleOn:
		return true
	case toggleOff:
		return false
	}
	return c.Auth.Issuer == ""
}

func canonicalToggle(v string) string {
	switch v {
	case "true":
		return toggleOn
	case "false":
		return toggleOff
	}
	return v
}

func (o *Orgs) normalize() {
	o.AutoProvision = canonicalToggle(o.AutoProvision)
	o.ExampleTasks = canonicalToggle(o.ExampleTasks)
}

func (p *problems) orgs(o *Orgs, plans map[string]Plan) {
	p.oneOf("orgs.auto_provision", canonicalToggle(o.AutoProvision), allowedToggles)
	p.oneOf("orgs.example_tasks", canonicalToggle(o.ExampleTasks), allowedToggles)
	if _, ok := plans[o.DefaultPlan]; !ok {
		defined := "none is defined"
		if len(plans) > 0 {
			defined = "want one of " + strings.Join(slices.Sorted(maps.Keys(plans)), ", ")
		}
		p.add("orgs.default_plan", "%q is not a defined plan (%s; plans are defined under plans.<name>)", o.DefaultPlan, defined)
	}
}
