// NoSQL injection: MongoDB-style query operators where the application expects a plain value
// (`user[$ne]=x` in a query or form, `{"password": {"$gt": ""}}` in JSON, `', $or: [ {}, {'` inside a
// string that is pasted into a query) and server-side JavaScript given to `$where` or
// `db.collection.…()`. Level 1 reads operator names in field names and `$operator:` pairs in values;
// plain prose never writes a dollar sign glued to an operator name and a colon.
import type { RuleDefinition } from '../types.ts';
import { alt } from './fragments.ts';

const OPERATORS = alt([
  'ne', 'eq', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'regex', 'where', 'exists', 'expr', 'or', 'and', 'nor', 'not', 'elemmatch', 'type', 'mod',
  'all', 'size', 'text', 'function', 'accumulator', 'jsonschema', 'options', 'search', 'comment', 'lookup', 'match', 'group', 'unionwith',
]);

export const NOSQLI_RULES: readonly RuleDefinition[] = [
  {
    id: 'nosqli.operator_name',
    category: 'nosqli',
    paranoia_level: 1,
    description: 'A query operator as a field name or key (user[$ne]=, password[$regex]=, {"$gt": ""}, a JSON key $where)',
    targets: ['name'],
    pattern: String.raw`(?:^|[\[.])\s*\$${OPERATORS}\s*(?:\]|$|\.)`,
  },
  {
    id: 'nosqli.operator_value',
    category: 'nosqli',
    paranoia_level: 1,
    description: "A query operator with a colon inside a value ({\"$ne\": null}, ', $or: [ {}, {', true, $where: '1 == 1'), or in brackets as a query string writes it (u_id[$ne], [$lte]x)",
    targets: ['value', 'path', 'header', 'body'],
    pattern: String.raw`(?:^|[\s{,\[('"])['"]?\$${OPERATORS}['"]?\s*:|\[\s*\$${OPERATORS}\s*\]`,
  },
  {
    id: 'nosqli.javascript',
    category: 'nosqli',
    paranoia_level: 1,
    description: "Server-side JavaScript for $where or mapReduce: db.<collection>.<method>(…), a statement after a terminated value (0;var d=new Date(); do{…}while(…)), this.<field> comparisons with sleep or a busy loop",
    targets: ['value', 'path', 'header', 'body'],
    pattern:
      String.raw`\bdb\s*\.\s*[a-z_$][\w$]*\s*\.\s*(?:insert(?:one|many)?|find(?:one)?|remove|update(?:one|many)?|delete(?:one|many)|drop|aggregate|count|mapreduce|save)\s*\(|` +
      String.raw`^[^;\s]{0,32}['"]?\s*;\s*(?:var|let|const)\s+[a-z_$][\w$]*\s*=|\bdo\s*\{[^}]{0,200}\}\s*while\s*\([^)]*(?:date|\d{4,})|` +
      String.raw`(?:^|['";|&])\s*(?:sleep|tojson|tojsononeline|printjson)\s*\(\s*\d|\bthis\s*\.\s*[a-z_$][\w$]*\s*(?:==|!=|>|<)[^;]{0,80};\s*(?:sleep|while|return)\b|` +
      String.raw`(?:\|\||&&)\s*this\s*\.\s*[a-z_$][\w$]*\s*(?:\.\s*match\s*\(|[=!<>]=?)|^[^;\n]{0,24};\s*return\s*\(?\s*(?:true|1)\b|(?:\|\||&&)\s*(\d+)\s*===?\s*\d+\s*(?:$|[;/)])`,
  },
  {
    id: 'nosqli.where_clause',
    category: 'nosqli',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: "JavaScript boolean breakouts for $where clauses (' || '1'=='1, '; return true; var x=', || this.password.match(/.*/))",
    targets: ['value', 'path', 'header', 'body'],
    pattern: String.raw`['"]\s*;\s*return\s+(?:true|1|this)\b|\|\|\s*this\s*\.\s*[a-z_$][\w$]*\s*\.\s*match\s*\(|['"]\s*\|\|\s*['"][^'"]*['"]\s*==\s*['"]`,
  },
];
