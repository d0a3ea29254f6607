package config

import "testing"

func TestAutoProvisionAndExampleTasks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value, issuer string
		want          bool
	}{
		{"auto", "", true},
		{"auto", "https://id.example.com", false},
		{"on", "https://id.example.com", true},
		{"true", "https://id.example.com", true},
		{"off", "", false},
		{"false", "", false},
	}
	for _, tt := range tests {
		c := Config{Auth: Auth{Issuer: tt.issuer}, Orgs: Orgs{AutoProvision: tt.value, ExampleTasks: tt.value}}
		if got := c.AutoProvision(); got != tt.want {
			t.Errorf("auto_provision %q, issuer %q: AutoProvision() = %v, want %v", tt.value, tt.issuer, got, tt.want)
		}
		if got := c.ExampleTasks(); got != tt.want {
			t.Errorf("example_tasks %q, issuer %q: ExampleTasks() = %v, want %v", tt.value, tt.issuer, got, tt.want)
		}
	}
	// The two are independent.
	c := Config{Orgs: Orgs{AutoProvision: "on", ExampleTasks: "off"}}
	if !c.AutoProvision() || c.ExampleTasks() {
		t.Errorf("on/off: AutoProvision() = %v, ExampleTasks() = %v", c.AutoProvision(), c.ExampleTasks())
	}
}
