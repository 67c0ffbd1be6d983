// The forms of URL scans: DAST (a start URL and crawl depth), API (a base URL and an OpenAPI
// document by URL or upload) and CVE (a URL and the CVE ids or tags to run). They share the scope,
// limits and authentication every URL scan takes.
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../api/client.ts';
import type { BodyOf } from '../../api/types.ts';
import { Field, useWrite } from '../../components/forms.tsx';
import { ErrorMessage } from '../../components/status.tsx';
import type { Scan } from './model.ts';

type DastBody = BodyOf<'/api/v1/scans', 'post'>;
type ApiBody = BodyOf<'/api/v1/api-scans', 'post'>;
type CveBody = BodyOf<'/api/v1/cve-scans', 'post'>;

interface Common {
  hosts: string;
  pathPrefixes: string;
  maxRequests: string;
  rate: string;
  headers: string;
}
const emptyCommon: Common = { hosts: '', pathPrefixes: '', maxRequests: '', rate: '', headers: '' };

const list = (text: string) => text.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);

/** `Name: value` lines as a header map (a line without a colon is left for the API to refuse). */
function headerMap(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/** The shared part of a URL scan's body; numbers left empty take the server's defaults. */
function commonBody(c: Common): Pick<DastBody, 'scope' | 'max_requests' | 'requests_per_second' | 'auth'> {
  const hosts = list(c.hosts);
  const prefixes = list(c.pathPrefixes);
  const headers = headerMap(c.headers);
  return {
    ...(hosts.length || prefixes.length ? { scope: { ...(hosts.length ? { hosts } : {}), ...(prefixes.length ? { path_prefixes: prefixes } : {}) } } : {}),
    ...(c.maxRequests.trim() ? { max_requests: Number(c.maxRequests) } : {}),
    ...(c.rate.trim() ? { requests_per_second: Number(c.rate) } : {}),
    ...(Object.keys(headers).length ? { auth: { headers } } : {}),
  };
}

function CommonFields({ value, onChange }: { value: Common; onChange(next: Common): void }) {
  return (
    <fieldset>
      <legend>Scope, limits and authentication</legend>
      <Field label="Hosts in scope (optional)" hint="host or host:port, separated by commas; default: the target's host.">
        {(props) => <input {...props} name="hosts" value={value.hosts} onChange={(e) => onChange({ ...value, hosts: e.target.value })} />}
      </Field>
      <Field label="Path prefixes (optional)" hint="Only paths under these, e.g. /app, /api; default: every path.">
        {(props) => <input {...props} name="path_prefixes" value={value.pathPrefixes} onChange={(e) => onChange({ ...value, pathPrefixes: e.target.value })} />}
      </Field>
      <Field label="Maximum requests (optional)" hint="1 to 100 000; default 2 000.">
        {(props) => <input {...props} name="max_requests" type="number" inputMode="numeric" value={value.maxRequests} onChange={(e) => onChange({ ...value, maxRequests: e.target.value })} />}
      </Field>
      <Field label="Requests per second (optional)" hint="0.1 to 200; default 20.">
        {(props) => <input {...props} name="requests_per_second" type="number" step="0.1" value={value.rate} onChange={(e) => onChange({ ...value, rate: e.target.value })} />}
      </Field>
      <Field label="Headers sent with every request (optional)" hint="One per line, Name: value. Stored sealed, never shown again.">
        {(props) => <textarea {...props} name="headers" value={value.headers} onChange={(e) => onChange({ ...value, headers: e.target.value })} />}
      </Field>
    </fieldset>
  );
}

function Submit({ busy }: { busy: boolean }) {
  return (
    <div className="actions">
      <button type="submit" className="button-primary" disabled={busy}>{busy ? 'Starting…' : 'Start scan'}</button>
    </div>
  );
}

export function DastScanForm({ onStarted }: { onStarted(scan: Scan): void }) {
  const [target, setTarget] = useState('');
  const [depth, setDepth] = useState('');
  const [common, setCommon] = useState(emptyCommon);
  const start = useWrite((body: DastBody) => ok(api.POST('/api/v1/scans', { body })), [['scans']], onStarted);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    start.mutate({ target: target.trim(), ...(depth.trim() ? { max_depth: Number(depth) } : {}), ...commonBody(common) });
  };
  return (
    <form onSubmit={submit} aria-label="Start a DAST scan" noValidate>
      <Field label="Start URL" hint="An http(s) URL where the crawl starts.">
        {(props) => <input {...props} name="target" type="url" required value={target} onChange={(e) => setTarget(e.target.value)} />}
      </Field>
      <Field label="Crawl depth (optional)" hint="Links followed from the start page, 0 to 10; default 3.">
        {(props) => <input {...props} name="max_depth" type="number" min={0} max={10} value={depth} onChange={(e) => setDepth(e.target.value)} />}
      </Field>
      <CommonFields value={common} onChange={setCommon} />
      <ErrorMessage error={start.error} title="The scan was not started" />
      <Submit busy={start.isPending} />
    </form>
  );
}

export function ApiScanForm({ onStarted }: { onStarted(scan: Scan): void }) {
  const [baseUrl, setBaseUrl] = useState('');
  const [from, setFrom] = useState<'url' | 'upload'>('url');
  const [documentUrl, setDocumentUrl] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [common, setCommon] = useState(emptyCommon);
  const start = useWrite(
    async (input: { base: Omit<ApiBody, 'document' | 'document_url'>; file: File | null; url: string }) => {
      // The uploaded document travels as its text (JSON or YAML); the server parses and checks it.
      const document = input.file ? { document: await input.file.text() } : input.url.trim() ? { document_url: input.url.trim() } : {};
      return ok(api.POST('/api/v1/api-scans', { body: { ...input.base, ...document } }));
    },
    [['scans']],
    onStarted,
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    start.mutate({ base: { base_url: baseUrl.trim(), ...commonBody(common) }, file: from === 'upload' ? file : null, url: from === 'url' ? documentUrl : '' });
  };
  return (
    <form onSubmit={submit} aria-label="Start an API scan" noValidate>
      <Field label="Base URL" hint="Where the API answers; operation paths are appended to it.">
        {(props) => <input {...props} name="base_url" type="url" required value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} />}
      </Field>
      <fieldset>
        <legend>OpenAPI 3.x document</legend>
        <label><input type="radio" name="document-source" checked={from === 'url'} onChange={() => setFrom('url')} /> From a URL</label>{' '}
        <label><input type="radio" name="document-source" checked={from === 'upload'} onChange={() => setFrom('upload')} /> Upload a file</label>
        {from === 'url' ? (
          <Field label="Document URL" hint="Fetched when the scan runs, under the same address policy as the scan.">
            {(props) => <input {...props} name="document_url" type="url" value={documentUrl} onChange={(e) => setDocumentUrl(e.target.value)} />}
          </Field>
        ) : (
          <Field label="Document file" hint="JSON or YAML, at most 5 MiB.">
            {(props) => <input {...props} type="file" accept=".json,.yaml,.yml,application/json" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />}
          </Field>
        )}
      </fieldset>
      <CommonFields value={common} onChange={setCommon} />
      <ErrorMessage error={start.error} title="The scan was not started" />
      <Submit busy={start.isPending} />
    </form>
  );
}

export function CveScanForm({ onStarted }: { onStarted(scan: Scan): void }) {
  const [target, setTarget] = useState('');
  const [cves, setCves] = useState('');
  const [tags, setTags] = useState('');
  const [common, setCommon] = useState(emptyCommon);
  const start = useWrite((body: CveBody) => ok(api.POST('/api/v1/cve-scans', { body })), [['scans']], onStarted);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const ids = list(cves).map((c) => c.toUpperCase());
    const tagList = list(tags).map((t) => t.toLowerCase());
    start.mutate({ target: target.trim(), ...(ids.length ? { cves: ids } : {}), ...(tagList.length ? { tags: tagList } : {}), ...commonBody(common) });
  };
  return (
    <form onSubmit={submit} aria-label="Start a CVE scan" noValidate>
      <Field label="Target URL" hint="An http(s) URL.">
        {(props) => <input {...props} name="target" type="url" required value={target} onChange={(e) => setTarget(e.target.value)} />}
      </Field>
      <Field label="CVE ids" hint="Separated by commas, e.g. CVE-2021-44228. Give CVE ids, tags, or both.">
        {(props) => <input {...props} name="cves" value={cves} onChange={(e) => setCves(e.target.value)} />}
      </Field>
      <Field label="Tags" hint="Template tags separated by commas, e.g. log4j, rce.">
        {(props) => <input {...props} name="tags" value={tags} onChange={(e) => setTags(e.target.value)} />}
      </Field>
      <CommonFields value={common} onChange={setCommon} />
      <ErrorMessage error={start.error} title="The scan was not started" />
      <Submit busy={start.isPending} />
    </form>
  );
}
