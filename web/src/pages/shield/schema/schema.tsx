// A site's OpenAPI schema: the current document's summary (version, hash, operations), upload of
// a new one (YAML or JSON text, kept as sent), removal, and the enforcement strictness. Lowering
// the strictness or removing the document weakens protection, so both ask first.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiError, api, ok, send } from '../../../api/client.ts';
import type { Answer } from '../../../api/types.ts';
import { useCan } from '../../../api/session.ts';
import { ConfirmDialog } from '../../../components/dialog.tsx';
import { Field, useWrite } from '../../../components/forms.tsx';
import { Time } from '../../../components/badges.tsx';
import { Empty, ErrorMessage, Loading } from '../../../components/status.tsx';
import { rulesKey } from '../shared/api.ts';
import { Facts } from '../../../components/facts.tsx';
import { Strictness } from './strictness.tsx';

type ShieldSchema = Answer<'/api/v1/shield/sites/{id}/schema'>;

const OPERATIONS_SHOWN = 200;

/** JSON when the text starts like a JSON object; YAML (a superset the server also reads) otherwise. */
const contentTypeOf = (text: string) => (text.trimStart().startsWith('{') ? 'application/json' : 'application/yaml');

function useSchema(siteId: string) {
  return useQuery({
    queryKey: rulesKey(siteId, 'schema'),
    // No schema is a 404: an empty state, not an error.
    queryFn: async (): Promise<ShieldSchema | null> => {
      try {
        return await ok(api.GET('/api/v1/shield/sites/{id}/schema', { params: { path: { id: siteId } } }));
      } catch (error) {
        if (error instanceof ApiError && error.status === 404 && error.message.startsWith('schema')) return null;
        throw error;
      }
    },
  });
}

function Current({ schema }: { schema: ShieldSchema }) {
  return (
    <>
      <Facts
        layout="grid"
        items={[
          ['OpenAPI version', schema.openapi_version],
          ['Operations', schema.operations.length.toLocaleString()],
          ['Uploaded', <Time key="u" at={schema.updated_at} />],
          ['Hash', <code key="h" className="shield-cell-code">{schema.hash}</code>],
        ]}
      />
      {schema.operations.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Operations of the schema</caption>
            <thead>
              <tr>
                <th scope="col">Method</th>
                <th scope="col">Path</th>
                <th scope="col">Operation id</th>
              </tr>
            </thead>
            <tbody>
              {schema.operations.slice(0, OPERATIONS_SHOWN).map((op) => (
                <tr key={`${op.method} ${op.path}`}>
                  <td>{op.method}</td>
                  <td><code className="shield-cell-code">{op.path}</code></td>
                  <td>{op.operation_id ?? <span className="muted">—</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {schema.operations.length > OPERATIONS_SHOWN && <p className="muted">And {schema.operations.length - OPERATIONS_SHOWN} more operations.</p>}
    </>
  );
}

function Upload({ siteId, replacing }: { siteId: string; replacing: boolean }) {
  const [document, setDocument] = useState('');
  const [done, setDone] = useState(false);
  const upload = useWrite(
    (text: string) => send<ShieldSchema>(`/api/v1/shield/sites/${encodeURIComponent(siteId)}/schema`, { method: 'PUT', headers: { 'content-type': contentTypeOf(text) }, body: text }),
    [rulesKey(siteId, 'schema')],
    () => {
      setDocument('');
      setDone(true);
    },
  );
  return (
    <form onSubmit={(e) => { e.preventDefault(); setDone(false); upload.mutate(document); }}>
      <h3>{replacing ? 'Replace the schema' : 'Upload a schema'}</h3>
      <Field label="OpenAPI document file" hint="OpenAPI 3.0 or 3.1, YAML or JSON, at most 5 MiB.">
        {(p) => <input {...p} type="file" accept=".yaml,.yml,.json,application/json,application/yaml" onChange={(e) => void e.currentTarget.files?.[0]?.text().then(setDocument)} />}
      </Field>
      <Field label="Or paste the document">
        {(p) => <textarea {...p} rows={8} spellCheck={false} value={document} onChange={(e) => setDocument(e.currentTarget.value)} placeholder={'openapi: 3.1.0\ninfo: { title: Shop, version: "1" }\npaths: {}'} />}
      </Field>
      <ErrorMessage title="Not saved" error={upload.error} />
      {done && <p className="success" role="status">Schema uploaded.</p>}
      <div className="actions">
        <button type="submit" className="button-primary" disabled={upload.isPending || document.trim() === ''}>{upload.isPending ? 'Uploading…' : 'Upload schema'}</button>
      </div>
    </form>
  );
}

export function SchemaTab({ siteId }: { siteId: string }) {
  const canWrite = useCan('shield:write');
  const schema = useSchema(siteId);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const remove = useWrite(
    () => ok(api.DELETE('/api/v1/shield/sites/{id}/schema', { params: { path: { id: siteId } } })),
    [rulesKey(siteId, 'schema')],
    () => setConfirmDelete(false),
  );
  return (
    <section aria-labelledby="schema-title">
      <div className="shield-section-head">
        <h2 id="schema-title">OpenAPI schema</h2>
        {canWrite && schema.data && (
          <div className="actions">
            <button type="button" className="button-danger" onClick={() => setConfirmDelete(true)}>Remove schema</button>
          </div>
        )}
      </div>
      <p className="muted">Requests that do not fit the site's API description are rejected, as strictly as the setting below says.</p>
      {remove.error && <ErrorMessage error={remove.error} title="The schema was not removed" />}
      {schema.isPending ? <Loading label="Loading the schema" /> : schema.isError ? <ErrorMessage error={schema.error} /> : schema.data ? <Current schema={schema.data} /> : <Empty>No schema: requests are not checked against an API description.</Empty>}
      <Strictness siteId={siteId} />
      {canWrite && !schema.isPending && <Upload siteId={siteId} replacing={Boolean(schema.data)} />}
      <ConfirmDialog open={confirmDelete} title="Remove the schema?" confirmLabel="Remove schema" danger busy={remove.isPending} onConfirm={() => remove.mutate(undefined)} onCancel={() => setConfirmDelete(false)}>
        <p>Requests stop being checked against the API description: calls to undeclared endpoints, unknown parameters and malformed bodies reach the origin. The strictness setting is kept for the next upload.</p>
      </ConfirmDialog>
    </section>
  );
}
