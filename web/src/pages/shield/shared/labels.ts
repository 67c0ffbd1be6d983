// Labels are edited as text, one `key=value` a line: short to type, and a config source's own
// labels (`aegis.dev/source`) stay visible and are kept unless someone deletes the line.
export type Labels = Record<string, string>;

export function labelsToText(labels: Labels | null | undefined): string {
  return Object.entries(labels ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
}

/** Lines without `=` become a key with an empty value, which the API then judges like any other. */
export function textToLabels(text: string): Labels {
  const labels: Labels = {};
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    const at = trimmed.indexOf('=');
    if (at === -1) labels[trimmed] = '';
    else labels[trimmed.slice(0, at).trim()] = trimmed.slice(at + 1).trim();
  }
  return labels;
}
