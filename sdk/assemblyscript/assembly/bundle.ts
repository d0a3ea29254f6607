// A bundle's definition: what it offers (tools, resources, templates,
// prompts, completions), the routes it calls, and the manifest the host
// reads from kadu_describe (sdk/ABI.md §10).

import { Call } from "./call";
import { Result } from "./result";
import { Json } from "./json";
import { ByteWriter } from "./bytes";

/** The ABI this SDK implements; the manifest's "abi". */
export const ABI_VERSION = "kadu/v1";

/**
 * A handler: a top-level function (AssemblyScript closures cannot
 * capture locals) that serves one invocation and returns its answer.
 */
export type Handler = (call: Call) => Result;

/** Roles, from least to most (docs/reference/auth.md). */
export namespace Role {
  export const Viewer = "viewer";
  export const Member = "member";
  export const Admin = "admin";
  export const Owner = "owner";
}

/** Scopes without their "kadu." prefix: admin ⊇ write ⊇ read, admin ⊇ run ⊇ read. */
export namespace Scope {
  export const Read = "read";
  export const Write = "write";
  export const Run = "run";
  export const Admin = "admin";
}

/**
 * Who may list and call an entry: a role at least minRole and scope among
 * the token's scopes. The first gate only: the API checks its own rules
 * again on every request a handler makes.
 */
export class Access {
  minRole: string = "";
  scope: string = "";
}

/** The bundle itself. */
export class BundleInfo {
  /** ^[a-z][a-z0-9_]{0,31}$; the operator's config names the bundle the same way. */
  name!: string;
  /** Semantic Version, e.g. "1.2.0". */
  version!: string;
  /** For operators. */
  description: string = "";
  /**
   * The API routes the bundle calls: "METHOD /path", {name} for one path
   * segment, e.g. "GET /api/v1/tasks/{id}". The host refuses any other
   * request, and refuses the bundle unless the operator granted them all.
   */
  routes: string[] = [];
}

/** An MCP tool. */
export class ToolDef {
  /** Unique across every bundle the server loads, ^[a-zA-Z0-9_.-]{1,64}$. */
  name!: string;
  /** A short human name, e.g. "Run a task". */
  title: string = "";
  /** Written for a model: what the tool does, when to use it, what comes back, which parts are untrusted data. */
  description: string = "";
  /** JSON Schema (draft 2020-12) of the arguments, with "type":"object" at the root. The host validates arguments against it. */
  inputSchema!: string;
  /** JSON Schema of structuredContent; "" for none. A tool with one must answer Result.json of an object. */
  outputSchema: string = "";
  /** The tool changes nothing. */
  readOnly: bool = false;
  /**
   * The tool deletes, cancels, runs work, re-sends, rotates a secret, or
   * changes who may do what or where data goes: Kadu asks the person to
   * confirm first. A destructive tool declares no outputSchema.
   */
  destructive: bool = false;
  /** Calling again with the same arguments has no further effect. */
  idempotent: bool = false;
  access!: Access;
  /**
   * Client capabilities ("elicitation", "sampling", "roots") the tool
   * always asks for; a client without them gets -32021 before the tool
   * runs. Leave it empty for a tool that can do without.
   */
  requiresCapabilities: string[] = [];
}

/** A document at a fixed URI. */
export class ResourceDef {
  /** Absolute, unique across the server's bundles. */
  uri!: string;
  name!: string;
  title: string = "";
  description: string = "";
  /** The default mimeType of each content, e.g. "application/json". */
  mimeType: string = "";
  access!: Access;
}

/** A family of documents named by a URI template (RFC 6570 level 1). */
export class TemplateDef {
  /** e.g. "kobana://kadu/tasks/{id}"; each {name} matches one or more characters other than / ? #. */
  uriTemplate!: string;
  name!: string;
  title: string = "";
  description: string = "";
  mimeType: string = "";
  access!: Access;
}

/** One argument of a prompt. */
export class PromptArgument {
  name!: string;
  description: string = "";
  required: bool = false;
}

/** A ready-made script the person picks in the client. */
export class PromptDef {
  /** Unique across the server's bundles, ^[a-zA-Z0-9_.-]{1,64}$. */
  name!: string;
  title: string = "";
  description: string = "";
  arguments: PromptArgument[] = [];
  access!: Access;
}

/** @internal A registered tool. */
export class ToolEntry {
  constructor(public def: ToolDef, public handler: Handler) {}
  get structured(): bool {
    return this.def.outputSchema.length > 0;
  }
}

/** @internal A registered resource. */
export class ResourceEntry {
  constructor(public def: ResourceDef, public handler: Handler) {}
}

/** @internal A registered template: its literals and variable names, alternating. */
export class TemplateEntry {
  // parts[0] literal, parts[1] variable, parts[2] literal, …, ending with a literal (maybe "").
  parts: string[] = [];
  constructor(public def: TemplateDef, public handler: Handler) {}
}

/** @internal A registered prompt. */
export class PromptEntry {
  constructor(public def: PromptDef, public handler: Handler) {}
}

/**
 * Bundle collects what a bundle offers. Build it at the top level of the
 * bundle's entry file (which runs once, in _initialize) and end with
 * register():
 *
 *     new Bundle({ name: "hello", version: "1.0.0", routes: ["GET /api/v1/usage"] })
 *       .tool({ name: "hello_usage", inputSchema: `{"type":"object"}`, readOnly: true,
 *               idempotent: true, access: { minRole: Role.Viewer, scope: Scope.Read } }, usage)
 *       .register();
 *
 * Definitions are checked against sdk/ABI.md §10 by register(), which
 * stops the module (abort: _initialize traps and the host refuses the
 * bundle, with every problem in its log) rather than let the host refuse
 * the manifest later. Definitions must not be changed after register().
 */
export class Bundle {
  /** @internal */ info: BundleInfo;
  /** @internal */ tools: Map<string, ToolEntry> = new Map<string, ToolEntry>();
  /** @internal */ toolList: ToolEntry[] = [];
  /** @internal */ resources: Map<string, ResourceEntry> = new Map<string, ResourceEntry>();
  /** @internal */ resourceList: ResourceEntry[] = [];
  /** @internal */ templates: TemplateEntry[] = [];
  /** @internal */ prompts: Map<string, PromptEntry> = new Map<string, PromptEntry>();
  /** @internal */ promptList: PromptEntry[] = [];
  /** @internal */ completeHandler: Handler | null = null;
  /** @internal The manifest, built by register(). */ manifest: ByteWriter = new ByteWriter();
  private problems: string[] = [];

  constructor(info: BundleInfo) {
    this.info = info;
  }

  /** Adds a tool served by handler. */
  tool(def: ToolDef, handler: Handler): Bundle {
    const at = "tool " + Json.quote(def.name) + ": ";
    if (!isEntryName(def.name)) this.problem(at + "name: want ^[a-zA-Z0-9_.-]{1,64}$");
    else if (this.tools.has(def.name)) this.problem(at + "registered twice");
    this.checkObjectSchema(at + "inputSchema", def.inputSchema);
    if (def.outputSchema.length > 0) this.checkObjectSchema(at + "outputSchema", def.outputSchema);
    if (def.readOnly && def.destructive) this.problem(at + "a tool cannot be both readOnly and destructive");
    if (def.destructive && def.outputSchema.length > 0) {
      this.problem(at + "outputSchema: a destructive tool declares none (its first answer is a confirmation request)");
    }
    this.checkAccess(at, def.access);
    for (let i = 0; i < def.requiresCapabilities.length; i++) {
      const c = def.requiresCapabilities[i];
      if (c != "elicitation" && c != "sampling" && c != "roots") {
        this.problem(at + "requiresCapabilities: " + Json.quote(c) + ": want elicitation, sampling or roots");
      }
    }
    const e = new ToolEntry(def, handler);
    this.tools.set(def.name, e);
    this.toolList.push(e);
    return this;
  }

  /** Adds a resource at a fixed URI, read by handler (Call.uri). */
  resource(def: ResourceDef, handler: Handler): Bundle {
    const at = "resource " + Json.quote(def.uri) + ": ";
    if (!isAbsoluteURI(def.uri)) this.problem(at + "uri: want an absolute URI");
    else if (this.resources.has(def.uri)) this.problem(at + "registered twice");
    if (def.name.length == 0) this.problem(at + "name: required");
    this.checkAccess(at, def.access);
    const e = new ResourceEntry(def, handler);
    this.resources.set(def.uri, e);
    this.resourceList.push(e);
    return this;
  }

  /** Adds a resource template, read by handler (Call.uri, Call.variable). */
  template(def: TemplateDef, handler: Handler): Bundle {
    const at = "resource template " + Json.quote(def.uriTemplate) + ": ";
    const e = new TemplateEntry(def, handler);
    const why = parseTemplate(def.uriTemplate, e.parts);
    if (why.length > 0) this.problem(at + "uriTemplate: " + why);
    for (let i = 0; i < this.templates.length; i++) {
      if (this.templates[i].def.uriTemplate == def.uriTemplate) this.problem(at + "registered twice");
    }
    if (def.name.length == 0) this.problem(at + "name: required");
    this.checkAccess(at, def.access);
    this.templates.push(e);
    return this;
  }

  /** Adds a prompt rendered by handler (Call.arguments holds its arguments, all strings). */
  prompt(def: PromptDef, handler: Handler): Bundle {
    const at = "prompt " + Json.quote(def.name) + ": ";
    if (!isEntryName(def.name)) this.problem(at + "name: want ^[a-zA-Z0-9_.-]{1,64}$");
    else if (this.prompts.has(def.name)) this.problem(at + "registered twice");
    const seen = new Set<string>();
    for (let i = 0; i < def.arguments.length; i++) {
      const n = def.arguments[i].name;
      if (n.length == 0 || seen.has(n)) this.problem(at + "arguments[" + i.toString() + "]: want a unique, non-empty name");
      seen.add(n);
    }
    this.checkAccess(at, def.access);
    const e = new PromptEntry(def, handler);
    this.prompts.set(def.name, e);
    this.promptList.push(e);
    return this;
  }

  /**
   * Sets the handler of completion/complete (Call.completion says what to
   * complete) and declares "completions": true. A bundle has at most one.
   */
  completer(handler: Handler): Bundle {
    if (this.completeHandler !== null) this.problem("completer: set twice; a bundle has one");
    this.completeHandler = handler;
    return this;
  }

  /**
   * Checks everything, builds the manifest, and installs this as the
   * module's bundle. Call it once, at the top level of the entry file.
   */
  register(): void {
    const info = this.info;
    if (!isBundleName(info.name)) this.problem("bundle name " + Json.quote(info.name) + ": want ^[a-z][a-z0-9_]{0,31}$");
    if (!isSemver(info.version)) this.problem("bundle version " + Json.quote(info.version) + ": want a semantic version such as 1.0.0");
    const seen = new Set<string>();
    for (let i = 0; i < info.routes.length; i++) {
      const r = info.routes[i];
      if (!isRoute(r)) {
        this.problem("routes[" + i.toString() + "] " + Json.quote(r) +
          ": want \"METHOD /path\", METHOD one of GET POST PUT PATCH DELETE, segments literal or {name}, no query");
      }
      if (seen.has(r)) this.problem("routes[" + i.toString() + "] " + Json.quote(r) + ": listed twice");
      seen.add(r);
    }
    if (this.toolList.length + this.resourceList.length + this.templates.length + this.promptList.length == 0) {
      this.problem("the bundle offers nothing: register at least one tool, resource, template or prompt");
    }
    if (registered !== null) this.problem("a bundle is already registered; a module is one bundle");
    if (this.problems.length > 0) {
      abort("kadu: bundle " + Json.quote(info.name) + " cannot load: " + this.problems.join("; "));
    }
    const w = new ByteWriter(1024);
    this.manifestJson().write(w);
    this.manifest = w;
    registered = this;
  }

  private problem(p: string): void {
    this.problems.push(p);
  }

  private checkObjectSchema(at: string, schema: string): void {
    const v = Json.parse(schema);
    if (v === null) {
      this.problem(at + ": not valid JSON: " + Json.error);
    } else if (!v.isObject() || v.getString("type") != "object") {
      this.problem(at + ": want a JSON Schema object with \"type\": \"object\"");
    }
  }

  private checkAccess(at: string, a: Access): void {
    const r = a.minRole;
    if (r != Role.Viewer && r != Role.Member && r != Role.Admin && r != Role.Owner) {
      this.problem(at + "access.minRole " + Json.quote(r) + ": want viewer, member, admin or owner");
    }
    const s = a.scope;
    if (s != Scope.Read && s != Scope.Write && s != Scope.Run && s != Scope.Admin) {
      this.problem(at + "access.scope " + Json.quote(s) + ": want read, write, run or admin");
    }
  }

  private manifestJson(): Json {
    const info = this.info;
    const m = Json.obj().setString("abi", ABI_VERSION).setString("name", info.name).setString("version", info.version);
    if (info.description.length > 0) m.setString("description", info.description);
    const tools = Json.arr();
    for (let i = 0; i < this.toolList.length; i++) {
      const d = this.toolList[i].def;
      const t = Json.obj().setString("name", d.name);
      optional(t, "title", d.title);
      optional(t, "description", d.description);
      t.set("inputSchema", Json.parse(d.inputSchema)!);
      if (d.outputSchema.length > 0) t.set("outputSchema", Json.parse(d.outputSchema)!);
      t.set("annotations", Json.obj()
        .setBool("readOnlyHint", d.readOnly)
        .setBool("destructiveHint", d.destructive)
        .setBool("idempotentHint", d.idempotent)
        .setBool("openWorldHint", false)); // a bundle reaches nothing but the Kadu API
      t.set("access", accessJson(d.access));
      if (d.requiresCapabilities.length > 0) t.set("requiresCapabilities", Json.strings(d.requiresCapabilities));
      tools.push(t);
    }
    m.set("tools", tools);
    const resources = Json.arr();
    for (let i = 0; i < this.resourceList.length; i++) {
      const d = this.resourceList[i].def;
      const r = Json.obj().setString("uri", d.uri).setString("name", d.name);
      optional(r, "title", d.title);
      optional(r, "description", d.description);
      optional(r, "mimeType", d.mimeType);
      resources.push(r.set("access", accessJson(d.access)));
    }
    m.set("resources", resources);
    const templates = Json.arr();
    for (let i = 0; i < this.templates.length; i++) {
      const d = this.templates[i].def;
      const r = Json.obj().setString("uriTemplate", d.uriTemplate).setString("name", d.name);
      optional(r, "title", d.title);
      optional(r, "description", d.description);
      optional(r, "mimeType", d.mimeType);
      templates.push(r.set("access", accessJson(d.access)));
    }
    m.set("resourceTemplates", templates);
    const prompts = Json.arr();
    for (let i = 0; i < this.promptList.length; i++) {
      const d = this.promptList[i].def;
      const p = Json.obj().setString("name", d.name);
      optional(p, "title", d.title);
      optional(p, "description", d.description);
      const args = Json.arr();
      for (let k = 0; k < d.arguments.length; k++) {
        const a = d.arguments[k];
        const j = Json.obj().setString("name", a.name);
        optional(j, "description", a.description);
        if (a.required) j.setBool("required", true);
        args.push(j);
      }
      p.set("arguments", args);
      prompts.push(p.set("access", accessJson(d.access)));
    }
    m.set("prompts", prompts);
    m.setBool("completions", this.completeHandler !== null);
    m.set("routes", Json.strings(info.routes));
    return m;
  }
}

/** @internal The bundle register() installed, or null. */
export let registered: Bundle | null = null;

function optional(o: Json, key: string, value: string): void {
  if (value.length > 0) o.setString(key, value);
}

function accessJson(a: Access): Json {
  return Json.obj().setString("min_role", a.minRole).setString("scope", a.scope);
}

// ---- the rules of sdk/ABI.md §10, without regular expressions ----

function isLower(c: i32): bool { return c >= 0x61 && c <= 0x7a; }
function isUpper(c: i32): bool { return c >= 0x41 && c <= 0x5a; }
function isDigit(c: i32): bool { return c >= 0x30 && c <= 0x39; }
function isAlnum(c: i32): bool { return isLower(c) || isUpper(c) || isDigit(c); }

// ^[a-z][a-z0-9_]{0,31}$
function isBundleName(s: string): bool {
  if (s.length < 1 || s.length > 32 || !isLower(s.charCodeAt(0))) return false;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isLower(c) && !isDigit(c) && c != 0x5f) return false;
  }
  return true;
}

// ^[a-zA-Z0-9_.-]{1,64}$ (tool and prompt names, input request keys)
export function isEntryName(s: string): bool {
  if (s.length < 1 || s.length > 64) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isAlnum(c) && c != 0x5f && c != 0x2e && c != 0x2d) return false;
  }
  return true;
}

// A numeric identifier: 0 or no leading zero.
function isNumericId(s: string): bool {
  if (s.length == 0) return false;
  for (let i = 0; i < s.length; i++) if (!isDigit(s.charCodeAt(i))) return false;
  return s.length == 1 || s.charCodeAt(0) != 0x30;
}

// Dot-separated identifiers of [0-9A-Za-z-]; numeric ones without leading zeros when strict.
function isIdentifiers(s: string, strict: bool): bool {
  const parts = s.split(".");
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (p.length == 0) return false;
    let numeric = true;
    for (let k = 0; k < p.length; k++) {
      const c = p.charCodeAt(k);
      if (!isAlnum(c) && c != 0x2d) return false;
      if (!isDigit(c)) numeric = false;
    }
    if (strict && numeric && !isNumericId(p)) return false;
  }
  return true;
}

// Semantic Versioning 2.0.0: 1.2.3, 1.3.0-rc.1, 1.0.0+build.5.
function isSemver(s: string): bool {
  let core = s;
  const plus = core.indexOf("+");
  if (plus >= 0) {
    if (!isIdentifiers(core.substring(plus + 1), false)) return false;
    core = core.substring(0, plus);
  }
  const dash = core.indexOf("-");
  if (dash >= 0) {
    if (!isIdentifiers(core.substring(dash + 1), true)) return false;
    core = core.substring(0, dash);
  }
  const nums = core.split(".");
  if (nums.length != 3) return false;
  for (let i = 0; i < 3; i++) if (!isNumericId(nums[i])) return false;
  return true;
}

// "METHOD /a/{b}/c": segments literal or {name}, no query, no dot segments.
function isRoute(r: string): bool {
  const sp = r.indexOf(" ");
  if (sp < 0) return false;
  const method = r.substring(0, sp);
  if (method != "GET" && method != "POST" && method != "PUT" && method != "PATCH" && method != "DELETE") return false;
  const path = r.substring(sp + 1);
  if (!path.startsWith("/") || path == "/") return false;
  const segs = path.substring(1).split("/");
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i];
    if (s.length == 0 || s == "." || s == "..") return false;
    if (s.startsWith("{")) {
      if (!s.endsWith("}") || s.length < 3) return false;
      for (let k = 1; k < s.length - 1; k++) {
        const c = s.charCodeAt(k);
        if (!isAlnum(c) && c != 0x5f) return false;
        if (k == 1 && isDigit(c)) return false;
      }
      continue;
    }
    for (let k = 0; k < s.length; k++) {
      const c = s.charCodeAt(k);
      // unreserved, sub-delims, ":", "@" and "%"
      if (!isAlnum(c) && "-._~!$&'()*+,;=:@%".indexOf(String.fromCharCode(c)) < 0) return false;
    }
  }
  return true;
}

// scheme ":" with scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), and something after it.
function isAbsoluteURI(s: string): bool {
  const colon = s.indexOf(":");
  if (colon < 1 || colon == s.length - 1) return false;
  if (!isLower(s.charCodeAt(0)) && !isUpper(s.charCodeAt(0))) return false;
  for (let i = 1; i < colon; i++) {
    const c = s.charCodeAt(i);
    if (!isAlnum(c) && c != 0x2b && c != 0x2d && c != 0x2e) return false;
  }
  return true;
}

/**
 * Splits a level-1 URI template into parts (literal, variable, literal,
 * …, literal) and returns "" or what is wrong with it.
 */
function parseTemplate(t: string, parts: string[]): string {
  if (t.indexOf("://") < 1) return "want an absolute URI template (with ://)";
  let lit = "";
  let i = 0;
  let vars = 0;
  while (i < t.length) {
    const c = t.charCodeAt(i);
    if (c == 0x7d) return "a '}' without '{'";
    if (c != 0x7b) {
      lit += String.fromCharCode(c);
      i++;
      continue;
    }
    const close = t.indexOf("}", i);
    if (close < 0) return "a '{' without '}'";
    const name = t.substring(i + 1, close);
    if (name.length == 0) return "an empty {}";
    for (let k = 0; k < name.length; k++) {
      const d = name.charCodeAt(k);
      if (!isAlnum(d) && d != 0x5f) return "only {name} expressions (RFC 6570 level 1) with names of [A-Za-z0-9_] are supported";
    }
    if (vars > 0 && lit.length == 0) return "two expressions need a literal between them";
    parts.push(lit);
    parts.push(name);
    lit = "";
    vars++;
    i = close + 1;
  }
  parts.push(lit);
  if (vars == 0) return "has no {name}; use a resource for a fixed URI";
  return "";
}

/**
 * @internal Matches uri against a template's parts and fills vars with
 * the variables, percent-decoding left to the caller. A variable matches
 * one or more characters other than / ? #, as many as still let the rest
 * match (like the regular expression ([^/?#]+)).
 */
export function matchTemplate(parts: string[], uri: string, vars: Map<string, string>): bool {
  if (!uri.startsWith(parts[0])) return false;
  return matchFrom(parts, 1, uri, parts[0].length, vars);
}

function matchFrom(parts: string[], k: i32, uri: string, pos: i32, vars: Map<string, string>): bool {
  if (k >= parts.length) return pos == uri.length;
  const name = parts[k];
  const lit = parts[k + 1];
  // The longest run of allowed characters from pos.
  let end = pos;
  while (end < uri.length) {
    const c = uri.charCodeAt(end);
    if (c == 0x2f || c == 0x3f || c == 0x23) break;
    end++;
  }
  for (let stop = end; stop > pos; stop--) {
    if (lit.length > 0 && !uri.startsWith(lit, stop)) continue;
    if (lit.length == 0 && k + 2 < parts.length) continue;
    if (matchFrom(parts, k + 2, uri, stop + lit.length, vars)) {
      vars.set(name, uri.substring(pos, stop));
      return true;
    }
  }
  return false;
}
