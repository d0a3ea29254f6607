//! Prompts, and completions of their arguments and of templates'
//! variables.

use std::collections::BTreeMap;

use crate::bundle::{access_or_error, entry_name_ok, Access};
use crate::call::Call;
use crate::json::Value;
use crate::result::{text_block, Error};

pub(crate) type GetFn = dyn Fn(&mut Call, &BTreeMap<String, String>) -> Result<PromptResult, Error>;

/// A ready-made script the person picks in the client.
pub struct Prompt {
    pub(crate) name: String,
    title: Option<String>,
    description: Option<String>,
    pub(crate) arguments: Vec<PromptArgument>,
    access: Option<Access>,
    pub(crate) get: Option<Box<GetFn>>,
}

/// One argument of a prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptArgument {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

impl Prompt {
    /// A prompt named `name` (`^[a-zA-Z0-9_.-]{1,64}$`, unique across the
    /// server's bundles).
    pub fn new(name: &str) -> Prompt {
        Prompt {
            name: name.to_owned(),
            title: None,
            description: None,
            arguments: Vec::new(),
            access: None,
            get: None,
        }
    }

    pub fn title(mut self, title: &str) -> Prompt {
        self.title = Some(title.to_owned());
        self
    }

    pub fn description(mut self, text: &str) -> Prompt {
        self.description = Some(text.to_owned());
        self
    }

    /// Declares an argument. The SDK answers -32602 for a call that leaves
    /// a required one out (or blank), before `get` runs.
    pub fn argument(mut self, name: &str, description: &str, required: bool) -> Prompt {
        let description = if description.is_empty() {
            None
        } else {
            Some(description.to_owned())
        };
        self.arguments.push(PromptArgument {
            name: name.to_owned(),
            description,
            required,
        });
        self
    }

    pub fn access(mut self, access: Access) -> Prompt {
        self.access = Some(access);
        self
    }

    /// Renders the prompt from the client's arguments. Never put untrusted
    /// data (execution output, file contents) in a message as if it were an
    /// instruction: say where to read it instead.
    pub fn get<F>(mut self, f: F) -> Prompt
    where
        F: Fn(&mut Call, &BTreeMap<String, String>) -> Result<PromptResult, Error> + 'static,
    {
        self.get = Some(Box::new(f));
        self
    }

    pub(crate) fn manifest(&self) -> Result<Value, Vec<String>> {
        let mut errs = Vec::new();
        if !entry_name_ok(&self.name) {
            errs.push("name: want ^[a-zA-Z0-9_.-]{1,64}$".to_owned());
        }
        let mut args = Vec::new();
        for (i, a) in self.arguments.iter().enumerate() {
            if a.name.is_empty() || self.arguments[..i].iter().any(|o| o.name == a.name) {
                errs.push(format!("arguments[{}]: want a unique, non-empty name", i));
            }
            let mut v = crate::json!({"name": (a.name.as_str())});
            if let Some(d) = &a.description {
                v.insert("description", d);
            }
            if a.required {
                v.insert("required", true);
            }
            args.push(v);
        }
        let access = access_or_error(self.access, &mut errs);
        if self.get.is_none() {
            errs.push("get: required".to_owned());
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        let mut v = crate::json!({"name": (self.name.as_str())});
        if let Some(t) = &self.title {
            v.insert("title", t);
        }
        if let Some(d) = &self.description {
            v.insert("description", d);
        }
        v.insert("arguments", args);
        v.insert("access", access);
        Ok(v)
    }
}

/// A rendered prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptResult {
    pub description: Option<String>,
    pub messages: Vec<PromptMessage>,
}

impl PromptResult {
    pub fn new(description: Option<&str>, messages: Vec<PromptMessage>) -> PromptResult {
        PromptResult {
            description: description.map(str::to_owned),
            messages,
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut v = Value::object();
        if let Some(d) = &self.description {
            v.insert("description", d);
        }
        let messages: Vec<Value> = self
            .messages
            .iter()
            .map(|m| crate::json!({"role": (m.role.as_str()), "content": (&m.content)}))
            .collect();
        v.insert("messages", messages);
        v
    }
}

/// One message of a rendered prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptMessage {
    /// "user" or "assistant".
    pub role: String,
    /// An MCP content block.
    pub content: Value,
}

impl PromptMessage {
    /// A user message with text content.
    pub fn user(text: impl Into<String>) -> PromptMessage {
        PromptMessage {
            role: "user".into(),
            content: text_block(text),
        }
    }

    /// An assistant message with text content.
    pub fn assistant(text: impl Into<String>) -> PromptMessage {
        PromptMessage {
            role: "assistant".into(),
            content: text_block(text),
        }
    }
}

/// What is being completed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reference {
    /// An argument of the prompt of this name.
    Prompt(String),
    /// A variable of the resource template of this URI template.
    Resource(String),
    /// A reference type this SDK does not know (the type).
    Other(String),
}

/// A request for suggestions for one argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompleteRequest {
    pub reference: Reference,
    /// The argument's (or variable's) name.
    pub argument: String,
    /// What the person typed so far.
    pub value: String,
    /// The other arguments already chosen (`context.arguments`).
    pub context: BTreeMap<String, String>,
}

impl CompleteRequest {
    pub(crate) fn from_params(p: &Value) -> CompleteRequest {
        let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let r = &p["ref"];
        let reference = match r["type"].as_str() {
            Some("ref/prompt") => Reference::Prompt(s(&r["name"])),
            Some("ref/resource") => Reference::Resource(s(&r["uri"])),
            other => Reference::Other(other.unwrap_or_default().to_owned()),
        };
        let mut context = BTreeMap::new();
        for (k, v) in p["context"]["arguments"].as_object().into_iter().flatten() {
            if let Some(v) = v.as_str() {
                context.insert(k.clone(), v.to_owned());
            }
        }
        CompleteRequest {
            reference,
            argument: s(&p["argument"]["name"]),
            value: s(&p["argument"]["value"]),
            context,
        }
    }
}

/// The most values a completion returns; more are cut and `has_more` set.
pub const MAX_COMPLETION_VALUES: usize = 100;

/// Suggestions, best first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompleteResult {
    pub values: Vec<String>,
    /// All matches, when known.
    pub total: Option<u64>,
    pub has_more: bool,
}

impl CompleteResult {
    /// No suggestions.
    pub fn none() -> CompleteResult {
        CompleteResult::default()
    }

    /// The candidates that start with `prefix`, in order.
    pub fn matching<S: AsRef<str>>(candidates: &[S], prefix: &str) -> CompleteResult {
        let values = candidates
            .iter()
            .map(AsRef::as_ref)
            .filter(|c| c.starts_with(prefix))
            .map(str::to_owned)
            .collect();
        CompleteResult {
            values,
            total: None,
            has_more: false,
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut values = self.values.clone();
        let mut has_more = self.has_more;
        if values.len() > MAX_COMPLETION_VALUES {
            values.truncate(MAX_COMPLETION_VALUES);
            has_more = true;
        }
        let mut c = crate::json!({"values": values});
        if let Some(t) = self.total {
            c.insert("total", t);
        }
        if has_more {
            c.insert("hasMore", true);
        }
        crate::json!({"completion": c})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_matches_and_cuts() {
        let r = CompleteResult::matching(&["alice", "albert", "bob"], "al");
        assert_eq!(
            r.to_json().to_string(),
            r#"{"completion":{"values":["alice","albert"]}}"#
        );
        let many: Vec<String> = (0..150).map(|i| format!("v{}", i)).collect();
        let v = CompleteResult::matching(&many, "v").to_json();
        assert_eq!(v["completion"]["values"].as_array().unwrap().len(), 100);
        assert_eq!(v["completion"]["hasMore"], Value::Bool(true));
        assert_eq!(
            CompleteResult::none().to_json().to_string(),
            r#"{"completion":{"values":[]}}"#
        );
    }

    #[test]
    fn complete_request_from_params() {
        let p = crate::json!({"ref": {"type": "ref/resource", "uri": "x://i/{id}"}, "argument": {"name": "id", "value": "it"}, "context": {"arguments": {"a": "b", "n": 1}}});
        let r = CompleteRequest::from_params(&p);
        assert_eq!(r.reference, Reference::Resource("x://i/{id}".into()));
        assert_eq!((r.argument.as_str(), r.value.as_str()), ("id", "it"));
        assert_eq!(r.context.len(), 1);
    }
}
