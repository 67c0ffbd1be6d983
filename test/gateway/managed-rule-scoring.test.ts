// Anomaly scoring of the managed rules (schemas/managed-rules/types.ts): decisive rules decide alone;
// broader rules count from level 1 as weak signals that block only together (three at level 1);
// prose demotes the rules developer texts trip over to weak signals at levels 1–2; exclusions apply
// to signals too; and the hit says the score and which rules made it up.
import { describe, expect, it } from 'vitest';
import { compileManagedRules, type ManagedRuleSet } from '../../gateway/rules/managed/index.ts';
import type { ManagedRulesSettings } from '../../platform/db/schema.ts';
import { programFor } from '../../gateway/rules/managed/program.ts';
import { RULE_DEFINITIONS } from '../../schemas/managed-rules/catalogue.ts';
import { ANOMALY_THRESHOLD, type ParanoiaLevel } from '../../schemas/managed-rules/types.ts';
import { buildRequest } from '../fixtures/shield/build-request.ts';

const engine = (level: ParanoiaLevel, exclusions: ManagedRulesSettings['exclusions'] = []): ManagedRuleSet => compileManagedRules({ enabled: true, paranoia_level: level, exclusions }, true)!;

// Three single-line values, each matching one broader (level 2) rule and nothing at level 1.
const ABSOLUTE_PATH = 'a=%2Ftmp%2Freport.txt';
const DOM_SINK = 'b=x.innerHTML%3Dy';
const TEMPLATE_CALL = 'c=%7B%7B%20user.getName()%20%7D%7D';
const query = (...parts: string[]) => buildRequest({ path: '/search', query: parts.join('&') });

describe('anomaly scoring', () => {
  it('blocks on weak signals only when enough of them add up at level 1, and names them', () => {
    const pl1 = engine(1);
    expect(pl1.match(query(ABSOLUTE_PATH))).toBeNull();
    expect(pl1.match(query(ABSOLUTE_PATH, DOM_SINK))).toBeNull();
    const hit = pl1.match(query(ABSOLUTE_PATH, DOM_SINK, TEMPLATE_CALL));
    expect(hit).toEqual({ ruleId: 'xss.dom_sink', score: 9, signals: ['xss.dom_sink', 'traversal.absolute_path', 'ssti.expression_call'] });
    expect(hit!.score).toBeGreaterThanOrEqual(ANOMALY_THRESHOLD[1]);
  });

  it('counts a rule once however often it matches', () => {
    expect(engine(1).match(query(ABSOLUTE_PATH, 'd=%2Fhome%2Fx', 'e=%2Fopt%2Fy'))).toBeNull();
  });

  it('lets the same rules decide alone at their own level', () => {
    expect(engine(2).match(query(DOM_SINK))).toEqual({ ruleId: 'xss.dom_sink', score: ANOMALY_THRESHOLD[2], signals: ['xss.dom_sink'] });
  });

  it('records a decisive match with the level threshold as its score', () => {
    expect(engine(1).match(query('q=%3Cscript%3Ealert(1)%3C%2Fscript%3E'))).toMatchObject({ ruleId: 'xss.script_tag', score: ANOMALY_THRESHOLD[1], signals: ['xss.script_tag'] });
  });

  it('does not count an excluded signal', () => {
    const excluded = engine(1, [{ rules: ['ssti.expression_call'] }]);
    expect(excluded.match(query(ABSOLUTE_PATH, DOM_SINK, TEMPLATE_CALL))).toBeNull();
  });

  it('gives every weak signal fewer points than its level threshold', () => {
    for (const level of [1, 2, 3, 4] as const) {
      const program = programFor(level);
      RULE_DEFINITIONS.forEach((rule, i) => {
        const score = program.scores[i]!;
        if (rule.paranoia_level <= level) expect(score, rule.id).toBe(program.threshold);
        else expect(score, rule.id).toBeLessThan(program.threshold);
      });
    }
  });
});

describe('prose', () => {
  const json = (text: string) => buildRequest({ json: JSON.stringify({ body: text }) });

  it('demotes the rules code snippets trip over in text of several lines at levels 1 and 2', () => {
    for (const level of [1, 2] as const) {
      expect(engine(level).match(json('```js\nimport util from "../lib/util.js";\n```')), `PL${level}`).toBeNull();
      expect(engine(level).match(json('Put this in your profile:\nexport PATH=$(npm bin):$PATH'))).toBeNull();
    }
    expect(engine(3).match(json('```js\nimport util from "../lib/util.js";\n```'))?.ruleId).toBe('traversal.dot_dot_slash');
  });

  it('keeps them decisive in one-line values, where the attacks go', () => {
    expect(engine(1).match(json('../lib/util.js'))?.ruleId).toBe('traversal.dot_dot_slash');
    expect(engine(1).match(json('x$(id)'))?.ruleId).toBe('cmdi.command_substitution');
  });

  it('still blocks prose that carries an attack shape no developer text has', () => {
    expect(engine(1).match(json('Nice post!\n<script>alert(document.cookie)</script>'))?.ruleId).toBe('xss.script_tag');
    expect(engine(1).match(json('see below\n../../../../etc/passwd'))?.ruleId).toMatch(/^traversal\./);
    expect(engine(1).match(json('thanks\n; cat /etc/shadow'))).not.toBeNull();
  });

  it('is not text that opens as an injection does: a line break, a separator before one, a closed quote or bracket, a ${', () => {
    const commands = [
      ';\necho AXQ$((50+41))$(echo AXQ)AXQ',
      '|\necho AXQ$((50+41))$(echo AXQ)AXQ',
      '"\necho AXQ$((50+41))$(echo AXQ)AXQ',
      '\n str=$(echo AXQ)\n if [ 1 -ne ${#str} ]\n then sleep 0\n fi',
      '");}print(`echo AXQ\necho $((1+2))\necho AXQ`);//AXQ',
      "'.print(`echo AXQ\necho $((1+2))`);AXQ",
      '${popen(print(`echo AXQ\necho $((1+2))`);//AXQ',
    ];
    for (const text of commands) expect(engine(1).match(json(text))?.ruleId, text).toBe('cmdi.command_substitution');
    // Posts open with words, a quotation, a fence or a table, however they go on.
    const posts = [
      '|Symbol|Explanation|\n|`(expr)`|Parenthesized expression|\n```rust\n{{#include ../listings/a.rs}}\n```',
      '"Quoted," she said.\nThen run $(npm bin) from ../app',
      '```sh\nexport PATH=$(npm bin):$PATH\n```',
      '...and then:\nimport x from "../lib/x.js" // in $(pwd)',
    ];
    for (const text of posts) expect(engine(1).match(json(text)), text).toBeNull();
  });

  it('adds the demoted rules up as signals', () => {
    const three = 'notes:\n../lib/a.js\n$(date)\n<meta http-equiv="refresh" content="0">';
    expect(engine(1).match(json(three))).toMatchObject({ score: 9 });
  });
});
