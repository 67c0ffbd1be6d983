// A CDKTF app using the Aegis bindings package, @aegis/cdktf-provider (sdks/cdktf: generated from the
// provider's schema; in this repository a `file:` devDependency that `npm ci` builds, elsewhere
// `npm install @aegis/cdktf-provider cdktf constructs`). `cdktf synth` — or, without the
// CDKTF CLI, `npm run example:cdktf` (the same thing: run the app, which writes
// cdktf.out/stacks/aegis-shop/cdk.tf.json) — produces Terraform JSON that `terraform apply` and
// `aegis plan|apply --terraform-json` both accept. Credentials come from AEGIS_API_URL / AEGIS_API_KEY.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, LocalBackend, TerraformOutput, TerraformStack } from 'cdktf';
import type { Construct } from 'constructs';
import { AegisProvider, DataAegisShieldSite, IpAccessRule, RateLimitRule, ScanSchedule, ShieldSite, VirtualPatch, Webhook } from '@aegis/cdktf-provider';

export const STACK = 'aegis-shop';

export class ShopStack extends TerraformStack {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    // Terraform runs in <outdir>/stacks/<id>; keep the state next to the outdir, as cdktf does by
    // default, but relative so synthesizing from another directory changes nothing.
    new LocalBackend(this, { path: `../../../terraform.${id}.tfstate` });
    new AegisProvider(this, 'aegis');

    // Construct ids become the Terraform resource names (`aegis_shield_site.shop`), and `site.id`
    // synthesizes to the `${aegis_shield_site.shop.id}` reference both Terraform and aegis resolve.
    const site = new ShieldSite(this, 'shop', {
      domain: 'shop.example.com',
      originUrl: 'https://origin.shop.example.com',
      mode: 'block',
      pathCase: 'insensitive',
      labels: { team: 'storefront' },
      // A nested attribute: only what is set is written (`enabled` stays at its default, true).
      // Left out, managed rules stay as the API has them.
      managedRules: {
        paranoiaLevel: 2,
        exclusions: [{ rules: ['sqli.tautology'], urlPattern: '/cms/*' }],
      },
    });

    new VirtualPatch(this, 'search_sqli', {
      siteId: site.id,
      urlPattern: '/search',
      method: 'GET',
      matchParam: 'q',
      matchRegex: '(?i)union\\s+select',
      action: 'block',
      expiresInDays: 30,
    });

    new IpAccessRule(this, 'office', { siteId: site.id, type: 'cidr', value: '198.51.100.0/24', action: 'allow', note: 'head office' });
    new IpAccessRule(this, 'bulletproof_hosting', { siteId: site.id, type: 'asn', value: 'AS64511', action: 'challenge' });

    new RateLimitRule(this, 'login', {
      siteId: site.id,
      identity: 'ip',
      urlPattern: '/login',
      method: 'POST',
      budget: 10,
      windowSeconds: 60,
      action: 'block',
      escalateToDenyMinutes: 15,
    });

    new ScanSchedule(this, 'nightly', {
      name: 'Nightly DAST of the shop',
      scanType: 'dast',
      target: 'https://shop.example.com',
      cron: '0 3 * * *',
      timezone: 'Europe/Amsterdam',
    });

    const webhook = new Webhook(this, 'alerts', {
      url: 'https://hooks.example.com/aegis',
      events: ['vulnerability.created', 'shield.block'],
      description: 'Security channel',
    });

    const lookedUp = new DataAegisShieldSite(this, 'shop_lookup', { domain: site.domain, dependsOn: [site] });
    new TerraformOutput(this, 'shop_site_id', { value: lookedUp.id });
    new TerraformOutput(this, 'webhook_secret', { value: webhook.secret, sensitive: true });
  }
}

/** Synthesizes the app into `outdir` (what `cdktf synth` does); returns the stack's cdk.tf.json path. */
export function synth(outdir?: string): string {
  // The cdktf CLI passes its output directory in CDKTF_OUTDIR; otherwise cdktf.out next to this file.
  const app = new App({ outdir: outdir ?? process.env.CDKTF_OUTDIR ?? fileURLToPath(new URL('cdktf.out', import.meta.url)) });
  new ShopStack(app, STACK);
  app.synth();
  return `${app.outdir}/stacks/${STACK}/cdk.tf.json`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(synth());
}
