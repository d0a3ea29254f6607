//go:build ignore

/* (The line above is for the go tool, which runs the Go tests in this
 * directory: it must not take this file for cgo. To C it is a comment.)
 *
 * kadu_bundle.c — the C SDK's registration (see kadu.c): kadu_bundle_info
 * and kadu_add_*, which check each definition as kadu_main adds it, the
 * one kadu_bundle they fill, and the manifest kadu_describe writes from it.
 *
 * Sections: registration · manifest.
 */
#include "kadu_internal.h"

#include <stdarg.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Registration. Definitions are checked as they are added; a refused one
 * is logged and makes kadu_describe fault, so the host refuses the bundle.
 * --------------------------------------------------------------------- */

kadu_bundle kadu__bundle;

KADU_PRINTF(2, 3) static void refuse(kadu_bundle *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    kadu__vlog(KADU_ERROR, fmt, ap);
    va_end(ap);
    b->broken = true;
}

/* kadu__name_ok matches ^[a-zA-Z0-9_.-]{1,64}$. */
bool kadu__name_ok(const char *s) {
    size_t n = 0;
    for (; s && s[n]; n++) {
        char c = s[n];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-'))
            return false;
    }
    return n >= 1 && n <= 64;
}

static bool access_ok(kadu_access a) {
    return a.min_role > KADU_ROLE_UNSET && a.min_role <= KADU_ROLE_OWNER && a.scope > KADU_SCOPE_UNSET &&
           a.scope <= KADU_SCOPE_ADMIN;
}

const char *kadu__show(const char *s) { return s ? s : "(NULL)"; }

void kadu_bundle_info(kadu_bundle *b, const char *name, const char *version, const char *description) {
    bool ok = name && name[0] >= 'a' && name[0] <= 'z' && strlen(name) <= 32;
    for (const char *p = name; ok && *p; p++) ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
    if (!ok) refuse(b, "kadu_bundle_info: name %s: want ^[a-z][a-z0-9_]{0,31}$", kadu__show(name));
    unsigned dots = 0; /* MAJOR.MINOR.PATCH, then any -pre or +build */
    const char *p = version;
    for (; p && *p && *p != '-' && *p != '+'; p++) {
        if (*p == '.') dots++;
        else if (*p < '0' || *p > '9') break;
    }
    if (!version || dots != 2 || !(*p == '\0' || *p == '-' || *p == '+') || version[0] == '.')
        refuse(b, "kadu_bundle_info: version %s: want a semantic version, e.g. 1.2.0", kadu__show(version));
    b->name = name;
    b->version = version;
    b->description = description;
}

void kadu_add_route(kadu_bundle *b, const char *route) {
    static const char *const methods[] = {"GET /", "POST /", "PUT /", "PATCH /", "DELETE /"};
    const char *path = NULL;
    for (size_t i = 0; route && !path && i < sizeof methods / sizeof *methods; i++)
        if (strncmp(route, methods[i], strlen(methods[i])) == 0) path = route + strlen(methods[i]) - 1;
    if (!path || strpbrk(path, "?# ") || strstr(path, "//") || strstr(path, "/..") || strstr(path, "/./"))
        { refuse(b, "kadu_add_route: %s: want \"METHOD /path\" with literal or {name} segments, no query",
                      kadu__show(route)); return; }
    if (b->nroutes == MAX_ENTRIES) { refuse(b, "kadu_add_route: more than %d routes", MAX_ENTRIES); return; }
    b->routes[b->nroutes++] = route;
}

void kadu_add_tool(kadu_bundle *b, const kadu_tool *t) {
    if (!t) { refuse(b, "kadu_add_tool: NULL"); return; }
    const char *at = kadu__show(t->name);
    if (!kadu__name_ok(t->name)) refuse(b, "tool %s: name: want ^[a-zA-Z0-9_.-]{1,64}$", at);
    for (size_t i = 0; t->name && i < b->ntools; i++)
        if (strcmp(b->tools[i].name, t->name) == 0) refuse(b, "tool %s: registered twice", at);
    if (!t->run) refuse(b, "tool %s: run: required", at);
    if (!access_ok(t->access)) refuse(b, "tool %s: access: want KADU_ROLE_* and KADU_SCOPE_*", at);
    if (t->hints & ~(KADU_READ_ONLY | KADU_DESTRUCTIVE | KADU_IDEMPOTENT))
        refuse(b, "tool %s: hints: want KADU_READ_ONLY, KADU_DESTRUCTIVE, KADU_IDEMPOTENT", at);
    if ((t->hints & KADU_READ_ONLY) && (t->hints & KADU_DESTRUCTIVE))
        refuse(b, "tool %s: hints: read-only and destructive at once", at);
    if ((t->hints & KADU_DESTRUCTIVE) && t->output_schema)
        refuse(b, "tool %s: output_schema: a destructive tool declares none (its first answer is a confirmation)", at);
    for (size_t i = 0; t->requires_capabilities && t->requires_capabilities[i]; i++) {
        const char *cap = t->requires_capabilities[i];
        if (strcmp(cap, "elicitation") && strcmp(cap, "sampling") && strcmp(cap, "roots"))
            refuse(b, "tool %s: requires_capabilities: %s: want elicitation, sampling or roots", at, cap);
    }
    if (b->ntools == MAX_ENTRIES) { refuse(b, "kadu_add_tool: more than %d tools", MAX_ENTRIES); return; }
    b->tools[b->ntools++] = *t;
}

void kadu_add_resource(kadu_bundle *b, const kadu_resource *r) {
    if (!r) { refuse(b, "kadu_add_resource: NULL"); return; }
    const char *at = kadu__show(r->uri);
    if (!r->uri || !strstr(r->uri, "://") || strchr(r->uri, '{'))
        refuse(b, "resource %s: uri: want an absolute URI (a template goes in kadu_add_template)", at);
    for (size_t i = 0; r->uri && i < b->nresources; i++)
        if (strcmp(b->resources[i].uri, r->uri) == 0) refuse(b, "resource %s: registered twice", at);
    if (!r->name || !*r->name) refuse(b, "resource %s: name: required", at);
    if (!r->read) refuse(b, "resource %s: read: required", at);
    if (!access_ok(r->access)) refuse(b, "resource %s: access: want KADU_ROLE_* and KADU_SCOPE_*", at);
    if (b->nresources == MAX_ENTRIES) { refuse(b, "kadu_add_resource: more than %d resources", MAX_ENTRIES); return; }
    b->resources[b->nresources++] = *r;
}

/* template_ok checks a level-1 template: {name} expressions of
 * [A-Za-z0-9_], at least one, a literal between two of them. */
static bool template_ok(const char *t) {
    if (!t || !strstr(t, "://")) return false;
    int vars = 0;
    bool after_var = false;
    for (const char *p = t; *p; p++) {
        if (*p == '}') return false;
        if (*p != '{') {
            after_var = false;
            continue;
        }
        if (after_var || ++vars > MAX_TEMPLATE_VARS) return false;
        const char *name = ++p;
        while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_') p++;
        if (p == name || *p != '}') return false;
        after_var = true;
    }
    return vars > 0;
}

void kadu_add_template(kadu_bundle *b, const kadu_template *t) {
    if (!t) { refuse(b, "kadu_add_template: NULL"); return; }
    const char *at = kadu__show(t->uri_template);
    if (!template_ok(t->uri_template))
        refuse(b, "template %s: uri_template: want an absolute URI with {name} variables (at most %d), a literal "
                  "between two",
               at, MAX_TEMPLATE_VARS);
    for (size_t i = 0; t->uri_template && i < b->ntemplates; i++)
        if (strcmp(b->templates[i].uri_template, t->uri_template) == 0) refuse(b, "template %s: registered twice", at);
    if (!t->name || !*t->name) refuse(b, "template %s: name: required", at);
    if (!t->read) refuse(b, "template %s: read: required", at);
    if (!access_ok(t->access)) refuse(b, "template %s: access: want KADU_ROLE_* and KADU_SCOPE_*", at);
    if (b->ntemplates == MAX_ENTRIES) { refuse(b, "kadu_add_template: more than %d templates", MAX_ENTRIES); return; }
    b->templates[b->ntemplates++] = *t;
}

void kadu_add_prompt(kadu_bundle *b, const kadu_prompt *p) {
    if (!p) { refuse(b, "kadu_add_prompt: NULL"); return; }
    const char *at = kadu__show(p->name);
    if (!kadu__name_ok(p->name)) refuse(b, "prompt %s: name: want ^[a-zA-Z0-9_.-]{1,64}$", at);
    for (size_t i = 0; p->name && i < b->nprompts; i++)
        if (strcmp(b->prompts[i].name, p->name) == 0) refuse(b, "prompt %s: registered twice", at);
    size_t n = 0;
    while (p->arguments && p->arguments[n].name && n <= MAX_PROMPT_ARGS) n++;
    if (n > MAX_PROMPT_ARGS) refuse(b, "prompt %s: more than %d arguments (end them with {0})", at, MAX_PROMPT_ARGS);
    for (size_t i = 0; i < n && i < MAX_PROMPT_ARGS; i++)
        if (!*p->arguments[i].name) refuse(b, "prompt %s: arguments[%zu].name: required", at, i);
    if (!p->get) refuse(b, "prompt %s: get: required", at);
    if (!access_ok(p->access)) refuse(b, "prompt %s: access: want KADU_ROLE_* and KADU_SCOPE_*", at);
    if (b->nprompts == MAX_ENTRIES) { refuse(b, "kadu_add_prompt: more than %d prompts", MAX_ENTRIES); return; }
    b->prompts[b->nprompts++] = *p;
}

void kadu_set_completer(kadu_bundle *b, kadu_complete_fn *complete) {
    if (!complete || b->complete) { refuse(b, "kadu_set_completer: want one completer, not NULL"); return; }
    b->complete = complete;
}

/* ------------------------------------------------------------------------
 * Manifest (sdk/ABI.md §10)
 * --------------------------------------------------------------------- */

static kadu_json *access_json(kadu_access a) {
    kadu_json *o = kadu_json_set_string(kadu_json_new_object(), "min_role", kadu__role_names[a.min_role]);
    return kadu_json_set_string(o, "scope", kadu__scope_names[a.scope]);
}

/* schema_json parses a tool's schema text; NULL text gives {"type":"object"}. */
static kadu_json *schema_json(const char *tool, const char *member, const char *text) {
    const char *err = NULL;
    kadu_json *s = kadu_json_parse(text ? text : "{\"type\":\"object\"}", text ? strlen(text) : 17, &err);
    const char *type = kadu_json_get_string(s, "type");
    if (!s) kadu__fail("tool %s: %s is not JSON: %s", tool, member, kadu__show(err));
    else if (!type || strcmp(type, "object") != 0) kadu__fail("tool %s: %s: want \"type\": \"object\" at the root", tool, member);
    return kadu__fault ? NULL : s;
}

/* entry_json starts an entry: the key member, then title and description. */
static kadu_json *entry_json(const char *key, const char *value, const char *title, const char *description) {
    kadu_json *o = kadu_json_set_string(kadu_json_new_object(), key, value);
    kadu_json_set_string(o, "title", title);
    return kadu_json_set_string(o, "description", description);
}

kadu_json *kadu__manifest(const kadu_bundle *b) {
    kadu_json *tools = kadu_json_new_array(), *resources = kadu_json_new_array();
    kadu_json *templates = kadu_json_new_array(), *prompts = kadu_json_new_array(), *routes = kadu_json_new_array();
    for (size_t i = 0; i < b->ntools; i++) {
        const kadu_tool *t = &b->tools[i];
        kadu_json *o = entry_json("name", t->name, t->title, t->description);
        kadu_json_set(o, "inputSchema", schema_json(t->name, "input_schema", t->input_schema));
        if (t->output_schema) kadu_json_set(o, "outputSchema", schema_json(t->name, "output_schema", t->output_schema));
        kadu_json *hints = kadu_json_set_bool(kadu_json_new_object(), "readOnlyHint", t->hints & KADU_READ_ONLY);
        kadu_json_set_bool(hints, "destructiveHint", t->hints & KADU_DESTRUCTIVE);
        kadu_json_set_bool(hints, "idempotentHint", t->hints & KADU_IDEMPOTENT);
        kadu_json_set_bool(hints, "openWorldHint", false);
        kadu_json_set(o, "annotations", hints);
        kadu_json_set(o, "access", access_json(t->access));
        if (t->requires_capabilities && t->requires_capabilities[0]) {
            kadu_json *caps = kadu_json_new_array();
            for (size_t k = 0; t->requires_capabilities[k]; k++)
                kadu_json_push(caps, kadu_json_new_string(t->requires_capabilities[k]));
            kadu_json_set(o, "requiresCapabilities", caps);
        }
        kadu_json_push(tools, o);
    }
    for (size_t i = 0; i < b->nresources; i++) {
        const kadu_resource *r = &b->resources[i];
        kadu_json *o = entry_json("uri", r->uri, r->title, r->description);
        kadu_json_set_string(o, "name", r->name);
        kadu_json_set_string(o, "mimeType", r->mime_type);
        kadu_json_push(resources, kadu_json_set(o, "access", access_json(r->access)));
    }
    for (size_t i = 0; i < b->ntemplates; i++) {
        const kadu_template *t = &b->templates[i];
        kadu_json *o = entry_json("uriTemplate", t->uri_template, t->title, t->description);
        kadu_json_set_string(o, "name", t->name);
        kadu_json_set_string(o, "mimeType", t->mime_type);
        kadu_json_push(templates, kadu_json_set(o, "access", access_json(t->access)));
    }
    for (size_t i = 0; i < b->nprompts; i++) {
        const kadu_prompt *p = &b->prompts[i];
        kadu_json *o = entry_json("name", p->name, p->title, p->description);
        kadu_json *args = kadu_json_new_array();
        for (const kadu_prompt_arg *a = p->arguments; a && a->name; a++) {
            kadu_json *arg = entry_json("name", a->name, NULL, a->description);
            if (a->required) kadu_json_set_bool(arg, "required", true);
            kadu_json_push(args, arg);
        }
        kadu_json_set(o, "arguments", args);
        kadu_json_push(prompts, kadu_json_set(o, "access", access_json(p->access)));
    }
    for (size_t i = 0; i < b->nroutes; i++) kadu_json_push(routes, kadu_json_new_string(b->routes[i]));

    kadu_json *m = kadu_json_set_string(kadu_json_new_object(), "abi", "kadu/v1");
    kadu_json_set_string(m, "name", b->name);
    kadu_json_set_string(m, "version", b->version);
    kadu_json_set_string(m, "description", b->description);
    kadu_json_set(m, "tools", tools);
    kadu_json_set(m, "resources", resources);
    kadu_json_set(m, "resourceTemplates", templates);
    kadu_json_set(m, "prompts", prompts);
    kadu_json_set_bool(m, "completions", b->complete != NULL);
    return kadu_json_set(m, "routes", routes);
}
