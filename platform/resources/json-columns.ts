// jsonb columns are written as JSON text, the one form both drivers (pg and PGlite) agree on.
// For partial updates, a column absent from the changes stays absent.

export type WithJsonColumns<T, K extends keyof T> = Omit<T, K> & { [P in K]: undefined extends T[P] ? string | undefined : string };

export function jsonColumns<T extends object, const K extends keyof T>(values: T, columns: readonly K[]): WithJsonColumns<T, K> {
  const result = { ...values } as Record<string, unknown>;
  for (const column of columns) {
    const value = values[column];
    if (value === undefined) delete result[column as string];
    else result[column as string] = JSON.stringify(value);
  }
  return result as WithJsonColumns<T, K>;
}
