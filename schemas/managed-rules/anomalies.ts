// The request anomalies the gateway reports while it reads a request, which the managed rules'
// `protocol` rules refuse: shared by the gateway (which finds them) and the rule catalogue.

/**
 * Oddities of the request's encoding that a legitimate client does not produce, found while
 * extracting fields and paths. Managed rules refuse them as protocol anomalies (`protocol.<id>`).
 *
 * - `overlong_utf8`: an overlong UTF-8 form in a percent-encoding (`%C0%AF`) in the path or a parameter
 * - `percent_u`: an IIS `%uXXXX` escape in the path or a parameter
 * - `invalid_utf8`: a percent-encoded byte run that is not UTF-8 (`%FF`), kept as written
 * - `nul_byte`: a NUL character in the path, a parameter name or value, or a header
 * - `multipart_invalid`: a multipart body that does not parse cleanly (no boundary, unterminated, malformed part headers)
 * - `duplicate_json_key`: an object in a JSON body with the same key twice (every value is inspected)
 * - `parameter_pollution`: a parameter sent more than once under one name (every value, and the values joined with `,`, are inspected)
 */
export type Anomaly = 'overlong_utf8' | 'percent_u' | 'invalid_utf8' | 'nul_byte' | 'multipart_invalid' | 'duplicate_json_key' | 'parameter_pollution';

export const ANOMALIES: readonly Anomaly[] = ['overlong_utf8', 'percent_u', 'invalid_utf8', 'nul_byte', 'multipart_invalid', 'duplicate_json_key', 'parameter_pollution'];
