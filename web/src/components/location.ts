// A finding's location in one line, whatever scanned it: file:line, package@version (manifest) or
// METHOD url (parameter).
export function whereOf(location: Record<string, unknown>): string {
  const text = (key: string) => (typeof location[key] === 'string' || typeof location[key] === 'number' ? String(location[key]) : '');
  if (location.kind === 'url') return `${text('method') || 'GET'} ${text('url')}${text('parameter') ? ` (${text('parameter')})` : ''}`;
  if (location.kind === 'package') return `${text('name')}@${text('version')} (${text('path')})`;
  return text('line') ? `${text('path')}:${text('line')}` : text('path');
}
