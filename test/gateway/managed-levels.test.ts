// Managed rules judged at every paranoia level (gateway/rules/managed/engine.ts ManagedLevels), as a
// gateway that records traffic runs them: the site's level screened by level 4, and every level's
// verdict for the record. Both rest on the levels being nested — what level 4 passes, every level
// passes — which this checks on the attack and benign corpora, with and without exclusions.
import { describe, expect, it } from 'vitest';
import { compileManagedLevels, compileManagedRules, PASSES_EVERY_LEVEL } from '../../gateway/rules/managed/index.ts';
import type { ManagedRulesSettings } from '../../platform/db/schema.ts';
import { benignRequest, buildRequest, queryWithValue } from '../fixtures/shield/build-request.ts';
import { ATTACK_CATEGORIES, loadAttacks, loadBenign } from '../fixtures/shield/corpus.ts';

const requests = [
  ...loadBenign().map(benignRequest),
  ...ATTACK_CATEGORIES.flatMap((category) => loadAttacks(category)).map((attack) => buildRequest({ path: '/search', query: queryWithValue(attack.payload) })),
  // Passes level 1 and 2; level 3 refuses a request without a User-Agent.
  buildRequest({ path: '/products/1', query: 'q=shoes', headers: { 'user-agent': '' } }),
];
const LEVELS = [1, 2, 3, 4] as const;

for (const exclusions of [[], [{ rules: ['xss'], url_pattern: '/search' }, { rules: ['protocol'] }]] as ManagedRulesSettings['exclusions'][]) {
  describe(`managed rules at every level${exclusions.length ? ', with exclusions' : ''}`, () => {
    const plain = LEVELS.map((level) => compileManagedRules({ enabled: true, paranoia_level: level, exclusions }, true)!);

    it('the site level screened by level 4 decides exactly as the level alone', () => {
      for (const level of LEVELS) {
        const screened = compileManagedLevels({ enabled: true, paranoia_level: level, exclusions }, true)!;
        requests.forEach((request, i) => expect(screened.rules.match(request)?.ruleId ?? null, `request ${i} at level ${level}`).toBe(plain[level - 1]!.match(request)?.ruleId ?? null));
      }
    });

    it('judges each level as that level alone would, before and after the site decided', () => {
      let flagged = 0;
      for (const request of requests) {
        const expected = LEVELS.map((level) => plain[level - 1]!.match(request)?.ruleId ?? null);
        const cold = compileManagedLevels({ enabled: true, paranoia_level: 1, exclusions }, true)!;
        expect(cold.judge([request])).toEqual(expected);
        // Decided first (the gateway's order): a request level 4 passed is remembered, not judged again.
        const decided = compileManagedLevels({ enabled: true, paranoia_level: 1, exclusions }, true)!;
        decided.rules.match(request);
        const judged = decided.judge([request]);
        expect(judged).toEqual(expected);
        if (judged !== PASSES_EVERY_LEVEL) flagged++;
      }
      // The corpora exercise both paths.
      expect(flagged).toBeGreaterThan(100);
      expect(flagged).toBeLessThan(requests.length);
    });
  });
}
