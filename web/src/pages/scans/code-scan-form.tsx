// The form of a code scan (secrets, SAST, SCA): a git repository (URL, or a local path on servers
// that allow local sources) with its ref and, for a private repository, the source-control
// connection that clones it — or an uploaded zip/tar/tar.gz archive.
import { useState, type FormEvent } from 'react';
import { api, ok, send } from '../../api/client.ts';
import { Field, useWrite } from '../../components/forms.tsx';
import { ErrorMessage, problemWith } from '../../components/status.tsx';
import type { Scan } from './model.ts';

type CodeKind = 'secrets' | 'sast' | 'sca';

interface GitInput {
  from: 'git';
  target: string;
  ref: string;
  connection: string;
  history: boolean;
}
interface ArchiveInput {
  from: 'archive';
  file: File | null;
}

/** The archive's media type as the API names it (`application/gzip` for tar.gz). */
function archiveType(file: File): string {
  const name = file.name.toLowerCase();
  if (name.endsWith('.zip')) return 'application/zip';
  if (name.endsWith('.tar.gz') || name.endsWith('.tgz')) return 'application/gzip';
  if (name.endsWith('.tar')) return 'application/x-tar';
  // The server recognises the format by its content anyway.
  return 'application/octet-stream';
}

async function startCodeScan(kind: CodeKind, input: GitInput | ArchiveInput): Promise<Scan> {
  if (input.from === 'archive') {
    if (!input.file) throw new Error('Choose an archive to upload.');
    return send<Scan>(`/api/v1/${kind}/scans`, { method: 'POST', body: input.file, headers: { 'content-type': archiveType(input.file) } });
  }
  const config = { ...(input.ref.trim() ? { ref: input.ref.trim() } : {}), ...(kind === 'secrets' && input.history ? { history: true } : {}) };
  const body = { target: input.target.trim(), ...(Object.keys(config).length ? { config } : {}), ...(input.connection.trim() ? { connection: input.connection.trim() } : {}) };
  switch (kind) {
    case 'secrets':
      return ok(api.POST('/api/v1/secrets/scans', { body }));
    case 'sast':
      return ok(api.POST('/api/v1/sast/scans', { body }));
    case 'sca':
      return ok(api.POST('/api/v1/sca/scans', { body }));
  }
}

export function CodeScanForm({ kind, onStarted }: { kind: CodeKind; onStarted(scan: Scan): void }) {
  const [from, setFrom] = useState<'git' | 'archive'>('git');
  const [git, setGit] = useState<GitInput>({ from: 'git', target: '', ref: '', connection: '', history: false });
  const [file, setFile] = useState<File | null>(null);
  const start = useWrite((input: GitInput | ArchiveInput) => startCodeScan(kind, input), [['scans']], onStarted);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    start.mutate(from === 'git' ? git : { from: 'archive', file });
  };
  const targetProblem = problemWith(start.error, 'target');
  return (
    <form onSubmit={submit} aria-label={`Start a ${kind} scan`} noValidate>
      <fieldset>
        <legend>What to scan</legend>
        <label><input type="radio" name="source" checked={from === 'git'} onChange={() => setFrom('git')} /> A git repository</label>{' '}
        <label><input type="radio" name="source" checked={from === 'archive'} onChange={() => setFrom('archive')} /> An uploaded archive</label>
      </fieldset>
      {from === 'git' ? (
        <>
          <Field label="Repository URL or path" hint="https://, ssh:// or git@host:owner/repo.git. A local path or file:// URL works only on servers run with AEGIS_ALLOW_LOCAL_SOURCES=true.">
            {(props) => <input {...props} name="target" required value={git.target} aria-invalid={targetProblem ? true : undefined} onChange={(e) => setGit({ ...git, target: e.target.value })} />}
          </Field>
          <Field label="Ref (optional)" hint="Branch, tag or commit; the default branch when empty.">
            {(props) => <input {...props} name="ref" value={git.ref} onChange={(e) => setGit({ ...git, ref: e.target.value })} />}
          </Field>
          <Field label="Connection (optional)" hint="For a private repository: the id of a source-control connection (Settings → Integrations); the repository is then its HTTPS URL.">
            {(props) => <input {...props} name="connection" value={git.connection} onChange={(e) => setGit({ ...git, connection: e.target.value })} />}
          </Field>
          {kind === 'secrets' && (
            <div className="field">
              <label><input type="checkbox" checked={git.history} onChange={(e) => setGit({ ...git, history: e.target.checked })} /> Also scan the git history (every commit reachable from the ref)</label>
            </div>
          )}
        </>
      ) : (
        <Field label="Archive" hint="zip, tar or tar.gz, at most 50 MiB.">
          {(props) => <input {...props} type="file" accept=".zip,.tar,.tar.gz,.tgz" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />}
        </Field>
      )}
      <ErrorMessage error={start.error} title="The scan was not started" />
      <div className="actions">
        <button type="submit" className="button-primary" disabled={start.isPending}>{start.isPending ? 'Starting…' : 'Start scan'}</button>
      </div>
    </form>
  );
}
