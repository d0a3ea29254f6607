//! Resources at fixed URIs and resource templates (RFC 6570 level 1).

use std::collections::BTreeMap;

use crate::bundle::{access_or_error, Access};
use crate::call::Call;
use crate::json::Value;
use crate::result::Error;

pub(crate) type ReadFn = dyn Fn(&mut Call) -> Result<Vec<ResourceContents>, Error>;
pub(crate) type ReadTemplateFn =
    dyn Fn(&mut Call, &str, &BTreeMap<String, String>) -> Result<Vec<ResourceContents>, Error>;

/// One text content of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceContents {
    /// `None`: the URI that was read.
    pub uri: Option<String>,
    /// `None`: the resource's or template's MIME type.
    pub mime_type: Option<String>,
    pub text: String,
}

impl ResourceContents {
    /// Text at the URI that was read, with the resource's MIME type.
    pub fn text(text: impl Into<String>) -> ResourceContents {
        ResourceContents {
            uri: None,
            mime_type: None,
            text: text.into(),
        }
    }

    pub(crate) fn to_json(&self, uri: &str, mime: Option<&str>) -> Value {
        let mut v = crate::json!({"uri": (self.uri.as_deref().unwrap_or(uri))});
        if let Some(m) = self.mime_type.as_deref().or(mime) {
            v.insert("mimeType", m);
        }
        v.insert("text", self.text.as_str());
        v
    }
}

/// A document at a fixed URI, e.g. `kobana://kadu/usage`.
pub struct Resource {
    pub(crate) uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    pub(crate) mime_type: Option<String>,
    access: Option<Access>,
    pub(crate) read: Option<Box<ReadFn>>,
}

impl Resource {
    /// A resource at absolute `uri` (unique across the server's bundles),
    /// called `name`.
    pub fn new(uri: &str, name: &str) -> Resource {
        Resource {
            uri: uri.to_owned(),
            name: name.to_owned(),
            title: None,
            description: None,
            mime_type: None,
            access: None,
            read: None,
        }
    }

    pub fn title(mut self, title: &str) -> Resource {
        self.title = Some(title.to_owned());
        self
    }

    pub fn description(mut self, text: &str) -> Resource {
        self.description = Some(text.to_owned());
        self
    }

    /// E.g. "application/json"; the default of each content's MIME type.
    pub fn mime_type(mut self, mime: &str) -> Resource {
        self.mime_type = Some(mime.to_owned());
        self
    }

    pub fn access(mut self, access: Access) -> Resource {
        self.access = Some(access);
        self
    }

    /// Reads the document.
    pub fn read<F>(mut self, f: F) -> Resource
    where
        F: Fn(&mut Call) -> Result<Vec<ResourceContents>, Error> + 'static,
    {
        self.read = Some(Box::new(f));
        self
    }

    pub(crate) fn manifest(&self) -> Result<Value, Vec<String>> {
        let mut errs = Vec::new();
        if !absolute_uri(&self.uri) {
            errs.push("uri: want an absolute URI".to_owned());
        }
        if self.name.is_empty() {
            errs.push("name: required".to_owned());
        }
        let access = access_or_error(self.access, &mut errs);
        if self.read.is_none() {
            errs.push("read: required".to_owned());
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        let mut v = crate::json!({"uri": (self.uri.as_str()), "name": (self.name.as_str())});
        describe(&mut v, &self.title, &self.description, &self.mime_type);
        v.insert("access", access);
        Ok(v)
    }
}

fn describe(
    v: &mut Value,
    title: &Option<String>,
    description: &Option<String>,
    mime: &Option<String>,
) {
    if let Some(t) = title {
        v.insert("title", t);
    }
    if let Some(d) = description {
        v.insert("description", d);
    }
    if let Some(m) = mime {
        v.insert("mimeType", m);
    }
}

/// A family of documents named by a URI template, e.g.
/// `kobana://kadu/tasks/{id}`: each `{name}` matches one or more
/// characters other than `/`, `?` and `#`, and two expressions need a
/// literal between them.
pub struct ResourceTemplate {
    pub(crate) uri_template: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    pub(crate) mime_type: Option<String>,
    access: Option<Access>,
    pub(crate) read: Option<Box<ReadTemplateFn>>,
    parts: Result<Vec<Part>, String>,
}

impl ResourceTemplate {
    pub fn new(uri_template: &str, name: &str) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: uri_template.to_owned(),
            name: name.to_owned(),
            title: None,
            description: None,
            mime_type: None,
            access: None,
            read: None,
            parts: compile(uri_template),
        }
    }

    pub fn title(mut self, title: &str) -> ResourceTemplate {
        self.title = Some(title.to_owned());
        self
    }

    pub fn description(mut self, text: &str) -> ResourceTemplate {
        self.description = Some(text.to_owned());
        self
    }

    pub fn mime_type(mut self, mime: &str) -> ResourceTemplate {
        self.mime_type = Some(mime.to_owned());
        self
    }

    pub fn access(mut self, access: Access) -> ResourceTemplate {
        self.access = Some(access);
        self
    }

    /// Reads the document at `uri`, whose variables (percent-decoded) are
    /// in `vars`. Return [`Error::NotFound`] (or the API's 404) when it
    /// does not exist for this caller.
    pub fn read<F>(mut self, f: F) -> ResourceTemplate
    where
        F: Fn(&mut Call, &str, &BTreeMap<String, String>) -> Result<Vec<ResourceContents>, Error>
            + 'static,
    {
        self.read = Some(Box::new(f));
        self
    }

    /// The variables of `uri` when it matches the template.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let parts = self.parts.as_ref().ok()?;
        let mut vars = Vec::new();
        let mut budget = MATCH_BUDGET;
        if !match_parts(parts, uri, &mut vars, &mut budget) {
            return None;
        }
        let mut out = BTreeMap::new();
        for (name, raw) in vars {
            out.insert(name.to_owned(), percent_decode(raw)?);
        }
        Some(out)
    }

    pub(crate) fn manifest(&self) -> Result<Value, Vec<String>> {
        let mut errs = Vec::new();
        if let Err(e) = &self.parts {
            errs.push(format!("uri_template: {}", e));
        }
        if self.name.is_empty() {
            errs.push("name: required".to_owned());
        }
        let access = access_or_error(self.access, &mut errs);
        if self.read.is_none() {
            errs.push("read: required".to_owned());
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        let mut v = crate::json!({"uriTemplate": (self.uri_template.as_str()), "name": (self.name.as_str())});
        describe(&mut v, &self.title, &self.description, &self.mime_type);
        v.insert("access", access);
        Ok(v)
    }
}

/// `scheme:` then something: what the host calls an absolute URI.
fn absolute_uri(s: &str) -> bool {
    match s.split_once(':') {
        Some((scheme, rest)) => {
            let b = scheme.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphabetic()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
                && !rest.is_empty()
        }
        None => false,
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Part {
    Lit(String),
    Var(String),
}

/// Splits a level-1 template into literals and variables.
fn compile(t: &str) -> Result<Vec<Part>, String> {
    if !t.contains("://") || !absolute_uri(t) {
        return Err("want an absolute URI template (scheme://…)".into());
    }
    let mut parts = Vec::new();
    let mut rest = t;
    while let Some(open) = rest.find('{') {
        let lit = &rest[..open];
        if lit.contains('}') {
            return Err("unbalanced '}'".into());
        }
        if !lit.is_empty() {
            parts.push(Part::Lit(lit.to_owned()));
        } else if matches!(parts.last(), Some(Part::Var(_))) {
            return Err("two expressions need a literal between them".into());
        }
        let close = rest[open..].find('}').ok_or("unbalanced '{'")? + open;
        let name = &rest[open + 1..close];
        if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
            return Err(format!(
                "{{{}}}: only {{name}} expressions (RFC 6570 level 1, [A-Za-z0-9_]) are supported",
                name
            ));
        }
        parts.push(Part::Var(name.to_owned()));
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return Err("unbalanced '}'".into());
    }
    if !rest.is_empty() {
        parts.push(Part::Lit(rest.to_owned()));
    }
    if !parts.iter().any(|p| matches!(p, Part::Var(_))) {
        return Err("has no {name}; use a Resource for a fixed URI".into());
    }
    Ok(parts)
}

/// Bounds the backtracking of a match, so that no URI can make it slow.
const MATCH_BUDGET: u32 = 100_000;

/// Matches `s` against `parts`, a variable taking the longest run it can
/// (like a regular expression's greedy `[^/?#]+`).
fn match_parts<'p, 's>(
    parts: &'p [Part],
    s: &'s str,
    vars: &mut Vec<(&'p str, &'s str)>,
    budget: &mut u32,
) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    match parts.split_first() {
        None => s.is_empty(),
        Some((Part::Lit(lit), rest)) => {
            s.starts_with(lit.as_str()) && match_parts(rest, &s[lit.len()..], vars, budget)
        }
        Some((Part::Var(name), rest)) => {
            let run = s.find(&['/', '?', '#'][..]).unwrap_or(s.len());
            let next_lit = match rest.first() {
                Some(Part::Lit(l)) => Some(l.as_str()),
                _ => None,
            };
            for end in (1..=run).rev() {
                if *budget == 0 {
                    return false;
                }
                *budget -= 1;
                let fits = match next_lit {
                    Some(l) => s.is_char_boundary(end) && s[end..].starts_with(l),
                    None => end == s.len(),
                };
                if fits {
                    vars.push((name, &s[..end]));
                    if match_parts(rest, &s[end..], vars, budget) {
                        return true;
                    }
                    vars.pop();
                }
            }
            false
        }
    }
}

/// Decodes `%XX` escapes; `None` for a bad escape or bytes that are not
/// UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        ResourceTemplate::new(t, "x")
            .matches(uri)
            .map(|m| m.into_iter().collect())
    }

    fn pairs(p: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            p.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        )
    }

    #[test]
    fn templates_match_like_the_host() {
        assert_eq!(
            vars("fixture://items/{id}", "fixture://items/item1"),
            pairs(&[("id", "item1")])
        );
        assert_eq!(
            vars("fixture://items/{id}", "fixture://items/a%20b%2Fc"),
            pairs(&[("id", "a b/c")])
        );
        assert_eq!(vars("fixture://items/{id}", "fixture://items/"), None);
        assert_eq!(vars("fixture://items/{id}", "fixture://items/a/b"), None);
        assert_eq!(vars("fixture://items/{id}", "fixture://items/a?b"), None);
        assert_eq!(vars("fixture://items/{id}", "fixture://items/%zz"), None);
        assert_eq!(
            vars("x://f/{name}.json", "x://f/a.v2.json"),
            pairs(&[("name", "a.v2")])
        );
        assert_eq!(
            vars("x://t/{a}/runs/{b}", "x://t/1/runs/2"),
            pairs(&[("a", "1"), ("b", "2")])
        );
        assert_eq!(
            vars("x://t/{a}-{b}", "x://t/1-2-3"),
            pairs(&[("a", "1-2"), ("b", "3")])
        );
        assert_eq!(vars("x://t/{a}", "x://t/é"), pairs(&[("a", "é")]));
        let long = "a".repeat(1 << 20);
        assert_eq!(
            vars("x://t/{a}/r", &format!("x://t/{}/r", long)),
            pairs(&[("a", &long)])
        );
        assert_eq!(
            vars("x://t/{a}.json", &format!("x://t/{}.json", long)),
            pairs(&[("a", &long)])
        );
        let hostile = format!("x://t/{}/", "-".repeat(20_000));
        let start = std::time::Instant::now();
        assert_eq!(vars("x://t/{a}-{b}-{c}-{d}", &hostile), None);
        assert!(
            start.elapsed() < std::time::Duration::from_secs(1),
            "backtracking is bounded"
        );
    }

    #[test]
    fn templates_refused() {
        for t in [
            "items/{id}",
            "x://a/{}",
            "x://a/{id",
            "x://a/id}",
            "x://a/{a}{b}",
            "x://a/{a-b}",
            "x://fixed",
        ] {
            assert!(compile(t).is_err(), "{}", t);
        }
        assert!(compile("x://a/{a}.{b}").is_ok());
        assert!(
            absolute_uri("fixture://status")
                && absolute_uri("urn:x")
                && !absolute_uri("status")
                && !absolute_uri("1x:y")
        );
    }
}
