package agent

import _ "embed"

//go:embed PLAYBOOKS.md
var playbooksReference string

// PlaybooksReference returns PLAYBOOKS.md, the reference of the playbook
// format (step types, parameters, costs) served to clients as the
// kobana://kadu/playbooks resource. It is Markdown.
func PlaybooksReference() string { return playbooksReference }
