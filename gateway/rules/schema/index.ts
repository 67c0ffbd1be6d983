// OpenAPI schema enforcement: a request must be one the site's uploaded document declares.
// Everything is compiled once per document version (cached by hash): a trie of path templates and
// ajv validators for every operation's parameters and JSON request bodies, at two strictness
// variants. check() only walks the trie, decodes parameters and calls precompiled validators.
//
// Strictness (each level includes the one before):
//
//   lenient   The path and the method must be declared. Nothing else is looked at, and the
//             gateway does not read bodies for it.
//   standard  What the document declares is honoured: path, query, header and cookie parameters
//             are present when required and valid against their schemas (text coerced to the
//             declared types); a body required by the operation is present; a body's content type
//             is one the operation declares; a JSON body parses and is valid against its schema.
//             Things the document does not mention (other query parameters, extra body
//             properties) pass, and so do bodies the gateway did not inspect (over the cap) and
//             non-JSON bodies (not validated). Few false positives: the level to start with.
//   strict    Nothing undeclared gets through (a positive security model): unknown query
//             parameters are refused; object schemas that declare properties but say nothing about
//             others are closed (as if `additionalProperties: false`; done with
//             `unevaluatedProperties` so `allOf` compositions still work; free-form objects stay
//             open); a body must carry a content type; a body sent to an operation that declares
//             none is refused; and a body the gateway could not inspect is refused, since it cannot
//             be shown to conform.
//
// Request semantics of OpenAPI are applied: `readOnly` properties are not required in requests,
// HEAD falls back to GET, and a CORS preflight (OPTIONS with Access-Control-Request-Method) passes
// when the method it asks about is declared for the path, since browsers send it unprompted.
//
// The parts, one module each: model.ts (what compiling produces and checking reads), document.ts
// (the document: parsing, `$ref`s, preparing its schemas), params.ts (decoding parameter values
// from the request), paths.ts (path templates and the trie requests are matched against, and how
// request paths are read), enforcer.ts (checking a request), compile.ts (ajv validators with
// patterns on RE2, compiling a document, the cache). This module is the entry importers use.
export { compileSchemaEnforcer, getSchemaEnforcer } from './compile.ts';
export type { SchemaEnforcer, SchemaViolation, Strictness } from './model.ts';
