// Rate-limit state in Redis, so every gateway process spends one budget. One round trip per rule
// hit: a Lua script increments the current window's counter (expiring after two windows) and reads
// the previous one atomically. ioredis auto-pipelining batches the scripts of concurrent requests.
// Keys carry a hash of the identity, never a raw API key.
import { Redis } from 'ioredis';
import { windowIndex, type RateState, type StandingDeny, type WindowCounts } from './rate-state.ts';

const HIT = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local previous = redis.call('GET', KEYS[2])
return { current, tonumber(previous or '0') }
`;

// Deny values are "<until ms>|<rule id>"; a later deadline replaces an earlier one, never the reverse.
const DENY = `
local existing = redis.call('GET', KEYS[1])
local standing = tonumber(existing and string.match(existing, '^%d+') or '0')
if tonumber(ARGV[1]) > standing then redis.call('SET', KEYS[1], ARGV[1] .. '|' .. ARGV[3], 'PX', ARGV[2]) end
return 1
`;

type ScriptRedis = Redis & {
  aegisHit(current: string, previous: string, ttlMs: number): Promise<[number, number]>;
  aegisDeny(key: string, until: number, ttlMs: number, ruleId: string): Promise<number>;
};

export class RedisRateState implements RateState {
  readonly #redis: ScriptRedis;

  constructor(url: string, private readonly prefix = 'aegis:shield:') {
    const redis = new Redis(url, { enableAutoPipelining: true, maxRetriesPerRequest: 2 });
    redis.defineCommand('aegisHit', { numberOfKeys: 2, lua: HIT });
    redis.defineCommand('aegisDeny', { numberOfKeys: 1, lua: DENY });
    this.#redis = redis as ScriptRedis;
  }

  async hit(key: string, windowMs: number, now: number): Promise<WindowCounts> {
    const index = windowIndex(windowMs, now);
    const base = `${this.prefix}rl:${windowMs}:${key}:`;
    const [current, previous] = await this.#redis.aegisHit(base + index, base + (index - 1), windowMs * 2);
    return { current, previous };
  }

  async deniedUntil(keys: readonly string[], now: number): Promise<StandingDeny | null> {
    if (keys.length === 0) return null;
    const values = await this.#redis.mget(keys.map((k) => `${this.prefix}deny:${k}`));
    let longest: StandingDeny | null = null;
    for (const value of values) {
      if (!value) continue;
      const bar = value.indexOf('|');
      const until = Number(value.slice(0, bar));
      if (until > now && (!longest || until > longest.until)) longest = { until, ruleId: value.slice(bar + 1) };
    }
    return longest;
  }

  async deny(key: string, deny: StandingDeny): Promise<void> {
    await this.#redis.aegisDeny(`${this.prefix}deny:${key}`, deny.until, Math.max(1, deny.until - Date.now()), deny.ruleId);
  }

  async close(): Promise<void> {
    await this.#redis.quit();
  }
}
