//go:build ignore

/* (The line above is for the go tool, which runs the Go tests in this
 * directory: it must not take this file for cgo. To C it is a comment.)
 *
 * kadu_json.c — the C SDK's JSON (see kadu.c): the kadu_json DOM, a
 * bounded RFC 8259 parser, a compact writer, the accessors and builders,
 * and the UTF-8 decoding they share. Values live in the arena.
 *
 * Sections: UTF-8 · JSON values · JSON parser · JSON writer · JSON access
 * and building.
 */
#include "kadu_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    kadu_json *v = kadu__alloc(sizeof *v);
    if (v) {
        memset(v, 0, sizeof *v);
        v->type = type;
    }
    return v;
}

/* append adds an item; key (NULL in arrays) is kept as it is. */
static bool append(kadu_json *c, const char *key, size_t key_len, const kadu_json *value) {
    kadu_item *it = kadu__alloc(sizeof *it);
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

bool kadu__hex4(const unsigned char *p, const unsigned char *end, uint32_t *out) {
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
                if (!kadu__hex4(p + 2, end, &cp)) return *err = "invalid \\u escape", SIZE_MAX;
                p += 6;
                if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
                    kadu__hex4(p + 2, end, &lo) && lo >= 0xDC00 && lo < 0xE000) {
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
    char *s = kadu__alloc(n + 1);
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
    if (!v || !(v->u.s.p = kadu__copy_bytes((const char *)s, (size_t)(ps->p - s)))) return perr(ps, "out of memory");
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
    if (!v) kadu__fail("kadu_json_literal: the bundle's JSON is invalid: %s: %.200s", err ? err : "", text ? text : "NULL");
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
        kadu__fail("kadu_json_write: the value nests deeper than %d levels or is over 1 GiB (is a value inside itself?)",
             WRITE_MAX_DEPTH);
        return NULL;
    }
    char *buf = kadu__alloc(w.n + 1);
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
    if (!v || !(v->u.s.p = kadu__copy_bytes(s, n))) return NULL;
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
    char *k = kadu__copy_bytes(key, n);
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
