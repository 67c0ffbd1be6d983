// Path parameters of the Shield routes: `:id` is the site (as in the specification's paths).
export const siteParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64, description: 'Shield site id.' } } } as const;

export const siteRuleParams = {
  type: 'object',
  required: ['id', 'rule_id'],
  properties: { id: siteParams.properties.id, rule_id: { type: 'string', maxLength: 64, description: 'Rule id.' } },
} as const;

export const sitePatchParams = {
  type: 'object',
  required: ['id', 'patch_id'],
  properties: { id: siteParams.properties.id, patch_id: { type: 'string', maxLength: 64, description: 'Virtual patch id.' } },
} as const;
