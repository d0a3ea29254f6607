//! What handlers return: [`ToolResult`] on success, [`Error`] for the
//! other answers (sdk/ABI.md §5 tiers, §8 results, §9 input required).

use std::fmt;

use crate::json::{self, Value};

/// A tool's result (an MCP `CallToolResult`).
///
/// A tool that declares an output schema must return `structured_content`
/// (an object) on success; [`ToolResult::json`] sets it and the same JSON
/// as text, for clients that ignore it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    /// MCP content blocks, e.g. `{"type":"text","text":"…"}`.
    pub content: Vec<Value>,
    /// `structuredContent`: a JSON object, or `None`.
    pub structured_content: Option<Value>,
    /// Marks a result the model should read as a failure.
    pub is_error: bool,
}

impl ToolResult {
    /// One text content block.
    pub fn text(text: impl Into<String>) -> ToolResult {
        ToolResult {
            content: vec![text_block(text)],
            structured_content: None,
            is_error: false,
        }
    }

    /// `value` as structured content, and its JSON as the text. A value
    /// that is not an object is sent as text only (structured content
    /// must be an object).
    pub fn json(value: Value) -> ToolResult {
        let text = value.to_string();
        let structured_content = if value.as_object().is_some() {
            Some(value)
        } else {
            None
        };
        ToolResult {
            content: vec![text_block(text)],
            structured_content,
            is_error: false,
        }
    }

    /// An `isError` result with one text: say what happened and what to do
    /// next. The same as returning [`Error::Tool`].
    pub fn error(text: impl Into<String>) -> ToolResult {
        ToolResult {
            content: vec![text_block(text)],
            structured_content: None,
            is_error: true,
        }
    }

    /// Adds a text content block.
    pub fn with_text(mut self, text: impl Into<String>) -> ToolResult {
        self.content.push(text_block(text));
        self
    }

    /// Adds any MCP content block (image, resource_link, …).
    pub fn with_content(mut self, block: Value) -> ToolResult {
        self.content.push(block);
        self
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut v = crate::json!({"content": (self.content.clone())});
        if let Some(s) = &self.structured_content {
            v.insert("structuredContent", s);
        }
        if self.is_error {
            v.insert("isError", true);
        }
        v
    }
}

/// An MCP text content block: `{"type":"text","text":…}`.
pub fn text_block(text: impl Into<String>) -> Value {
    crate::json!({"type": "text", "text": (text.into())})
}

/// Everything a handler answers other than its result. Returned with `?`
/// from a handler, each becomes the answer of its tier:
///
/// | Variant | A tool answers | A resource, prompt or completion answers |
/// |---|---|---|
/// | `Tool` | an `isError` result with the text | JSON-RPC -32602 with the text |
/// | `Api`, 4xx | `isError`, the API's error body verbatim | -32602 (a resource's 404: "Resource not found") |
/// | `Api`, 5xx | `isError`, "try again" with the request id | -32603, the same text |
/// | `Protocol` | a JSON-RPC error (status 1) | the same |
/// | `InputRequired` | an input-required result (§9) | the same |
/// | `NotFound` | `isError` "Not found." | -32602 "Resource not found" with the URI |
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// A failure the model reads and can act on (tier 1).
    Tool(String),
    /// The Kadu API answered other than 2xx.
    Api(ApiError),
    /// The request cannot be served at all (tier 2, status 1). The host
    /// passes `code` through only when it is -32602, -32603 or in -32099 …
    /// -32000; any other becomes -32603.
    Protocol {
        code: i64,
        message: String,
        data: Option<Value>,
    },
    /// Ask the client first; the call comes back with the answers and
    /// `state` (see [`Call::state`](crate::Call::state)).
    InputRequired {
        requests: Vec<(String, InputRequest)>,
        state: Value,
    },
    /// What a resource (template) names does not exist for this caller.
    NotFound,
}

/// JSON-RPC "Invalid params": the request names something that does not
/// exist or is malformed.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC "Internal error": this bundle cannot answer.
pub const INTERNAL_ERROR: i64 = -32603;

impl Error {
    /// A tool error (tier 1): `Error::Tool(text)`.
    pub fn tool(text: impl Into<String>) -> Error {
        Error::Tool(text.into())
    }

    /// A protocol error (tier 2) without data.
    pub fn protocol(code: i64, message: impl Into<String>) -> Error {
        Error::Protocol {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// A -32602 protocol error.
    pub fn invalid_params(message: impl Into<String>) -> Error {
        Error::protocol(INVALID_PARAMS, message)
    }

    /// Sets the data of a protocol error; other variants are unchanged.
    pub fn with_data(mut self, value: Value) -> Error {
        if let Error::Protocol { data, .. } = &mut self {
            *data = Some(value);
        }
        self
    }

    /// Asks the client for input first (sdk/ABI.md §9). `requests` maps
    /// keys (1–64 of `[A-Za-z0-9_.-]`) to requests; `state` (at most 16 KiB
    /// as JSON) comes back unchanged on the retry, sealed by the host so
    /// that the client can neither read nor change it. Check
    /// [`Call::has_capability`](crate::Call::has_capability) first: a client
    /// that did not declare what a request needs gets -32021 instead.
    pub fn input_required<K: Into<String>>(
        requests: Vec<(K, InputRequest)>,
        state: Value,
    ) -> Error {
        Error::InputRequired {
            requests: requests.into_iter().map(|(k, r)| (k.into(), r)).collect(),
            state,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Tool(t) => f.write_str(t),
            Error::Api(e) => e.fmt(f),
            Error::Protocol { code, message, .. } => {
                write!(f, "JSON-RPC error {}: {}", code, message)
            }
            Error::InputRequired { requests, .. } => {
                let keys: Vec<&str> = requests.iter().map(|(k, _)| k.as_str()).collect();
                write!(f, "input required: {}", keys.join(", "))
            }
            Error::NotFound => f.write_str("not found"),
        }
    }
}

impl std::error::Error for Error {}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Error {
        Error::Api(e)
    }
}

/// A JSON text the bundle could not read (an API response, state) is a
/// tool error naming the problem.
impl From<json::ParseError> for Error {
    fn from(e: json::ParseError) -> Error {
        Error::Tool(format!("Kadu answered something this tool cannot read ({}). Try again; if it persists, report it.", e))
    }
}

/// A Kadu API answer other than 2xx.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status, e.g. 404.
    pub status: u16,
    /// The API's error body: `{"status":…,"errors":[{"code","title","detail","param","hint"}],"request_id":…}`.
    pub body: Vec<u8>,
}

impl ApiError {
    fn parsed(&self) -> Value {
        json::parse_bytes(&self.body).unwrap_or(Value::Null)
    }

    /// The code of the body's first error, e.g. `"not_found"`, or "".
    pub fn code(&self) -> String {
        self.parsed()["errors"][0]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The detail of the body's first error, or "".
    pub fn detail(&self) -> String {
        self.parsed()["errors"][0]["detail"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The body's `request_id`, or "".
    pub fn request_id(&self) -> String {
        self.parsed()["request_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// What the model reads: for a 4xx, the API's error body as it is (its
    /// `hint` is written for a model); for a 5xx, that nothing says the
    /// request was wrong and how to retry safely.
    pub fn text(&self) -> String {
        if self.status >= 500 {
            let id = self.request_id();
            let at = if id.is_empty() {
                String::new()
            } else {
                format!(", request_id {}", id)
            };
            return format!(
                "Kadu could not complete this request (HTTP {}{}). Nothing says the request was wrong: try again in a moment. For a write, retry with the same idempotency_key so that it is not done twice.",
                self.status, at
            );
        }
        let body = std::str::from_utf8(&self.body).unwrap_or("").trim();
        if body.is_empty() || json::parse(body).is_err() {
            return format!("The Kadu API refused the request (HTTP {}).", self.status);
        }
        body.to_owned()
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code().as_str() {
            "" => write!(f, "kadu api: HTTP {}", self.status),
            code => write!(
                f,
                "kadu api: HTTP {} {}: {}",
                self.status,
                code,
                self.detail()
            ),
        }
    }
}

impl std::error::Error for ApiError {}

/// Methods of an input request.
pub const METHOD_ELICIT: &str = "elicitation/create";
pub const METHOD_SAMPLE: &str = "sampling/createMessage";
pub const METHOD_LIST_ROOTS: &str = "roots/list";

/// One request to the client: an MCP method and its params.
#[derive(Clone, Debug, PartialEq)]
pub struct InputRequest {
    pub method: String,
    pub params: Value,
}

impl InputRequest {
    /// A form elicitation: `message` for the person and the JSON Schema of
    /// the answer (a flat object of primitive properties, as MCP requires).
    pub fn elicit(message: impl Into<String>, requested_schema: Value) -> InputRequest {
        InputRequest {
            method: METHOD_ELICIT.to_owned(),
            params: crate::json!({"mode": "form", "message": (message.into()), "requestedSchema": requested_schema}),
        }
    }

    /// A sampling request with the params of MCP `sampling/createMessage`.
    pub fn sample(params: Value) -> InputRequest {
        InputRequest {
            method: METHOD_SAMPLE.to_owned(),
            params,
        }
    }

    /// A `roots/list` request.
    pub fn list_roots() -> InputRequest {
        InputRequest {
            method: METHOD_LIST_ROOTS.to_owned(),
            params: Value::object(),
        }
    }
}

/// The most bytes of state an input-required result may carry.
pub const MAX_STATE_BYTES: usize = 16 << 10;

/// The input-required result's JSON, or why the bundle's request is
/// wrong (a bug: the invocation faults).
pub(crate) fn input_required_json(
    requests: &[(String, InputRequest)],
    state: &Value,
) -> Result<String, String> {
    if requests.is_empty() {
        return Err("input required with no requests".into());
    }
    let mut reqs = Value::object();
    for (key, r) in requests {
        let key_ok = !key.is_empty()
            && key.len() <= 64
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-');
        if !key_ok {
            return Err(format!(
                "input request key {:?}: want 1-64 of [A-Za-z0-9_.-]",
                key
            ));
        }
        if ![METHOD_ELICIT, METHOD_SAMPLE, METHOD_LIST_ROOTS].contains(&r.method.as_str()) {
            return Err(format!(
                "input request {:?}: method {:?}: want {}, {} or {}",
                key, r.method, METHOD_ELICIT, METHOD_SAMPLE, METHOD_LIST_ROOTS
            ));
        }
        let params = if r.params.is_null() {
            Value::object()
        } else {
            r.params.clone()
        };
        reqs.insert(
            key.as_str(),
            crate::json!({"method": (r.method.as_str()), "params": params}),
        );
    }
    let state_text = state.to_string();
    if state_text.len() > MAX_STATE_BYTES {
        return Err(format!(
            "state is {} bytes; the most is {}",
            state_text.len(),
            MAX_STATE_BYTES
        ));
    }
    let mut out = String::from(r#"{"resultType":"input_required","inputRequests":"#);
    reqs.write_to(&mut out);
    out.push_str(r#","state":"#);
    out.push_str(&state_text);
    out.push('}');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(status: u16, body: &str) -> ApiError {
        ApiError {
            status,
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn api_error_text_by_status() {
        let body = r#"{"status":404,"errors":[{"code":"not_found","detail":"No task tsk_1.","hint":"List tasks."}],"request_id":"req_9"}"#;
        assert_eq!(
            api(404, &format!(" {}\n", body)).text(),
            body,
            "4xx: the body verbatim"
        );
        assert_eq!(api(404, body).code(), "not_found");
        assert_eq!(
            api(422, "").text(),
            "The Kadu API refused the request (HTTP 422)."
        );
        assert_eq!(
            api(400, "<html>").text(),
            "The Kadu API refused the request (HTTP 400)."
        );
        assert_eq!(
            api(503, r#"{"request_id":"req_7"}"#).text(),
            "Kadu could not complete this request (HTTP 503, request_id req_7). Nothing says the request was wrong: try again in a moment. For a write, retry with the same idempotency_key so that it is not done twice."
        );
        assert!(api(500, "")
            .text()
            .starts_with("Kadu could not complete this request (HTTP 500). Nothing"));
    }

    #[test]
    fn input_required_checks_and_encodes() {
        let ask = InputRequest::elicit("Name?", crate::json!({"type": "object"}));
        let out = input_required_json(&[("name".into(), ask.clone())], &crate::json!({"step": 1}))
            .unwrap();
        assert_eq!(
            out,
            r#"{"resultType":"input_required","inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object"}}}},"state":{"step":1}}"#
        );
        assert!(input_required_json(&[], &Value::Null).is_err());
        assert!(input_required_json(&[("bad key".into(), ask.clone())], &Value::Null).is_err());
        let big = Value::from("x".repeat(MAX_STATE_BYTES));
        assert!(input_required_json(&[("k".into(), ask)], &big)
            .unwrap_err()
            .contains("state"));
        let roots = input_required_json(
            &[(
                "r".into(),
                InputRequest {
                    method: METHOD_LIST_ROOTS.into(),
                    params: Value::Null,
                },
            )],
            &Value::Null,
        )
        .unwrap();
        assert!(roots.contains(r#""params":{}"#));
    }
}
