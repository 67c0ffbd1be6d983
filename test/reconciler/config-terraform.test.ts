// Terraform JSON from `cdktf synth` loads into the same objects as the equivalent YAML repository,
// and its mistakes are reported with JSON positions.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfigDir } from '../../reconciler/config/load.ts';
import { loadTerraformJson, loadTerraformJsonText } from '../../reconciler/config/terraform-json.ts';
import { validateConfig } from '../../reconciler/config/validate.ts';
import { formatProblem, type DesiredObject } from '../../reconciler/model.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/config/', import.meta.url));

const comparable = (objects: DesiredObject[]) =>
  objects
    .map(({ kind, site, name, spec }) => ({ kind, site: site ?? null, name, spec }))
    .sort((a, b) => `${a.kind}/${a.site}/${a.name}`.localeCompare(`${b.kind}/${b.site}/${b.name}`));

describe('Terraform JSON (cdktf synth)', () => {
  it('loads into exactly the objects of the equivalent YAML repository', async () => {
    const terraform = await loadTerraformJson(`${FIXTURES}terraform/cdk.tf.json`);
    expect(terraform.problems).toEqual([]);
    expect(validateConfig(terraform.objects)).toEqual([]);
    const yamlConfig = await loadConfigDir(`${FIXTURES}valid`);
    expect(terraform.objects).toHaveLength(13);
    expect(comparable(terraform.objects)).toEqual(comparable(yamlConfig.objects));
  });

  it('locates each resource at its name in the JSON', async () => {
    const file = `${FIXTURES}terraform/cdk.tf.json`;
    const { objects } = await loadTerraformJson(file);
    const site = objects.find((o) => o.kind === 'ShieldSite' && o.name === 'shop');
    expect(site?.location).toEqual({ file: file, line: 19, column: 7 });
  });

  it('reports unknown types, unresolvable references and schema violations where they are', () => {
    const text = JSON.stringify(
      {
        '//': { metadata: { version: '0.20.11' } },
        resource: {
          aegis_shield_site: { shop: { domain: 'shop.example.com', origin_url: 'https://o.example.com', mode: 'blocking', colour: 'red' } },
          aegis_virtual_patch: {
            dangling: { site_id: '${aegis_shield_site.blog.id}', url_pattern: '/a', method: 'GET', match_param: 'q', match_regex: 'x' },
            literal: { site_id: '01HXYZ', url_pattern: '/a', method: 'GET', match_param: 'q', match_regex: 'x' },
            expression: { site_id: '${aegis_shield_site.shop.id}', url_pattern: '${var.path}', method: 'GET', match_param: 'q', match_regex: 'x', count: 2 },
          },
          aegis_firewall: { x: {} },
          null_resource: { other: {} },
        },
        outputs: {},
      },
      null,
      2,
    );
    const { objects, problems } = loadTerraformJsonText(text, 'cdk.tf.json');
    expect(objects).toEqual([]);
    expect(problems.map(formatProblem)).toEqual([
      'cdk.tf.json:12:17 ShieldSite/shop: resource.aegis_shield_site.shop.mode: must be one of log, block, challenge',
      'cdk.tf.json:13:9 ShieldSite/shop: resource.aegis_shield_site.shop.colour: unknown field',
      'cdk.tf.json:18:20 VirtualPatch/dangling: resource.aegis_virtual_patch.dangling.site_id: aegis_shield_site.blog is not defined in this configuration',
      'cdk.tf.json:25:20 VirtualPatch/literal: resource.aegis_virtual_patch.literal.site_id: must reference a site of this configuration as ${aegis_shield_site.NAME.id}',
      'cdk.tf.json:33:24 VirtualPatch/expression: resource.aegis_virtual_patch.expression.url_pattern: Terraform expressions cannot be resolved offline; write the value itself',
      'cdk.tf.json:37:9 VirtualPatch/expression: resource.aegis_virtual_patch.expression.count: count cannot be expanded offline; declare each object as its own resource',
      'cdk.tf.json:40:5: resource.aegis_firewall: unknown resource type (known: aegis_shield_site, aegis_virtual_patch, aegis_ip_access_rule, aegis_rate_limit_rule, aegis_shield_schema, aegis_shield_certificate, aegis_scan_schedule, aegis_webhook)',
      'cdk.tf.json:47:3: outputs: unknown top-level block',
    ]);
  });

  it('reports invalid JSON at its position', () => {
    const { problems } = loadTerraformJsonText('{\n  "resource": {\n    "aegis_webhook": {,\n  }\n}\n', 'bad.tf.json');
    // The message is V8's; the position is ours.
    expect(problems.map(formatProblem)).toEqual([expect.stringMatching(/^bad\.tf\.json:3:23: invalid JSON: .* at position 40$/)]);
  });
});
