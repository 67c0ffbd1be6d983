// Quickstart: put a Shield site in front of an origin, deny one IP, then scan a local repository
// for secrets and print what was found.
//
//   AEGIS_API_URL=http://localhost:3000 AEGIS_API_KEY=svc_live_… node bin/run-ts.mjs sdks/node/examples/quickstart.ts [path]
//
// The scan sends the repository's path when the server may read local sources
// (AEGIS_ALLOW_LOCAL_SOURCES=true), and otherwise uploads `git archive --format=tar.gz HEAD` of it.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { Aegis, AegisError, BadRequestError, ValidationError, type Scan } from '../src/index.ts';

const repository = resolve(process.argv[2] ?? '.');
const aegis = new Aegis(); // AEGIS_API_KEY and AEGIS_API_URL from the environment

const site = await aegis.shieldSites.create({
  domain: `quickstart-${Date.now().toString(36)}.example.com`,
  origin_url: 'https://origin.example.com',
  mode: 'block',
});
console.log(`Shield site ${site.id} for ${site.domain} (mode ${site.mode})`);

const rule = await aegis.ipAccessRules.create(site.id, { type: 'ip', value: '203.0.113.7', action: 'deny', note: 'quickstart' });
console.log(`IP rule ${rule.id}: ${rule.action} ${rule.value}`);

let scan: Scan;
try {
  scan = await aegis.scans.createSecrets({ target: repository });
} catch (error) {
  // The server does not read local paths: send the repository's content instead.
  if (!(error instanceof ValidationError || error instanceof BadRequestError)) throw error;
  const archive = execFileSync('git', ['-C', repository, 'archive', '--format=tar.gz', 'HEAD'], { maxBuffer: 512 * 1024 * 1024 });
  scan = await aegis.scans.createSecrets({ content: new Uint8Array(archive), contentType: 'application/gzip' });
}
console.log(`Secrets scan ${scan.id} of ${repository}: ${scan.status}`);

const deadline = Date.now() + 5 * 60_000;
while (scan.status === 'queued' || scan.status === 'running') {
  if (Date.now() > deadline) throw new AegisError(`Scan ${scan.id} still ${scan.status} after 5 minutes`);
  await new Promise((r) => setTimeout(r, 500));
  scan = await aegis.scans.get(scan.id);
}
console.log(`Scan ${scan.id} ${scan.status}`);
if (scan.status !== 'completed') process.exit(1);

let count = 0;
for await (const finding of aegis.vulnerabilities.list({ scan_id: scan.id, limit: 100 })) {
  count++;
  const location = finding.location as { path?: string; line?: number };
  console.log(`  [${finding.severity}] ${finding.title}${location.path ? ` — ${location.path}${location.line ? `:${location.line}` : ''}` : ''}`);
}
console.log(`${count} finding(s)`);
