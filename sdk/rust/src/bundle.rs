//! [`Bundle`] and [`Tool`]: what a bundle offers, and the manifest built
//! from it (sdk/ABI.md §10).

use crate::call::{Call, Role, Scope};
use crate::json::{self, Value};
use crate::prompt::{CompleteRequest, CompleteResult, Prompt};
use crate::resource::{Resource, ResourceTemplate};
use crate::result::{Error, ToolResult};

/// The ABI this SDK implements; the manifest's `"abi"`.
pub const ABI_VERSION: &str = "kadu/v1";

pub(crate) type ToolFn = dyn Fn(&mut Call) -> Result<ToolResult, Error>;
pub(crate) type CompleteFn = dyn Fn(&mut Call, &CompleteRequest) -> Result<CompleteResult, Error>;

/// A bundle: its name, version and routes, and the tools, resources,
/// templates, prompts and completer it offers. Build it in the function
/// given to [`export!`](crate::export!), which the SDK calls once per
/// instance and checks against the ABI's rules:
///
/// ```
/// use kadu::{Access, Annotations, Bundle, Tool, ToolResult};
///
/// fn bundle() -> Bundle {
///     Bundle::new("hello", "1.0.0").tool(
///         Tool::new("hello_greet")
///             .description("Greets the caller's organisation.")
///             .input_schema(r#"{"type":"object","properties":{},"additionalProperties":false}"#)
///             .annotations(Annotations::READ_ONLY)
///             .access(Access::VIEWER_READ)
///             .handler(|c| Ok(ToolResult::text(format!("Hello, {}!", c.caller().org_id)))),
///     )
/// }
/// assert!(bundle().manifest().is_ok());
/// ```
pub struct Bundle {
    name: String,
    version: String,
    description: Option<String>,
    routes: Vec<String>,
    pub(crate) tools: Vec<Tool>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) completer: Option<Box<CompleteFn>>,
}

impl Bundle {
    /// A bundle named `name` (`^[a-z][a-z0-9_]{0,31}$`, as the operator's
    /// config names it) at Semantic Version `version`, e.g. "1.0.0".
    pub fn new(name: &str, version: &str) -> Bundle {
        Bundle {
            name: name.to_owned(),
            version: version.to_owned(),
            description: None,
            routes: Vec::new(),
            tools: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            completer: None,
        }
    }

    /// What the bundle is, for operators.
    pub fn description(mut self, text: &str) -> Bundle {
        self.description = Some(text.to_owned());
        self
    }

    /// An API route the bundle calls: `"METHOD /path"` with `{name}` for
    /// one segment, e.g. `"GET /api/v1/tasks/{id}"`. The host refuses any
    /// other request, and refuses the bundle unless the operator granted
    /// every route.
    pub fn route(mut self, route: &str) -> Bundle {
        self.routes.push(route.to_owned());
        self
    }

    pub fn tool(mut self, tool: Tool) -> Bundle {
        self.tools.push(tool);
        self
    }

    pub fn resource(mut self, resource: Resource) -> Bundle {
        self.resources.push(resource);
        self
    }

    pub fn template(mut self, template: ResourceTemplate) -> Bundle {
        self.templates.push(template);
        self
    }

    pub fn prompt(mut self, prompt: Prompt) -> Bundle {
        self.prompts.push(prompt);
        self
    }

    /// Answers `completion/complete` for the bundle's prompts and
    /// templates (the manifest then says `"completions": true`).
    pub fn completer<F>(mut self, f: F) -> Bundle
    where
        F: Fn(&mut Call, &CompleteRequest) -> Result<CompleteResult, Error> + 'static,
    {
        self.completer = Some(Box::new(f));
        self
    }

    /// Checks the bundle against the rules the host applies at load
    /// (sdk/ABI.md §10) and returns the manifest JSON, or every problem
    /// found, each naming what it is about. Partners can call it in a
    /// native unit test; the SDK calls it before the first export.
    pub fn manifest(&self) -> Result<String, Vec<String>> {
        let mut errs = Vec::new();
        if !bundle_name_ok(&self.name) {
            errs.push(format!(
                "bundle name {:?}: want ^[a-z][a-z0-9_]{{0,31}}$",
                self.name
            ));
        }
        if !semver_ok(&self.version) {
            errs.push(format!(
                "bundle version {:?}: want a semantic version such as 1.0.0",
                self.version
            ));
        }
        for (i, r) in self.routes.iter().enumerate() {
            if !route_ok(r) {
                errs.push(format!("routes[{}] {:?}: want \"METHOD /path\", METHOD one of GET POST PUT PATCH DELETE, segments literal or {{name}}, no query", i, r));
            } else if self.routes[..i].contains(r) {
                errs.push(format!("routes[{}] {:?}: listed twice", i, r));
            }
        }
        if self.tools.is_empty()
            && self.resources.is_empty()
            && self.templates.is_empty()
            && self.prompts.is_empty()
        {
            errs.push("the bundle offers nothing: add a tool, resource, template or prompt".into());
        }
        let mut tools = Vec::new();
        for (i, t) in self.tools.iter().enumerate() {
            if self.tools[..i].iter().any(|o| o.name == t.name) {
                errs.push(format!("tool {:?}: registered twice", t.name));
            }
            match t.manifest() {
                Ok(v) => tools.push(v),
                Err(e) => errs.extend(e.into_iter().map(|e| format!("tool {:?}: {}", t.name, e))),
            }
        }
        let mut resources = Vec::new();
        for (i, r) in self.resources.iter().enumerate() {
            if self.resources[..i].iter().any(|o| o.uri == r.uri) {
                errs.push(format!("resource {:?}: registered twice", r.uri));
            }
            match r.manifest() {
                Ok(v) => resources.push(v),
                Err(e) => errs.extend(
                    e.into_iter()
                        .map(|e| format!("resource {:?}: {}", r.uri, e)),
                ),
            }
        }
        let mut templates = Vec::new();
        for (i, t) in self.templates.iter().enumerate() {
            if self.templates[..i]
                .iter()
                .any(|o| o.uri_template == t.uri_template)
            {
                errs.push(format!("template {:?}: registered twice", t.uri_template));
            }
            match t.manifest() {
                Ok(v) => templates.push(v),
                Err(e) => errs.extend(
                    e.into_iter()
                        .map(|e| format!("template {:?}: {}", t.uri_template, e)),
                ),
            }
        }
        let mut prompts = Vec::new();
        for (i, p) in self.prompts.iter().enumerate() {
            if self.prompts[..i].iter().any(|o| o.name == p.name) {
                errs.push(format!("prompt {:?}: registered twice", p.name));
            }
            match p.manifest() {
                Ok(v) => prompts.push(v),
                Err(e) => errs.extend(e.into_iter().map(|e| format!("prompt {:?}: {}", p.name, e))),
            }
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        let mut m = crate::json!({"abi": ABI_VERSION, "name": (self.name.as_str()), "version": (self.version.as_str())});
        if let Some(d) = &self.description {
            m.insert("description", d);
        }
        m.insert("tools", tools);
        m.insert("resources", resources);
        m.insert("resourceTemplates", templates);
        m.insert("prompts", prompts);
        m.insert("completions", self.completer.is_some());
        m.insert("routes", self.routes.clone());
        Ok(m.to_string())
    }
}

/// A tool's behaviour hints, all sent as explicit booleans. `openWorldHint`
/// is always false: a bundle can reach nothing but the Kadu API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Annotations {
    /// The tool changes nothing.
    pub read_only: bool,
    /// The tool deletes, cancels, runs work, re-sends, rotates a secret, or
    /// changes who may do what or where data goes. Kadu asks the person to
    /// confirm before such a tool runs.
    pub destructive: bool,
    /// Calling again with the same arguments has no further effect.
    pub idempotent: bool,
}

impl Annotations {
    /// Reads only: read-only and idempotent.
    pub const READ_ONLY: Annotations = Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
    };
}

/// Who may list and call an entry: a role at least `min_role` and `scope`
/// among the token's scopes. It is the first gate only; the API checks
/// again on every request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub min_role: Role,
    pub scope: Scope,
}

impl Access {
    /// Any viewer with `kadu.read`.
    pub const VIEWER_READ: Access = Access {
        min_role: Role::Viewer,
        scope: Scope::Read,
    };

    pub const fn new(min_role: Role, scope: Scope) -> Access {
        Access { min_role, scope }
    }

    pub(crate) fn to_json(self) -> Value {
        crate::json!({"min_role": (self.min_role.as_str()), "scope": (self.scope.as_str())})
    }
}

/// An MCP tool. Name, input schema, annotations, access and handler are
/// required; the SDK reports what is missing before the first call.
pub struct Tool {
    pub(crate) name: String,
    title: Option<String>,
    description: Option<String>,
    input_schema: Option<String>,
    output_schema: Option<String>,
    annotations: Option<Annotations>,
    access: Option<Access>,
    requires: Vec<String>,
    pub(crate) handler: Option<Box<ToolFn>>,
}

impl Tool {
    /// A tool named `name`: `^[a-zA-Z0-9_.-]{1,64}$`, unique across every
    /// bundle the server loads, so prefix it with something of yours.
    pub fn new(name: &str) -> Tool {
        Tool {
            name: name.to_owned(),
            title: None,
            description: None,
            input_schema: None,
            output_schema: None,
            annotations: None,
            access: None,
            requires: Vec::new(),
            handler: None,
        }
    }

    /// A short human name, e.g. "Run a task".
    pub fn title(mut self, title: &str) -> Tool {
        self.title = Some(title.to_owned());
        self
    }

    /// Written for a model: what the tool does, when to use it, what comes
    /// back, and which parts of it are untrusted data.
    pub fn description(mut self, text: &str) -> Tool {
        self.description = Some(text.to_owned());
        self
    }

    /// The JSON Schema (draft 2020-12) of the arguments, with
    /// `"type": "object"`. The host validates arguments against it before
    /// the handler runs.
    pub fn input_schema(mut self, schema: &str) -> Tool {
        self.input_schema = Some(schema.to_owned());
        self
    }

    /// The JSON Schema of `structuredContent`, which every successful
    /// result must then carry (see [`ToolResult::json`]). The host faults a
    /// result that does not match it. A destructive tool declares none.
    pub fn output_schema(mut self, schema: &str) -> Tool {
        self.output_schema = Some(schema.to_owned());
        self
    }

    pub fn annotations(mut self, annotations: Annotations) -> Tool {
        self.annotations = Some(annotations);
        self
    }

    pub fn access(mut self, access: Access) -> Tool {
        self.access = Some(access);
        self
    }

    /// A client capability (`elicitation`, `sampling`, `roots`) the tool
    /// always asks for: a client without it gets -32021 before the tool
    /// runs. Leave it out for a tool that can do without.
    pub fn requires_capability(mut self, capability: &str) -> Tool {
        self.requires.push(capability.to_owned());
        self
    }

    /// Runs the tool. Return [`ToolResult`] or an [`Error`] of the right
    /// tier; a panic is a fault.
    pub fn handler<F>(mut self, f: F) -> Tool
    where
        F: Fn(&mut Call) -> Result<ToolResult, Error> + 'static,
    {
        self.handler = Some(Box::new(f));
        self
    }

    pub(crate) fn has_output_schema(&self) -> bool {
        self.output_schema.is_some()
    }

    fn manifest(&self) -> Result<Value, Vec<String>> {
        let mut errs = Vec::new();
        if !entry_name_ok(&self.name) {
            errs.push("name: want ^[a-zA-Z0-9_.-]{1,64}$".to_owned());
        }
        let input = match &self.input_schema {
            None => {
                errs.push("input_schema: required".to_owned());
                Value::Null
            }
            Some(s) => object_schema(s).unwrap_or_else(|e| {
                errs.push(format!("input_schema: {}", e));
                Value::Null
            }),
        };
        let output = self.output_schema.as_ref().map(|s| {
            object_schema(s).unwrap_or_else(|e| {
                errs.push(format!("output_schema: {}", e));
                Value::Null
            })
        });
        match self.annotations {
            None => errs.push("annotations: required (Kadu confirms destructive tools from them)".to_owned()),
            Some(a) if a.read_only && a.destructive => errs.push("annotations: a tool cannot be both read_only and destructive".to_owned()),
            Some(a) if a.destructive && output.is_some() => {
                errs.push("output_schema: a destructive tool declares none (its first answer is a confirmation request)".to_owned())
            }
            Some(_) => {}
        }
        if self.access.is_none() {
            errs.push("access: required".to_owned());
        }
        for c in &self.requires {
            if !["elicitation", "sampling", "roots"].contains(&c.as_str()) {
                errs.push(format!(
                    "requires_capability {:?}: want elicitation, sampling or roots",
                    c
                ));
            }
        }
        if self.handler.is_none() {
            errs.push("handler: required".to_owned());
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        let a = self.annotations.unwrap_or(Annotations::READ_ONLY);
        let mut v = crate::json!({"name": (self.name.as_str())});
        if let Some(t) = &self.title {
            v.insert("title", t);
        }
        if let Some(d) = &self.description {
            v.insert("description", d);
        }
        v.insert("inputSchema", input);
        if let Some(o) = output {
            v.insert("outputSchema", o);
        }
        v.insert(
            "annotations",
            crate::json!({"readOnlyHint": (a.read_only), "destructiveHint": (a.destructive), "idempotentHint": (a.idempotent), "openWorldHint": false}),
        );
        v.insert("access", self.access.map(Access::to_json));
        if !self.requires.is_empty() {
            v.insert("requiresCapabilities", self.requires.clone());
        }
        Ok(v)
    }
}

/// Parses a schema that must be a JSON object with `"type": "object"`.
/// Whether it compiles as JSON Schema is for the host to check.
fn object_schema(text: &str) -> Result<Value, String> {
    let v = json::parse(text).map_err(|e| e.to_string())?;
    if v["type"].as_str() != Some("object") {
        return Err(r#"must be a JSON object with "type": "object" at the root"#.to_owned());
    }
    Ok(v)
}

pub(crate) fn access_or_error(access: Option<Access>, errs: &mut Vec<String>) -> Value {
    match access {
        Some(a) => a.to_json(),
        None => {
            errs.push("access: required".to_owned());
            Value::Null
        }
    }
}

/// `^[a-z][a-z0-9_]{0,31}$`
fn bundle_name_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 32
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

/// `^[a-zA-Z0-9_.-]{1,64}$`: tool and prompt names.
pub(crate) fn entry_name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

/// Semantic Versioning 2.0.0.
fn semver_ok(s: &str) -> bool {
    let (rest, build) = match s.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (s, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    let numeric = |p: &str| {
        !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()) && (p == "0" || !p.starts_with('0'))
    };
    let ident =
        |p: &str| !p.is_empty() && p.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-');
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| numeric(p))
        && pre.map_or(true, |p| {
            p.split('.')
                .all(|id| ident(id) && (!id.bytes().all(|c| c.is_ascii_digit()) || numeric(id)))
        })
        && build.map_or(true, |b| b.split('.').all(ident))
}

/// `METHOD /path`: a method the API knows, segments literal or `{name}`, no
/// query, no `.`/`..`, no empty segment.
fn route_ok(r: &str) -> bool {
    let (method, path) = match r.split_once(' ') {
        Some(x) => x,
        None => return false,
    };
    if !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method)
        || !path.starts_with('/')
        || path == "/"
    {
        return false;
    }
    path[1..].split('/').all(|seg| {
        if let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            let b = name.as_bytes();
            !b.is_empty()
                && (b[0].is_ascii_alphabetic() || b[0] == b'_')
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        } else {
            seg != "."
                && seg != ".."
                && !seg.is_empty()
                && seg
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"._~!$&'()*+,;=:@%-".contains(&c))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_versions_routes() {
        assert!(bundle_name_ok("cashflow_2"));
        assert!(
            !bundle_name_ok("Cash")
                && !bundle_name_ok("2x")
                && !bundle_name_ok("")
                && !bundle_name_ok(&"a".repeat(33))
        );
        assert!(
            entry_name_ok("kadu.tasks-get_1")
                && !entry_name_ok("a b")
                && !entry_name_ok(&"a".repeat(65))
        );
        for v in [
            "1.0.0",
            "0.1.0",
            "1.3.0-rc.1",
            "1.0.0-alpha.beta+exp.sha.5114f85",
            "10.20.30",
        ] {
            assert!(semver_ok(v), "{}", v);
        }
        for v in [
            "1.0",
            "01.0.0",
            "1.0.0-",
            "1.0.0-01",
            "1.0.0+",
            "v1.0.0",
            "1.0.0-a..b",
        ] {
            assert!(!semver_ok(v), "{}", v);
        }
        for r in [
            "GET /api/v1/tasks",
            "POST /api/v1/tasks/{id}/run",
            "DELETE /api/v1/webhooks/{webhook_id}",
        ] {
            assert!(route_ok(r), "{}", r);
        }
        for r in [
            "get /api",
            "GET api",
            "GET /",
            "GET /api/v1/tasks?x=1",
            "GET /api//tasks",
            "GET /api/../x",
            "GET /api/{}",
            "GET /api/{1d}",
            "GET  /api",
        ] {
            assert!(!route_ok(r), "{}", r);
        }
    }

    #[test]
    fn manifest_reports_every_problem() {
        let b = Bundle::new("Bad", "1.0").route("GET /x?y").tool(
            Tool::new("a b")
                .input_schema(r#"{"type":"string"}"#)
                .annotations(Annotations {
                    read_only: true,
                    destructive: true,
                    idempotent: false,
                }),
        );
        let errs = b.manifest().unwrap_err();
        let all = errs.join("\n");
        for want in [
            "bundle name",
            "bundle version",
            "routes[0]",
            "tool \"a b\": name",
            "input_schema",
            "both read_only and destructive",
            "access: required",
            "handler: required",
        ] {
            assert!(all.contains(want), "missing {:?} in:\n{}", want, all);
        }
        assert!(Bundle::new("empty", "1.0.0").manifest().unwrap_err()[0].contains("offers nothing"));
    }

    #[test]
    fn manifest_of_a_tool() {
        let b = Bundle::new("t", "1.0.0")
            .description("d")
            .route("GET /api/v1/usage")
            .tool(
                Tool::new("echo")
                    .title("Echo")
                    .input_schema(r#"{"type": "object"}"#)
                    .output_schema(r#"{"type":"object"}"#)
                    .annotations(Annotations::READ_ONLY)
                    .access(Access::new(Role::Member, Scope::Run))
                    .requires_capability("elicitation")
                    .handler(|_| Ok(ToolResult::text("x"))),
            );
        assert_eq!(
            b.manifest().unwrap(),
            r#"{"abi":"kadu/v1","name":"t","version":"1.0.0","description":"d","tools":[{"name":"echo","title":"Echo","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},"access":{"min_role":"member","scope":"run"},"requiresCapabilities":["elicitation"]}],"resources":[],"resourceTemplates":[],"prompts":[],"completions":false,"routes":["GET /api/v1/usage"]}"#
        );
    }
}
