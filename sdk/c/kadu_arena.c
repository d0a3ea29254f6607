//go:build ignore

/* (The line above is for the go tool, which runs the Go tests in this
 * directory: it must not take this file for cgo. To C it is a comment.)
 *
 * kadu_arena.c — the C SDK's memory (see kadu.c): the per-invocation
 * arena, kadu_alloc, and the strings made in it (kadu_strdup,
 * kadu_sprintf, kadu_url_escape). kadu.c empties the arena when an export
 * returns.
 */
#include "kadu_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Arena: small allocations bump through 64 KiB chunks, large ones get a
 * chunk each; all are freed when the export returns, but one chunk is kept
 * for the next invocation. During kadu_main, allocations are plain malloc
 * and live as long as the instance.
 * --------------------------------------------------------------------- */

typedef struct chunk {
    struct chunk *next;
    size_t cap, used;
} chunk;

#define ALIGN ((size_t)16)
#define CHUNK_SIZE ((size_t)64 << 10)
#define CHUNK_HDR ((sizeof(chunk) + ALIGN - 1) & ~(ALIGN - 1))

static chunk *arena;      /* this export's chunks; small allocations bump in the first */
static chunk *spare;      /* kept between exports */
bool kadu__permanent;    /* inside kadu_main */

void *kadu__oom(size_t n) {
    kadu__fail("kadu: out of memory allocating %zu bytes: the bundle reached its memory limit", n);
    return NULL;
}

void *kadu__alloc(size_t n) {
    if (n > SIZE_MAX / 2) return kadu__oom(n);
    n = n ? (n + ALIGN - 1) & ~(ALIGN - 1) : ALIGN;
    if (kadu__permanent) {
        void *p = malloc(n);
        return p ? p : kadu__oom(n);
    }
    chunk *c = arena;
    if (c && c->cap - c->used >= n) {
        void *p = (char *)c + CHUNK_HDR + c->used;
        c->used += n;
        return p;
    }
    chunk *nc;
    if (n > CHUNK_SIZE / 4) { /* its own chunk, behind the one small allocations use */
        if (!(nc = malloc(CHUNK_HDR + n))) return kadu__oom(n);
        nc->cap = nc->used = n;
        if (c) {
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = NULL;
            arena = nc;
        }
        return (char *)nc + CHUNK_HDR;
    }
    if (spare) {
        nc = spare;
        spare = NULL;
    } else if (!(nc = malloc(CHUNK_HDR + CHUNK_SIZE))) {
        return kadu__oom(n);
    }
    nc->cap = CHUNK_SIZE;
    nc->used = n;
    nc->next = arena;
    arena = nc;
    return (char *)nc + CHUNK_HDR;
}

void kadu__arena_reset(void) {
    for (chunk *c = arena, *next; c; c = next) {
        next = c->next;
        if (!spare && c->cap == CHUNK_SIZE) spare = c;
        else free(c);
    }
    arena = NULL;
}

void *kadu_alloc(size_t size) {
    void *p = kadu__alloc(size);
    if (p) memset(p, 0, size);
    return p;
}

char *kadu__copy_bytes(const char *s, size_t n) {
    char *p = kadu__alloc(n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *kadu_strdup(const char *s) { return s ? kadu__copy_bytes(s, strlen(s)) : NULL; }

char *kadu_sprintf(const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = n < 0 ? NULL : kadu__alloc((size_t)n + 1);
    if (p) vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

char *kadu_url_escape(const char *s) {
    static const char hex[] = "0123456789ABCDEF";
    if (!s) return NULL;
    size_t n = strlen(s);
    if (n > SIZE_MAX / 4) return kadu__oom(n);
    char *out = kadu__alloc(3 * n + 1), *o = out;
    if (!out) return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned c = *p;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~') {
            *o++ = (char)c;
        } else {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o = '\0';
    return out;
}
