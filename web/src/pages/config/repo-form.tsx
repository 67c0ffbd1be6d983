// Register a config repository (admin). The webhook secret the API generates is shown once, with
// the push webhook's address; the first sync is already queued. The impact settings (the window
// each sync's plan is previewed against recorded traffic, and the gate on newly blocked requests)
// are also edited later, on the repository's page (ImpactSettings).
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, ok } from '../../api/client.ts';
import type { Answer, BodyOf } from '../../api/types.ts';
import { Field, useWrite } from '../../components/forms.tsx';
import { PageHeader } from '../../components/page.tsx';
import { SecretOnce } from '../../components/secret.tsx';
import { ErrorMessage, problemWith } from '../../components/status.tsx';

type Create = BodyOf<'/api/v1/config-repos', 'post'>;
type Created = Answer<'/api/v1/config-repos', 'post'>;
type Update = BodyOf<'/api/v1/config-repos/{id}', 'patch'>;

interface Input {
  name: string;
  url: string;
  branch: string;
  path: string;
  connection: string;
  pollSeconds: string;
  maxChanges: string;
  maxPercent: string;
  impactWindow: string;
  maxNewBlocks: string;
  autoSync: boolean;
  prune: boolean;
  selfHeal: boolean;
  denyWeakening: boolean;
}

const initial: Input = { name: '', url: '', branch: 'main', path: '', connection: '', pollSeconds: '', maxChanges: '', maxPercent: '', impactWindow: '24h', maxNewBlocks: '', autoSync: true, prune: true, selfHeal: false, denyWeakening: false };

/** The two impact settings as the API takes them: an empty window turns previews off, an empty limit the gate. */
function impactBody(impactWindow: string, maxNewBlocks: string): Pick<Create, 'impact_window' | 'max_new_blocks'> {
  return { impact_window: impactWindow.trim() || null, max_new_blocks: maxNewBlocks.trim() ? Number(maxNewBlocks) : null };
}

function bodyOf(input: Input): Create {
  const number = (text: string) => (text.trim() ? { value: Number(text) } : null);
  const poll = number(input.pollSeconds);
  const maxChanges = number(input.maxChanges);
  const maxPercent = number(input.maxPercent);
  return {
    name: input.name.trim(),
    url: input.url.trim(),
    ...(input.branch.trim() ? { branch: input.branch.trim() } : {}),
    ...(input.path.trim() ? { path: input.path.trim() } : {}),
    ...(input.connection.trim() ? { connection: input.connection.trim() } : {}),
    ...(poll ? { poll_interval_seconds: poll.value } : {}),
    ...(maxChanges ? { max_changes: maxChanges.value } : {}),
    ...(maxPercent ? { max_change_percent: maxPercent.value } : {}),
    ...impactBody(input.impactWindow, input.maxNewBlocks),
    auto_sync: input.autoSync,
    prune: input.prune,
    self_heal: input.selfHeal,
    deny_weakening: input.denyWeakening,
  };
}

export function AddRepo() {
  const [input, setInput] = useState(initial);
  const [created, setCreated] = useState<Created | null>(null);
  const add = useWrite((body: Create) => ok(api.POST('/api/v1/config-repos', { body })), [['config-repos']], setCreated);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate(bodyOf(input));
  };
  const set = <K extends keyof Input>(key: K, value: Input[K]) => setInput({ ...input, [key]: value });
  if (created) return <AddedRepo repo={created} />;
  return (
    <>
      <PageHeader title="Add a config repository" actions={<Link href="/">Back to config repositories</Link>} />
      <form onSubmit={submit} aria-label="Add a config repository" noValidate>
        <Field label="Name" hint="Lower-case letters, digits, dots, dashes and underscores; unique in the organisation.">
          {(props) => <input {...props} name="name" required value={input.name} aria-invalid={problemWith(add.error, 'name') ? true : undefined} onChange={(e) => set('name', e.target.value)} />}
        </Field>
        <Field label="Repository URL" hint="https://…, ssh://… or git@host:path. file:// only on servers run with AEGIS_ALLOW_LOCAL_SOURCES=true.">
          {(props) => <input {...props} name="url" required value={input.url} aria-invalid={problemWith(add.error, 'url') ? true : undefined} onChange={(e) => set('url', e.target.value)} />}
        </Field>
        <Field label="Branch">
          {(props) => <input {...props} name="branch" value={input.branch} onChange={(e) => set('branch', e.target.value)} />}
        </Field>
        <Field label="Config directory (optional)" hint="Inside the repository, e.g. config/prod; empty for its root.">
          {(props) => <input {...props} name="path" value={input.path} onChange={(e) => set('path', e.target.value)} />}
        </Field>
        <Field label="Connection (optional)" hint="For a private repository: the id of a source-control connection (Settings → Integrations).">
          {(props) => <input {...props} name="connection" value={input.connection} onChange={(e) => set('connection', e.target.value)} />}
        </Field>
        <fieldset>
          <legend>How it is followed</legend>
          <Check label="Apply what pushes and polls find (auto-sync); otherwise only plan" checked={input.autoSync} onChange={(v) => set('autoSync', v)} />
          <Check label="Delete objects the repository no longer has (prune)" checked={input.prune} onChange={(v) => set('prune', v)} />
          <Check label="Restore objects changed by hand when drift is found (self-heal)" checked={input.selfHeal} onChange={(v) => set('selfHeal', v)} />
          <Check label="Hold back automatic syncs that weaken protection until forced" checked={input.denyWeakening} onChange={(v) => set('denyWeakening', v)} />
          <Field label="Poll interval in seconds (optional)" hint="5 to 86 400; the server's default when empty.">
            {(props) => <input {...props} name="poll_interval_seconds" type="number" min={5} value={input.pollSeconds} onChange={(e) => set('pollSeconds', e.target.value)} />}
          </Field>
          <Field label="Changes a sync may make regardless of size (optional)" hint="Default 5.">
            {(props) => <input {...props} name="max_changes" type="number" min={0} value={input.maxChanges} onChange={(e) => set('maxChanges', e.target.value)} />}
          </Field>
          <Field label="…and as a percentage of the objects it owns (optional)" hint="Default 25; past both the sync is refused until forced.">
            {(props) => <input {...props} name="max_change_percent" type="number" min={0} max={100} value={input.maxPercent} onChange={(e) => set('maxPercent', e.target.value)} />}
          </Field>
        </fieldset>
        <ImpactFields
          error={add.error}
          impactWindow={input.impactWindow}
          maxNewBlocks={input.maxNewBlocks}
          onWindow={(v) => set('impactWindow', v)}
          onMaxNewBlocks={(v) => set('maxNewBlocks', v)}
        />
        <ErrorMessage error={add.error} title="The repository was not added" />
        <div className="actions">
          <button type="submit" className="button-primary" disabled={add.isPending}>{add.isPending ? 'Adding…' : 'Add repository'}</button>
        </div>
      </form>
    </>
  );
}

const WINDOW_HINT = 'How much recorded Shield traffic each sync replays its plan against: 30m, 6h, 24h, 7d (at most 90d). Empty: no preview.';
const GATE_HINT = 'Refuse a sync, until forced, that would make one site newly block more recorded requests than this. Empty: no limit.';

function ImpactFields(props: { error: unknown; impactWindow: string; maxNewBlocks: string; onWindow(value: string): void; onMaxNewBlocks(value: string): void }) {
  return (
    <fieldset>
      <legend>Impact on recorded traffic</legend>
      <Field label="Impact preview window" hint={WINDOW_HINT}>
        {(p) => <input {...p} name="impact_window" value={props.impactWindow} aria-invalid={problemWith(props.error, 'impact_window') ? true : undefined} onChange={(e) => props.onWindow(e.target.value)} />}
      </Field>
      <Field label="Most newly blocked requests per site (optional)" hint={GATE_HINT}>
        {(p) => <input {...p} name="max_new_blocks" type="number" min={0} value={props.maxNewBlocks} aria-invalid={problemWith(props.error, 'max_new_blocks') ? true : undefined} onChange={(e) => props.onMaxNewBlocks(e.target.value)} />}
      </Field>
    </fieldset>
  );
}

/** A repository's impact settings, edited on its page (PATCH). */
export function ImpactSettings({ repo }: { repo: { id: string; impact_window: string | null; max_new_blocks: number | null } }) {
  const [impactWindow, setWindow] = useState(repo.impact_window ?? '');
  const [maxNewBlocks, setMaxNewBlocks] = useState(repo.max_new_blocks === null ? '' : String(repo.max_new_blocks));
  const [saved, setSaved] = useState(false);
  const save = useWrite((body: Update) => ok(api.PATCH('/api/v1/config-repos/{id}', { params: { path: { id: repo.id } }, body })), [['config-repos']], () => setSaved(true));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    save.mutate(impactBody(impactWindow, maxNewBlocks));
  };
  return (
    <form onSubmit={submit} aria-label="Impact settings" noValidate>
      <ImpactFields error={save.error} impactWindow={impactWindow} maxNewBlocks={maxNewBlocks} onWindow={setWindow} onMaxNewBlocks={setMaxNewBlocks} />
      <ErrorMessage error={save.error} title="The impact settings were not saved" />
      {saved && <p className="success" role="status">Impact settings saved.</p>}
      <div className="actions">
        <button type="submit" disabled={save.isPending}>{save.isPending ? 'Saving…' : 'Save impact settings'}</button>
      </div>
    </form>
  );
}

function Check({ label, checked, onChange }: { label: string; checked: boolean; onChange(value: boolean): void }) {
  return (
    <label className="checkbox-field">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} /> {label}
    </label>
  );
}

function AddedRepo({ repo }: { repo: Created }) {
  return (
    <>
      <PageHeader title={`Added ${repo.name}`} actions={<Link href="/">Back to config repositories</Link>} />
      <p className="success" role="status">The repository is registered and its first sync is queued.</p>
      {repo.webhook_secret && (
        <>
          <SecretOnce label="Push webhook secret" value={repo.webhook_secret} />
          <p>
            Point the repository's push webhook at <code>{`${window.location.origin}/api/v1/webhooks/github`}</code> (or <code>/gitlab</code>) with this
            secret, so pushes sync at once instead of at the next poll.
          </p>
        </>
      )}
      <p><Link href={`/repos/${repo.id}`}>Open {repo.name} and follow its first sync</Link></p>
    </>
  );
}
