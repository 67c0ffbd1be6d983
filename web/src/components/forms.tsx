// Form building blocks: a labelled field (label, control, hint, error tied by aria-describedby) and
// a mutation helper that refreshes what it changed and keeps the API's error to show.
import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { useId, type ReactNode } from 'react';

export function Field({ label, hint, children }: { label: string; hint?: string; children: (props: { id: string; 'aria-describedby'?: string }) => ReactNode }) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-describedby': hintId })}
      {hint && <small id={hintId}>{hint}</small>}
    </div>
  );
}

/** A write that, once it succeeds, refetches the queries under `invalidates`. */
export function useWrite<Input, Output>(write: (input: Input) => Promise<Output>, invalidates: QueryKey[] = [], onDone?: (output: Output) => void) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: write,
    onSuccess: async (output) => {
      await Promise.all(invalidates.map((queryKey) => queries.invalidateQueries({ queryKey })));
      onDone?.(output);
    },
  });
}
