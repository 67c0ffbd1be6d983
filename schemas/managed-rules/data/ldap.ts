// LDAP injection: filter syntax that closes the application's filter and adds its own, sent where
// the application builds `(uid=<input>)`. Level 1 reads the shapes only a filter has — a logical
// operator applied to a parenthesised sub-filter that compares an attribute (`(|(uid=*))`,
// `(&(objectClass=…)`), a value that closes the filter and opens another (`*)(uid=*`), and an
// extensible match with a matching-rule OID (`cn:2.5.13.18:=`). Code with `(!(a == b))` passes: a
// comparison is not an attribute assertion.
import type { RuleDefinition } from '../types.ts';

const T = ['value', 'path', 'header', 'body'] as const;
/** An attribute assertion inside a filter: `uid=`, `cn~=`, `age>=`, `objectClass=*` (not `==`). */
const ASSERTION = String.raw`[a-z][\w.;-]{0,60}[~<>]?=(?:[^=\s]|$)`;

export const LDAP_RULES: readonly RuleDefinition[] = [
  {
    id: 'ldap.filter_operator',
    category: 'ldap',
    paranoia_level: 1,
    description: 'A logical operator applied to LDAP sub-filters ((|(uid=*)), (&(objectClass=user)(…)), (!(cn=x)))',
    targets: T,
    pattern: String.raw`\(\s*[&|!]\s*\(\s*${ASSERTION}`,
  },
  {
    id: 'ldap.filter_breakout',
    category: 'ldap',
    paranoia_level: 1,
    description: 'A value that closes the filter and opens another (*)(uid=*), admin)(|(password=*), x))(&(, )(cn=), or adds a whole assertion of its own (0)(userPassword=q)))',
    targets: T,
    pattern: String.raw`^[^()\n]{0,64}\)+\s*\(\s*[&|!][(&|!\s]*${ASSERTION}|^[^()\n]{0,64}\*\s*\)+\s*\([(&|!\s]*${ASSERTION}|^[^()\n]{0,64}\)+\s*\([(\s]*[a-z][\w.-]*=\*|^\s*\*\s*\)\s*\(|^\s*\)+\s*\(+\s*[a-z][\w.-]*\s*[<>~]?=|^[^()\n]{0,64}\)\(\s*[a-z][\w.-]*\s*[<>~]?=[^()\n]*\)+\s*$`,
  },
  {
    id: 'ldap.extensible_match',
    category: 'ldap',
    paranoia_level: 1,
    description: 'An extensible-match assertion naming a matching rule OID (userPassword:2.5.13.18:=, cn:dn:1.2.3:=)',
    targets: T,
    pattern: String.raw`[a-z][\w-]*(?::dn)?:\d+(?:\.\d+){2,}:=`,
  },
  {
    id: 'ldap.presence_filter',
    category: 'ldap',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'A parenthesised presence or wildcard filter on a directory attribute ((objectClass=*), (uid=*), (cn=adm*))',
    targets: T,
    pattern: String.raw`\(\s*(?:objectclass|objectcategory|uid|cn|sn|mail|samaccountname|userprincipalname|userpassword|memberof|member|ou|dc|givenname|description)\s*=[^)\n]*\*[^)\n]*\)`,
  },
];
