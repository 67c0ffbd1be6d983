// GET /api/v1/shield/managed-rules: the catalogue of managed rules a site's `managed_rules` turns
// on by paranoia level, and whose ids and categories its exclusions name (as Cloudflare lists the
// rules of its managed rulesets).
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { MANAGED_RULE_CATEGORIES, MANAGED_RULES } from '../../../gateway/rules/managed/index.ts';

const ruleSchema = {
  type: 'object',
  required: ['id', 'category', 'paranoia_level', 'description'],
  properties: {
    id: { type: 'string', description: 'Rule id, as decisions (`rule_kind: managed`) and exclusions name it.' },
    category: { type: 'string', description: 'Category; an exclusion may name it to cover all its rules.' },
    paranoia_level: { type: 'integer', description: 'Lowest site paranoia level at which the rule is on.' },
    description: { type: 'string' },
  },
} as const;

export const managedRuleRoutes: FastifyPluginAsyncJsonSchemaToTs = async (app) => {
  app.get(
    '/api/v1/shield/managed-rules',
    {
      config: { auth: 'shield:read' },
      schema: {
        tags: ['Shield sites'],
        summary: 'List the managed rules',
        description: 'Every managed rule with its category and paranoia level. The catalogue is the same for every organisation and changes only with Aegis releases.',
        response: {
          200: {
            type: 'object',
            required: ['data', 'categories'],
            properties: { data: { type: 'array', items: ruleSchema }, categories: { type: 'array', items: { type: 'string' } } },
          },
        },
      },
    },
    async () => ({ data: MANAGED_RULES.map(({ id, category, paranoia_level, description }) => ({ id, category, paranoia_level, description })), categories: [...MANAGED_RULE_CATEGORIES] }),
  );
};
