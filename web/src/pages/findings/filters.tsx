// The list's filters: one control per filter of GET /api/v1/vulnerabilities. Choices apply at once;
// free-text filters (CWE, target, scan) apply with the form's button (or Enter).
import { useState, type FormEvent } from 'react';
import { SEVERITIES } from '../../components/badges.tsx';
import { Field } from '../../components/forms.tsx';
import { SCAN_TYPES, STATUSES } from './model.ts';
import type { ListState } from './url-state.ts';

/** A select of `options`, plus the URL's value when it is a list (`high,critical`) the options lack. */
function Choice({ label, value, options, onChange }: { label: string; value: string | undefined; options: readonly string[]; onChange(value: string): void }) {
  const extra = value && !options.includes(value) ? [value] : [];
  return (
    <Field label={label}>
      {(props) => (
        <select {...props} value={value ?? ''} onChange={(e) => onChange(e.target.value)}>
          <option value="">Any</option>
          {[...options, ...extra].map((o) => (
            <option key={o} value={o}>{o.replace(/_/g, ' ').replace(/,/g, ', ')}</option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function FindingFilters({ state, onChange }: { state: ListState; onChange(changes: ListState): void }) {
  const fromUrl = { cwe: state.cwe ?? '', target: state.target ?? '', scan_id: state.scan_id ?? '' };
  const [text, setText] = useState(fromUrl);
  // The URL changed (a link, Back, Clear): show its values (state adjusted during render, React's
  // documented pattern; remounting instead would lose the keyboard focus).
  const [seen, setSeen] = useState(JSON.stringify(fromUrl));
  if (seen !== JSON.stringify(fromUrl)) {
    setSeen(JSON.stringify(fromUrl));
    setText(fromUrl);
  }
  const apply = (e: FormEvent) => {
    e.preventDefault();
    onChange(text);
  };
  const clear = () => {
    setText({ cwe: '', target: '', scan_id: '' });
    onChange({ severity: '', status: '', scan_type: '', cwe: '', target: '', scan_id: '', false_positive: '' });
  };
  return (
    <form className="filters" role="search" aria-label="Filter findings" onSubmit={apply}>
      <Choice label="Severity" value={state.severity} options={[...SEVERITIES, 'critical,high']} onChange={(severity) => onChange({ severity })} />
      <Choice label="Status" value={state.status} options={[...STATUSES, 'open,acknowledged']} onChange={(status) => onChange({ status })} />
      <Choice label="Scan type" value={state.scan_type} options={SCAN_TYPES} onChange={(scan_type) => onChange({ scan_type })} />
      <Field label="False positive">
        {(props) => (
          <select {...props} value={state.false_positive ?? ''} onChange={(e) => onChange({ false_positive: e.target.value })}>
            <option value="">Any</option>
            <option value="false">Not false positives</option>
            <option value="true">False positives only</option>
          </select>
        )}
      </Field>
      <Field label="CWE">
        {(props) => <input {...props} size={10} placeholder="CWE-89" value={text.cwe} onChange={(e) => setText({ ...text, cwe: e.target.value })} />}
      </Field>
      <Field label="Target">
        {(props) => <input {...props} placeholder="https://github.com/acme/app.git" value={text.target} onChange={(e) => setText({ ...text, target: e.target.value })} />}
      </Field>
      <Field label="Scan id">
        {(props) => <input {...props} size={14} placeholder="scan_…" value={text.scan_id} onChange={(e) => setText({ ...text, scan_id: e.target.value })} />}
      </Field>
      <div className="actions">
        <button type="submit">Apply</button>
        <button type="button" className="button-quiet" onClick={clear}>Clear filters</button>
      </div>
    </form>
  );
}
