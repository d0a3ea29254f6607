// Reading executions as the Kadu API returns them.

import { Json } from "@kobana/kadu-sdk/assembly";

/**
 * The waiting executions of a list page ({"data":[execution…],"meta":…}),
 * as {"execution_id","task_id","kind","prompt","expires_at"}; a member
 * the execution does not have is null.
 */
export function waiting(page: Json): Json {
  const out = Json.arr();
  const data = page.getArray("data");
  if (data === null) return out;
  for (let i = 0; i < data.length; i++) {
    const exe = data.at(i)!;
    if (!exe.isObject()) continue;
    const pending = exe.getObject("pending_input");
    out.push(Json.obj()
      .set("execution_id", member(exe, "id"))
      .set("task_id", member(exe, "task_id"))
      .set("kind", member(pending, "kind"))
      .set("prompt", member(pending, "prompt"))
      .set("expires_at", member(pending, "expires_at")));
  }
  return out;
}

function member(o: Json | null, key: string): Json {
  if (o === null) return Json.null();
  const v = o.get(key);
  return v === null ? Json.null() : v;
}

/**
 * Why schema cannot be shown as an MCP elicitation form, or "" when it
 * can: a form is a flat object whose properties are strings, numbers,
 * integers or booleans.
 */
export function formSchemaProblem(schema: Json | null): string {
  if (schema === null || schema.isNull()) return "it has no input schema";
  if (!schema.isObject() || schema.getString("type") != "object") return "its input schema is not an object";
  const props = schema.getObject("properties");
  if (props === null || props.length == 0) return "its input schema has no properties";
  for (let i = 0; i < props.length; i++) {
    const p = props.at(i)!;
    const t = p.isObject() ? p.getString("type") : null;
    if (t != "string" && t != "number" && t != "integer" && t != "boolean") {
      return "property " + props.keyAt(i)! + " is not a string, number, integer or boolean";
    }
  }
  return "";
}
