// One-time tokens sent to people (magic links, invites, identity-provider `state`): 256 random
// bits, base64url, stored only as a SHA-256 digest. Lookups are by digest, so the time a lookup
// takes says nothing about a guessed token.
import { createHash, randomBytes } from 'node:crypto';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export const newToken = (): string => randomBytes(32).toString('base64url');

export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** Whether a value has the shape of a token (anything else is refused before a lookup). */
export const isTokenShaped = (value: unknown): value is string => typeof value === 'string' && TOKEN.test(value);
