// One tab of a site's rules of a kind: the list (a page at a time, by the API's cursor), and for
// people who may write, New / Edit / Delete. Each kind gives its columns and its form; this file
// owns the dialogs, the confirmation before deleting, and the managed-object marks.
import type { ReactNode } from 'react';
import { useState } from 'react';
import { useCan } from '../../../api/session.ts';
import { configSourceOf, ManagedBadge } from '../../../components/badges.tsx';
import { ConfirmDialog, Modal } from '../../../components/dialog.tsx';
import { useWrite } from '../../../components/forms.tsx';
import { Pager, usePagedList, type PageOf } from '../../../components/list.tsx';
import { Empty, ErrorMessage, Loading } from '../../../components/status.tsx';
import { rulesKey } from './api.ts';
import type { Labels } from './labels.ts';

export interface Column<Row> {
  header: string;
  cell(row: Row): ReactNode;
}

export interface FormProps<Row> {
  /** The rule being edited; absent when creating. */
  row?: Row;
  onDone(): void;
  onCancel(): void;
}

export interface RuleTabProps<Row extends { id: string; labels: Labels }> {
  siteId: string;
  kind: 'virtual-patches' | 'ip-access' | 'rate-limits';
  title: string;
  /** Singular, lower case: "virtual patch". */
  noun: string;
  intro?: ReactNode;
  emptyText: string;
  fetchPage(cursor: string | undefined): Promise<PageOf<Row>>;
  columns: ReadonlyArray<Column<Row>>;
  /** A short description of one rule, read out with its Edit/Delete buttons and in the confirmation. */
  describe(row: Row): string;
  remove(row: Row): Promise<unknown>;
  /** Renders the create/edit form (a function, so the form keeps its state across renders of the tab). */
  renderForm(props: FormProps<Row>): ReactNode;
  /** More write actions beside "New" (the CSV import of IP rules); shown to writers only. */
  writeActions?: ReactNode;
  /** Below the actions (the import's result or errors). */
  children?: ReactNode;
}

export function RuleTab<Row extends { id: string; labels: Labels }>(props: RuleTabProps<Row>) {
  const { siteId, kind, title, noun, columns, describe } = props;
  const canWrite = useCan('shield:write');
  const list = usePagedList(rulesKey(siteId, kind), props.fetchPage);
  const [editing, setEditing] = useState<Row | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Row | null>(null);
  const remove = useWrite(props.remove, [rulesKey(siteId, kind)], () => setDeleting(null));
  const close = () => setEditing(null);

  return (
    <section aria-labelledby={`${kind}-title`}>
      <div className="shield-section-head">
        <h2 id={`${kind}-title`}>{title}</h2>
        {canWrite && (
          <div className="actions">
            <button type="button" className="button-primary" onClick={() => setEditing('new')}>New {noun}</button>
            {props.writeActions}
          </div>
        )}
      </div>
      {props.intro}
      {props.children}
      {remove.error && <ErrorMessage error={remove.error} title={`The ${noun} was not deleted`} />}
      {list.isPending ? (
        <Loading label={`Loading ${title.toLowerCase()}`} />
      ) : list.error ? (
        <ErrorMessage error={list.error} />
      ) : list.rows.length === 0 ? (
        <Empty>{props.emptyText}</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">{title}</caption>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th key={c.header} scope="col">{c.header}</th>
                ))}
                {canWrite && <th scope="col"><span className="visually-hidden">Actions</span></th>}
              </tr>
            </thead>
            <tbody>
              {list.rows.map((row) => {
                const source = configSourceOf(row.labels);
                return (
                  <tr key={row.id}>
                    {columns.map((c, i) => (
                      <td key={c.header}>
                        {c.cell(row)}
                        {i === 0 && source && <> <ManagedBadge by={source} /></>}
                      </td>
                    ))}
                    {canWrite && (
                      <td>
                        <div className="actions shield-row-actions">
                          <button type="button" onClick={() => setEditing(row)}>
                            Edit<span className="visually-hidden"> {describe(row)}</span>
                          </button>
                          <button type="button" className="button-quiet shield-danger-text" onClick={() => setDeleting(row)}>
                            Delete<span className="visually-hidden"> {describe(row)}</span>
                          </button>
                        </div>
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} label={`${title} pages`} />

      <Modal open={editing !== null} title={editing === 'new' ? `New ${noun}` : `Edit ${noun}`} onClose={close}>
        {editing !== null && props.renderForm({ row: editing === 'new' ? undefined : editing, onDone: close, onCancel: close })}
      </Modal>
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete this ${noun}?`}
        confirmLabel={`Delete ${noun}`}
        danger
        busy={remove.isPending}
        onConfirm={() => deleting && remove.mutate(deleting)}
        onCancel={() => setDeleting(null)}
      >
        {deleting && (
          <>
            <p>
              <strong>{describe(deleting)}</strong> stops applying to this site's traffic at once. This cannot be undone.
            </p>
            {configSourceOf(deleting.labels) && (
              <p className="notice">
                It is managed by <strong>{configSourceOf(deleting.labels)}</strong>: its next sync will create it again.
              </p>
            )}
          </>
        )}
      </ConfirmDialog>
    </section>
  );
}
