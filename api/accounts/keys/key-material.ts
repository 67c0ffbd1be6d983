// API key values: `svc_live_` (`svc_test_` for the sandbox) + 40 random base62 characters (~238
// bits). They are stored only as a SHA-256 digest: a slow password hash buys nothing for values this
// random, and a fast digest keeps the lookup a single indexed equality.
import { createHash, randomInt } from 'node:crypto';
import type { Environment } from '../../../platform/db/environments.ts';

export const LIVE_PREFIX = 'svc_live_';
export const TEST_PREFIX = 'svc_test_';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const RANDOM_LENGTH = 40;
const KEY_PATTERN = /^svc_(live|test)_[A-Za-z0-9]{32,128}$/;

export function generateKey(environment: Environment = 'live'): string {
  let random = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) random += ALPHABET[randomInt(ALPHABET.length)];
  return (environment === 'test' ? TEST_PREFIX : LIVE_PREFIX) + random;
}

export function isWellFormedKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

export function hashKey(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function keyPrefix(value: string): string {
  return value.startsWith(TEST_PREFIX) ? TEST_PREFIX : LIVE_PREFIX;
}

/** The environment a key works in: its prefix says (a test key can never reach live data). */
export function keyEnvironment(prefix: string): Environment {
  return prefix === TEST_PREFIX ? 'test' : 'live';
}

export function last4(value: string): string {
  return value.slice(-4);
}
