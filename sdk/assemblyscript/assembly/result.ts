// What a handler returns (sdk/ABI.md §5, §8, §9). AssemblyScript has no
// exceptions a handler could catch, so every answer, errors included, is a
// Result value; the dispatcher turns it into the output and status of the
// op being served.

import { Json } from "./json";
import { Response } from "./call";

/** The kinds of Result; the static constructors of Result make them. */
export enum ResultKind {
  /** A tool's output: content, maybe structuredContent. */
  Tool,
  /** A failure the model reads (isError: true). */
  ToolError,
  /** A Kadu API answer other than 2xx, reported as the ABI says. */
  APIError,
  /** A JSON-RPC error (status 1). */
  Protocol,
  /** Input required from the client first, with state. */
  InputRequired,
  /** A resource's contents. */
  Resource,
  /** resources/read of a URI that names nothing this caller may read. */
  NotFound,
  /** A rendered prompt. */
  Prompt,
  /** Completion values. */
  Completion,
}

/** JSON-RPC codes a bundle may return (others become -32603). */
export namespace Code {
  /** The request names something that does not exist or is malformed. */
  export const InvalidParams: i32 = -32602;
  /** This bundle cannot answer. */
  export const InternalError: i32 = -32603;
}

/** The most state an input-required result may carry, as JSON. */
export const MAX_STATE_BYTES: i32 = 16 << 10;

/** The most values a completion returns; more are cut and hasMore is set. */
export const MAX_COMPLETION_VALUES: i32 = 100;

/** One content of a resource. */
export class ResourceContents {
  /** Empty: the URI that was read. */
  uri: string = "";
  /** Empty: the resource's or template's mimeType. */
  mimeType: string = "";
  text: string = "";
}

/** One message of a rendered prompt. */
export class PromptMessage {
  /** "user" or "assistant". */
  role: string = "user";
  /** An MCP content block, e.g. {"type":"text","text":"…"}. */
  content: Json = Json.obj();

  /**
   * A user message with text content. Never put untrusted data
   * (execution output, file contents) in a prompt's text as if it were an
   * instruction: name where to read it instead.
   */
  static user(text: string): PromptMessage {
    const m = new PromptMessage();
    m.content = textContent(text);
    return m;
  }

  /** An assistant message with text content. */
  static assistant(text: string): PromptMessage {
    const m = new PromptMessage();
    m.role = "assistant";
    m.content = textContent(text);
    return m;
  }
}

/** An MCP text content block: {"type":"text","text":text}. */
export function textContent(text: string): Json {
  return Json.obj().setString("type", "text").setString("text", text);
}

/**
 * A form elicitation request: message for the person and the JSON Schema
 * of the answer (a flat object of string, number, integer and boolean
 * properties, as MCP requires). Put it in the requests of
 * Result.inputRequired under a key of your choice.
 */
export function elicitForm(message: string, requestedSchema: Json): Json {
  return inputRequest(
    "elicitation/create",
    Json.obj().setString("mode", "form").setString("message", message).set("requestedSchema", requestedSchema),
  );
}

/** An input request of any method: "elicitation/create", "sampling/createMessage" or "roots/list". */
export function inputRequest(method: string, params: Json): Json {
  return Json.obj().setString("method", method).set("params", params);
}

/** The values that start with prefix, in order: the usual completion. */
export function startingWith(values: string[], prefix: string): string[] {
  const out = new Array<string>();
  for (let i = 0; i < values.length; i++) {
    if (values[i].startsWith(prefix)) out.push(values[i]);
  }
  return out;
}

/**
 * Result is a handler's answer. Make one with the static constructors:
 *
 * - tools: text, json, structured, content; toolError, apiError, fromAPI;
 * - resources: resourceText, resource, notFound;
 * - prompts: prompt; completions: completion;
 * - any op: protocolError, invalidParams, inputRequired.
 *
 * A tool error or an API error returned for a resource, prompt or
 * completion (which have no isError) becomes a JSON-RPC error.
 */
export class Result {
  /** What kind of answer this is. */
  readonly kind: ResultKind;
  /** @internal */ text: string = "";
  /** @internal */ value: Json | null = null; // Tool: JSON; structured when an object
  /** @internal */ structured: Json | null = null;
  /** @internal */ blocks: Json | null = null;
  /** @internal */ code: i32 = 0;
  /** @internal */ data: Json | null = null;
  /** @internal */ response: Response | null = null;
  /** @internal */ requests: Json | null = null;
  /** @internal */ state: Json | null = null;
  /** @internal */ contents: ResourceContents[] = [];
  /** @internal */ messages: PromptMessage[] = [];
  /** @internal */ values: string[] = [];
  /** @internal */ total: i32 = -1;
  /** @internal */ hasMore: bool = false;

  constructor(kind: ResultKind) {
    this.kind = kind;
  }

  // ---- tools ----

  /** A tool result of one text content. */
  static text(text: string): Result {
    const r = new Result(ResultKind.Tool);
    r.text = text;
    return r;
  }

  /**
   * A tool result whose text is value's JSON and, when value is an
   * object, whose structuredContent is value: what a tool with an
   * outputSchema returns.
   */
  static json(value: Json): Result {
    const r = new Result(ResultKind.Tool);
    r.value = value;
    return r;
  }

  /** A tool result with structuredContent value (an object) and its own text. */
  static structured(value: Json, text: string): Result {
    if (!value.isObject()) abort("kadu: Result.structured: structuredContent must be a JSON object");
    const r = new Result(ResultKind.Tool);
    r.structured = value;
    r.text = text;
    return r;
  }

  /** A tool result of the given content blocks (a JSON array) and, if not null, structuredContent (an object). */
  static content(blocks: Json, structured: Json | null = null): Result {
    if (!blocks.isArray()) abort("kadu: Result.content: blocks must be a JSON array");
    if (structured !== null && !structured.isObject()) abort("kadu: Result.content: structuredContent must be a JSON object");
    const r = new Result(ResultKind.Tool);
    r.blocks = blocks;
    r.structured = structured;
    return r;
  }

  /**
   * A failure the model reads and can act on (isError: true). Say what
   * happened and what to do next.
   */
  static toolError(text: string): Result {
    const r = new Result(ResultKind.ToolError);
    r.text = text;
    return r;
  }

  /**
   * The answer for a Kadu API response that is not 2xx: for a 4xx, an
   * isError result whose text is the API's error body as it is (its hint
   * is written for the model); for a 5xx, an isError result that asks to
   * try again, with the status and request_id.
   */
  static apiError(response: Response): Result {
    const r = new Result(ResultKind.APIError);
    r.response = response;
    return r;
  }

  /** For a 2xx response, Result.json of its body; otherwise Result.apiError. */
  static fromAPI(response: Response): Result {
    if (!response.ok) return Result.apiError(response);
    const v = response.json();
    if (v !== null) return Result.json(v);
    if (response.body.length == 0) {
      return Result.text("Done: the Kadu API answered HTTP " + response.status.toString() + " with no body.");
    }
    return Result.text(response.body);
  }

  // ---- any op ----

  /**
   * A JSON-RPC error (status 1) for a request that cannot be served at
   * all. The host passes code through only when it is -32602, -32603 or
   * in -32099 … -32000; any other code becomes -32603.
   */
  static protocolError(code: i32, message: string, data: Json | null = null): Result {
    const r = new Result(ResultKind.Protocol);
    r.code = code;
    r.text = message;
    r.data = data;
    return r;
  }

  /** protocolError(-32602, …): the request names something that does not exist or is malformed. */
  static invalidParams(message: string, data: Json | null = null): Result {
    return Result.protocolError(Code.InvalidParams, message, data);
  }

  /**
   * Asks the client for input first (sdk/ABI.md §9). requests is an
   * object from keys (1–64 of [A-Za-z0-9_.-]) to requests (elicitForm,
   * inputRequest); state is any JSON of at most 16 KiB, handed back
   * unchanged on the retry (Call.state) with the answers by key
   * (Call.inputResponse). The host seals state: the client can neither
   * read nor change it.
   *
   * A client that did not declare the capability a request needs gets
   * -32021 instead: check Call.hasCapability first and offer another way.
   */
  static inputRequired(requests: Json, state: Json): Result {
    const r = new Result(ResultKind.InputRequired);
    r.requests = requests;
    r.state = state;
    return r;
  }

  // ---- resources ----

  /** One text content of the URI read, with the resource's (or template's) mimeType unless given. */
  static resourceText(text: string, mimeType: string = ""): Result {
    const c = new ResourceContents();
    c.text = text;
    c.mimeType = mimeType;
    return Result.resource([c]);
  }

  /** The contents of a resource read. */
  static resource(contents: ResourceContents[]): Result {
    const r = new Result(ResultKind.Resource);
    r.contents = contents;
    return r;
  }

  /** The URI names nothing this caller may read: -32602 "Resource not found" (-32002 for era-2025 clients). */
  static notFound(): Result {
    return new Result(ResultKind.NotFound);
  }

  // ---- prompts and completions ----

  /** A rendered prompt. */
  static prompt(messages: PromptMessage[], description: string = ""): Result {
    const r = new Result(ResultKind.Prompt);
    r.messages = messages;
    r.text = description;
    return r;
  }

  /**
   * Completion values, best first (at most 100 are sent; past that,
   * hasMore is set). total is the number of all matches when known (-1:
   * unknown).
   */
  static completion(values: string[], total: i32 = -1, hasMore: bool = false): Result {
    const r = new Result(ResultKind.Completion);
    r.values = values;
    r.total = total;
    r.hasMore = hasMore;
    return r;
  }
}
