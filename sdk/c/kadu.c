//go:build ignore

/* (The line above is for the go tool, which runs the Go tests in this
 * directory: it must not take this file for cgo. To C it is a comment.)
 *
 * kadu.c — the C SDK for Kadu bundles: the guest side of ABI "kadu/v1"
 * (sdk/ABI.md). The public API and its rules are in kadu.h; the SDK is
 * kadu.h and the kadu*.c files beside it, which share their internals
 * through kadu_internal.h.
 *
 * This file owns the host boundary: the exports kadu_abi_v1, kadu_describe
 * and kadu_handle, the kadu host imports, failing and logging, the call
 * (caller, client, config, API), and dispatch of an invocation to its
 * handler. The rest of the SDK: kadu_arena.c (the per-invocation arena),
 * kadu_json.c (a bounded JSON parser and writer), kadu_result.c (results,
 * and their mapping onto the ABI's results and statuses), kadu_bundle.c
 * (registration, and the manifest built from what kadu_main registered).
 *
 * The SDK must not: keep anything about a caller past the export that
 * served it (the arena is emptied when every export returns), read or write
 * outside a buffer it allocated, or turn a fault into something the client
 * sees.
 *
 * Sections: host imports · failing and logging · the call · dispatch ·
 * exports.
 */
#include "kadu_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Host imports (sdk/ABI.md §6). Every buffer is ours; the host reads or
 * writes it only during the call.
 * --------------------------------------------------------------------- */

#define KADU_IMPORT(name) __attribute__((import_module("kadu"), import_name(name)))

KADU_IMPORT("input_read") int32_t kadu__input_read(void *buf, int32_t cap);
KADU_IMPORT("output_write") int32_t kadu__output_write(const void *ptr, int32_t len);
KADU_IMPORT("api")
int64_t kadu__api(const char *method, int32_t method_len, const char *path, int32_t path_len, const char *body,
                  int32_t body_len);
KADU_IMPORT("api_read") int32_t kadu__api_read(void *buf, int32_t cap);
KADU_IMPORT("caller_info") int32_t kadu__caller_info(void *buf, int32_t cap);
KADU_IMPORT("config_get") int32_t kadu__config_get(const char *key, int32_t key_len, void *buf, int32_t cap);
KADU_IMPORT("log") void kadu__log(int32_t level, const char *ptr, int32_t len);

/* ------------------------------------------------------------------------
 * Failing and logging. Logging formats into a static buffer, so that it
 * works when memory has run out.
 * --------------------------------------------------------------------- */

/* Whether this export faults: set by kadu__fail(), which logs why; the export then
 * returns STATUS_FAULT whatever the handler answered. */
bool kadu__fault;

static char log_buf[LOG_MAX];

void kadu__vlog(kadu_level level, const char *fmt, va_list ap) {
    int n = vsnprintf(log_buf, sizeof log_buf, fmt, ap);
    if (n < 0) return;
    size_t len = (size_t)n;
    if (len >= sizeof log_buf) { /* cut, but not inside a UTF-8 sequence */
        len = sizeof log_buf - 1;
        while (len > 0 && ((unsigned char)log_buf[len] & 0xC0) == 0x80) len--;
    }
    kadu__log((int32_t)level, log_buf, (int32_t)len);
}

void kadu_log(kadu_level level, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    kadu__vlog(level, fmt, ap);
    va_end(ap);
}

_Noreturn void kadu_panic(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    kadu__vlog(KADU_ERROR, fmt, ap);
    va_end(ap);
    abort();
}

/* kadu__fail marks the invocation as a fault and logs why (the first reason). */
KADU_PRINTF(1, 2) void kadu__fail(const char *fmt, ...) {
    if (kadu__fault) return;
    kadu__fault = true;
    va_list ap;
    va_start(ap, fmt);
    kadu__vlog(KADU_ERROR, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------------
 * The call: invocation, caller, client, config, API
 * --------------------------------------------------------------------- */

/* read_sized calls a host function that writes only when the buffer is
 * large enough and returns the length needed (caller_info, config_get):
 * first with 256 bytes, then with the exact size. -1 stays -1. */
static int32_t host_sized(const char *key, void *buf, int32_t cap) {
    return key ? kadu__config_get(key, (int32_t)strlen(key), buf, cap) : kadu__caller_info(buf, cap);
}

static char *read_sized(const char *key, size_t *len) {
    int32_t cap = 256;
    char *buf = kadu__alloc((size_t)cap + 1);
    if (!buf) return NULL;
    int32_t n = host_sized(key, buf, cap);
    if (n < 0) return NULL;
    if (n > cap) {
        if (!(buf = kadu__alloc((size_t)n + 1))) return NULL;
        int32_t m = host_sized(key, buf, n);
        if (m != n) {
            kadu__fail("kadu: the host changed its answer from %d to %d bytes between two reads", (int)n, (int)m);
            return NULL;
        }
    }
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

const char *kadu_config(const char *key, size_t *len) {
    size_t n = 0;
    if (!key) return NULL;
    char *v = read_sized(key, &n);
    if (v && len) *len = n;
    return v;
}

static const char *const no_scopes[] = {NULL};
static const kadu_caller nobody = {"", "", "", "", no_scopes, 0, NULL, NULL};

static const char *or_empty(const char *s) { return s ? s : ""; }

const kadu_caller *kadu_call_caller(kadu_call *c) {
    if (!c) return &nobody;
    if (c->caller) return c->caller;
    c->caller = &nobody;
    size_t n = 0;
    char *raw = read_sized(NULL, &n);
    const kadu_json *v = raw ? kadu_json_parse(raw, n, NULL) : NULL;
    if (kadu_json_typeof(v) != KADU_JSON_OBJECT) {
        kadu__fail("kadu: caller_info did not answer a JSON object (%zu bytes)", n);
        return c->caller;
    }
    kadu_caller *who = kadu__alloc(sizeof *who);
    const kadu_json *scopes = kadu_json_get(v, "scopes");
    const char **list = kadu__alloc((kadu_json_count(scopes) + 1) * sizeof *list);
    if (!who || !list) return c->caller;
    size_t k = 0;
    for (const kadu_item *it = kadu_json_items(scopes); it; it = it->next)
        if (kadu_json_string(it->value, NULL)) list[k++] = kadu_json_string(it->value, NULL);
    list[k] = NULL;
    const kadu_json *client = kadu_json_get(v, "client");
    *who = (kadu_caller){
        .org_id = or_empty(kadu_json_get_string(v, "org_id")),
        .user_id = or_empty(kadu_json_get_string(v, "user_id")),
        .role = or_empty(kadu_json_get_string(v, "role")),
        .request_id = or_empty(kadu_json_get_string(v, "request_id")),
        .scopes = list,
        .scope_count = k,
        .client_name = kadu_json_get_string(client, "name"),
        .client_version = kadu_json_get_string(client, "version"),
    };
    return c->caller = who;
}

const char *const kadu__role_names[] = {"", "viewer", "member", "admin", "owner"};
const char *const kadu__scope_names[] = {"", "read", "write", "run", "admin"};

bool kadu_caller_is_at_least(const kadu_caller *who, kadu_role role) {
    if (!who || role <= KADU_ROLE_UNSET || role > KADU_ROLE_OWNER) return false;
    for (int r = role; r <= KADU_ROLE_OWNER; r++)
        if (strcmp(who->role, kadu__role_names[r]) == 0) return true;
    return false;
}

bool kadu_caller_has_scope(const kadu_caller *who, kadu_scope scope) {
    if (!who || scope <= KADU_SCOPE_UNSET || scope > KADU_SCOPE_ADMIN) return false;
    for (size_t i = 0; i < who->scope_count; i++)
        if (strncmp(who->scopes[i], "kadu.", 5) == 0 && strcmp(who->scopes[i] + 5, kadu__scope_names[scope]) == 0)
            return true;
    return false;
}

const char *kadu_call_op(kadu_call *c) { return c ? c->op : ""; }
const kadu_json *kadu_call_params(kadu_call *c) { return c ? c->params : NULL; }

const kadu_json *kadu_call_capabilities(kadu_call *c) {
    const kadu_json *caps = kadu_json_get(c ? c->client : NULL, "capabilities");
    return kadu_json_typeof(caps) == KADU_JSON_OBJECT ? caps : NULL;
}

bool kadu_call_has_capability(kadu_call *c, const char *name) {
    return kadu_json_get(kadu_call_capabilities(c), name) != NULL;
}

const char *kadu_call_protocol_version(kadu_call *c) {
    return or_empty(kadu_json_get_string(c ? c->client : NULL, "protocol_version"));
}

bool kadu_call_retrying(kadu_call *c) { return c && (c->state || c->responses); }
const kadu_json *kadu_call_state(kadu_call *c) { return c ? c->state : NULL; }

const kadu_json *kadu_call_input_response(kadu_call *c, const char *key) {
    return kadu_json_get(c ? c->responses : NULL, key);
}

static const kadu_response no_response = {0, "", 0, NULL};

const kadu_response *kadu_api_raw(kadu_call *c, const char *method, const char *path, const char *body,
                                  size_t body_len) {
    (void)c;
    if (!method || !path || (!body && body_len) || body_len > INT32_MAX) {
        if (!kadu__fault) kadu__fail("kadu_api: a method, a path and a body of at most 2 GiB are required");
        return &no_response;
    }
    int64_t r = kadu__api(method, (int32_t)strlen(method), path, (int32_t)strlen(path), body, (int32_t)body_len);
    uint32_t n = (uint32_t)((uint64_t)r & 0xFFFFFFFFu);
    kadu_response *resp = kadu__alloc(sizeof *resp);
    char *buf = n < INT32_MAX ? kadu__alloc((size_t)n + 1) : kadu__oom(n);
    if (!resp || !buf) return &no_response;
    if (n > 0 && kadu__api_read(buf, (int32_t)n) != (int32_t)n) {
        kadu__fail("kadu: api_read did not return the %u bytes api announced for %s %s", (unsigned)n, method, path);
        return &no_response;
    }
    buf[n] = '\0';
    *resp = (kadu_response){(int)(r >> 32), buf, n, n ? kadu_json_parse(buf, n, NULL) : NULL};
    return resp;
}

const kadu_response *kadu_api(kadu_call *c, const char *method, const char *path, const kadu_json *body) {
    size_t n = 0;
    char *text = NULL;
    if (body && !(text = kadu_json_write(body, &n))) return &no_response;
    return kadu_api_raw(c, method, path, text, n);
}

bool kadu_response_ok(const kadu_response *r) { return r && r->status >= 200 && r->status < 300; }

/* ------------------------------------------------------------------------
 * Dispatch
 * --------------------------------------------------------------------- */

int32_t kadu__emit(const kadu_json *out, int32_t status) {
    size_t n = 0;
    if (!out && !kadu__fault) kadu__fail("kadu: no output to write");
    char *text = kadu_json_write(out, &n);
    if (!text || kadu__fault) return STATUS_FAULT;
    if (n > INT32_MAX || kadu__output_write(text, (int32_t)n) != 0) {
        kadu__fail("kadu: the output of %zu bytes is over this bundle's output cap; return less (e.g. ask for a smaller "
             "page)",
             n);
        return STATUS_FAULT;
    }
    return status;
}

/* pct_decode decodes %XX escapes as Go's url.PathUnescape; NULL on a bad one. */
static kadu_json *pct_decode(const char *s, size_t n) {
    char *out = kadu__alloc(n + 1);
    size_t k = 0;
    uint32_t byte;
    char hex[4] = {0};
    for (size_t i = 0; out && i < n; i++) {
        if (s[i] != '%') {
            out[k++] = s[i];
            continue;
        }
        if (n - i < 3) return NULL;
        hex[0] = hex[1] = '0';
        hex[2] = s[i + 1];
        hex[3] = s[i + 2];
        if (!kadu__hex4((const unsigned char *)hex, (const unsigned char *)hex + 4, &byte)) return NULL;
        out[k++] = (char)byte;
        i += 2;
    }
    return out ? kadu_json_new_stringn(out, k) : NULL;
}

/* match_template matches uri against a checked level-1 template and sets
 * its variables in vars. A variable takes 1+ characters other than / ? #;
 * when the literal after it occurs more than once, it takes the longest
 * match (no backtracking: linear time). */
static bool match_template(const char *t, const char *uri, kadu_json *vars) {
    const char *u = uri, *end = uri + strlen(uri);
    while (*t) {
        if (*t != '{') { /* a literal */
            size_t n = strcspn(t, "{");
            if ((size_t)(end - u) < n || memcmp(u, t, n) != 0) return false;
            u += n;
            t += n;
            continue;
        }
        const char *name = t + 1, *close = strchr(t, '}');
        const char *lit = close + 1;
        size_t lit_len = strcspn(lit, "{");
        const char *span = u; /* how far the variable may reach */
        while (span < end && !strchr("/?#", *span)) span++;
        const char *stop = NULL;
        if (lit[lit_len] == '\0') { /* the last variable: the literal ends the URI */
            if ((size_t)(end - u) >= lit_len + 1 && memcmp(end - lit_len, lit, lit_len) == 0) stop = end - lit_len;
            if (stop && stop > span) stop = NULL;
        } else {
            for (const char *q = span; q > u && !stop; q--)
                if ((size_t)(end - q) >= lit_len && memcmp(q, lit, lit_len) == 0) stop = q;
        }
        if (!stop || stop == u) return false;
        kadu_json *value = pct_decode(u, (size_t)(stop - u));
        char *key = kadu__copy_bytes(name, (size_t)(close - name));
        if (!value || !key) return false;
        kadu_json_set(vars, key, value);
        u = stop;
        t = lit;
    }
    return u == end;
}

static int32_t call_tool(kadu_call *c) {
    const char *name = kadu_json_get_string(c->params, "name");
    const kadu_tool *t = NULL;
    for (size_t i = 0; name && i < kadu__bundle.ntools && !t; i++)
        if (strcmp(kadu__bundle.tools[i].name, name) == 0) t = &kadu__bundle.tools[i];
    if (!t) return kadu__protocol_error(KADU_INVALID_PARAMS, kadu_sprintf("Unknown tool: %s", kadu__show(name)), NULL);
    const kadu_json *args = kadu_json_get(c->params, "arguments");
    if (kadu_json_typeof(args) <= KADU_JSON_NULL) args = kadu_json_new_object();
    if (kadu_json_typeof(args) != KADU_JSON_OBJECT)
        return kadu__fault ? STATUS_FAULT : kadu__protocol_error(KADU_INVALID_PARAMS, "Tool arguments must be an object.", NULL);
    return kadu__finish(OP_TOOL, t, kadu_sprintf("tool %s", name), c, t->run(c, args));
}

static int32_t read_resource(kadu_call *c) {
    const char *uri = or_empty(kadu_json_get_string(c->params, "uri"));
    for (size_t i = 0; i < kadu__bundle.nresources; i++)
        if (strcmp(kadu__bundle.resources[i].uri, uri) == 0)
            return kadu__finish(OP_RESOURCE, NULL, kadu_sprintf("resource %s", uri), c, kadu__bundle.resources[i].read(c, uri));
    for (size_t i = 0; i < kadu__bundle.ntemplates; i++) {
        kadu_json *vars = kadu_json_new_object();
        if (match_template(kadu__bundle.templates[i].uri_template, uri, vars))
            return kadu__finish(OP_RESOURCE, NULL, kadu_sprintf("template %s", kadu__bundle.templates[i].uri_template), c,
                          kadu__bundle.templates[i].read(c, uri, vars));
    }
    return kadu__finish(OP_RESOURCE, NULL, "resources/read", c, kadu_result_not_found(uri));
}

static int32_t get_prompt(kadu_call *c) {
    const char *name = kadu_json_get_string(c->params, "name");
    const kadu_prompt *p = NULL;
    for (size_t i = 0; name && i < kadu__bundle.nprompts && !p; i++)
        if (strcmp(kadu__bundle.prompts[i].name, name) == 0) p = &kadu__bundle.prompts[i];
    if (!p) return kadu__protocol_error(KADU_INVALID_PARAMS, kadu_sprintf("Unknown prompt: %s", kadu__show(name)), NULL);
    const kadu_json *args = kadu_json_get(c->params, "arguments");
    if (kadu_json_typeof(args) <= KADU_JSON_NULL) args = kadu_json_new_object();
    bool strings = kadu_json_typeof(args) == KADU_JSON_OBJECT;
    for (const kadu_item *it = kadu_json_items(args); it && strings; it = it->next)
        strings = kadu_json_typeof(it->value) == KADU_JSON_STRING;
    if (!strings) return kadu__protocol_error(KADU_INVALID_PARAMS, "Prompt arguments must be an object of strings.", NULL);
    char *missing = NULL;
    for (const kadu_prompt_arg *a = p->arguments; a && a->name; a++) {
        const char *v = kadu_json_get_string(args, a->name);
        while (v && strchr(" \t\r\n", *v) && *v) v++;
        if (a->required && (!v || !*v))
            missing = missing ? kadu_sprintf("%s, %s", missing, a->name) : kadu_sprintf("%s", a->name);
    }
    if (missing) return kadu__protocol_error(KADU_INVALID_PARAMS, kadu_sprintf("Missing required argument: %s", missing), NULL);
    return kadu__finish(OP_PROMPT, NULL, kadu_sprintf("prompt %s", name), c, p->get(c, args));
}

static int32_t complete(kadu_call *c) {
    if (!kadu__bundle.complete) return kadu__protocol_error(KADU_INVALID_PARAMS, "This bundle offers no completions.", NULL);
    const kadu_json *arg = kadu_json_get(c->params, "argument");
    return kadu__finish(OP_COMPLETE, NULL, "completion/complete", c,
                  kadu__bundle.complete(c, kadu_json_get(c->params, "ref"), or_empty(kadu_json_get_string(arg, "name")),
                                  or_empty(kadu_json_get_string(arg, "value"))));
}

static int32_t handle(int32_t in_len) {
    char *in = in_len >= 0 ? kadu__alloc((size_t)in_len + 1) : NULL;
    if (!in) {
        if (!kadu__fault) kadu__fail("kadu_handle: negative input length %d", (int)in_len);
        return STATUS_FAULT;
    }
    if (kadu__input_read(in, in_len) != in_len) {
        kadu__fail("kadu_handle: input_read did not return the %d bytes announced", (int)in_len);
        return STATUS_FAULT;
    }
    const char *err = NULL;
    const kadu_json *inv = kadu_json_parse(in, (size_t)in_len, &err);
    if (kadu__fault) return STATUS_FAULT;
    if (kadu_json_typeof(inv) != KADU_JSON_OBJECT)
        return kadu__protocol_error(KADU_INVALID_PARAMS,
                              kadu_sprintf("kadu_handle: the invocation is not a kadu/v1 JSON object: %s",
                                           inv ? "not an object" : kadu__show(err)),
                              NULL);
    kadu_call call = {
        .op = or_empty(kadu_json_get_string(inv, "op")),
        .params = kadu_json_get(inv, "params"),
        .state = kadu_json_get(inv, "state"),
        .responses = kadu_json_get(inv, "input_responses"),
        .client = kadu_json_get(inv, "client"),
    };
    if (kadu_json_typeof(call.responses) != KADU_JSON_OBJECT) call.responses = NULL;
    if (strcmp(call.op, "tools/call") == 0) return call_tool(&call);
    if (strcmp(call.op, "resources/read") == 0) return read_resource(&call);
    if (strcmp(call.op, "prompts/get") == 0) return get_prompt(&call);
    if (strcmp(call.op, "completion/complete") == 0) return complete(&call);
    return kadu__protocol_error(KADU_INVALID_PARAMS, kadu_sprintf("This bundle does not serve op %s.", call.op), NULL);
}

static int32_t describe(void) {
    if (kadu__bundle.broken) {
        kadu__fail("kadu_describe: kadu_main registered definitions the host would refuse (logged above)");
        return STATUS_FAULT;
    }
    if (!kadu__bundle.name) {
        kadu__fail("kadu_describe: kadu_main did not call kadu_bundle_info");
        return STATUS_FAULT;
    }
    if (kadu__bundle.ntools + kadu__bundle.nresources + kadu__bundle.ntemplates + kadu__bundle.nprompts == 0) {
        kadu__fail("kadu_describe: kadu_main registered no tool, resource, template or prompt");
        return STATUS_FAULT;
    }
    return kadu__emit(kadu__manifest(&kadu__bundle), STATUS_OK);
}

/* ------------------------------------------------------------------------
 * Exports (sdk/ABI.md §4). Each export starts from an empty arena and ends
 * by emptying it; kadu_main runs once, before the first.
 * --------------------------------------------------------------------- */

static int32_t run_export(bool describing, int32_t in_len) {
    kadu__arena_reset();
    kadu__fault = false;
    if (!kadu__bundle.ready) {
        kadu__bundle.ready = true;
        kadu__permanent = true;
        kadu_main(&kadu__bundle);
        kadu__permanent = false;
        if (kadu__fault) kadu__bundle.broken = true;
    }
    int32_t status = STATUS_FAULT;
    if (describing) status = describe();
    else if (kadu__bundle.broken) kadu__fail("kadu_handle: the bundle was refused at kadu_main (logged then)");
    else status = handle(in_len);
    if (kadu__fault) status = STATUS_FAULT;
    kadu__arena_reset();
    return status;
}

__attribute__((export_name("kadu_abi_v1"))) void kadu__abi_v1(void) {}

__attribute__((export_name("kadu_describe"))) int32_t kadu__describe(int32_t in_len) {
    (void)in_len; /* the input is {}, reserved */
    return run_export(true, 0);
}

__attribute__((export_name("kadu_handle"))) int32_t kadu__handle(int32_t in_len) { return run_export(false, in_len); }
