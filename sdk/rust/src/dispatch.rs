//! The bodies of the exports kadu_describe and kadu_handle: read the
//! input, run the right handler, write the output, return the status
//! (sdk/ABI.md §4, §5, §7–§9).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::abi;
use crate::bundle::Bundle;
use crate::call::{Call, Client};
use crate::json::{self, Value};
use crate::log::{install_panic_hook, log, Level};
use crate::prompt::CompleteRequest;
use crate::result::{
    input_required_json, ApiError, Error, ToolResult, INTERNAL_ERROR, INVALID_PARAMS,
};

const STATUS_OK: i32 = 0;
const STATUS_PROTOCOL: i32 = 1;
const STATUS_FAULT: i32 = 2;

/// A checked bundle and its manifest, built once per instance.
struct Server {
    manifest: String,
    bundle: Bundle,
}

thread_local! {
    // A wasm32-wasi instance has one thread and is never entered
    // concurrently: this is a per-instance global. It holds only the bundle
    // (code and configuration), never anything about a caller.
    static SERVER: RefCell<Option<Rc<Result<Server, String>>>> = const { RefCell::new(None) };
}

/// The bundle `build` returns, checked; built on the first export call.
fn server(build: fn() -> Bundle) -> Rc<Result<Server, String>> {
    SERVER.with(|slot| {
        if let Some(s) = &*slot.borrow() {
            return Rc::clone(s);
        }
        let bundle = build();
        let s = Rc::new(match bundle.manifest() {
            Ok(manifest) => Ok(Server { manifest, bundle }),
            Err(errs) => Err(format!(
                "the bundle breaks sdk/ABI.md §10, so the host refuses it:\n  {}",
                errs.join("\n  ")
            )),
        });
        *slot.borrow_mut() = Some(Rc::clone(&s));
        s
    })
}

/// What an operation answers.
enum Answer {
    /// Status 0 with this JSON.
    Result(String),
    /// Status 1: a JSON-RPC error.
    Protocol(i64, String, Option<Value>),
    /// A bug in the bundle: logged, and the invocation faults.
    Fault(String),
}

fn fault(msg: &str) -> i32 {
    log(Level::Error, &format!("kadu: {}", msg));
    STATUS_FAULT
}

fn write(out: &str, status: i32) -> i32 {
    if abi::output(out.as_bytes()) {
        return status;
    }
    fault(&format!(
        "the output of {} bytes is over this bundle's output cap; return less (e.g. ask for a smaller page)",
        out.len()
    ))
}

fn finish(answer: Answer) -> i32 {
    match answer {
        Answer::Result(out) => write(&out, STATUS_OK),
        Answer::Protocol(code, message, data) => {
            let mut v = crate::json!({"code": code, "message": message});
            if let Some(d) = data {
                v.insert("data", d);
            }
            write(&v.to_string(), STATUS_PROTOCOL)
        }
        Answer::Fault(msg) => fault(&msg),
    }
}

fn read_input(in_len: i32) -> Option<Vec<u8>> {
    let len = usize::try_from(in_len).ok()?;
    abi::input(len)
}

/// kadu_describe: the manifest.
pub fn describe(in_len: i32, build: fn() -> Bundle) -> i32 {
    install_panic_hook();
    let srv = server(build);
    let srv = match &*srv {
        Ok(s) => s,
        Err(e) => return fault(e),
    };
    if read_input(in_len).is_none() {
        return fault(&format!(
            "kadu_describe: input_read failed for {} bytes",
            in_len
        ));
    }
    write(&srv.manifest, STATUS_OK)
}

/// kadu_handle: one invocation.
pub fn handle(in_len: i32, build: fn() -> Bundle) -> i32 {
    install_panic_hook();
    let srv = server(build);
    let srv = match &*srv {
        Ok(s) => s,
        Err(e) => return fault(e),
    };
    let input = match read_input(in_len) {
        Some(b) => b,
        None => {
            return fault(&format!(
                "kadu_handle: input_read failed for {} bytes",
                in_len
            ))
        }
    };
    let mut inv = match json::parse_bytes(&input) {
        Ok(v) if v["op"].as_str().is_some() => v,
        Ok(_) => return finish(invalid("The invocation has no op: it is not kadu/v1.")),
        Err(e) => {
            return finish(invalid(&format!(
                "The invocation is not JSON this bundle can read ({}).",
                e
            )))
        }
    };
    drop(input);
    let op = inv["op"].as_str().unwrap_or_default().to_owned();
    let mut params = inv.remove("params").unwrap_or(Value::Null);
    let state = inv.remove("state");
    let responses = inv.remove("input_responses").filter(|v| !v.is_null());
    let client = Client::from_json(&inv["client"]);
    let answer = match op.as_str() {
        "tools/call" => {
            let args = arguments(&mut params);
            let name = params["name"].as_str().unwrap_or_default();
            call_tool(srv, name, Call::new(args, state, responses, client))
        }
        "resources/read" => {
            let uri = params["uri"].as_str().unwrap_or_default();
            read_resource(srv, uri, Call::new(Value::Null, state, responses, client))
        }
        "prompts/get" => {
            let args = arguments(&mut params);
            let name = params["name"].as_str().unwrap_or_default();
            get_prompt(srv, name, Call::new(args, state, responses, client))
        }
        "completion/complete" => complete(
            srv,
            &params,
            Call::new(Value::Null, state, responses, client),
        ),
        other => invalid(&format!("This bundle does not serve op {:?}.", other)),
    };
    finish(answer)
}

/// Takes `arguments` out of params; absent or null is `{}`.
fn arguments(params: &mut Value) -> Value {
    match params.remove("arguments") {
        None | Some(Value::Null) => Value::object(),
        Some(a) => a,
    }
}

fn invalid(message: &str) -> Answer {
    Answer::Protocol(INVALID_PARAMS, message.to_owned(), None)
}

fn input_required(
    what: &str,
    requests: &[(String, crate::result::InputRequest)],
    state: &Value,
) -> Answer {
    match input_required_json(requests, state) {
        Ok(out) => Answer::Result(out),
        Err(e) => Answer::Fault(format!("{}: {}", what, e)),
    }
}

fn call_tool(srv: &Server, name: &str, mut call: Call) -> Answer {
    let tool = match srv.bundle.tools.iter().find(|t| t.name == name) {
        Some(t) => t,
        None => return invalid(&format!("Unknown tool: {}", name)),
    };
    let handler = match &tool.handler {
        Some(h) => h,
        None => return Answer::Fault(format!("tool {}: no handler", name)),
    };
    let res = match handler(&mut call) {
        Ok(res) => res,
        Err(Error::Tool(text)) => ToolResult::error(text),
        Err(Error::Api(e)) => ToolResult::error(e.text()),
        Err(Error::NotFound) => ToolResult::error("Not found."),
        Err(Error::Protocol {
            code,
            message,
            data,
        }) => return Answer::Protocol(code, message, data),
        Err(Error::InputRequired { requests, state }) => {
            return input_required(&format!("tool {}", name), &requests, &state)
        }
    };
    if !res.is_error {
        match &res.structured_content {
            Some(v) if v.as_object().is_none() => {
                return Answer::Fault(format!("tool {}: structured_content is a {}, not an object", name, v.kind()))
            }
            None if tool.has_output_schema() => {
                return Answer::Fault(format!(
                    "tool {}: it declares an output schema, so a successful result needs structured_content (use ToolResult::json)",
                    name
                ))
            }
            _ => {}
        }
    }
    Answer::Result(res.to_json().to_string())
}

/// What a resource, prompt or completion handler's error answers: they have
/// no isError result, so what a tool reports to the model becomes a
/// JSON-RPC error.
fn handler_error(what: &str, err: Error) -> Answer {
    match err {
        Error::Tool(text) => Answer::Protocol(INVALID_PARAMS, text, None),
        Error::Api(e) if e.status < 500 => {
            let detail = e.detail();
            let message = if detail.is_empty() {
                format!("The Kadu API refused the request (HTTP {}).", e.status)
            } else {
                detail
            };
            let body = json::parse_bytes(&e.body).unwrap_or_else(|_| Value::from(e.text()));
            Answer::Protocol(
                INVALID_PARAMS,
                message,
                Some(crate::json!({"status": (e.status), "error": body})),
            )
        }
        Error::Api(e) => Answer::Protocol(INTERNAL_ERROR, e.text(), None),
        Error::Protocol {
            code,
            message,
            data,
        } => Answer::Protocol(code, message, data),
        Error::InputRequired { requests, state } => input_required(what, &requests, &state),
        Error::NotFound => Answer::Protocol(INVALID_PARAMS, "Not found.".into(), None),
    }
}

fn read_resource(srv: &Server, uri: &str, mut call: Call) -> Answer {
    let not_found = || {
        Answer::Protocol(
            INVALID_PARAMS,
            "Resource not found".into(),
            Some(crate::json!({"uri": uri})),
        )
    };
    let (result, mime) = if let Some(r) = srv.bundle.resources.iter().find(|r| r.uri == uri) {
        match &r.read {
            Some(read) => (read(&mut call), r.mime_type.as_deref()),
            None => return Answer::Fault(format!("resource {}: no read", uri)),
        }
    } else {
        let found = srv
            .bundle
            .templates
            .iter()
            .find_map(|t| t.matches(uri).map(|vars| (t, vars)));
        match found {
            Some((t, vars)) => match &t.read {
                Some(read) => (read(&mut call, uri, &vars), t.mime_type.as_deref()),
                None => return Answer::Fault(format!("template {}: no read", t.uri_template)),
            },
            None => return not_found(),
        }
    };
    match result {
        Ok(contents) => {
            let list: Vec<Value> = contents.iter().map(|c| c.to_json(uri, mime)).collect();
            Answer::Result(crate::json!({"contents": list}).to_string())
        }
        Err(Error::NotFound) | Err(Error::Api(ApiError { status: 404, .. })) => not_found(),
        Err(e) => handler_error(&format!("resource {}", uri), e),
    }
}

fn get_prompt(srv: &Server, name: &str, mut call: Call) -> Answer {
    let prompt = match srv.bundle.prompts.iter().find(|p| p.name == name) {
        Some(p) => p,
        None => return invalid(&format!("Unknown prompt: {}", name)),
    };
    let mut args = BTreeMap::new();
    match call.arguments().as_object() {
        Some(members) => {
            for (k, v) in members {
                match v.as_str() {
                    Some(s) => {
                        args.insert(k.clone(), s.to_owned());
                    }
                    None => return invalid("Prompt arguments must be an object of strings."),
                }
            }
        }
        None => return invalid("Prompt arguments must be an object of strings."),
    }
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .filter(|a| a.required && args.get(&a.name).map_or(true, |v| v.trim().is_empty()))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return invalid(&format!(
            "Missing required argument: {}",
            missing.join(", ")
        ));
    }
    let get = match &prompt.get {
        Some(g) => g,
        None => return Answer::Fault(format!("prompt {}: no get", name)),
    };
    match get(&mut call, &args) {
        Ok(r) => Answer::Result(r.to_json().to_string()),
        Err(e) => handler_error(&format!("prompt {}", name), e),
    }
}

fn complete(srv: &Server, params: &Value, mut call: Call) -> Answer {
    let completer = match &srv.bundle.completer {
        Some(c) => c,
        None => return invalid("This bundle offers no completions."),
    };
    let req = CompleteRequest::from_params(params);
    match completer(&mut call, &req) {
        Ok(r) => Answer::Result(r.to_json().to_string()),
        Err(e) => handler_error("completion", e),
    }
}
