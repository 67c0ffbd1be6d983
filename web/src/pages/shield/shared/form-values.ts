// Reading a submitted form: FormData gives strings, the API wants numbers and omitted fields.
export function text(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === 'string' ? value.trim() : '';
}

/** The field as a number, or undefined when left empty (so the API applies its default). */
export function optionalNumber(form: FormData, name: string): number | undefined {
  const value = text(form, name);
  return value === '' ? undefined : Number(value);
}

/** A `datetime-local` value (the person's local time) as an ISO UTC time, or null when empty. */
export function localToIso(value: string): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toISOString();
}

/** An ISO time as a `datetime-local` value in the person's time zone. */
export function isoToLocal(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
