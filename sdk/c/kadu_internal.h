/*
 * kadu_internal.h — NOT part of the SDK's API: bundles include kadu.h only,
 * and must not include this file or use what it declares. It is what the
 * SDK's own source files (kadu*.c) share with each other; any of it may
 * change in any release. Every name with external linkage here starts with
 * kadu__, so that it cannot collide with a bundle's own names.
 *
 * Grouped by the file that defines it: limits · kadu.c · kadu_arena.c ·
 * kadu_json.c · kadu_result.c · kadu_bundle.c.
 */
#ifndef KADU_INTERNAL_H
#define KADU_INTERNAL_H

#include "kadu.h"

#include <stdarg.h>

/* ------------------------------------------------------------------------
 * Limits
 * --------------------------------------------------------------------- */

enum {
    WRITE_MAX_DEPTH = 2 * KADU_JSON_MAX_DEPTH,
    LOG_MAX = 4096,               /* the host cuts longer messages anyway */
    STATE_MAX = 16 << 10,         /* sdk/ABI.md §9 */
    COMPLETION_MAX = 100,         /* sdk/ABI.md §8 */
    MAX_ENTRIES = 128,            /* tools, resources, templates, prompts, routes */
    MAX_PROMPT_ARGS = 64,
    MAX_TEMPLATE_VARS = 16,
    STATUS_OK = 0,
    STATUS_PROTOCOL = 1,
    STATUS_FAULT = 2,
};

#define WRITE_MAX ((size_t)1 << 30) /* no output is ever this large; stops a runaway DAG */

/* ------------------------------------------------------------------------
 * kadu.c: the host boundary, failing and logging, the call, dispatch
 * --------------------------------------------------------------------- */

/* Whether this export faults: set by kadu__fail(), which logs why; the export then
 * returns STATUS_FAULT whatever the handler answered. */
extern bool kadu__fault;

void kadu__vlog(kadu_level level, const char *fmt, va_list ap);

/* kadu__fail marks the invocation as a fault and logs why (the first reason). */
void kadu__fail(const char *fmt, ...) KADU_PRINTF(1, 2);

/* kadu__emit writes out as the export's output and returns status, or
 * STATUS_FAULT when it cannot. */
int32_t kadu__emit(const kadu_json *out, int32_t status);

/* The names of kadu_role and kadu_scope, indexed by their values. */
extern const char *const kadu__role_names[];
extern const char *const kadu__scope_names[];

struct kadu_call {
    const char *op;
    const kadu_json *params, *state, *responses, *client;
    const kadu_caller *caller; /* read on first use */
};

typedef enum { OP_TOOL, OP_RESOURCE, OP_PROMPT, OP_COMPLETE } op_kind;

/* ------------------------------------------------------------------------
 * kadu_arena.c: the arena
 * --------------------------------------------------------------------- */

extern bool kadu__permanent; /* inside kadu_main: allocations are plain malloc */

/* kadu__alloc returns n bytes, not zeroed, in the arena (plain malloc
 * inside kadu_main), or NULL after kadu__oom has failed the invocation. */
void *kadu__alloc(size_t n);
void *kadu__oom(size_t n);
void kadu__arena_reset(void);
char *kadu__copy_bytes(const char *s, size_t n);

/* ------------------------------------------------------------------------
 * kadu_json.c: JSON
 * --------------------------------------------------------------------- */

bool kadu__hex4(const unsigned char *p, const unsigned char *end, uint32_t *out);

/* ------------------------------------------------------------------------
 * kadu_result.c: results on the wire
 * --------------------------------------------------------------------- */

int32_t kadu__protocol_error(int code, const char *message, const kadu_json *data);
int32_t kadu__finish(op_kind op, const kadu_tool *tool, const char *what, const kadu_call *c, const kadu_result *r);

/* ------------------------------------------------------------------------
 * kadu_bundle.c: registration and the manifest
 * --------------------------------------------------------------------- */

struct kadu_bundle {
    const char *name, *version, *description;
    const char *routes[MAX_ENTRIES];
    kadu_tool tools[MAX_ENTRIES];
    kadu_resource resources[MAX_ENTRIES];
    kadu_template templates[MAX_ENTRIES];
    kadu_prompt prompts[MAX_ENTRIES];
    size_t nroutes, ntools, nresources, ntemplates, nprompts;
    kadu_complete_fn *complete;
    bool ready;  /* kadu_main has run */
    bool broken; /* something was refused */
};

extern kadu_bundle kadu__bundle; /* what kadu_main registered */

const char *kadu__show(const char *s);
bool kadu__name_ok(const char *s);
kadu_json *kadu__manifest(const kadu_bundle *b);

#endif
