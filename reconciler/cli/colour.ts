// Whether to colour what goes to a stream: only a terminal, and never when NO_COLOR is set to a
// non-empty value (https://no-color.org). Piped and redirected output stays plain text.
export function colourEnabled(stream: { isTTY?: boolean | undefined }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}
