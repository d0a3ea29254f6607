// kadu_describe and kadu_handle: read the input, find the handler, run it,
// and turn its Result into the output and status the ABI asks for
// (sdk/ABI.md §4, §5, §8, §9).

import { readInput, writeOutput, hostLog } from "./host";
import { ByteWriter } from "./bytes";
import { Json, MAX_DEPTH, writeString, writeStringUTF8 } from "./json";
import { Call, Response } from "./call";
import { Result, ResultKind, ResourceContents, Code, MAX_STATE_BYTES, MAX_COMPLETION_VALUES } from "./result";
import { Bundle, Handler, ToolEntry, registered, matchTemplate, isEntryName } from "./bundle";
import { decodePercent } from "./uri";
import { LogLevel } from "./log";

// Statuses of kadu_describe and kadu_handle.
const STATUS_OK: i32 = 0;
const STATUS_PROTOCOL: i32 = 1;
const STATUS_FAULT: i32 = 2;

function bundleOrNull(): Bundle | null {
  const b = registered;
  if (b === null) {
    hostLog(LogLevel.Error, "kadu: no bundle is registered: end the entry file's top-level code with bundle.register(), and build with --exportStart _initialize");
  }
  return b;
}

/** Serves kadu_describe: the manifest, built by register(). */
export function describe(inLen: i32): i32 {
  const b = bundleOrNull();
  if (b === null) return STATUS_FAULT;
  if (readInput(inLen) === null) {
    hostLog(LogLevel.Error, "kadu_describe: input_read did not give " + inLen.toString() + " bytes");
    return STATUS_FAULT;
  }
  return send(b.manifest, STATUS_OK);
}

/** Serves kadu_handle. */
export function handle(inLen: i32): i32 {
  const b = bundleOrNull();
  if (b === null) return STATUS_FAULT;
  const input = readInput(inLen);
  if (input === null) {
    hostLog(LogLevel.Error, "kadu_handle: input_read did not give " + inLen.toString() + " bytes");
    return STATUS_FAULT;
  }
  const inv = Json.parseUTF8(changetype<usize>(input), input.byteLength);
  if (inv === null || !inv.isObject()) {
    // The host sends valid JSON; what fails here is nesting past MAX_DEPTH.
    const why = inv === null ? Json.error : "not a JSON object";
    return protocolError(Code.InvalidParams,
      "This bundle cannot read the request (" + why + "); values may nest at most " + MAX_DEPTH.toString() + " levels.", null);
  }
  const c = Call.from(inv);
  if (c.op == "tools/call") return callTool(b, c);
  if (c.op == "resources/read") return readResource(b, c);
  if (c.op == "prompts/get") return getPrompt(b, c);
  if (c.op == "completion/complete") return complete(b, c);
  return protocolError(Code.InvalidParams, "This bundle does not serve op " + Json.quote(c.op) + ".", null);
}

// ---- writing ----

function send(w: ByteWriter, status: i32): i32 {
  if (!writeOutput(w)) {
    hostLog(LogLevel.Error, "kadu: the output of " + w.length.toString() +
      " bytes is over this bundle's output cap; return less (e.g. ask for a smaller page)");
    return STATUS_FAULT;
  }
  return status;
}

function fault(message: string): i32 {
  hostLog(LogLevel.Error, message);
  return STATUS_FAULT;
}

function protocolError(code: i32, message: string, data: Json | null): i32 {
  const w = new ByteWriter();
  w.ascii("{\"code\":");
  w.ascii(code.toString());
  w.ascii(",\"message\":");
  writeString(w, message);
  if (data !== null) {
    w.ascii(",\"data\":");
    data.write(w);
  }
  w.byte(0x7d);
  return send(w, STATUS_PROTOCOL);
}

// The answers every op shares: protocol errors and input required. Returns
// -1 when r is not one of them.
function common(r: Result, what: string): i32 {
  if (r.kind == ResultKind.Protocol) return protocolError(r.code, r.text, r.data);
  if (r.kind != ResultKind.InputRequired) return -1;
  const requests = r.requests!;
  if (!requests.isObject() || requests.length == 0) {
    return fault("kadu: " + what + ": inputRequired needs an object of at least one request");
  }
  for (let i = 0; i < requests.length; i++) {
    const key = requests.keyAt(i)!;
    if (!isEntryName(key)) return fault("kadu: " + what + ": input request key " + Json.quote(key) + ": want ^[a-zA-Z0-9_.-]{1,64}$");
    const req = requests.at(i)!;
    const m = req.getString("method");
    if (m != "elicitation/create" && m != "sampling/createMessage" && m != "roots/list") {
      return fault("kadu: " + what + ": input request " + Json.quote(key) +
        ": method must be elicitation/create, sampling/createMessage or roots/list");
    }
    if (req.getObject("params") === null) req.set("params", Json.obj()); // roots/list takes {}
  }
  const state = new ByteWriter();
  r.state!.write(state);
  if (state.length > MAX_STATE_BYTES) {
    return fault("kadu: " + what + ": the state is " + state.length.toString() + " bytes; the most is " + MAX_STATE_BYTES.toString());
  }
  const w = new ByteWriter(state.length + 256);
  w.ascii("{\"resultType\":\"input_required\",\"inputRequests\":");
  requests.write(w);
  w.ascii(",\"state\":");
  w.raw(state.ptr, state.length);
  w.byte(0x7d);
  return send(w, STATUS_OK);
}

/** The text a model reads for an API error, in a tool result. */
export function apiErrorText(resp: Response): string {
  if (resp.status >= 500) {
    let msg = "Kadu could not complete this request (HTTP " + resp.status.toString();
    const id = resp.requestId();
    if (id.length > 0) msg += ", request_id " + id;
    return msg + "). Nothing says the request was wrong: try again in a moment. For a write, retry with the same idempotency_key so that it is not done twice.";
  }
  const body = resp.body.trim();
  if (body.length == 0 || Json.parse(body) === null) {
    return "The Kadu API refused the request (HTTP " + resp.status.toString() + ").";
  }
  return body;
}

// What a resource, prompt or completion handler's tool-style error becomes:
// these results have no isError, so it is a JSON-RPC error.
function asProtocolError(r: Result): i32 {
  if (r.kind == ResultKind.ToolError) return protocolError(Code.InvalidParams, r.text, null);
  const resp = r.response!;
  if (resp.status >= 500) return protocolError(Code.InternalError, apiErrorText(resp), null);
  let msg = "";
  const e = resp.firstError();
  if (e !== null) {
    const detail = e.getString("detail");
    if (detail !== null) msg = detail;
  }
  if (msg.length == 0) msg = "The Kadu API refused the request (HTTP " + resp.status.toString() + ").";
  const data = Json.obj().setInt("status", resp.status);
  const body = resp.json();
  if (body !== null) data.set("error", body);
  return protocolError(Code.InvalidParams, msg, data);
}

// ---- tools/call ----

function callTool(b: Bundle, c: Call): i32 {
  if (!b.tools.has(c.name)) return protocolError(Code.InvalidParams, "Unknown tool: " + c.name, null);
  const t = b.tools.get(c.name);
  const h: Handler = t.handler;
  const r = h(c);
  const what = "tool " + t.def.name;
  const done = common(r, what);
  if (done >= 0) return done;
  switch (r.kind) {
    case ResultKind.Tool:
      return toolResult(t, r);
    case ResultKind.ToolError:
      return errorResult(r.text);
    case ResultKind.APIError:
      return errorResult(apiErrorText(r.response!));
  }
  return fault("kadu: " + what + " returned a result for another op (resource, prompt or completion)");
}

function errorResult(text: string): i32 {
  const w = new ByteWriter(text.length + 64);
  w.ascii("{\"content\":[{\"type\":\"text\",\"text\":");
  writeString(w, text);
  w.ascii("}],\"isError\":true}");
  return send(w, STATUS_OK);
}

function toolResult(t: ToolEntry, r: Result): i32 {
  const w = new ByteWriter();
  let structured = r.structured;
  const value = r.value;
  if (value !== null) {
    // The JSON once, then as the text.
    const j = new ByteWriter();
    value.write(j);
    w.reserve(j.length * 2 + 64);
    w.ascii("{\"content\":[{\"type\":\"text\",\"text\":");
    writeStringUTF8(w, j.ptr, j.length);
    w.ascii("}]");
    if (value.isObject()) {
      w.ascii(",\"structuredContent\":");
      w.raw(j.ptr, j.length);
      structured = value;
    }
  } else {
    w.ascii("{\"content\":");
    const blocks = r.blocks;
    if (blocks !== null) {
      blocks.write(w);
    } else {
      w.ascii("[{\"type\":\"text\",\"text\":");
      writeString(w, r.text);
      w.ascii("}]");
    }
    if (structured !== null) {
      w.ascii(",\"structuredContent\":");
      structured.write(w);
    }
  }
  w.byte(0x7d);
  if (t.structured && structured === null) {
    return fault("kadu: tool " + t.def.name + " declares an outputSchema but returned no structuredContent: return Result.json of an object");
  }
  return send(w, STATUS_OK);
}

// ---- resources/read ----

function readResource(b: Bundle, c: Call): i32 {
  let h: Handler;
  let mime = "";
  if (b.resources.has(c.uri)) {
    const e = b.resources.get(c.uri);
    h = e.handler;
    mime = e.def.mimeType;
  } else {
    let found = -1;
    for (let i = 0; i < b.templates.length; i++) {
      const vars = new Map<string, string>();
      if (matchTemplate(b.templates[i].parts, c.uri, vars)) {
        // Percent-decoded, as for a path; a malformed escape matches nothing.
        const names = vars.keys();
        let ok = true;
        for (let k = 0; k < names.length; k++) {
          const v = decodePercent(vars.get(names[k]));
          if (v === null) {
            ok = false;
            break;
          }
          c.variables.set(names[k], v);
        }
        if (ok) found = i;
        break;
      }
    }
    if (found < 0) return notFound(c.uri);
    const e = b.templates[found];
    h = e.handler;
    mime = e.def.mimeType;
  }
  const r = h(c);
  const done = common(r, "resource " + c.uri);
  if (done >= 0) return done;
  if (r.kind == ResultKind.NotFound) return notFound(c.uri);
  if (r.kind == ResultKind.APIError && r.response!.status == 404) return notFound(c.uri);
  if (r.kind == ResultKind.ToolError || r.kind == ResultKind.APIError) return asProtocolError(r);
  if (r.kind != ResultKind.Resource) return fault("kadu: resource " + c.uri + ": the handler returned a result for another op; use Result.resourceText or Result.resource");
  const w = new ByteWriter();
  w.ascii("{\"contents\":[");
  for (let i = 0; i < r.contents.length; i++) {
    const rc: ResourceContents = r.contents[i];
    if (i > 0) w.byte(0x2c);
    w.ascii("{\"uri\":");
    writeString(w, rc.uri.length > 0 ? rc.uri : c.uri);
    const m = rc.mimeType.length > 0 ? rc.mimeType : mime;
    if (m.length > 0) {
      w.ascii(",\"mimeType\":");
      writeString(w, m);
    }
    w.ascii(",\"text\":");
    writeString(w, rc.text);
    w.byte(0x7d);
  }
  w.ascii("]}");
  return send(w, STATUS_OK);
}

function notFound(uri: string): i32 {
  return protocolError(Code.InvalidParams, "Resource not found", Json.obj().setString("uri", uri));
}

// ---- prompts/get ----

function getPrompt(b: Bundle, c: Call): i32 {
  if (!b.prompts.has(c.name)) return protocolError(Code.InvalidParams, "Unknown prompt: " + c.name, null);
  const p = b.prompts.get(c.name);
  const args = c.arguments;
  for (let i = 0; i < args.length; i++) {
    if (!args.at(i)!.isString()) return protocolError(Code.InvalidParams, "Prompt arguments must be an object of strings.", null);
  }
  const missing = new Array<string>();
  for (let i = 0; i < p.def.arguments.length; i++) {
    const a = p.def.arguments[i];
    const v = args.getString(a.name);
    if (a.required && (v === null || v.trim().length == 0)) missing.push(a.name);
  }
  if (missing.length > 0) return protocolError(Code.InvalidParams, "Missing required argument: " + missing.join(", "), null);
  const h: Handler = p.handler;
  const r = h(c);
  const done = common(r, "prompt " + p.def.name);
  if (done >= 0) return done;
  if (r.kind == ResultKind.ToolError || r.kind == ResultKind.APIError) return asProtocolError(r);
  if (r.kind != ResultKind.Prompt) return fault("kadu: prompt " + p.def.name + ": the handler returned a result for another op; use Result.prompt");
  const w = new ByteWriter();
  w.byte(0x7b);
  if (r.text.length > 0) {
    w.ascii("\"description\":");
    writeString(w, r.text);
    w.byte(0x2c);
  }
  w.ascii("\"messages\":[");
  for (let i = 0; i < r.messages.length; i++) {
    if (i > 0) w.byte(0x2c);
    const m = r.messages[i];
    w.ascii("{\"role\":");
    writeString(w, m.role);
    w.ascii(",\"content\":");
    m.content.write(w);
    w.byte(0x7d);
  }
  w.ascii("]}");
  return send(w, STATUS_OK);
}

// ---- completion/complete ----

function complete(b: Bundle, c: Call): i32 {
  const completer = b.completeHandler;
  if (completer === null) return protocolError(Code.InvalidParams, "This bundle offers no completions.", null);
  const h: Handler = completer;
  const r = h(c);
  const done = common(r, "completion");
  if (done >= 0) return done;
  if (r.kind == ResultKind.ToolError || r.kind == ResultKind.APIError) return asProtocolError(r);
  if (r.kind != ResultKind.Completion) return fault("kadu: completion: the handler returned a result for another op; use Result.completion");
  const n = r.values.length < MAX_COMPLETION_VALUES ? r.values.length : MAX_COMPLETION_VALUES;
  const w = new ByteWriter();
  w.ascii("{\"completion\":{\"values\":[");
  for (let i = 0; i < n; i++) {
    if (i > 0) w.byte(0x2c);
    writeString(w, r.values[i]);
  }
  w.byte(0x5d);
  if (r.total >= 0) {
    w.ascii(",\"total\":");
    w.ascii(r.total.toString());
  }
  if (r.hasMore || r.values.length > MAX_COMPLETION_VALUES) w.ascii(",\"hasMore\":true");
  w.ascii("}}");
  return send(w, STATUS_OK);
}
