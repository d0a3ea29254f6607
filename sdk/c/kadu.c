//go:build ignore

/* (The line above is for the go tool, which runs the Go tests in this
 * directory: it must not take this file for cgo. To C it is a comment.)
 *
 * kadu.c — the C SDK for Kadu bundles: the guest side of ABI "kadu/v1"
 * (sdk/ABI.md). The public API and its rules are in kadu.h.
 *
 * It owns: the exports kadu_abi_v1, kadu_describe and kadu_handle, the kadu
 * host imports, the per-invocation arena, a bounded JSON parser and writer,
 * the manifest built from what kadu_main registered, dispatch of an
 * invocation to its handler, and the mapping of a handler's result onto the
 * ABI's results and statuses.
 *
 * It must not: keep anything about a caller past the export that served it
 * (the arena is emptied when every export returns), read or write outside a
 * buffer it allocated, or turn a fault into something the client sees.
 *
 * Sections: limits and state · host imports · failing and logging · arena ·
 * UTF-8 · JSON parser · JSON writer · JSON values · strings · the call ·
 * results · registration · manifest · dispatch · exports.
 */
#include "kadu.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Limits and state
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

/* Whether this export faults: set by fail(), which logs why; the export then
 * returns STATUS_FAULT whatever the handler answered. */
static bool fault;

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

static char log_buf[LOG_MAX];

static void vlog(kadu_level level, const char *fmt, va_list ap) {
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
    vlog(level, fmt, ap);
    va_end(ap);
}

_Noreturn void kadu_panic(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog(KADU_ERROR, fmt, ap);
    va_end(ap);
    abort();
}

/* fail marks the invocation as a fault and logs why (the first reason). */
KADU_PRINTF(1, 2) static void fail(const char *fmt, ...) {
    if (fault) return;
    fault = true;
    va_list ap;
    va_start(ap, fmt);
    vlog(KADU_ERROR, fmt, ap);
    va_end(ap);
}

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
static bool permanent;    /* inside kadu_main */

static void *oom(size_t n) {
    fail("kadu: out of memory allocating %zu bytes: the bundle reached its memory limit", n);
    return NULL;
}

static void *alloc(size_t n) {
    if (n > SIZE_MAX / 2) return oom(n);
    n = n ? (n + ALIGN - 1) & ~(ALIGN - 1) : ALIGN;
    if (permanent) {
        void *p = malloc(n);
        return p ? p : oom(n);
    }
    chunk *c = arena;
    if (c && c->cap - c->used >= n) {
        void *p = (char *)c + CHUNK_HDR + c->used;
        c->used += n;
        return p;
    }
    chunk *nc;
    if (n > CHUNK_SIZE / 4) { /* its own chunk, behind the one small allocations use */
        if (!(nc = malloc(CHUNK_HDR + n))) return oom(n);
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
        return oom(n);
    }
    nc->cap = CHUNK_SIZE;
    nc->used = n;
    nc->next = arena;
    arena = nc;
    return (char *)nc + CHUNK_HDR;
}

static void arena_reset(void) {
    for (chunk *c = arena, *next; c; c = next) {
        next = c->next;
        if (!spare && c->cap == CHUNK_SIZE) spare = c;
        else free(c);
    }
    arena = NULL;
}

void *kadu_alloc(size_t size) {
    void *p = alloc(size);
    if (p) memset(p, 0, size);
    return p;
}

static char *copy_bytes(const char *s, size_t n) {
    char *p = alloc(n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *kadu_strdup(const char *s) { return s ? copy_bytes(s, strlen(s)) : NULL; }

char *kadu_sprintf(const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = n < 0 ? NULL : alloc((size_t)n + 1);
    if (p) vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

char *kadu_url_escape(const char *s) {
    static const char hex[] = "0123456789ABCDEF";
    if (!s) return NULL;
    size_t n = strlen(s);
    if (n > SIZE_MAX / 4) return oom(n);
    char *out = alloc(3 * n + 1), *o = out;
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

/* ------------------------------------------------------------------------
 * UTF-8, decoded as Go does: a byte that does not start a valid sequence
 * (overlong, surrogate, past U+10FFFF, cut short) stands for U+FFFD alone.
 * --------------------------------------------------------------------- */

/* utf8_len returns the length of the valid sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
    unsigned c = p[0];
    size_t n = (size_t)(end - p);
    unsigned lo = 0x80, hi = 0xBF;
    size_t k;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) k = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        k = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        k = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else return 0;
    if (n < k || p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < k; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    return k;
}

/* put_utf8 writes code point cp at out (if not NULL) and returns its length. */
static size_t put_utf8(char *out, uint32_t cp) {
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | cp >> 6);
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | cp >> 12);
        b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | cp >> 18);
        b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    if (out) memcpy(out, b, n);
    return n;
}

/* ------------------------------------------------------------------------
 * JSON values
 * --------------------------------------------------------------------- */

struct kadu_json {
    kadu_json_type type;
    union {
        bool b;
        struct {
            char *p; /* NUL-terminated: a string's bytes, or a number's text */
            size_t n;
        } s;
        struct {
            kadu_item *first, *last;
            size_t count;
        } c;
    } u;
};

static kadu_json *new_value(kadu_json_type type) {
    kadu_json *v = alloc(sizeof *v);
    if (v) {
        memset(v, 0, sizeof *v);
        v->type = type;
    }
    return v;
}

/* append adds an item; key (NULL in arrays) is kept as it is. */
static bool append(kadu_json *c, const char *key, size_t key_len, const kadu_json *value) {
    kadu_item *it = alloc(sizeof *it);
    if (!it) return false;
    it->next = NULL;
    it->key = key;
    it->key_len = key_len;
    it->value = value;
    if (c->u.c.last) ((kadu_item *)c->u.c.last)->next = it;
    else c->u.c.first = it;
    c->u.c.last = it;
    c->u.c.count++;
    return true;
}

/* ------------------------------------------------------------------------
 * JSON parser: recursive descent over RFC 8259, at most KADU_JSON_MAX_DEPTH
 * containers deep. Nothing is read past end.
 * --------------------------------------------------------------------- */

typedef struct parser {
    const unsigned char *start, *p, *end;
    int depth;
    const char *err;
} parser;

static void *perr(parser *ps, const char *msg) {
    if (!ps->err) ps->err = msg;
    return NULL;
}

static void skip_ws(parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static bool hex4(const unsigned char *p, const unsigned char *end, uint32_t *out) {
    if (end - p < 4) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else return false;
    }
    *out = v;
    return true;
}

/* string_pass decodes the string body at p (after the opening quote) into
 * out, or only measures it when out is NULL. It returns the decoded length
 * and sets *close to the closing quote, or returns SIZE_MAX with *err. */
static size_t string_pass(const unsigned char *p, const unsigned char *end, char *out, const unsigned char **close,
                          const char **err) {
    size_t n = 0;
    while (p < end) {
        unsigned c = *p;
        if (c == '"') {
            *close = p;
            return n;
        }
        if (c == '\\') {
            if (end - p < 2) break;
            char e = 0;
            switch (p[1]) {
            case '"': e = '"'; break;
            case '\\': e = '\\'; break;
            case '/': e = '/'; break;
            case 'b': e = '\b'; break;
            case 'f': e = '\f'; break;
            case 'n': e = '\n'; break;
            case 'r': e = '\r'; break;
            case 't': e = '\t'; break;
            case 'u': {
                uint32_t cp, lo;
                if (!hex4(p + 2, end, &cp)) return *err = "invalid \\u escape", SIZE_MAX;
                p += 6;
                if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
                    hex4(p + 2, end, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                } else if (cp >= 0xD800 && cp < 0xE000) {
                    cp = 0xFFFD; /* a lone surrogate */
                }
                n += put_utf8(out ? out + n : NULL, cp);
                continue;
            }
            default: return *err = "invalid escape in a string", SIZE_MAX;
            }
            if (out) out[n] = e;
            n++;
            p += 2;
            continue;
        }
        if (c < 0x20) return *err = "control character in a string", SIZE_MAX;
        size_t k = utf8_len(p, end);
        if (k) {
            if (out) memcpy(out + n, p, k);
            n += k;
            p += k;
        } else {
            n += put_utf8(out ? out + n : NULL, 0xFFFD);
            p++;
        }
    }
    *err = "unterminated string";
    return SIZE_MAX;
}

/* parse_string reads the string at ps->p (an opening quote). */
static char *parse_string(parser *ps, size_t *len) {
    const unsigned char *close = NULL;
    const char *err = NULL;
    size_t n = string_pass(ps->p + 1, ps->end, NULL, &close, &err);
    if (n == SIZE_MAX) return perr(ps, err);
    char *s = alloc(n + 1);
    if (!s) return perr(ps, "out of memory");
    string_pass(ps->p + 1, ps->end, s, &close, &err);
    s[n] = '\0';
    ps->p = close + 1;
    *len = n;
    return s;
}

static bool is_digit(const parser *ps) { return ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9'; }

static kadu_json *parse_number(parser *ps) {
    const unsigned char *s = ps->p;
    if (*ps->p == '-') ps->p++;
    if (ps->p < ps->end && *ps->p == '0') ps->p++;
    else if (is_digit(ps))
        while (is_digit(ps)) ps->p++;
    else return perr(ps, "invalid number");
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (!is_digit(ps)) return perr(ps, "invalid number");
        while (is_digit(ps)) ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
        if (!is_digit(ps)) return perr(ps, "invalid number");
        while (is_digit(ps)) ps->p++;
    }
    kadu_json *v = new_value(KADU_JSON_NUMBER);
    if (!v || !(v->u.s.p = copy_bytes((const char *)s, (size_t)(ps->p - s)))) return perr(ps, "out of memory");
    v->u.s.n = (size_t)(ps->p - s);
    return v;
}

static kadu_json *parse_value(parser *ps);

static kadu_json *parse_container(parser *ps, bool object) {
    if (++ps->depth > KADU_JSON_MAX_DEPTH) return perr(ps, "nesting deeper than KADU_JSON_MAX_DEPTH (128)");
    kadu_json *v = new_value(object ? KADU_JSON_OBJECT : KADU_JSON_ARRAY);
    if (!v) return perr(ps, "out of memory");
    char end = object ? '}' : ']';
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == end) {
        ps->p++;
        ps->depth--;
        return v;
    }
    for (;;) {
        char *key = NULL;
        size_t key_len = 0;
        if (object) {
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != '"') return perr(ps, "expected a member name");
            if (!(key = parse_string(ps, &key_len))) return NULL;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') return perr(ps, "expected ':'");
            ps->p++;
        }
        kadu_json *item = parse_value(ps);
        if (!item) return NULL;
        if (!append(v, key, key_len, item)) return perr(ps, "out of memory");
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == end) {
            ps->p++;
            ps->depth--;
            return v;
        }
        return perr(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static kadu_json *parse_literal(parser *ps, const char *word, kadu_json_type type, bool b) {
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return perr(ps, "invalid literal");
    ps->p += n;
    kadu_json *v = new_value(type);
    if (!v) return perr(ps, "out of memory");
    v->u.b = b;
    return v;
}

static kadu_json *parse_value(parser *ps) {
    skip_ws(ps);
    if (ps->p >= ps->end) return perr(ps, "unexpected end of JSON");
    switch (*ps->p) {
    case '{': return parse_container(ps, true);
    case '[': return parse_container(ps, false);
    case 't': return parse_literal(ps, "true", KADU_JSON_BOOL, true);
    case 'f': return parse_literal(ps, "false", KADU_JSON_BOOL, false);
    case 'n': return parse_literal(ps, "null", KADU_JSON_NULL, false);
    case '"': {
        kadu_json *v = new_value(KADU_JSON_STRING);
        if (!v) return perr(ps, "out of memory");
        return (v->u.s.p = parse_string(ps, &v->u.s.n)) ? v : NULL;
    }
    default:
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) return parse_number(ps);
        return perr(ps, "unexpected character");
    }
}

kadu_json *kadu_json_parse(const char *text, size_t len, const char **err) {
    if (!text) {
        if (err) *err = "no JSON text";
        return NULL;
    }
    parser ps = {(const unsigned char *)text, (const unsigned char *)text, (const unsigned char *)text + len, 0, NULL};
    kadu_json *v = parse_value(&ps);
    if (v) {
        skip_ws(&ps);
        if (ps.p != ps.end) v = perr(&ps, "text after the JSON value");
    }
    if (!v && err) *err = kadu_sprintf("%s at byte %zu", ps.err, (size_t)(ps.p - ps.start));
    return v;
}

kadu_json *kadu_json_literal(const char *text) {
    const char *err = NULL;
    kadu_json *v = kadu_json_parse(text, text ? strlen(text) : 0, &err);
    if (!v) fail("kadu_json_literal: the bundle's JSON is invalid: %s: %.200s", err ? err : "", text ? text : "NULL");
    return v;
}

/* ------------------------------------------------------------------------
 * JSON writer: compact, in two passes (measure, then write into one exact
 * allocation), at most WRITE_MAX_DEPTH deep.
 * --------------------------------------------------------------------- */

typedef struct writer {
    char *buf; /* NULL: only measure */
    size_t n;
    bool failed; /* too deep, or over WRITE_MAX */
} writer;

static void put(writer *w, const void *s, size_t n) {
    if (n > WRITE_MAX - w->n) { /* w->n <= WRITE_MAX always: no overflow */
        w->failed = true;
        return;
    }
    if (w->buf) memcpy(w->buf + w->n, s, n);
    w->n += n;
}

static void put_string(writer *w, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s, *end = p + n, *run = p;
    put(w, "\"", 1);
    while (p < end) {
        unsigned c = *p;
        size_t k = 1;
        if (c >= 0x20 && c != '"' && c != '\\' && (c < 0x80 || (k = utf8_len(p, end)) != 0)) {
            p += k;
            continue;
        }
        put(w, run, (size_t)(p - run));
        char esc[6] = {'\\', 0, '0', '0', 0, 0};
        switch (c) {
        case '"': esc[1] = '"'; put(w, esc, 2); break;
        case '\\': esc[1] = '\\'; put(w, esc, 2); break;
        case '\n': esc[1] = 'n'; put(w, esc, 2); break;
        case '\r': esc[1] = 'r'; put(w, esc, 2); break;
        case '\t': esc[1] = 't'; put(w, esc, 2); break;
        case '\b': esc[1] = 'b'; put(w, esc, 2); break;
        case '\f': esc[1] = 'f'; put(w, esc, 2); break;
        default:
            if (c < 0x20) {
                esc[1] = 'u';
                esc[4] = hex[c >> 4];
                esc[5] = hex[c & 15];
                put(w, esc, 6);
            } else {
                put(w, "\xEF\xBF\xBD", 3); /* invalid UTF-8: U+FFFD */
            }
        }
        run = ++p;
    }
    put(w, run, (size_t)(p - run));
    put(w, "\"", 1);
}

static void put_value(writer *w, const kadu_json *v, int depth) {
    if (w->failed) return;
    switch (v->type) {
    case KADU_JSON_NULL: put(w, "null", 4); return;
    case KADU_JSON_BOOL: v->u.b ? put(w, "true", 4) : put(w, "false", 5); return;
    case KADU_JSON_NUMBER: put(w, v->u.s.p, v->u.s.n); return;
    case KADU_JSON_STRING: put_string(w, v->u.s.p, v->u.s.n); return;
    case KADU_JSON_ARRAY:
    case KADU_JSON_OBJECT: break;
    default: put(w, "null", 4); return;
    }
    if (depth >= WRITE_MAX_DEPTH) {
        w->failed = true;
        return;
    }
    bool object = v->type == KADU_JSON_OBJECT;
    put(w, object ? "{" : "[", 1);
    for (const kadu_item *it = v->u.c.first; it; it = it->next) {
        if (it != v->u.c.first) put(w, ",", 1);
        if (object) {
            put_string(w, it->key, it->key_len);
            put(w, ":", 1);
        }
        put_value(w, it->value, depth + 1);
    }
    put(w, object ? "}" : "]", 1);
}

char *kadu_json_write(const kadu_json *v, size_t *len) {
    if (!v) return NULL;
    writer w = {NULL, 0, false};
    put_value(&w, v, 0);
    if (w.failed) {
        fail("kadu_json_write: the value nests deeper than %d levels or is over 1 GiB (is a value inside itself?)",
             WRITE_MAX_DEPTH);
        return NULL;
    }
    char *buf = alloc(w.n + 1);
    if (!buf) return NULL;
    w = (writer){buf, 0, false};
    put_value(&w, v, 0);
    buf[w.n] = '\0';
    if (len) *len = w.n;
    return buf;
}

/* ------------------------------------------------------------------------
 * JSON access and building
 * --------------------------------------------------------------------- */

kadu_json_type kadu_json_typeof(const kadu_json *v) { return v ? v->type : KADU_JSON_NONE; }

static bool is_container(const kadu_json *v) {
    return v && (v->type == KADU_JSON_ARRAY || v->type == KADU_JSON_OBJECT);
}

const kadu_json *kadu_json_get(const kadu_json *obj, const char *key) {
    if (!obj || obj->type != KADU_JSON_OBJECT || !key) return NULL;
    size_t n = strlen(key);
    const kadu_json *found = NULL;
    for (const kadu_item *it = obj->u.c.first; it; it = it->next)
        if (it->key_len == n && memcmp(it->key, key, n) == 0) found = it->value;
    return found;
}

const kadu_item *kadu_json_items(const kadu_json *v) { return is_container(v) ? v->u.c.first : NULL; }

size_t kadu_json_count(const kadu_json *v) { return is_container(v) ? v->u.c.count : 0; }

const kadu_json *kadu_json_at(const kadu_json *v, size_t i) {
    const kadu_item *it = kadu_json_items(v);
    while (it && i--) it = it->next;
    return it ? it->value : NULL;
}

const char *kadu_json_string(const kadu_json *v, size_t *len) {
    if (!v || v->type != KADU_JSON_STRING) return NULL;
    if (len) *len = v->u.s.n;
    return v->u.s.p;
}

const char *kadu_json_number_text(const kadu_json *v) {
    return v && v->type == KADU_JSON_NUMBER ? v->u.s.p : NULL;
}

bool kadu_json_double(const kadu_json *v, double *out) {
    if (!v || v->type != KADU_JSON_NUMBER) return false;
    double d = strtod(v->u.s.p, NULL);
    if (!isfinite(d)) return false;
    *out = d;
    return true;
}

bool kadu_json_int(const kadu_json *v, int64_t *out) {
    if (!v || v->type != KADU_JSON_NUMBER) return false;
    const char *p = v->u.s.p;
    bool neg = *p == '-';
    uint64_t acc = 0;
    for (p += neg; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (acc > (UINT64_MAX - d) / 10) return false;
        acc = acc * 10 + d;
    }
    if (*p == '\0') { /* digits only: exact */
        if (acc > (uint64_t)INT64_MAX + neg) return false;
        *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
        return true;
    }
    double d; /* 2.0, 1e3 */
    if (!kadu_json_double(v, &d) || d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
        return false;
    *out = (int64_t)d;
    return true;
}

bool kadu_json_bool(const kadu_json *v, bool *out) {
    if (!v || v->type != KADU_JSON_BOOL) return false;
    *out = v->u.b;
    return true;
}

const char *kadu_json_get_string(const kadu_json *obj, const char *key) {
    return kadu_json_string(kadu_json_get(obj, key), NULL);
}

int64_t kadu_json_get_int(const kadu_json *obj, const char *key, int64_t fallback) {
    int64_t i;
    return kadu_json_int(kadu_json_get(obj, key), &i) ? i : fallback;
}

bool kadu_json_get_bool(const kadu_json *obj, const char *key, bool fallback) {
    bool b;
    return kadu_json_bool(kadu_json_get(obj, key), &b) ? b : fallback;
}

kadu_json *kadu_json_new_object(void) { return new_value(KADU_JSON_OBJECT); }
kadu_json *kadu_json_new_array(void) { return new_value(KADU_JSON_ARRAY); }
kadu_json *kadu_json_new_null(void) { return new_value(KADU_JSON_NULL); }

kadu_json *kadu_json_new_bool(bool b) {
    kadu_json *v = new_value(KADU_JSON_BOOL);
    if (v) v->u.b = b;
    return v;
}

static kadu_json *new_text(kadu_json_type type, const char *s, size_t n) {
    kadu_json *v = new_value(type);
    if (!v || !(v->u.s.p = copy_bytes(s, n))) return NULL;
    v->u.s.n = n;
    return v;
}

kadu_json *kadu_json_new_stringn(const char *s, size_t n) { return s ? new_text(KADU_JSON_STRING, s, n) : NULL; }
kadu_json *kadu_json_new_string(const char *s) { return s ? new_text(KADU_JSON_STRING, s, strlen(s)) : NULL; }

kadu_json *kadu_json_new_int(int64_t i) {
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%lld", (long long)i);
    return new_text(KADU_JSON_NUMBER, buf, (size_t)n);
}

kadu_json *kadu_json_new_double(double d) {
    if (!isfinite(d)) return kadu_json_new_null();
    char buf[32];
    int n = 0;
    for (int prec = 1; prec <= 17; prec++) { /* the shortest text that reads back as d */
        n = snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) break;
    }
    return new_text(KADU_JSON_NUMBER, buf, (size_t)n);
}

kadu_json *kadu_json_set(kadu_json *obj, const char *key, const kadu_json *value) {
    if (!obj || obj->type != KADU_JSON_OBJECT || !key || !value) return obj;
    size_t n = strlen(key);
    for (kadu_item *it = (kadu_item *)obj->u.c.first; it; it = (kadu_item *)it->next) {
        if (it->key_len == n && memcmp(it->key, key, n) == 0) {
            it->value = value;
            return obj;
        }
    }
    char *k = copy_bytes(key, n);
    if (k) append(obj, k, n, value);
    return obj;
}

kadu_json *kadu_json_push(kadu_json *arr, const kadu_json *value) {
    if (arr && arr->type == KADU_JSON_ARRAY && value) append(arr, NULL, 0, value);
    return arr;
}

kadu_json *kadu_json_set_string(kadu_json *obj, const char *key, const char *s) {
    return kadu_json_set(obj, key, kadu_json_new_string(s));
}

kadu_json *kadu_json_set_int(kadu_json *obj, const char *key, int64_t i) {
    return kadu_json_set(obj, key, kadu_json_new_int(i));
}

kadu_json *kadu_json_set_bool(kadu_json *obj, const char *key, bool b) {
    return kadu_json_set(obj, key, kadu_json_new_bool(b));
}

/* ------------------------------------------------------------------------
 * The call: invocation, caller, client, config, API
 * --------------------------------------------------------------------- */

struct kadu_call {
    const char *op;
    const kadu_json *params, *state, *responses, *client;
    const kadu_caller *caller; /* read on first use */
};

/* read_sized calls a host function that writes only when the buffer is
 * large enough and returns the length needed (caller_info, config_get):
 * first with 256 bytes, then with the exact size. -1 stays -1. */
static int32_t host_sized(const char *key, void *buf, int32_t cap) {
    return key ? kadu__config_get(key, (int32_t)strlen(key), buf, cap) : kadu__caller_info(buf, cap);
}

static char *read_sized(const char *key, size_t *len) {
    int32_t cap = 256;
    char *buf = alloc((size_t)cap + 1);
    if (!buf) return NULL;
    int32_t n = host_sized(key, buf, cap);
    if (n < 0) return NULL;
    if (n > cap) {
        if (!(buf = alloc((size_t)n + 1))) return NULL;
        int32_t m = host_sized(key, buf, n);
        if (m != n) {
            fail("kadu: the host changed its answer from %d to %d bytes between two reads", (int)n, (int)m);
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
        fail("kadu: caller_info did not answer a JSON object (%zu bytes)", n);
        return c->caller;
    }
    kadu_caller *who = alloc(sizeof *who);
    const kadu_json *scopes = kadu_json_get(v, "scopes");
    const char **list = alloc((kadu_json_count(scopes) + 1) * sizeof *list);
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

static const char *const role_names[] = {"", "viewer", "member", "admin", "owner"};
static const char *const scope_names[] = {"", "read", "write", "run", "admin"};

bool kadu_caller_is_at_least(const kadu_caller *who, kadu_role role) {
    if (!who || role <= KADU_ROLE_UNSET || role > KADU_ROLE_OWNER) return false;
    for (int r = role; r <= KADU_ROLE_OWNER; r++)
        if (strcmp(who->role, role_names[r]) == 0) return true;
    return false;
}

bool kadu_caller_has_scope(const kadu_caller *who, kadu_scope scope) {
    if (!who || scope <= KADU_SCOPE_UNSET || scope > KADU_SCOPE_ADMIN) return false;
    for (size_t i = 0; i < who->scope_count; i++)
        if (strncmp(who->scopes[i], "kadu.", 5) == 0 && strcmp(who->scopes[i] + 5, scope_names[scope]) == 0)
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
        if (!fault) fail("kadu_api: a method, a path and a body of at most 2 GiB are required");
        return &no_response;
    }
    int64_t r = kadu__api(method, (int32_t)strlen(method), path, (int32_t)strlen(path), body, (int32_t)body_len);
    uint32_t n = (uint32_t)((uint64_t)r & 0xFFFFFFFFu);
    kadu_response *resp = alloc(sizeof *resp);
    char *buf = n < INT32_MAX ? alloc((size_t)n + 1) : oom(n);
    if (!resp || !buf) return &no_response;
    if (n > 0 && kadu__api_read(buf, (int32_t)n) != (int32_t)n) {
        fail("kadu: api_read did not return the %u bytes api announced for %s %s", (unsigned)n, method, path);
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
 * Results. A result keeps what the handler meant; the op it answers decides
 * the wire form (finish, below).
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
    kadu_result *r = alloc(sizeof *r);
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
        if (!fault) fail("kadu_result_tool: content must be an array and structured an object or NULL");
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
        if (!fault) fail("kadu_result_structured: want a JSON object");
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
 * Registration. Definitions are checked as they are added; a refused one
 * is logged and makes kadu_describe fault, so the host refuses the bundle.
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

static kadu_bundle bundle;

KADU_PRINTF(2, 3) static void refuse(kadu_bundle *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog(KADU_ERROR, fmt, ap);
    va_end(ap);
    b->broken = true;
}

/* name_ok matches ^[a-zA-Z0-9_.-]{1,64}$. */
static bool name_ok(const char *s) {
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

static const char *show(const char *s) { return s ? s : "(NULL)"; }

void kadu_bundle_info(kadu_bundle *b, const char *name, const char *version, const char *description) {
    bool ok = name && name[0] >= 'a' && name[0] <= 'z' && strlen(name) <= 32;
    for (const char *p = name; ok && *p; p++) ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
    if (!ok) refuse(b, "kadu_bundle_info: name %s: want ^[a-z][a-z0-9_]{0,31}$", show(name));
    unsigned dots = 0; /* MAJOR.MINOR.PATCH, then any -pre or +build */
    const char *p = version;
    for (; p && *p && *p != '-' && *p != '+'; p++) {
        if (*p == '.') dots++;
        else if (*p < '0' || *p > '9') break;
    }
    if (!version || dots != 2 || !(*p == '\0' || *p == '-' || *p == '+') || version[0] == '.')
        refuse(b, "kadu_bundle_info: version %s: want a semantic version, e.g. 1.2.0", show(version));
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
                      show(route)); return; }
    if (b->nroutes == MAX_ENTRIES) { refuse(b, "kadu_add_route: more than %d routes", MAX_ENTRIES); return; }
    b->routes[b->nroutes++] = route;
}

void kadu_add_tool(kadu_bundle *b, const kadu_tool *t) {
    if (!t) { refuse(b, "kadu_add_tool: NULL"); return; }
    const char *at = show(t->name);
    if (!name_ok(t->name)) refuse(b, "tool %s: name: want ^[a-zA-Z0-9_.-]{1,64}$", at);
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
    const char *at = show(r->uri);
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
    const char *at = show(t->uri_template);
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
    const char *at = show(p->name);
    if (!name_ok(p->name)) refuse(b, "prompt %s: name: want ^[a-zA-Z0-9_.-]{1,64}$", at);
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
    kadu_json *o = kadu_json_set_string(kadu_json_new_object(), "min_role", role_names[a.min_role]);
    return kadu_json_set_string(o, "scope", scope_names[a.scope]);
}

/* schema_json parses a tool's schema text; NULL text gives {"type":"object"}. */
static kadu_json *schema_json(const char *tool, const char *member, const char *text) {
    const char *err = NULL;
    kadu_json *s = kadu_json_parse(text ? text : "{\"type\":\"object\"}", text ? strlen(text) : 17, &err);
    const char *type = kadu_json_get_string(s, "type");
    if (!s) fail("tool %s: %s is not JSON: %s", tool, member, show(err));
    else if (!type || strcmp(type, "object") != 0) fail("tool %s: %s: want \"type\": \"object\" at the root", tool, member);
    return fault ? NULL : s;
}

/* entry_json starts an entry: the key member, then title and description. */
static kadu_json *entry_json(const char *key, const char *value, const char *title, const char *description) {
    kadu_json *o = kadu_json_set_string(kadu_json_new_object(), key, value);
    kadu_json_set_string(o, "title", title);
    return kadu_json_set_string(o, "description", description);
}

static kadu_json *manifest(const kadu_bundle *b) {
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

/* ------------------------------------------------------------------------
 * Dispatch
 * --------------------------------------------------------------------- */

typedef enum { OP_TOOL, OP_RESOURCE, OP_PROMPT, OP_COMPLETE } op_kind;

static int32_t emit(const kadu_json *out, int32_t status) {
    size_t n = 0;
    if (!out && !fault) fail("kadu: no output to write");
    char *text = kadu_json_write(out, &n);
    if (!text || fault) return STATUS_FAULT;
    if (n > INT32_MAX || kadu__output_write(text, (int32_t)n) != 0) {
        fail("kadu: the output of %zu bytes is over this bundle's output cap; return less (e.g. ask for a smaller "
             "page)",
             n);
        return STATUS_FAULT;
    }
    return status;
}

static int32_t protocol_error(int code, const char *message, const kadu_json *data) {
    kadu_json *o = kadu_json_set_int(kadu_json_new_object(), "code", code);
    kadu_json_set_string(o, "message", message);
    kadu_json_set(o, "data", data);
    return emit(o, STATUS_PROTOCOL);
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
    return emit(kadu_json_set_bool(out, "isError", true), STATUS_OK);
}

/* emit_input_required checks and writes an input-required result (sdk/ABI.md §9). */
static int32_t emit_input_required(const kadu_result *r) {
    kadu_json *reqs = kadu_json_new_object();
    if (kadu_json_count(r->json) == 0 || kadu_json_typeof(r->json) != KADU_JSON_OBJECT) {
        fail("kadu_result_input_required: requests must be an object with at least one request");
        return STATUS_FAULT;
    }
    for (const kadu_item *it = kadu_json_items(r->json); it; it = it->next) {
        const char *method = kadu_json_get_string(it->value, "method");
        const kadu_json *params = kadu_json_get(it->value, "params");
        if (!name_ok(it->key) || strlen(it->key) != it->key_len) {
            fail("kadu_result_input_required: key %s: want ^[a-zA-Z0-9_.-]{1,64}$", it->key);
            return STATUS_FAULT;
        }
        if (!method || (strcmp(method, "elicitation/create") && strcmp(method, "sampling/createMessage") &&
                        strcmp(method, "roots/list"))) {
            fail("kadu_result_input_required: request %s: method %s: want elicitation/create, sampling/createMessage "
                 "or roots/list",
                 it->key, show(method));
            return STATUS_FAULT;
        }
        kadu_json *req = kadu_json_set_string(kadu_json_new_object(), "method", method);
        kadu_json_set(req, "params", params ? params : kadu_json_new_object()); /* roots/list: {} */
        kadu_json_set(reqs, it->key, req);
    }
    const kadu_json *state = r->state ? r->state : kadu_json_new_null();
    size_t n = 0;
    if (kadu_json_write(state, &n) && n > STATE_MAX) {
        fail("kadu_result_input_required: the state is %zu bytes; the most is %d", n, STATE_MAX);
        return STATUS_FAULT;
    }
    kadu_json *out = kadu_json_set_string(kadu_json_new_object(), "resultType", "input_required");
    kadu_json_set(out, "inputRequests", reqs);
    return emit(kadu_json_set(out, "state", state), STATUS_OK);
}

/* finish writes the handler's result r as op's answer and returns the status. */
static int32_t finish(op_kind op, const kadu_tool *tool, const char *what, const kadu_call *c, const kadu_result *r) {
    if (fault) return STATUS_FAULT;
    if (!r) {
        fail("%s: the handler returned NULL (a fault)", what);
        return STATUS_FAULT;
    }
    switch (r->kind) {
    case RES_JSON:
        if (tool && tool->output_schema && !r->structured && !r->is_error) {
            fail("%s: the tool declares an output_schema but its result has no structuredContent "
                 "(use kadu_result_structured)",
                 what);
            return STATUS_FAULT;
        }
        return emit(r->json, STATUS_OK);
    case RES_PROTOCOL: return protocol_error(r->code, r->text, r->json);
    case RES_INPUT: return emit_input_required(r);
    case RES_TOOL_ERROR:
        if (op == OP_TOOL) return emit_tool_error(kadu_json_new_string(r->text));
        return protocol_error(KADU_INVALID_PARAMS, r->text, NULL);
    case RES_API_ERROR: break;
    }
    const kadu_response *resp = r->resp;
    kadu_json *text = api_error_text(resp);
    if (op == OP_TOOL) return emit_tool_error(text);
    const kadu_json *uri = kadu_json_get(c->params, "uri");
    if (op == OP_RESOURCE && resp->status == 404)
        return protocol_error(KADU_INVALID_PARAMS, "Resource not found", kadu_json_set(kadu_json_new_object(), "uri", uri));
    if (resp->status >= 500) return protocol_error(KADU_INTERNAL_ERROR, kadu_json_string(text, NULL), NULL);
    const char *detail = kadu_json_get_string(kadu_json_at(kadu_json_get(resp->json, "errors"), 0), "detail");
    kadu_json *data = kadu_json_set_int(kadu_json_new_object(), "status", resp->status);
    kadu_json_set(data, "error", resp->json ? resp->json : text);
    return protocol_error(KADU_INVALID_PARAMS,
                          detail && *detail ? detail
                                            : kadu_sprintf("The Kadu API refused the request (HTTP %d).", resp->status),
                          data);
}

/* pct_decode decodes %XX escapes as Go's url.PathUnescape; NULL on a bad one. */
static kadu_json *pct_decode(const char *s, size_t n) {
    char *out = alloc(n + 1);
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
        if (!hex4((const unsigned char *)hex, (const unsigned char *)hex + 4, &byte)) return NULL;
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
        char *key = copy_bytes(name, (size_t)(close - name));
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
    for (size_t i = 0; name && i < bundle.ntools && !t; i++)
        if (strcmp(bundle.tools[i].name, name) == 0) t = &bundle.tools[i];
    if (!t) return protocol_error(KADU_INVALID_PARAMS, kadu_sprintf("Unknown tool: %s", show(name)), NULL);
    const kadu_json *args = kadu_json_get(c->params, "arguments");
    if (kadu_json_typeof(args) <= KADU_JSON_NULL) args = kadu_json_new_object();
    if (kadu_json_typeof(args) != KADU_JSON_OBJECT)
        return fault ? STATUS_FAULT : protocol_error(KADU_INVALID_PARAMS, "Tool arguments must be an object.", NULL);
    return finish(OP_TOOL, t, kadu_sprintf("tool %s", name), c, t->run(c, args));
}

static int32_t read_resource(kadu_call *c) {
    const char *uri = or_empty(kadu_json_get_string(c->params, "uri"));
    for (size_t i = 0; i < bundle.nresources; i++)
        if (strcmp(bundle.resources[i].uri, uri) == 0)
            return finish(OP_RESOURCE, NULL, kadu_sprintf("resource %s", uri), c, bundle.resources[i].read(c, uri));
    for (size_t i = 0; i < bundle.ntemplates; i++) {
        kadu_json *vars = kadu_json_new_object();
        if (match_template(bundle.templates[i].uri_template, uri, vars))
            return finish(OP_RESOURCE, NULL, kadu_sprintf("template %s", bundle.templates[i].uri_template), c,
                          bundle.templates[i].read(c, uri, vars));
    }
    return finish(OP_RESOURCE, NULL, "resources/read", c, kadu_result_not_found(uri));
}

static int32_t get_prompt(kadu_call *c) {
    const char *name = kadu_json_get_string(c->params, "name");
    const kadu_prompt *p = NULL;
    for (size_t i = 0; name && i < bundle.nprompts && !p; i++)
        if (strcmp(bundle.prompts[i].name, name) == 0) p = &bundle.prompts[i];
    if (!p) return protocol_error(KADU_INVALID_PARAMS, kadu_sprintf("Unknown prompt: %s", show(name)), NULL);
    const kadu_json *args = kadu_json_get(c->params, "arguments");
    if (kadu_json_typeof(args) <= KADU_JSON_NULL) args = kadu_json_new_object();
    bool strings = kadu_json_typeof(args) == KADU_JSON_OBJECT;
    for (const kadu_item *it = kadu_json_items(args); it && strings; it = it->next)
        strings = kadu_json_typeof(it->value) == KADU_JSON_STRING;
    if (!strings) return protocol_error(KADU_INVALID_PARAMS, "Prompt arguments must be an object of strings.", NULL);
    char *missing = NULL;
    for (const kadu_prompt_arg *a = p->arguments; a && a->name; a++) {
        const char *v = kadu_json_get_string(args, a->name);
        while (v && strchr(" \t\r\n", *v) && *v) v++;
        if (a->required && (!v || !*v))
            missing = missing ? kadu_sprintf("%s, %s", missing, a->name) : kadu_sprintf("%s", a->name);
    }
    if (missing) return protocol_error(KADU_INVALID_PARAMS, kadu_sprintf("Missing required argument: %s", missing), NULL);
    return finish(OP_PROMPT, NULL, kadu_sprintf("prompt %s", name), c, p->get(c, args));
}

static int32_t complete(kadu_call *c) {
    if (!bundle.complete) return protocol_error(KADU_INVALID_PARAMS, "This bundle offers no completions.", NULL);
    const kadu_json *arg = kadu_json_get(c->params, "argument");
    return finish(OP_COMPLETE, NULL, "completion/complete", c,
                  bundle.complete(c, kadu_json_get(c->params, "ref"), or_empty(kadu_json_get_string(arg, "name")),
                                  or_empty(kadu_json_get_string(arg, "value"))));
}

static int32_t handle(int32_t in_len) {
    char *in = in_len >= 0 ? alloc((size_t)in_len + 1) : NULL;
    if (!in) {
        if (!fault) fail("kadu_handle: negative input length %d", (int)in_len);
        return STATUS_FAULT;
    }
    if (kadu__input_read(in, in_len) != in_len) {
        fail("kadu_handle: input_read did not return the %d bytes announced", (int)in_len);
        return STATUS_FAULT;
    }
    const char *err = NULL;
    const kadu_json *inv = kadu_json_parse(in, (size_t)in_len, &err);
    if (fault) return STATUS_FAULT;
    if (kadu_json_typeof(inv) != KADU_JSON_OBJECT)
        return protocol_error(KADU_INVALID_PARAMS,
                              kadu_sprintf("kadu_handle: the invocation is not a kadu/v1 JSON object: %s",
                                           inv ? "not an object" : show(err)),
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
    return protocol_error(KADU_INVALID_PARAMS, kadu_sprintf("This bundle does not serve op %s.", call.op), NULL);
}

static int32_t describe(void) {
    if (bundle.broken) {
        fail("kadu_describe: kadu_main registered definitions the host would refuse (logged above)");
        return STATUS_FAULT;
    }
    if (!bundle.name) {
        fail("kadu_describe: kadu_main did not call kadu_bundle_info");
        return STATUS_FAULT;
    }
    if (bundle.ntools + bundle.nresources + bundle.ntemplates + bundle.nprompts == 0) {
        fail("kadu_describe: kadu_main registered no tool, resource, template or prompt");
        return STATUS_FAULT;
    }
    return emit(manifest(&bundle), STATUS_OK);
}

/* ------------------------------------------------------------------------
 * Exports (sdk/ABI.md §4). Each export starts from an empty arena and ends
 * by emptying it; kadu_main runs once, before the first.
 * --------------------------------------------------------------------- */

static int32_t run_export(bool describing, int32_t in_len) {
    arena_reset();
    fault = false;
    if (!bundle.ready) {
        bundle.ready = true;
        permanent = true;
        kadu_main(&bundle);
        permanent = false;
        if (fault) bundle.broken = true;
    }
    int32_t status = STATUS_FAULT;
    if (describing) status = describe();
    else if (bundle.broken) fail("kadu_handle: the bundle was refused at kadu_main (logged then)");
    else status = handle(in_len);
    if (fault) status = STATUS_FAULT;
    arena_reset();
    return status;
}

__attribute__((export_name("kadu_abi_v1"))) void kadu__abi_v1(void) {}

__attribute__((export_name("kadu_describe"))) int32_t kadu__describe(int32_t in_len) {
    (void)in_len; /* the input is {}, reserved */
    return run_export(true, 0);
}

__attribute__((export_name("kadu_handle"))) int32_t kadu__handle(int32_t in_len) { return run_export(false, in_len); }
