// Detection and false positives of the Shield managed rules, measured over HTTP against the real
// gateway and beside ModSecurity + the OWASP CRS, in one run:
//
//   targets   the Aegis gateway (in this process, as bench/shield.ts starts it) with four sites whose
//             managed rules run at paranoia levels 1, 2, 3 and 4 in block mode; Debian nginx +
//             ModSecurity v3 + OWASP CRS at paranoia level 1, blocking (skipped when not installed).
//             All in front of one origin that answers 200 to everything (support/waf-eval/origin.ts).
//   attacks   wallarm/gotestwaf's test cases, every payload × encoder × placeholder as gotestwaf
//             generates them (support/waf-eval/gotestwaf*.ts), swisskyrepo/PayloadsAllTheThings'
//             intruder lists in a query, a form and a JSON body (support/waf-eval/intruder-lists.ts),
//             and the OWASP CRS's own regression tests for its attack rules, as go-ftw sends them
//             (support/waf-eval/crs-regression.ts).
//   benign    public texts and data (support/waf-eval/benign.ts), gotestwaf's false-pos cases and the
//             CRS tests that expect no attack rule to fire.
//
// Every target gets every request. Blocked: the WAF answered with a 4xx other than 429 (403 for a
// rule; 400/413/415 when it refuses to parse or inspect); passed: the origin answered. Prints, per
// class, placement, encoding and benign source, the % blocked (or passed) at each level and for
// ModSecurity, a summary, and with --misses the attacks PL1 let through and the benign requests it
// blocked, with the rule (from the decisions the gateway records). The corpora are bare git
// mirrors fetched beside the project, never copied into it.
//
//   npm run eval:managed -- [--gotestwaf DIR] [--payloads DIR] [--crs DIR] [--mirrors DIR] [--sample N] [--misses N] [--json FILE] [--targets LIST]
import { benignRequests } from './support/waf-eval/benign.ts';
import { runEvaluation } from './support/waf-eval/run.ts';

await runEvaluation(process.argv.slice(2), benignRequests);
