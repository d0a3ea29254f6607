/*
 * kadu.h — the C SDK for Kadu bundles (ABI "kadu/v1", see sdk/ABI.md).
 *
 * A bundle is a WebAssembly reactor that gives a Kadu MCP server tools,
 * resources, resource templates, prompts and completions, and reaches Kadu
 * only through its API, as the caller. This SDK is this header and the
 * source files kadu*.c beside it: compile them with your bundle.
 *
 *   clang --target=wasm32-wasi -mexec-model=reactor -std=c11 -O2 \
 *         -I sdk/c -o hello.wasm hello.c sdk/c/kadu*.c
 *
 * kadu.c defines the exports (kadu_abi_v1, kadu_describe, kadu_handle) and
 * imports the kadu host functions. You define one function, kadu_main, that
 * registers what the bundle offers; the SDK calls it once per instance,
 * before the first kadu_describe or kadu_handle:
 *
 *   static kadu_result *greet(kadu_call *c, const kadu_json *args) {
 *       const char *name = kadu_json_get_string(args, "name");
 *       return kadu_result_text(kadu_sprintf("Hello, %s of %s!", name,
 *                                            kadu_call_caller(c)->org_id));
 *   }
 *
 *   void kadu_main(kadu_bundle *b) {
 *       kadu_bundle_info(b, "hello", "1.0.0", "Says hello.");
 *       kadu_add_tool(b, &(kadu_tool){
 *           .name = "hello_greet",
 *           .description = "Greets someone by name.",
 *           .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":"
 *                           "{\"type\":\"string\"}},\"required\":[\"name\"]}",
 *           .hints = KADU_READ_ONLY | KADU_IDEMPOTENT,
 *           .access = {KADU_ROLE_VIEWER, KADU_SCOPE_READ},
 *           .run = greet,
 *       });
 *   }
 *
 * MEMORY. Everything the SDK hands you — parsed JSON, strings, responses,
 * results, and what kadu_alloc, kadu_sprintf and the kadu_json_new_*
 * builders make — lives in one arena per invocation. It stays valid until
 * the export that made it returns, and is then freed all at once: never
 * free() it, and never keep a pointer to it in a global for a later
 * invocation (the next one may be another user). The exception is
 * kadu_main: what it allocates lives as long as the instance.
 * Strings you pass in are copied when the SDK keeps them, except those the
 * definitions given to kadu_add_* and kadu_bundle_info point to, which must
 * live as long as the instance (string literals and static data do).
 *
 * FAILURE. When memory runs out (the operator's memory limit), allocating
 * functions return NULL, and every function of this header accepts NULL
 * where it takes a JSON value or a result: it does nothing, or returns NULL,
 * false or an empty value. The invocation then ends as a fault (status 2)
 * whatever the handler returns, after one log line — so a handler needs no
 * NULL checks to be safe, only to stop early. A handler that returns NULL
 * also faults. Lookups (kadu_json_get, kadu_call_state, kadu_config, …)
 * return NULL for "absent".
 *
 * THREADS. An instance runs one invocation at a time, so nothing here locks,
 * and nothing here is safe to call from another thread or outside an export.
 */
#ifndef KADU_H
#define KADU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define KADU_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define KADU_PRINTF(fmt, args)
#endif

/* ------------------------------------------------------------------------
 * JSON: a small DOM. Parsed values are const; build new ones with
 * kadu_json_new_* and kadu_json_set/push. A value may sit in several
 * containers (it is not copied), but never inside itself.
 * --------------------------------------------------------------------- */

typedef struct kadu_json kadu_json;

typedef enum kadu_json_type {
    KADU_JSON_NONE = 0, /* no value: the pointer is NULL */
    KADU_JSON_NULL,
    KADU_JSON_BOOL,
    KADU_JSON_NUMBER,
    KADU_JSON_STRING,
    KADU_JSON_ARRAY,
    KADU_JSON_OBJECT
} kadu_json_type;

/* One element of an array (key NULL) or member of an object, in order. */
typedef struct kadu_item {
    const struct kadu_item *next;
    const char *key; /* NUL-terminated; may hold NUL bytes (see key_len) */
    size_t key_len;
    const kadu_json *value;
} kadu_item;

/* Containers deeper than this are refused by the parser (and the writer
 * refuses twice as deep, which also catches a value put inside itself). */
#define KADU_JSON_MAX_DEPTH 128

/* Parses len bytes of JSON text. Returns NULL when the text is not one JSON
 * value or nests deeper than KADU_JSON_MAX_DEPTH; *err (if err is not NULL)
 * then says why and where. Strings are checked as UTF-8: invalid bytes and
 * lone surrogates (\ud800) become U+FFFD, as Go's encoding/json does.
 * Numbers keep their text, so they are written back exactly. */
kadu_json *kadu_json_parse(const char *text, size_t len, const char **err);

/* Parses a NUL-terminated JSON text written in the bundle, e.g. a schema.
 * Invalid JSON is a bug in the bundle: it is logged, the invocation faults,
 * and NULL is returned. */
kadu_json *kadu_json_literal(const char *text);

/* Writes v as compact JSON, NUL-terminated, with its length in *len (if not
 * NULL). NULL when v is NULL, nests deeper than 2 * KADU_JSON_MAX_DEPTH, or
 * memory runs out. Invalid UTF-8 in strings is written as U+FFFD. */
char *kadu_json_write(const kadu_json *v, size_t *len);

kadu_json_type kadu_json_typeof(const kadu_json *v);

/* Object member key (the last one, if the text repeated it), or NULL. */
const kadu_json *kadu_json_get(const kadu_json *obj, const char *key);
/* First item of an array or object, or NULL: iterate with ->next. */
const kadu_item *kadu_json_items(const kadu_json *v);
/* The number of items of an array or object; 0 for anything else. */
size_t kadu_json_count(const kadu_json *v);
/* The i-th item of an array or object (linear time), or NULL. */
const kadu_json *kadu_json_at(const kadu_json *v, size_t i);

/* The string, NUL-terminated, or NULL when v is not a string. It may hold
 * NUL bytes (\u0000): *len (if not NULL) gives its full length. */
const char *kadu_json_string(const kadu_json *v, size_t *len);
/* true, with *out, when v is a number whose value is an integer that fits
 * (3, -7, 2.0, 1e3). */
bool kadu_json_int(const kadu_json *v, int64_t *out);
/* true, with *out, when v is a number a double holds (not 1e400). */
bool kadu_json_double(const kadu_json *v, double *out);
/* true, with *out, when v is true or false. */
bool kadu_json_bool(const kadu_json *v, bool *out);
/* The number's JSON text as written, e.g. "1.50", or NULL. */
const char *kadu_json_number_text(const kadu_json *v);

/* Shorthands for members: the fallback when absent or of another type. */
const char *kadu_json_get_string(const kadu_json *obj, const char *key); /* NULL */
int64_t kadu_json_get_int(const kadu_json *obj, const char *key, int64_t fallback);
bool kadu_json_get_bool(const kadu_json *obj, const char *key, bool fallback);

/* Builders. Each returns a new value, or NULL when memory runs out. */
kadu_json *kadu_json_new_object(void);
kadu_json *kadu_json_new_array(void);
kadu_json *kadu_json_new_string(const char *s);           /* copied */
kadu_json *kadu_json_new_stringn(const char *s, size_t n); /* copied; may hold NUL */
kadu_json *kadu_json_new_int(int64_t i);
kadu_json *kadu_json_new_double(double d); /* shortest text that reads back; NaN, ±Inf: null */
kadu_json *kadu_json_new_bool(bool b);
kadu_json *kadu_json_new_null(void);

/* Sets member key of obj to value (replacing one of the same key) and
 * returns obj. The key is copied; value is not. */
kadu_json *kadu_json_set(kadu_json *obj, const char *key, const kadu_json *value);
/* Appends value to array arr and returns arr. */
kadu_json *kadu_json_push(kadu_json *arr, const kadu_json *value);
/* Shorthands: kadu_json_set(obj, key, kadu_json_new_…(x)). */
kadu_json *kadu_json_set_string(kadu_json *obj, const char *key, const char *s);
kadu_json *kadu_json_set_int(kadu_json *obj, const char *key, int64_t i);
kadu_json *kadu_json_set_bool(kadu_json *obj, const char *key, bool b);

/* ------------------------------------------------------------------------
 * Memory and strings (the invocation's arena; see MEMORY above).
 * --------------------------------------------------------------------- */

/* size zeroed bytes aligned for any type, or NULL. */
void *kadu_alloc(size_t size);
char *kadu_strdup(const char *s);
/* printf into a new string, or NULL. */
char *kadu_sprintf(const char *fmt, ...) KADU_PRINTF(1, 2);
/* s percent-encoded as one path segment or query value: every byte but
 * A-Z a-z 0-9 - . _ ~ becomes %XX ("a/b c" -> "a%2Fb%20c"). */
char *kadu_url_escape(const char *s);

/* ------------------------------------------------------------------------
 * Logging. The host adds the bundle, version, organisation and request id,
 * cuts a message at 4 KiB and rate-limits. Log identifiers and counts,
 * never secrets, file contents or execution output.
 * --------------------------------------------------------------------- */

typedef enum kadu_level { KADU_DEBUG = 0, KADU_INFO = 1, KADU_WARN = 2, KADU_ERROR = 3 } kadu_level;

void kadu_log(kadu_level level, const char *fmt, ...) KADU_PRINTF(2, 3);

/* Logs at KADU_ERROR and aborts: a trap, so the host discards the instance
 * and the client gets an internal error. For broken invariants (bugs). */
_Noreturn void kadu_panic(const char *fmt, ...) KADU_PRINTF(1, 2);

/* The operator's config value for key (a string; other YAML values come as
 * their JSON text), NUL-terminated with its length in *len, or NULL when the
 * key is absent. Config is not secret and not per caller. */
const char *kadu_config(const char *key, size_t *len);

/* ------------------------------------------------------------------------
 * The invocation: who calls, from which client, and the way to the API.
 * A kadu_call is valid only during the handler it was passed to.
 * --------------------------------------------------------------------- */

typedef struct kadu_call kadu_call;

typedef enum kadu_role {
    KADU_ROLE_UNSET = 0,
    KADU_ROLE_VIEWER,
    KADU_ROLE_MEMBER,
    KADU_ROLE_ADMIN,
    KADU_ROLE_OWNER
} kadu_role;

typedef enum kadu_scope {
    KADU_SCOPE_UNSET = 0,
    KADU_SCOPE_READ,  /* kadu.read */
    KADU_SCOPE_WRITE, /* kadu.write */
    KADU_SCOPE_RUN,   /* kadu.run */
    KADU_SCOPE_ADMIN  /* kadu.admin */
} kadu_scope;

/* Who is calling (caller_info). Strings are never NULL ("" when the host
 * sent none), except client_name and client_version, which are NULL when
 * the client did not say what it is. It never holds a token. */
typedef struct kadu_caller {
    const char *org_id;
    const char *user_id; /* the token's subject */
    const char *role;    /* "viewer", "member", "admin" or "owner" */
    const char *request_id;
    const char *const *scopes; /* e.g. "kadu.read", NULL-terminated, sorted */
    size_t scope_count;
    const char *client_name; /* what the client says it is */
    const char *client_version;
} kadu_caller;

/* The caller, read from the host once per invocation. Never NULL. */
const kadu_caller *kadu_call_caller(kadu_call *c);
/* Whether the caller's role is at least role. */
bool kadu_caller_is_at_least(const kadu_caller *who, kadu_role role);
/* Whether the caller's token has scope (scopes are closed: admin has all). */
bool kadu_caller_has_scope(const kadu_caller *who, kadu_scope scope);

/* "tools/call", "resources/read", "prompts/get" or "completion/complete". */
const char *kadu_call_op(kadu_call *c);
/* The invocation's params as the host sent them (sdk/ABI.md §7). */
const kadu_json *kadu_call_params(kadu_call *c);
/* The client's declared capabilities (an object), or NULL when unknown
 * (era-2025 clients). */
const kadu_json *kadu_call_capabilities(kadu_call *c);
/* Whether the client declared capability name, e.g. "elicitation". Check
 * before kadu_result_input_required and offer another way when false. */
bool kadu_call_has_capability(kadu_call *c, const char *name);
/* The MCP revision of the request, e.g. "2026-07-28", or "". */
const char *kadu_call_protocol_version(kadu_call *c);

/* Whether this is a retry after the bundle answered input-required. */
bool kadu_call_retrying(kadu_call *c);
/* On a retry: the state the bundle returned, unchanged (the host sealed
 * it). NULL on a first call. */
const kadu_json *kadu_call_state(kadu_call *c);
/* On a retry: the client's response to the input request of key, e.g.
 * {"action":"accept","content":{…}}, or NULL. It comes from the client:
 * validate it. */
const kadu_json *kadu_call_input_response(kadu_call *c, const char *key);

/* A Kadu API response. */
typedef struct kadu_response {
    int status;            /* the HTTP status, e.g. 200, 404 */
    const char *body;      /* NUL-terminated; "" when empty */
    size_t body_len;
    const kadu_json *json; /* the body parsed; NULL when empty or not JSON */
} kadu_response;

/* Sends one request to the Kadu API as the caller and returns its response,
 * whatever the status. method is GET, POST, PUT, PATCH or DELETE; path is the
 * full path with its query, already percent-encoded (kadu_url_escape), e.g.
 * "/api/v1/tasks/tsk_1"; body is a JSON value or NULL for none. Writes take
 * an idempotency_key body member. The host refuses in the API's own error
 * shape: 403 route_not_granted (a route not declared or granted), 413 (a body
 * over 1 MiB), 429 api_budget_exhausted (too many calls in one invocation).
 * Never NULL. */
const kadu_response *kadu_api(kadu_call *c, const char *method, const char *path, const kadu_json *body);
/* The same with a body of body_len bytes of JSON text (NULL, 0: none). */
const kadu_response *kadu_api_raw(kadu_call *c, const char *method, const char *path, const char *body,
                                  size_t body_len);
/* Whether the status is 2xx. */
bool kadu_response_ok(const kadu_response *r);

/* ------------------------------------------------------------------------
 * Results. A handler returns one of these (or NULL: a fault). Each is built
 * in the arena; on a lack of memory it is NULL and the invocation faults.
 * --------------------------------------------------------------------- */

typedef struct kadu_result kadu_result;

/* JSON-RPC codes a bundle may use (others become -32603). */
#define KADU_INVALID_PARAMS (-32602) /* names something absent, or malformed */
#define KADU_INTERNAL_ERROR (-32603) /* this bundle cannot answer */

/* Tools. */
/* One text content block. */
kadu_result *kadu_result_text(const char *text);
/* structuredContent = object (a JSON object), and the same JSON as text. A
 * tool with an output_schema must answer this way (or with an error). */
kadu_result *kadu_result_structured(const kadu_json *object);
/* Full control: content is an array of content blocks (kadu_content_text),
 * structured an object or NULL. */
kadu_result *kadu_result_tool(const kadu_json *content, const kadu_json *structured, bool is_error);
/* A text content block {"type":"text","text":…}. */
kadu_json *kadu_content_text(const char *text);
/* An isError result the model reads and can act on: say what happened and
 * what to do next. */
kadu_result *kadu_result_error(const char *text);
/* An API answer other than 2xx as the model should read it: for a 4xx, an
 * isError result whose text is the API's error body as it is (its hint is
 * written for a model); for a 5xx, an isError result asking to try again
 * (with the request_id). In a resource, prompt or completion: a -32602
 * error (404 on a resource: "Resource not found"), or -32603 for a 5xx. */
kadu_result *kadu_result_api_error(const kadu_response *r);
/* 2xx: like kadu_result_structured(r->json) for an object body, else the
 * body as text; anything else: kadu_result_api_error(r). */
kadu_result *kadu_result_response(const kadu_response *r);

/* Any op. */
/* The op's whole result as it is, e.g. {"contents":[…]} or {"messages":[…]}. */
kadu_result *kadu_result_json(const kadu_json *result);
/* Status 1: a JSON-RPC error, for a request that cannot be served at all.
 * data may be NULL. */
kadu_result *kadu_result_protocol_error(int code, const char *message, const kadu_json *data);
/* Asks the client for input first (sdk/ABI.md §9). requests is an object of
 * key -> request (kadu_elicit); state any JSON of at most 16 KiB as written
 * (NULL: null), handed back on the retry (kadu_call_state) with the answers
 * (kadu_call_input_response). The client cannot read or change it. */
kadu_result *kadu_result_input_required(const kadu_json *requests, const kadu_json *state);
/* A form elicitation request: message for the person and the JSON Schema
 * text of the answer (a flat object of primitive properties). */
kadu_json *kadu_elicit(const char *message, const char *requested_schema);

/* Resources. */
/* {"contents":[{"uri","mimeType","text"}]}; mime_type may be NULL. */
kadu_result *kadu_result_resource(const char *uri, const char *mime_type, const char *text);
/* Status 1 -32602 "Resource not found" with {"uri": uri}. */
kadu_result *kadu_result_not_found(const char *uri);

/* Prompts: one user message of text (never untrusted data as if it were an
 * instruction). description may be NULL. */
kadu_result *kadu_result_prompt(const char *description, const char *user_text);

/* Completions: values (an array of strings, best first; more than 100 are
 * cut and hasMore is set). */
kadu_result *kadu_result_completion(const kadu_json *values);
/* The candidates (NULL-terminated) that start with prefix, in order. */
kadu_result *kadu_result_completion_of(const char *prefix, const char *const *candidates);

/* ------------------------------------------------------------------------
 * Registration: what the bundle offers (sdk/ABI.md §10). kadu_add_* copy
 * the definition struct; the strings and arrays it points to must live as
 * long as the instance. Mistakes (a bad name, a schema that is not JSON) are
 * logged, and kadu_describe then faults so the host refuses the bundle.
 * --------------------------------------------------------------------- */

typedef struct kadu_bundle kadu_bundle;

/* Who may list and use an entry: a role at least min_role and scope among
 * the token's scopes. Required: the zero value is refused. */
typedef struct kadu_access {
    kadu_role min_role;
    kadu_scope scope;
} kadu_access;

/* Tool hints, OR-ed. Every hint is always sent as an explicit boolean;
 * openWorldHint is always false (a bundle reaches only the Kadu API). */
#define KADU_READ_ONLY 1u   /* changes nothing */
#define KADU_DESTRUCTIVE 2u /* deletes, cancels, re-sends…: the host asks the person first */
#define KADU_IDEMPOTENT 4u  /* calling again with the same arguments changes nothing more */

/* args is the arguments object (never NULL), already validated by the host
 * against input_schema. */
typedef kadu_result *kadu_tool_fn(kadu_call *c, const kadu_json *args);
typedef kadu_result *kadu_resource_fn(kadu_call *c, const char *uri);
/* vars: the template's variables, percent-decoded, e.g. {"id":"item1"}. */
typedef kadu_result *kadu_template_fn(kadu_call *c, const char *uri, const kadu_json *vars);
/* args: the prompt's arguments, an object of strings; required ones are
 * present and not blank. */
typedef kadu_result *kadu_prompt_fn(kadu_call *c, const kadu_json *args);
/* ref: {"type":"ref/prompt","name"} or {"type":"ref/resource","uri": the
 * template}; argument and value: what is being completed and what the person
 * typed so far. Other chosen arguments: kadu_call_params(c) "context". */
typedef kadu_result *kadu_complete_fn(kadu_call *c, const kadu_json *ref, const char *argument,
                                      const char *value);

typedef struct kadu_tool {
    const char *name;          /* ^[a-zA-Z0-9_.-]{1,64}$, unique across the server */
    const char *title;         /* optional, e.g. "Run a task" */
    const char *description;   /* for a model: what, when, what comes back, what is untrusted */
    const char *input_schema;  /* JSON Schema text, "type":"object"; NULL: {"type":"object"} */
    const char *output_schema; /* JSON Schema text or NULL; not on destructive tools */
    unsigned hints;            /* KADU_READ_ONLY | KADU_DESTRUCTIVE | KADU_IDEMPOTENT */
    kadu_access access;
    const char *const *requires_capabilities; /* NULL-terminated ("elicitation", …) or NULL */
    kadu_tool_fn *run;
} kadu_tool;

typedef struct kadu_resource {
    const char *uri; /* absolute, e.g. "acme://reports/usage" */
    const char *name;
    const char *title;
    const char *description;
    const char *mime_type;
    kadu_access access;
    kadu_resource_fn *read;
} kadu_resource;

typedef struct kadu_template {
    const char *uri_template; /* level-1 RFC 6570, e.g. "acme://reports/{id}"; a
                                 variable matches 1+ characters other than / ? # */
    const char *name;
    const char *title;
    const char *description;
    const char *mime_type;
    kadu_access access;
    kadu_template_fn *read;
} kadu_template;

typedef struct kadu_prompt_arg {
    const char *name;
    const char *description;
    bool required;
} kadu_prompt_arg;

typedef struct kadu_prompt {
    const char *name;
    const char *title;
    const char *description;
    const kadu_prompt_arg *arguments; /* ended by {0} (a NULL name), or NULL for none */
    kadu_access access;
    kadu_prompt_fn *get;
} kadu_prompt;

/* Defined by the bundle: registers everything, once per instance. */
void kadu_main(kadu_bundle *b);

/* name ^[a-z][a-z0-9_]{0,31}$ (the operator's config names the bundle the
 * same way), version semver ("1.2.0"), description for operators or NULL. */
void kadu_bundle_info(kadu_bundle *b, const char *name, const char *version, const char *description);
/* An API route the bundle calls, "METHOD /path/{param}" (no query); the
 * operator must grant it. */
void kadu_add_route(kadu_bundle *b, const char *route);
void kadu_add_tool(kadu_bundle *b, const kadu_tool *t);
void kadu_add_resource(kadu_bundle *b, const kadu_resource *r);
void kadu_add_template(kadu_bundle *b, const kadu_template *t);
void kadu_add_prompt(kadu_bundle *b, const kadu_prompt *p);
/* The bundle's completion handler (at most one); sets "completions": true. */
void kadu_set_completer(kadu_bundle *b, kadu_complete_fn *complete);

#ifdef __cplusplus
}
#endif

#endif /* KADU_H */
