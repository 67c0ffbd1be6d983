// The names a parameter answers to (Field.names). Frameworks disagree about names, and a rule on
// `q` must see the value whichever way the origin reads it:
//   - case: ASP.NET and others read `Q` as `q` → names are compared in lower case;
//   - brackets: Express's `qs`, PHP and Rails turn `q[]`, `q[0]` and `q[key]` into `q` (an array or
//     an object) → the name before the first `[` is a name, and so is the bracket path in dotted
//     form (`user[name]` → `user.name`);
//   - nesting: code reads a value deep in a JSON body (or a bracket path) through the keys above it
//     and by its own key → a value at `order.user.name` answers to every key on its path (`order`,
//     `user`, `name`: a rule on a key sees the scalars below it), to the dotted paths from the root
//     (`order.user`, `order.user.name`) and to the dotted paths that end at it (`user.name`), so a
//     rule on `user.name` finds it wherever the object sits. Array indexes are part of paths
//     (`items.0.id`) but never names on their own;
//   - PHP's mangling: leading spaces dropped, and spaces and dots (and `[` left unclosed) in the
//     base name turned into `_` (` coupon` is `$_POST['coupon']`, `a.b` is `a_b`) → the mangled
//     name is a name too.

const isIndex = (key: string): boolean => key === '' || /^\d+$/.test(key);

/** Names of a path of keys (lower case): see the file comment. */
export function pathNames(keys: readonly string[]): string[] {
  // `q[]` appends to q: an empty key is no step of its own.
  const steps = keys.filter((key, i) => i === 0 || key !== '');
  const names = new Set<string>();
  for (let i = 0; i < steps.length; i++) {
    names.add(steps.slice(0, i + 1).join('.'));
    if (!isIndex(steps[i]!)) {
      names.add(steps[i]!);
      names.add(steps.slice(i).join('.'));
    }
  }
  return [...names];
}

/** `a[b][c]` → `['a', 'b', 'c']`; a name without brackets (or with malformed ones) is one key. */
function bracketKeys(name: string): string[] {
  const open = name.indexOf('[');
  if (open <= 0) return [name];
  const keys = [name.slice(0, open)];
  let at = open;
  while (at < name.length && name.charCodeAt(at) === 91 /* [ */) {
    const close = name.indexOf(']', at);
    if (close < 0) break; // PHP keeps `a[b` as a plain name past this point; the base name is enough
    keys.push(name.slice(at + 1, close));
    at = close + 1;
  }
  return keys;
}

/** The name as PHP stores it: leading spaces dropped; spaces and dots in the base name become `_`. */
function phpName(name: string): string {
  const trimmed = name.replace(/^[ \t\n\r\v\f]+/, '');
  const open = trimmed.indexOf('[');
  // A name that starts with `[` is no variable to PHP at all.
  if (open === 0) return name;
  const closed = open > 0 && trimmed.indexOf(']', open) > 0;
  const base = closed ? trimmed.slice(0, open) : trimmed;
  return base.replace(/[ .[]/g, '_') + (closed ? trimmed.slice(open) : '');
}

/** The lower-case names a query, form or multipart parameter answers to. */
export function parameterNames(raw: string): string[] {
  const lower = raw.toLowerCase();
  const names = lower.includes('[') ? pathNames(bracketKeys(lower)) : [lower];
  const php = phpName(lower);
  if (php === lower) return names;
  for (const name of php.includes('[') ? pathNames(bracketKeys(php)) : [php]) if (!names.includes(name)) names.push(name);
  return names;
}
