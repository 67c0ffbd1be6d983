// The Aegis provider: its own configuration (where the API is, which key) and the resources and
// data sources of provider/resources. The plugin-protocol server (provider/server) serves this.
import { createAegisClient } from '../client/client.ts';
import { restResources } from '../reconciler/live/rest-resources.ts';
import type { Diagnostic, ProviderDefinition, TfObject, TfValue } from './framework/contract.ts';
import { createImpactPreviewer } from './resources/impact.ts';
import { impactWindowProblem, readImpactWindow } from '../schemas/impact-window.ts';
import { aegisResources, NotConfiguredError, type Connection } from './resources/index.ts';

export interface AegisProviderOptions {
  /** Where AEGIS_API_URL / AEGIS_API_KEY are read from (default process.env). */
  env?: Record<string, string | undefined>;
}

type Setting = { ok: true; value: string | undefined } | { ok: false; diagnostic: Diagnostic };

/** The configured value, else the environment's; unknown values cannot reach a client. */
function setting(value: TfValue | undefined, name: string, envName: string, env: Record<string, string | undefined>): Setting {
  if (typeof value === 'string' && value !== '') return { ok: true, value };
  if (value === null || value === undefined || value === '') return { ok: true, value: env[envName] || undefined };
  return { ok: false, diagnostic: { severity: 'error', summary: `${name} must be known when the provider is configured`, detail: `Set ${name} to a value known before apply, or use ${envName}.`, attribute: [name] } };
}

export function aegisProvider(options: AegisProviderOptions = {}): ProviderDefinition {
  const env = options.env ?? process.env;
  let connection: Connection | undefined;
  const connect = (): Connection => {
    if (!connection) throw new NotConfiguredError();
    return connection;
  };
  const { resources, dataSources } = aegisResources(connect);

  return {
    schema: {
      description: 'Aegis: Shield sites and their rules, scan schedules and webhooks, managed as code.',
      attributes: [
        { name: 'api_url', type: 'string', optional: true, description: 'Base URL of the Aegis API, e.g. `https://aegis.example.com` (paths start with `/api/v1`). Default: the AEGIS_API_URL environment variable.' },
        { name: 'api_key', type: 'string', optional: true, sensitive: true, description: 'API key (`svc_live_…`) with write scopes for the managed kinds. Default: the AEGIS_API_KEY environment variable.' },
        {
          name: 'impact_window',
          type: 'string',
          optional: true,
          description:
            'How much recorded traffic `terraform plan` replays to show, as a warning on each changed Shield site or rule, what the change would have done: days, hours and minutes (e.g. `24h`, `90m`, `7d`, `1d12h`; at most `90d`). Default: the AEGIS_IMPACT_WINDOW environment variable, else `24h`.',
        },
      ],
    },
    async configure(config: TfObject, terraformVersion: string): Promise<Diagnostic[]> {
      const url = setting(config.api_url, 'api_url', 'AEGIS_API_URL', env);
      const key = setting(config.api_key, 'api_key', 'AEGIS_API_KEY', env);
      const window = setting(config.impact_window, 'impact_window', 'AEGIS_IMPACT_WINDOW', env);
      const windowMs = window.ok && window.value !== undefined ? readImpactWindow(window.value)?.ms : undefined;
      const diagnostics = [url, key, window].flatMap((s) => (s.ok ? [] : [s.diagnostic]));
      if (window.ok && window.value !== undefined && windowMs === undefined) {
        diagnostics.push({ severity: 'error', summary: 'Invalid impact_window', detail: `${JSON.stringify(window.value)}: ${impactWindowProblem(window.value)}.`, attribute: ['impact_window'] });
      }
      if (url.ok && !url.value) diagnostics.push({ severity: 'error', summary: 'Missing Aegis API URL', detail: 'Set api_url in the provider block or AEGIS_API_URL in the environment.', attribute: ['api_url'] });
      if (key.ok && !key.value) diagnostics.push({ severity: 'error', summary: 'Missing Aegis API key', detail: 'Set api_key in the provider block or AEGIS_API_KEY in the environment.', attribute: ['api_key'] });
      if (diagnostics.length > 0 || !url.ok || !key.ok || !url.value || !key.value) return diagnostics;
      const clientOptions = { baseUrl: url.value.replace(/\/+$/, ''), apiKey: key.value, userAgent: `terraform-provider-aegis/0.1 terraform/${terraformVersion || 'unknown'}` };
      const client = createAegisClient(clientOptions);
      // Previews never retry: a rate-limited or slow preview is skipped rather than waited for.
      const impact = createImpactPreviewer({ client: createAegisClient({ ...clientOptions, maxRetries: 0 }), ...(windowMs !== undefined ? { windowMs } : {}) });
      connection = { client, api: restResources(client), impact };
      return [];
    },
    resources,
    dataSources,
  };
}
