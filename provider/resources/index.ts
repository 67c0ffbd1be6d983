// Every resource and data source of the provider, bound to one connection getter.
import type { DataSourceDefinition, ResourceDefinition } from '../framework/contract.ts';
import type { Connect } from './context.ts';
import { shieldSiteDataSource, shieldSitesDataSource } from './data-sources.ts';
import { createKindResource } from './resource.ts';
import { deriveAllKindSchemas, type KindSchema } from './schema.ts';

export { NotConfiguredError, type Connect, type Connection } from './context.ts';
export { deriveAllKindSchemas, deriveKindSchema, type KindSchema } from './schema.ts';

export interface AegisResources {
  resources: ResourceDefinition[];
  dataSources: DataSourceDefinition[];
}

export function aegisResources(connect: Connect, kinds: readonly KindSchema[] = deriveAllKindSchemas()): AegisResources {
  const site = kinds.find((k) => k.kind === 'ShieldSite');
  if (!site) throw new Error('the ShieldSite kind is missing from schemas/');
  return {
    resources: kinds.map((kind) => createKindResource(kind, connect)),
    dataSources: [shieldSiteDataSource(site, connect), shieldSitesDataSource(site, connect)],
  };
}
