//go:build ignore

/* (The line above is for the go tool, which runs the Go tests in this
 * directory: it must not take this file for cgo. To C it is a comment.)
 *
 * kadu_result.c — the C SDK's results (see kadu.c): the kadu_result_*
 * constructors a handler returns, and kadu__finish, which writes a result
 * as the answer to its op: an MCP result, a tool error, a protocol error
 * or an input-required result, with the ABI's status.
 *
 * Sections: results · results on the wire.
 */
#include "kadu_internal.h"

#include <string.h>

/* ------------------------------------------------------------------------
 * Results. A result keeps what the handler meant; the op it answers decides
 * the wire form (kadu__finish, below).
 * --------------------------------------------------------------------- */

typedef enum {
    RES_JSON,       /* json: the result as it is */
    RES_TOOL_ERROR, /* text */
    RES_API_ERROR,  /* resp */
    RES_PROTOCOL,   /* code, text, json (data, or NULL) */
    RES_INPUT,      /* json (requests), state */
} res_kind;

struct kadu_result {
    res_kind kind;
    const kadu_json *json, *state;
    const char *text;
    const kadu_response *resp;
    int code;
    bool structured, is_error; /* RES_JSON of a tool */
};

static kadu_result *new_result(res_kind kind) {
    kadu_result *r = kadu__alloc(sizeof *r);
    if (r) *r = (kadu_result){.kind = kind};
    return r;
}

kadu_json *kadu_content_text(const char *text) {
    if (!text) return NULL;
    kadu_json *block = kadu_json_set_string(kadu_json_new_object(), "type", "text");
    return kadu_json_set_string(block, "text", text);
}

kadu_result *kadu_result_tool(const kadu_json *content, const kadu_json *structured, bool is_error) {
    if (kadu_json_typeof(content) != KADU_JSON_ARRAY ||
        (structured && kadu_json_typeof(structured) != KADU_JSON_OBJECT)) {
        if (!kadu__fault) kadu__fail("kadu_result_tool: content must be an array and structured an object or NULL");
        return NULL;
    }
    kadu_json *o = kadu_json_set(kadu_json_new_object(), "content", content);
    kadu_json_set(o, "structuredContent", structured);
    if (is_error) kadu_json_set_bool(o, "isError", true);
    kadu_result *r = o ? new_result(RES_JSON) : NULL;
    if (r) {
        r->json = o;
        r->structured = structured != NULL;
        r->is_error = is_error;
    }
    return r;
}

kadu_result *kadu_result_text(const char *text) {
    kadu_json *block = kadu_content_text(text);
    return block ? kadu_result_tool(kadu_json_push(kadu_json_new_array(), block), NULL, false) : NULL;
}

kadu_result *kadu_result_structured(const kadu_json *object) {
    if (kadu_json_typeof(object) != KADU_JSON_OBJECT) {
        if (!kadu__fault) kadu__fail("kadu_result_structured: want a JSON object");
        return NULL;
    }
    size_t n = 0;
    char *text = kadu_json_write(object, &n);
    kadu_json *block = kadu_json_set_string(kadu_json_new_object(), "type", "text");
    kadu_json_set(block, "text", kadu_json_new_stringn(text, n));
    if (!text || !block) return NULL;
    return kadu_result_tool(kadu_json_push(kadu_json_new_array(), block), object, false);
}

kadu_result *kadu_result_error(const char *text) {
    kadu_result *r = text ? new_result(RES_TOOL_ERROR) : NULL;
    if (r && !(r->text = kadu_strdup(text))) return NULL;
    return r;
}

kadu_result *kadu_result_api_error(const kadu_response *resp) {
    kadu_result *r = resp ? new_result(RES_API_ERROR) : NULL;
    if (r) r->resp = resp;
    return r;
}

kadu_result *kadu_result_response(const kadu_response *r) {
    if (!r) return NULL;
    if (!kadu_response_ok(r)) return kadu_result_api_error(r);
    if (kadu_json_typeof(r->json) == KADU_JSON_OBJECT) return kadu_result_structured(r->json);
    return kadu_result_text(r->body);
}

kadu_result *kadu_result_json(const kadu_json *result) {
    kadu_result *r = result ? new_result(RES_JSON) : NULL;
    if (r) r->json = result;
    return r;
}

kadu_result *kadu_result_protocol_error(int code, const char *message, const kadu_json *data) {
    kadu_result *r = message ? new_result(RES_PROTOCOL) : NULL;
    if (r) {
        r->code = code;
        r->json = data;
        if (!(r->text = kadu_strdup(message))) return NULL;
    }
    return r;
}

kadu_result *kadu_result_input_required(const kadu_json *requests, const kadu_json *state) {
    kadu_result *r = requests ? new_result(RES_INPUT) : NULL;
    if (r) {
        r->json = requests;
        r->state = state;
    }
    return r;
}

kadu_json *kadu_elicit(const char *message, const char *requested_schema) {
    kadu_json *schema = kadu_json_literal(requested_schema);
    kadu_json *params = kadu_json_set_string(kadu_json_new_object(), "mode", "form");
    kadu_json_set_string(params, "message", message);
    kadu_json_set(params, "requestedSchema", schema);
    kadu_json *req = kadu_json_set_string(kadu_json_new_object(), "method", "elicitation/create");
    return schema && message ? kadu_json_set(req, "params", params) : NULL;
}

kadu_result *kadu_result_resource(const char *uri, const char *mime_type, const char *text) {
    if (!uri || !text) return NULL;
    kadu_json *content = kadu_json_set_string(kadu_json_new_object(), "uri", uri);
    kadu_json_set_string(content, "mimeType", mime_type);
    kadu_json_set_string(content, "text", text);
    kadu_json *out = kadu_json_new_object();
    return kadu_result_json(kadu_json_set(out, "contents", kadu_json_push(kadu_json_new_array(), content)));
}

kadu_result *kadu_result_not_found(const char *uri) {
    if (!uri) return NULL;
    return kadu_result_protocol_error(KADU_INVALID_PARAMS, "Resource not found",
                                      kadu_json_set_string(kadu_json_new_object(), "uri", uri));
}

kadu_result *kadu_result_prompt(const char *description, const char *user_text) {
    kadu_json *msg = kadu_json_set_string(kadu_json_new_object(), "role", "user");
    kadu_json *content = kadu_content_text(user_text);
    if (!content) return NULL;
    kadu_json_set(msg, "content", content);
    kadu_json *out = kadu_json_set_string(kadu_json_new_object(), "description", description);
    return kadu_result_json(kadu_json_set(out, "messages", kadu_json_push(kadu_json_new_array(), msg)));
}

kadu_result *kadu_result_completion(const kadu_json *values) {
    if (kadu_json_typeof(values) != KADU_JSON_ARRAY) return NULL;
    kadu_json *list = kadu_json_new_array();
    size_t n = 0;
    for (const kadu_item *it = kadu_json_items(values); it && n < COMPLETION_MAX; it = it->next, n++)
        kadu_json_push(list, it->value);
    kadu_json *completion = kadu_json_set(kadu_json_new_object(), "values", list);
    if (kadu_json_count(values) > COMPLETION_MAX) kadu_json_set_bool(completion, "hasMore", true);
    return kadu_result_json(kadu_json_set(kadu_json_new_object(), "completion", completion));
}

kadu_result *kadu_result_completion_of(const char *prefix, const char *const *candidates) {
    size_t n = prefix ? strlen(prefix) : 0;
    kadu_json *values = kadu_json_new_array();
    for (size_t i = 0; candidates && candidates[i]; i++)
        if (strncmp(candidates[i], prefix ? prefix : "", n) == 0)
            kadu_json_push(values, kadu_json_new_string(candidates[i]));
    return kadu_result_completion(values);
}

/* ------------------------------------------------------------------------
 * Results on the wire: the answer to an op, written with kadu__emit
 * --------------------------------------------------------------------- */

int32_t kadu__protocol_error(int code, const char *message, const kadu_json *data) {
    kadu_json *o = kadu_json_set_int(kadu_json_new_object(), "code", code);
    kadu_json_set_string(o, "message", message);
    kadu_json_set(o, "data", data);
    return kadu__emit(o, STATUS_PROTOCOL);
}

static const char *const retry_text =
    "). Nothing says the request was wrong: try again in a moment. For a write, retry with the same "
    "idempotency_key so that it is not done twice.";

/* api_error_text is what the model reads for a non-2xx response: the 4xx
 * body as it is, or the retry text of a 5xx. */
static kadu_json *api_error_text(const kadu_response *r) {
    if (r->status >= 500) {
        const char *id = kadu_json_get_string(r->json, "request_id");
        return kadu_json_new_string(kadu_sprintf("Kadu could not complete this request (HTTP %d%s%s%s", r->status,
                                                 id && *id ? ", request_id " : "", id && *id ? id : "", retry_text));
    }
    if (!r->json) return kadu_json_new_string(kadu_sprintf("The Kadu API refused the request (HTTP %d).", r->status));
    const char *s = r->body, *e = r->body + r->body_len;
    while (s < e && strchr(" \t\r\n", *s)) s++;
    while (e > s && strchr(" \t\r\n", e[-1])) e--;
    return kadu_json_new_stringn(s, (size_t)(e - s));
}

static int32_t emit_tool_error(const kadu_json *text) {
    kadu_json *content = kadu_json_push(kadu_json_new_array(), kadu_content_text(kadu_json_string(text, NULL)));
    kadu_json *out = kadu_json_set(kadu_json_new_object(), "content", content);
    return kadu__emit(kadu_json_set_bool(out, "isError", true), STATUS_OK);
}

/* emit_input_required checks and writes an input-required result (sdk/ABI.md §9). */
static int32_t emit_input_required(const kadu_result *r) {
    kadu_json *reqs = kadu_json_new_object();
    if (kadu_json_count(r->json) == 0 || kadu_json_typeof(r->json) != KADU_JSON_OBJECT) {
        kadu__fail("kadu_result_input_required: requests must be an object with at least one request");
        return STATUS_FAULT;
    }
    for (const kadu_item *it = kadu_json_items(r->json); it; it = it->next) {
        const char *method = kadu_json_get_string(it->value, "method");
        const kadu_json *params = kadu_json_get(it->value, "params");
        if (!kadu__name_ok(it->key) || strlen(it->key) != it->key_len) {
            kadu__fail("kadu_result_input_required: key %s: want ^[a-zA-Z0-9_.-]{1,64}$", it->key);
            return STATUS_FAULT;
        }
        if (!method || (strcmp(method, "elicitation/create") && strcmp(method, "sampling/createMessage") &&
                        strcmp(method, "roots/list"))) {
            kadu__fail("kadu_result_input_required: request %s: method %s: want elicitation/create, sampling/createMessage "
                 "or roots/list",
                 it->key, kadu__show(method));
            return STATUS_FAULT;
        }
        kadu_json *req = kadu_json_set_string(kadu_json_new_object(), "method", method);
        kadu_json_set(req, "params", params ? params : kadu_json_new_object()); /* roots/list: {} */
        kadu_json_set(reqs, it->key, req);
    }
    const kadu_json *state = r->state ? r->state : kadu_json_new_null();
    size_t n = 0;
    if (kadu_json_write(state, &n) && n > STATE_MAX) {
        kadu__fail("kadu_result_input_required: the state is %zu bytes; the most is %d", n, STATE_MAX);
        return STATUS_FAULT;
    }
    kadu_json *out = kadu_json_set_string(kadu_json_new_object(), "resultType", "input_required");
    kadu_json_set(out, "inputRequests", reqs);
    return kadu__emit(kadu_json_set(out, "state", state), STATUS_OK);
}

/* kadu__finish writes the handler's result r as op's answer and returns the status. */
int32_t kadu__finish(op_kind op, const kadu_tool *tool, const char *what, const kadu_call *c, const kadu_result *r) {
    if (kadu__fault) return STATUS_FAULT;
    if (!r) {
        kadu__fail("%s: the handler returned NULL (a fault)", what);
        return STATUS_FAULT;
    }
    switch (r->kind) {
    case RES_JSON:
        if (tool && tool->output_schema && !r->structured && !r->is_error) {
            kadu__fail("%s: the tool declares an output_schema but its result has no structuredContent "
                 "(use kadu_result_structured)",
                 what);
            return STATUS_FAULT;
        }
        return kadu__emit(r->json, STATUS_OK);
    case RES_PROTOCOL: return kadu__protocol_error(r->code, r->text, r->json);
    case RES_INPUT: return emit_input_required(r);
    case RES_TOOL_ERROR:
        if (op == OP_TOOL) return emit_tool_error(kadu_json_new_string(r->text));
        return kadu__protocol_error(KADU_INVALID_PARAMS, r->text, NULL);
    case RES_API_ERROR: break;
    }
    const kadu_response *resp = r->resp;
    kadu_json *text = api_error_text(resp);
    if (op == OP_TOOL) return emit_tool_error(text);
    const kadu_json *uri = kadu_json_get(c->params, "uri");
    if (op == OP_RESOURCE && resp->status == 404)
        return kadu__protocol_error(KADU_INVALID_PARAMS, "Resource not found", kadu_json_set(kadu_json_new_object(), "uri", uri));
    if (resp->status >= 500) return kadu__protocol_error(KADU_INTERNAL_ERROR, kadu_json_string(text, NULL), NULL);
    const char *detail = kadu_json_get_string(kadu_json_at(kadu_json_get(resp->json, "errors"), 0), "detail");
    kadu_json *data = kadu_json_set_int(kadu_json_new_object(), "status", resp->status);
    kadu_json_set(data, "error", resp->json ? resp->json : text);
    return kadu__protocol_error(KADU_INVALID_PARAMS,
                          detail && *detail ? detail
                                            : kadu_sprintf("The Kadu API refused the request (HTTP %d).", resp->status),
                          data);
}
