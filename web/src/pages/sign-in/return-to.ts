// Where to go after signing in: only a path of this dashboard (never another origin), the same rule
// the API applies to `return_to` (no `//` or `/\` start, no backslash, white space or control
// character), and never the sign-in pages themselves.
const SAFE_PATH = /^\/(?![/\\])[^\\\s\u0000-\u001f\u007f]*$/;

export function returnToFrom(search: string): string {
  const wanted = new URLSearchParams(search).get('return_to');
  if (!wanted || wanted.length > 2000 || !SAFE_PATH.test(wanted) || wanted.startsWith('/sign-in')) return '/';
  return wanted;
}
