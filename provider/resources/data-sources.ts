// Data sources over Shield sites: one by domain, and all of them. Their attributes are the
// aegis_shield_site resource's (derived from schemas/), all computed except the lookup key.
import type { AttributeSchema, DataSourceDefinition, StateResponse, TfObject, TfType } from '../framework/contract.ts';
import type { Fields } from '../../reconciler/live/resources.ts';
import { errorDiagnostics, type Connect } from './context.ts';
import type { KindSchema } from './schema.ts';
import { fromJson } from './values.ts';

function siteObject(site: KindSchema, fields: Fields): TfObject {
  const object: TfObject = {};
  for (const { schema, field } of site.attributes) object[schema.name] = fromJson(fields[field], schema.type);
  return object;
}

export function shieldSiteDataSource(site: KindSchema, connect: Connect): DataSourceDefinition {
  const attributes: AttributeSchema[] = site.attributes.map(({ schema }) =>
    schema.name === 'domain'
      ? { name: schema.name, type: schema.type, description: `${schema.description} The site to look up.`, required: true }
      : { name: schema.name, type: schema.type, description: schema.description, computed: true },
  );
  return {
    typeName: 'aegis_shield_site',
    schema: { description: 'Looks up a Shield site by its domain.', attributes },
    async read(config): Promise<StateResponse> {
      const domain = config.domain;
      if (typeof domain !== 'string') return { state: null, diagnostics: [{ severity: 'error', summary: 'domain must be set', attribute: ['domain'] }] };
      try {
        const { client } = connect();
        const { items } = await client.listAll('/api/v1/shield/sites', { params: { query: { domain } } });
        // The filter is a comma-separated list on the API side: match exactly here.
        const found = (items as Fields[]).find((item) => item.domain === domain);
        if (!found) return { state: null, diagnostics: [{ severity: 'error', summary: `No Shield site with domain ${domain}`, attribute: ['domain'] }] };
        return { state: siteObject(site, found), diagnostics: [] };
      } catch (err) {
        return { state: null, diagnostics: errorDiagnostics('aegis_shield_site: read failed', err) };
      }
    },
  };
}

export function shieldSitesDataSource(site: KindSchema, connect: Connect): DataSourceDefinition {
  const element: Record<string, TfType> = Object.fromEntries(site.attributes.map(({ schema }) => [schema.name, schema.type]));
  return {
    typeName: 'aegis_shield_sites',
    schema: {
      description: 'Every Shield site of the organisation.',
      attributes: [
        {
          name: 'sites',
          type: ['list', ['object', element]],
          description: `The sites, newest first. Each has the attributes of aegis_shield_site: ${site.attributes.map((a) => a.schema.name).join(', ')}.`,
          computed: true,
        },
      ],
    },
    async read(): Promise<StateResponse> {
      try {
        const { api } = connect();
        const sites = await api.list('ShieldSite');
        return { state: { sites: sites.map((fields) => siteObject(site, fields)) }, diagnostics: [] };
      } catch (err) {
        return { state: null, diagnostics: errorDiagnostics('aegis_shield_sites: read failed', err) };
      }
    },
  };
}
