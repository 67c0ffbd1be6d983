// A secret the API shows once (a new API key, a webhook signing secret): shown with a Copy button
// and a warning that it will not be shown again.
import { useState } from 'react';

export function SecretOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(value).then(() => setCopied(true), () => setCopied(false));
  };
  return (
    <div className="secret" role="region" aria-label={label}>
      <p><strong>{label}</strong> — copy it now: it will not be shown again.</p>
      <div className="secret-row">
        <code data-testid="secret-value">{value}</code>
        <button type="button" onClick={copy}>{copied ? 'Copied' : 'Copy'}</button>
      </div>
    </div>
  );
}
