// @kobana/kadu-sdk: the AssemblyScript SDK for Kadu bundles (ABI kadu/v1,
// sdk/ABI.md). A bundle's entry file imports from here, re-exports the
// ABI's exports, and registers itself at the top level:
//
//   import { Bundle, Call, Result, Role, Scope } from "@kobana/kadu-sdk/assembly";
//   export { kadu_abi_v1, kadu_describe, kadu_handle } from "@kobana/kadu-sdk/assembly/exports";
//
//   function hello(c: Call): Result { return Result.text("Hello, " + c.caller().orgId); }
//
//   new Bundle({ name: "hello", version: "1.0.0" })
//     .tool({ name: "hello", inputSchema: `{"type":"object"}`, readOnly: true, idempotent: true,
//             access: { minRole: Role.Viewer, scope: Scope.Read } }, hello)
//     .register();

import "./abort";

export { Json, JsonKind, MAX_DEPTH } from "./json";
export {
  Bundle, BundleInfo, ToolDef, ResourceDef, TemplateDef, PromptDef, PromptArgument,
  Access, Role, Scope, Handler, ABI_VERSION,
} from "./bundle";
export { Call, Caller, ClientInfo, Response, InputResponse, CompletionRequest } from "./call";
export {
  Result, ResultKind, ResourceContents, PromptMessage, Code,
  textContent, elicitForm, inputRequest, startingWith, MAX_STATE_BYTES, MAX_COMPLETION_VALUES,
} from "./result";
export { log, LogLevel } from "./log";
export { encodePathSegment, encodeQueryValue } from "./uri";
export { configGet as config, nowMillis, randomBytes } from "./host";
