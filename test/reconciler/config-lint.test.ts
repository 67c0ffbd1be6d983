// The security lint: valid but weak configurations are warned about, clear cases only.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { blocksEverything, coversEveryAddress, lintConfig } from '../../reconciler/config/lint.ts';
import { loadConfigDir, loadConfigText } from '../../reconciler/config/load.ts';
import { isWarning } from '../../reconciler/config/problems.ts';
import { formatProblem } from '../../reconciler/model.ts';

/** Strips the indentation of the first line from every line, so YAML can be written in place. */
function yaml(text: string): string {
  const lines = text.replace(/^\n/, '').split('\n');
  const indent = /^ */.exec(lines[0] ?? '')?.[0].length ?? 0;
  return lines.map((line) => line.slice(indent)).join('\n');
}

const VALID = fileURLToPath(new URL('../fixtures/config/valid', import.meta.url));

describe('security lint', () => {
  it('warns about sites and rules that do not protect, or lock everyone out', async () => {
    const text = yaml(`
      apiVersion: aegis/v1
      kind: ShieldSite
      metadata:
        name: shop
      spec:
        domain: shop.example.com
        origin_url: https://origin.example.com
        mode: log
        virtual_patches:
          - { name: p, url_pattern: /a, method: GET, match_param: q, match_regex: x, action: log }
          - { name: fine, url_pattern: /b, method: GET, match_param: q, match_regex: x }
        ip_access:
          - { type: cidr, value: 0.0.0.0/0, action: allow }
          - { type: cidr, value: "0::/0", action: deny }
          - { type: cidr, value: 10.0.0.0/8, action: allow }
          - { type: cidr, value: 0.0.0.0/0, action: challenge }
        rate_limits:
          - { name: daily, identity: ip, url_pattern: /*, method: ANY, budget: 1, window_seconds: 86400, action: block }
          - { name: login, identity: ip, url_pattern: /login, method: POST, budget: 1, window_seconds: 86400, action: block }
          - { name: normal, identity: ip, url_pattern: /*, method: ANY, budget: 100, window_seconds: 60, action: block }
      ---
      apiVersion: aegis/v1
      kind: Webhook
      metadata:
        name: plain
      spec:
        url: http://hooks.example.com/aegis
        events: [scan.completed]
      ---
      apiVersion: aegis/v1
      kind: Webhook
      metadata:
        name: local
      spec:
        url: http://localhost:9000/aegis
        events: [scan.completed]
    `);
    const { objects, problems } = await loadConfigText(text, 'lint.yaml');
    expect(problems).toEqual([]);
    const warnings = lintConfig(objects);
    expect(warnings.every(isWarning)).toBe(true);
    expect(warnings.map(formatProblem)).toEqual([
      'lint.yaml:8:9 ShieldSite/shop: warning: spec.mode: site does not block: in log mode its rules only record what they would do',
      'lint.yaml:10:88 VirtualPatch/p: warning: spec.virtual_patches[0].action: virtual patch does not block: matching requests are only logged',
      "lint.yaml:13:28 IpAccessRule/cidr-0.0.0.0-0: warning: spec.ip_access[0].value: allow rule for 0.0.0.0/0 lets every IPv4 client bypass the site's other rules",
      'lint.yaml:14:28 IpAccessRule/cidr-0---0: warning: spec.ip_access[1].value: deny rule for 0::/0 blocks every IPv6 client',
      'lint.yaml:18:74 RateLimitRule/daily: warning: spec.rate_limits[0].budget: 1 request(s) per 86400 s on every path and method effectively blocks the site',
      'lint.yaml:27:8 Webhook/plain: warning: spec.url: deliveries (findings, blocked requests) travel unencrypted over http://; use https://',
    ]);
  });

  it('finds nothing to warn about in the valid example repository', async () => {
    const { objects } = await loadConfigDir(VALID);
    expect(lintConfig(objects)).toEqual([]);
  });

  it('exports its judgements for the planner', () => {
    expect(coversEveryAddress('cidr', '::/0')).toBe('every IPv6 client');
    expect(coversEveryAddress('cidr', '0.0.0.0/1')).toBeNull();
    expect(coversEveryAddress('ip', '0.0.0.0')).toBeNull();
    expect(blocksEverything({ url_pattern: '/*', method: 'ANY', budget: 2, window_seconds: 7200, action: 'challenge' })).toBe(true);
    expect(blocksEverything({ url_pattern: '/*', method: 'ANY', budget: 2, window_seconds: 7199, action: 'block' })).toBe(false);
    expect(blocksEverything({ url_pattern: '/*', method: 'ANY', budget: 1, window_seconds: 86400, action: 'log' })).toBe(false);
  });
});
