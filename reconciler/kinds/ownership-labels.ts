// The two labels the reconciler writes on what it creates (plan/ownership.ts explains them), here
// so that the live reader can give an object without labels of its own its parent's ownership.

export const SOURCE_LABEL = 'aegis.dev/source';
export const NAME_LABEL = 'aegis.dev/name';

/**
 * The ownership of a singleton the API keeps no labels on (a site's certificate): its parent's
 * source, and the name config gives it (the parent's name, under the parent). None when the parent
 * is not managed as code.
 */
export function inheritedLabels(parentLabels: Readonly<Record<string, string>>): Record<string, string> {
  const source = parentLabels[SOURCE_LABEL];
  const name = parentLabels[NAME_LABEL];
  return source && name ? { [SOURCE_LABEL]: source, [NAME_LABEL]: `${name}/${name}` } : {};
}
