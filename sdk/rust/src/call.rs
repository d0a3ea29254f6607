//! [`Call`]: one invocation as a handler sees it.

use std::cell::RefCell;
use std::rc::Rc;

use crate::abi;
use crate::json::{self, Value};
use crate::result::{ApiError, Error};

/// One invocation: its arguments, the way to the Kadu API, the caller, the
/// client, and on a retry after [`Error::InputRequired`] the client's
/// answers and the state.
///
/// A `Call` lives for one export call. It owns everything it hands out
/// (the parsed invocation, API responses, the caller): nothing refers to
/// host memory, and nothing may be kept for a later invocation, which may
/// be another user's.
pub struct Call {
    arguments: Value,
    state: Option<Value>,
    input_responses: Option<Value>,
    client: Client,
    caller: RefCell<Option<Rc<Caller>>>,
}

impl Call {
    pub(crate) fn new(
        arguments: Value,
        state: Option<Value>,
        input_responses: Option<Value>,
        client: Client,
    ) -> Call {
        Call {
            arguments,
            state,
            input_responses,
            client,
            caller: RefCell::new(None),
        }
    }

    /// The tool's arguments (an object the host validated against the
    /// tool's input schema), or a prompt's; `Null` for other operations.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// Argument `name`, or `None` when absent or `null`.
    pub fn arg(&self, name: &str) -> Option<&Value> {
        self.arguments.get(name).filter(|v| !v.is_null())
    }

    /// Required string argument `name`; a tool error naming it otherwise.
    pub fn str_arg(&self, name: &str) -> Result<&str, Error> {
        self.arg(name)
            .and_then(Value::as_str)
            .ok_or_else(|| Error::Tool(format!("Pass `{}` as a string.", name)))
    }

    /// Optional integer argument `name`: `None` when absent, a tool error
    /// naming it when it is not an integer.
    pub fn int_arg(&self, name: &str) -> Result<Option<i64>, Error> {
        match self.arg(name) {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| Error::Tool(format!("Pass `{}` as an integer.", name))),
        }
    }

    /// Who is calling. Asked from the host once per invocation; the
    /// description of any size is read whole.
    ///
    /// # Panics
    ///
    /// When the host's answer is not the ABI's JSON (the host broke the
    /// contract: a fault is the right end).
    pub fn caller(&self) -> Rc<Caller> {
        if let Some(who) = &*self.caller.borrow() {
            return Rc::clone(who);
        }
        let raw = abi::caller_info();
        let who = json::parse_bytes(&raw)
            .ok()
            .and_then(|v| Caller::from_json(&v))
            .expect("kadu: caller_info is not the ABI's caller JSON");
        let who = Rc::new(who);
        *self.caller.borrow_mut() = Some(Rc::clone(&who));
        who
    }

    /// What the host knows about the client of this request.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Whether the client declared capability `name`, e.g. `"elicitation"`.
    /// Check it before asking for input: a client that did not declare what
    /// a request needs gets -32021 instead, and an era-2025 client declares
    /// nothing the server can see.
    pub fn has_capability(&self, name: &str) -> bool {
        self.client
            .capabilities
            .as_ref()
            .map_or(false, |c| c.get(name).is_some())
    }

    /// Whether this is a retry after the bundle answered input required.
    pub fn is_retry(&self) -> bool {
        self.state.is_some() || self.input_responses.is_some()
    }

    /// The state this bundle returned with its input-required result, on
    /// the retry; `None` on a first call. The host sealed it: the client
    /// could neither read nor change it.
    pub fn state(&self) -> Option<&Value> {
        self.state.as_ref()
    }

    /// The client's response to the input request of `key`, as sent; `None`
    /// when the client did not answer it. It is untrusted input: validate
    /// it.
    pub fn input_response(&self, key: &str) -> Option<&Value> {
        self.input_responses.as_ref()?.get(key)
    }

    /// The client's answer to the elicitation of `key`, or `None` when
    /// there is none. An action other than accept or decline counts as
    /// cancel.
    pub fn elicitation(&self, key: &str) -> Option<Elicited<'_>> {
        let r = self.input_response(key)?;
        Some(match r["action"].as_str() {
            Some("accept") => Elicited::Accept(&r["content"]),
            Some("decline") => Elicited::Decline,
            _ => Elicited::Cancel,
        })
    }

    /// The operator's config value for `key`; see [`config`](crate::config).
    pub fn config(&self, key: &str) -> Option<String> {
        crate::config(key)
    }

    /// Sends one request to the Kadu API as the caller and returns the
    /// response whatever its status; see also [`get`](Call::get) and
    /// [`send`](Call::send), which turn a non-2xx status into an error.
    ///
    /// `method` is GET, POST, PUT, PATCH or DELETE; `path` the full path
    /// with its query, already encoded (see [`path_segment`]); `body` the
    /// JSON body, or empty for none. Writes take `idempotency_key` in the
    /// body. The host answers, in the API's error shape, 403
    /// `route_not_granted` for a route the bundle did not declare or was
    /// not granted, 413 for a body over 1 MiB, and 429
    /// `api_budget_exhausted` past the invocation's budget of calls.
    pub fn api(&self, method: &str, path: &str, body: &[u8]) -> Response {
        let (status, body) = abi::api(method, path, body);
        Response { status, body }
    }

    /// Sends a request with an optional JSON body and returns the parsed
    /// response body (`Null` when empty) for a 2xx status, or
    /// [`Error::Api`], which a tool handler returns with `?`.
    pub fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, Error> {
        let text = body.map(Value::to_string).unwrap_or_default();
        self.api(method, path, text.as_bytes())
            .error_for_status()?
            .json()
    }

    /// `send("GET", path, None)`.
    pub fn get(&self, path: &str) -> Result<Value, Error> {
        self.send("GET", path, None)
    }

    /// `send("POST", path, Some(body))`.
    pub fn post(&self, path: &str, body: &Value) -> Result<Value, Error> {
        self.send("POST", path, Some(body))
    }

    /// `send("PUT", path, Some(body))`.
    pub fn put(&self, path: &str, body: &Value) -> Result<Value, Error> {
        self.send("PUT", path, Some(body))
    }

    /// `send("PATCH", path, Some(body))`.
    pub fn patch(&self, path: &str, body: &Value) -> Result<Value, Error> {
        self.send("PATCH", path, Some(body))
    }

    /// `send("DELETE", path, None)`.
    pub fn delete(&self, path: &str) -> Result<Value, Error> {
        self.send("DELETE", path, None)
    }
}

/// An elicitation's answer (MCP `ElicitResult`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Elicited<'a> {
    /// The person answered; `content` is what they entered (validate it).
    Accept(&'a Value),
    /// The person said no.
    Decline,
    /// The person dismissed the request (or the client sent another action).
    Cancel,
}

/// A Kadu API response. `body` is the guest's own copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body (may be empty).
    pub body: Vec<u8>,
}

impl Response {
    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The response itself for a 2xx status, else [`Error::Api`].
    pub fn error_for_status(self) -> Result<Response, Error> {
        if self.is_success() {
            Ok(self)
        } else {
            Err(Error::Api(ApiError {
                status: self.status,
                body: self.body,
            }))
        }
    }

    /// The body parsed as JSON; `Null` when empty.
    pub fn json(&self) -> Result<Value, Error> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Null);
        }
        Ok(json::parse_bytes(&self.body)?)
    }
}

/// A person's role in their organisation, least to most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Viewer,
    Member,
    Admin,
    Owner,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Member => "member",
            Role::Admin => "admin",
            Role::Owner => "owner",
        }
    }

    /// The role named `s`, or `None`.
    pub fn parse(s: &str) -> Option<Role> {
        [Role::Viewer, Role::Member, Role::Admin, Role::Owner]
            .into_iter()
            .find(|r| r.as_str() == s)
    }
}

/// A Kadu OAuth scope without its `kadu.` prefix. Scopes form a lattice:
/// admin ⊇ write ⊇ read and admin ⊇ run ⊇ read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Read,
    Write,
    Run,
    Admin,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Run => "run",
            Scope::Admin => "admin",
        }
    }
}

/// Who is calling (caller_info, sdk/ABI.md §6). Never a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub org_id: String,
    /// The token's subject (for client credentials, the client).
    pub user_id: String,
    /// The caller's role; a role this SDK does not know reads as `Viewer`,
    /// the least.
    pub role: Role,
    /// The token's scopes, `"kadu.read"` …, closed under the lattice, sorted.
    pub scopes: Vec<String>,
    pub request_id: String,
    /// What the client says it is; `None` when unknown.
    pub client: Option<ClientInfo>,
}

/// The name and version a client reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientInfo {
    pub name: String,
    pub version: String,
}

fn string_of(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

impl Caller {
    /// Whether the caller's token has `scope`.
    pub fn has_scope(&self, scope: Scope) -> bool {
        let want = format!("kadu.{}", scope.as_str());
        self.scopes.contains(&want)
    }

    /// Reads caller_info's JSON; `None` unless it is an object.
    pub fn from_json(v: &Value) -> Option<Caller> {
        v.as_object()?;
        let scopes = v["scopes"].as_array().map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        });
        let client = v["client"].as_object().map(|_| ClientInfo {
            name: string_of(&v["client"]["name"]),
            version: string_of(&v["client"]["version"]),
        });
        Some(Caller {
            org_id: string_of(&v["org_id"]),
            user_id: string_of(&v["user_id"]),
            role: v["role"]
                .as_str()
                .and_then(Role::parse)
                .unwrap_or(Role::Viewer),
            scopes: scopes.unwrap_or_default(),
            request_id: string_of(&v["request_id"]),
            client,
        })
    }

    /// The caller as caller_info's JSON.
    pub fn to_json(&self) -> Value {
        let client = match &self.client {
            Some(c) => crate::json!({"name": (c.name.as_str()), "version": (c.version.as_str())}),
            None => Value::Null,
        };
        crate::json!({
            "org_id": (self.org_id.as_str()),
            "user_id": (self.user_id.as_str()),
            "role": (self.role.as_str()),
            "scopes": (self.scopes.clone()),
            "request_id": (self.request_id.as_str()),
            "client": client,
        })
    }
}

/// What the host knows about the client of this request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Client {
    /// The client's declared capabilities object (era 2026), or `None` when
    /// unknown (era 2025).
    pub capabilities: Option<Value>,
    /// The MCP revision of the request, e.g. "2026-07-28".
    pub protocol_version: String,
}

impl Client {
    pub(crate) fn from_json(v: &Value) -> Client {
        Client {
            capabilities: v["capabilities"]
                .as_object()
                .map(|_| v["capabilities"].clone()),
            protocol_version: string_of(&v["protocol_version"]),
        }
    }
}

/// Percent-encodes `s` as one path segment (or one query value): every
/// byte but the unreserved `A-Z a-z 0-9 - . _ ~` becomes `%XX`, so that
/// `/`, `?`, `#`, `%` and `..` in an id cannot change the route.
///
/// ```
/// assert_eq!(kadu::path_segment("a/b c?"), "a%2Fb%20c%3F");
/// let path = format!("/api/v1/tasks/{}", kadu::path_segment("tsk_1"));
/// assert_eq!(path, "/api/v1/tasks/tsk_1");
/// ```
pub fn path_segment(s: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
    }
    // "." and ".." are unreserved but name other routes as segments.
    match out.as_str() {
        "." => "%2E".to_owned(),
        ".." => "%2E%2E".to_owned(),
        _ => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segment_keeps_only_unreserved() {
        assert_eq!(path_segment("tsk_0193-a.b~c"), "tsk_0193-a.b~c");
        assert_eq!(path_segment("a/b?c#d%e f"), "a%2Fb%3Fc%23d%25e%20f");
        assert_eq!(path_segment("é"), "%C3%A9");
        assert_eq!(path_segment(".."), "%2E%2E");
        assert_eq!(path_segment("."), "%2E");
        assert_eq!(path_segment(""), "");
    }

    #[test]
    fn caller_reads_and_writes_the_abi_json() {
        let text = r#"{"org_id":"org_1","user_id":"user_42","role":"member","scopes":["kadu.read","kadu.run"],"request_id":"req_1","client":{"name":"claude-ai","version":"1.0"}}"#;
        let who = Caller::from_json(&json::parse(text).unwrap()).unwrap();
        assert_eq!(who.role, Role::Member);
        assert!(who.has_scope(Scope::Run));
        assert!(!who.has_scope(Scope::Admin));
        assert_eq!(who.to_json().to_string(), text);
        let anon = Caller::from_json(&json::parse(r#"{"role":"emperor","client":null}"#).unwrap())
            .unwrap();
        assert_eq!(anon.role, Role::Viewer);
        assert_eq!(anon.client, None);
        assert!(Caller::from_json(&Value::Null).is_none());
    }

    #[test]
    fn call_reads_arguments_state_and_answers() {
        let args = crate::json!({"id": "t1", "n": 3, "bad": "x", "nil": null});
        let responses = crate::json!({"a": {"action": "accept", "content": {"name": "Ada"}}, "b": {"action": "decline"}, "c": {"action": "?"}});
        let client = Client::from_json(
            &crate::json!({"capabilities": {"elicitation": {}}, "protocol_version": "2026-07-28"}),
        );
        let c = Call::new(
            args,
            Some(crate::json!({"step": 1})),
            Some(responses),
            client,
        );
        assert_eq!(c.str_arg("id").unwrap(), "t1");
        assert!(matches!(c.str_arg("n"), Err(Error::Tool(_))));
        assert_eq!(c.int_arg("n").unwrap(), Some(3));
        assert_eq!(c.int_arg("nil").unwrap(), None);
        assert!(c.int_arg("bad").is_err());
        assert!(c.is_retry());
        assert_eq!(c.state().unwrap()["step"].as_i64(), Some(1));
        assert!(c.has_capability("elicitation"));
        assert!(!c.has_capability("sampling"));
        match c.elicitation("a") {
            Some(Elicited::Accept(content)) => assert_eq!(content["name"].as_str(), Some("Ada")),
            other => panic!("got {:?}", other),
        }
        assert_eq!(c.elicitation("b"), Some(Elicited::Decline));
        assert_eq!(c.elicitation("c"), Some(Elicited::Cancel));
        assert_eq!(c.elicitation("zzz"), None);
        let era2025 = Call::new(
            Value::Null,
            None,
            None,
            Client::from_json(&crate::json!({"capabilities": null})),
        );
        assert!(!era2025.has_capability("elicitation"));
        assert!(!era2025.is_retry());
    }

    #[test]
    fn response_status_and_body() {
        let ok = Response {
            status: 200,
            body: br#"{"id":"t"}"#.to_vec(),
        };
        assert_eq!(ok.json().unwrap()["id"].as_str(), Some("t"));
        let empty = Response {
            status: 204,
            body: Vec::new(),
        };
        assert!(empty.json().unwrap().is_null());
        let nf = Response {
            status: 404,
            body: b"{}".to_vec(),
        };
        assert!(matches!(
            nf.error_for_status(),
            Err(Error::Api(ApiError { status: 404, .. }))
        ));
        let garbage = Response {
            status: 200,
            body: b"<html>".to_vec(),
        };
        assert!(matches!(garbage.json(), Err(Error::Tool(_))));
    }
}
