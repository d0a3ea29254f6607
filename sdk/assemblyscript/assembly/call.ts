// What a handler sees of one invocation (sdk/ABI.md §7): the caller, the
// client, the arguments, state and input responses, and the way to the
// Kadu API.

import { configGet, callerInfo, apiCall } from "./host";
import { ByteWriter, decodeUTF8 } from "./bytes";
import { Json } from "./json";

/** The name and version a client reported about itself. */
export class ClientInfo {
  name: string = "";
  version: string = "";
}

/**
 * Who is calling (caller_info, sdk/ABI.md §6). It never holds a token.
 * Trust it as far as the host does: role and scopes are verified; client
 * is what the client says it is.
 */
export class Caller {
  orgId: string = "";
  /** The token's subject (for client credentials, the client). */
  userId: string = "";
  /** "viewer", "member", "admin" or "owner". */
  role: string = "";
  /** "kadu.read" …, closed under the lattice, sorted. */
  scopes: string[] = [];
  requestId: string = "";
  /** What the client reported; null when unknown. */
  client: ClientInfo | null = null;

  /** Whether the token has scope: "run" or "kadu.run". */
  hasScope(scope: string): bool {
    const want = scope.startsWith("kadu.") ? scope : "kadu." + scope;
    return this.scopes.includes(want);
  }

  /** The caller as caller_info's JSON. */
  toJson(): Json {
    const o = Json.obj()
      .setString("org_id", this.orgId)
      .setString("user_id", this.userId)
      .setString("role", this.role)
      .set("scopes", Json.strings(this.scopes))
      .setString("request_id", this.requestId);
    const c = this.client;
    o.set("client", c === null ? Json.null() : Json.obj().setString("name", c.name).setString("version", c.version));
    return o;
  }

  /** @internal Decodes caller_info's JSON; aborts (a fault) when it is not the ABI's. */
  static from(v: Json | null): Caller {
    if (v === null || !v.isObject()) abort("kadu: caller_info is not a JSON object (called outside kadu_handle?)");
    const who = new Caller();
    const o = v!;
    who.orgId = str(o, "org_id");
    who.userId = str(o, "user_id");
    who.role = str(o, "role");
    who.requestId = str(o, "request_id");
    const scopes = o.getArray("scopes");
    if (scopes !== null) {
      for (let i = 0; i < scopes.length; i++) {
        const s = scopes.at(i)!.asString();
        if (s !== null) who.scopes.push(s);
      }
    }
    const c = o.getObject("client");
    if (c !== null) {
      const info = new ClientInfo();
      info.name = str(c, "name");
      info.version = str(c, "version");
      who.client = info;
    }
    return who;
  }
}

function str(o: Json, key: string): string {
  const s = o.getString(key);
  return s === null ? "" : s;
}

/** A Kadu API response. */
export class Response {
  constructor(
    /** The HTTP status. */
    public status: i32,
    /** The body (JSON text, or "" when there is none). */
    public body: string,
  ) {}

  /** Whether the status is 2xx. */
  get ok(): bool {
    return this.status >= 200 && this.status < 300;
  }

  /** The body parsed (anew on each call), or null when it is empty or not JSON. */
  json(): Json | null {
    if (this.body.length == 0) return null;
    return Json.parse(this.body);
  }

  /** The code of the body's first error, e.g. "not_found"; "" when there is none. */
  errorCode(): string {
    const e = this.firstError();
    if (e === null) return "";
    const code = e.getString("code");
    return code === null ? "" : code;
  }

  /** The body's request_id, or "". */
  requestId(): string {
    const v = this.json();
    if (v === null) return "";
    const id = v.getString("request_id");
    return id === null ? "" : id;
  }

  /** @internal The first member of the body's errors, if any. */
  firstError(): Json | null {
    const v = this.json();
    if (v === null) return null;
    const errs = v.getArray("errors");
    if (errs === null || errs.length == 0) return null;
    const e = errs.at(0)!;
    return e.isObject() ? e : null;
  }
}

/** The client's answer to one input request (sdk/ABI.md §9). Untrusted: validate it. */
export class InputResponse {
  /** "accept", "decline" or "cancel" for an elicitation. */
  action: string = "";
  /** The answer (an elicitation's form content); null when none was sent. */
  content: Json | null = null;
  /** The whole response as the client sent it. */
  raw: Json = Json.null();

  /** Whether the person accepted (action "accept"). */
  get accepted(): bool {
    return this.action == "accept";
  }
}

/** What a completion/complete invocation asks to complete. */
export class CompletionRequest {
  /** "ref/prompt" or "ref/resource". */
  refType: string = "";
  /** The prompt's name, for ref/prompt. */
  refName: string = "";
  /** The template (e.g. "x://items/{id}"), for ref/resource. */
  refUri: string = "";
  /** The argument being completed. */
  argument: string = "";
  /** What the person typed so far. */
  value: string = "";
  /** The other arguments already chosen (context.arguments): an object of strings. */
  context: Json = Json.obj();
}

/**
 * Call is one invocation as a handler sees it. It is valid only during
 * the handler it was given to: keep nothing from it (an instance serves
 * other users of the organisation next).
 */
export class Call {
  /** "tools/call", "resources/read", "prompts/get" or "completion/complete". */
  op: string = "";
  /** The tool's or prompt's name. */
  name: string = "";
  /** The tool's arguments (an object the host validated against the inputSchema), or the prompt's (an object of strings); {} otherwise. */
  arguments: Json = Json.obj();
  /** The resource URI being read. */
  uri: string = "";
  /** The template's variables in uri, percent-decoded. */
  variables: Map<string, string> = new Map<string, string>();
  /** On completion/complete, what to complete. */
  completion: CompletionRequest = new CompletionRequest();
  /** On a retry after inputRequired, the state the bundle returned; else null. */
  state: Json | null = null;
  /** The client's protocol revision, e.g. "2026-07-28". */
  protocolVersion: string = "";

  private responses: Json | null = null;
  private client: Json | null = null;
  private who: Caller | null = null;

  /** @internal Built by the dispatcher from the invocation. */
  static from(inv: Json): Call {
    const c = new Call();
    const op = inv.getString("op");
    c.op = op === null ? "" : op;
    let params = inv.getObject("params");
    if (params === null) params = Json.obj();
    const name = params.getString("name");
    if (name !== null) c.name = name;
    const args = params.getObject("arguments");
    if (args !== null) c.arguments = args;
    const uri = params.getString("uri");
    if (uri !== null) c.uri = uri;
    c.state = inv.get("state");
    c.responses = inv.getObject("input_responses");
    const client = inv.getObject("client");
    if (client !== null) {
      c.client = client;
      const pv = client.getString("protocol_version");
      if (pv !== null) c.protocolVersion = pv;
    }
    if (c.op == "completion/complete") {
      const req = c.completion;
      const ref = params.getObject("ref");
      if (ref !== null) {
        req.refType = str(ref, "type");
        req.refName = str(ref, "name");
        req.refUri = str(ref, "uri");
      }
      const arg = params.getObject("argument");
      if (arg !== null) {
        req.argument = str(arg, "name");
        req.value = str(arg, "value");
      }
      const ctx = params.getObject("context");
      if (ctx !== null) {
        const a = ctx.getObject("arguments");
        if (a !== null) req.context = a;
      }
    }
    return c;
  }

  /** Whether this is a retry after inputRequired: state and inputResponse hold what came back. */
  get retrying(): bool {
    return this.state !== null || this.responses !== null;
  }

  /** The template variable name, or "" when the URI has none of that name. */
  variable(name: string): string {
    return this.variables.has(name) ? this.variables.get(name) : "";
  }

  /** Who is calling. Asked from the host once per invocation. */
  caller(): Caller {
    let who = this.who;
    if (who === null) {
      const raw = callerInfo();
      who = Caller.from(Json.parseUTF8(changetype<usize>(raw), raw.byteLength));
      this.who = who;
    }
    return who;
  }

  /** The client's declared capabilities object (era 2026), or null when unknown (era 2025). */
  capabilities(): Json | null {
    const client = this.client;
    if (client === null) return null;
    return client.getObject("capabilities");
  }

  /**
   * Whether the client declared capability name, e.g. "elicitation".
   * Check it before inputRequired: a client that did not declare what a
   * request needs gets -32021 instead, and an era-2025 client declares
   * nothing the server can see.
   */
  hasCapability(name: string): bool {
    const caps = this.capabilities();
    return caps !== null && caps.has(name);
  }

  /** The client's response to the input request of key, or null when it sent none. */
  inputResponse(key: string): InputResponse | null {
    const all = this.responses;
    if (all === null) return null;
    const v = all.get(key);
    if (v === null) return null;
    const r = new InputResponse();
    r.raw = v;
    if (v.isObject()) {
      const action = v.getString("action");
      if (action !== null) r.action = action;
      r.content = v.get("content");
    }
    return r;
  }

  /** The operator's config value for key, or null when it is not set. */
  config(key: string): string | null {
    return configGet(key);
  }

  /**
   * Sends one request to the Kadu API as the caller and returns its
   * response, whatever its status. path is the full path with its query,
   * already encoded (see encodePathSegment, encodeQueryValue). The host
   * answers 403 route_not_granted for a route the bundle did not declare
   * or was not granted, 429 api_budget_exhausted past the invocation's
   * budget and 413 payload_too_large for a body over 1 MiB, in the API's
   * error shape.
   */
  api(method: string, path: string, body: Json | null = null): Response {
    const w = new ByteWriter(body === null ? 16 : 256);
    if (body !== null) body.write(w);
    const a = apiCall(method, path, w.ptr, w.length);
    return new Response(a.status, decodeUTF8(changetype<usize>(a.body), a.body.byteLength));
  }

  /** api("GET", path). */
  get(path: string): Response {
    return this.api("GET", path);
  }

  /** api("POST", path, body). */
  post(path: string, body: Json): Response {
    return this.api("POST", path, body);
  }

  /** api("PUT", path, body). */
  put(path: string, body: Json): Response {
    return this.api("PUT", path, body);
  }

  /** api("PATCH", path, body). */
  patch(path: string, body: Json): Response {
    return this.api("PATCH", path, body);
  }
}
