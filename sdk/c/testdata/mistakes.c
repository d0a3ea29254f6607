/* A bundle with the mistakes kadu_main should report, one log line each,
 * before the host refuses it (sdk_test.go, TestRegistrationMistakes). Built
 * with -DSCHEMA for the one mistake found only when the manifest is made. */
#include "kadu.h"

#define VIEWER_READ {KADU_ROLE_VIEWER, KADU_SCOPE_READ}

static kadu_result *run(kadu_call *c, const kadu_json *args) {
    (void)c;
    (void)args;
    return kadu_result_text("ran");
}

static kadu_result *read_item(kadu_call *c, const char *uri, const kadu_json *vars) {
    (void)c;
    (void)vars;
    return kadu_result_resource(uri, NULL, "read");
}

void kadu_main(kadu_bundle *b) {
#ifdef SCHEMA
    kadu_bundle_info(b, "mistakes", "1.0.0", NULL);
    kadu_add_tool(b, &(kadu_tool){.name = "schema", .input_schema = "{\"type\":\"object\",}", .access = VIEWER_READ, .run = run});
#else
    kadu_bundle_info(b, "Mistakes", "1.0", NULL);
    kadu_add_route(b, "GET /api/v1/tasks?status=failed");
    kadu_add_tool(b, &(kadu_tool){.name = "bad name", .access = VIEWER_READ, .run = run});
    kadu_add_tool(b, &(kadu_tool){.name = "no_access", .run = run});
    kadu_add_tool(b, &(kadu_tool){.name = "both", .hints = KADU_READ_ONLY | KADU_DESTRUCTIVE, .access = VIEWER_READ, .run = run});
    kadu_add_tool(b, &(kadu_tool){.name = "twice", .access = VIEWER_READ, .run = run});
    kadu_add_tool(b, &(kadu_tool){.name = "twice", .access = VIEWER_READ, .run = run});
    kadu_add_template(b, &(kadu_template){.uri_template = "x://{a}{b}", .name = "t", .access = VIEWER_READ, .read = read_item});
    kadu_add_template(b, &(kadu_template){.uri_template = "x://items/{id}", .name = "t2", .access = VIEWER_READ});
#endif
}
