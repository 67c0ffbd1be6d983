// The HTML the gateway answers a challenged request with, and the page for a failed attempt.
//
// The page runs on the protected site's own host, usually plain http: not a secure context, so
// `crypto.subtle` is missing. It therefore carries its own SHA-256 (below, written in ES5 syntax so
// any browser that runs scripts at all can solve it). It loads nothing else: one inline script allowed by a
// per-response CSP nonce. The script reads its inputs from the form, never from interpolated
// JavaScript, so its text is the same on every response and nothing user-controlled lands in a
// script context.

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The challenge page's CSP: only our nonced script runs, and the form may only post to this origin. */
export const challengeCsp = (nonce: string): string => `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; form-action 'self'`;

/** The failure page has no script at all. */
export const FAILURE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'";

/**
 * `createSolver(prefix, bits)`: searches for a decimal nonce such that SHA-256(prefix + nonce)
 * starts with `bits` zero bits. Kept free of the DOM so tests can run it in a bare VM context.
 *
 * Every candidate shares the long prefix (the seed and ":"), so its complete 64-byte blocks are
 * compressed once (the "midstate"); each nonce then costs only the last one or two blocks.
 */
export const SOLVER_SOURCE = String.raw`
function createSolver(prefix, bits) {
  'use strict';
  // SHA-256 constants (FIPS 180-4 §4.2.2, §5.3.3): the first 32 bits of the fractional parts of
  // the cube roots of the first 64 primes (K) and the square roots of the first 8 (H0).
  var primes = [];
  for (var candidate = 2; primes.length < 64; candidate++) {
    var isPrime = true;
    for (var p = 0; p < primes.length && primes[p] * primes[p] <= candidate; p++) {
      if (candidate % primes[p] === 0) { isPrime = false; break; }
    }
    if (isPrime) primes.push(candidate);
  }
  var fraction32 = function (x) { return ((x - Math.floor(x)) * 4294967296) | 0; };
  var K = new Int32Array(64);
  var H0 = new Int32Array(8);
  for (var i = 0; i < 64; i++) K[i] = fraction32(Math.cbrt(primes[i]));
  for (i = 0; i < 8; i++) H0[i] = fraction32(Math.sqrt(primes[i]));

  var w = new Int32Array(64);

  // One compression of the 64-byte block at block[offset..] into the state h (updated in place).
  function compress(h, block, offset) {
    var t, i;
    for (i = 0; i < 16; i++) {
      t = offset + i * 4;
      w[i] = (block[t] << 24) | (block[t + 1] << 16) | (block[t + 2] << 8) | block[t + 3];
    }
    for (i = 16; i < 64; i++) {
      var x = w[i - 15], y = w[i - 2];
      var s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      var s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    var a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (i = 0; i < 64; i++) {
      var S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      var ch = (e & f) ^ (~e & g);
      var t1 = (k + S1 + ch + K[i] + w[i]) | 0;
      var S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      var maj = (a & b) ^ (a & c) ^ (b & c);
      var t2 = (S0 + maj) | 0;
      k = g; g = f; f = e; e = (d + t1) | 0;
      d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    h[0] = (h[0] + a) | 0; h[1] = (h[1] + b) | 0; h[2] = (h[2] + c) | 0; h[3] = (h[3] + d) | 0;
    h[4] = (h[4] + e) | 0; h[5] = (h[5] + f) | 0; h[6] = (h[6] + g) | 0; h[7] = (h[7] + k) | 0;
  }

  // The prefix is ASCII (a base64url token and ":"), so its bytes are its char codes.
  var prefixBytes = new Uint8Array(prefix.length);
  for (i = 0; i < prefix.length; i++) prefixBytes[i] = prefix.charCodeAt(i) & 0xff;
  var whole = prefixBytes.length - (prefixBytes.length % 64);
  var midstate = new Int32Array(H0);
  for (var offset = 0; offset < whole; offset += 64) compress(midstate, prefixBytes, offset);
  var rest = prefixBytes.length - whole;
  var tail = new Uint8Array(128);
  tail.set(prefixBytes.subarray(whole));
  var state = new Int32Array(8);

  // SHA-256 of prefix + suffix (an ASCII suffix of at most 56 characters), as 8 signed words.
  function digest(suffix) {
    var n = rest;
    for (var i = 0; i < suffix.length; i++) tail[n++] = suffix.charCodeAt(i) & 0xff;
    tail[n++] = 0x80;
    var end = n + 8 <= 64 ? 64 : 128;
    while (n < end - 4) tail[n++] = 0;
    // Message length in bits, big-endian; the high 32 bits (zeroed above) stay 0 for our sizes.
    var bitLength = (prefixBytes.length + suffix.length) * 8;
    tail[end - 4] = bitLength >>> 24; tail[end - 3] = bitLength >>> 16; tail[end - 2] = bitLength >>> 8; tail[end - 1] = bitLength;
    state.set(midstate);
    compress(state, tail, 0);
    if (end === 128) compress(state, tail, 64);
    return state;
  }

  function leadingZeroBits(h) {
    var total = 0;
    for (var i = 0; i < 8; i++) {
      var z = Math.clz32(h[i]);
      total += z;
      if (z < 32) break;
    }
    return total;
  }

  return {
    digest: digest,
    // The first nonce in [from, from + count) that solves the puzzle, or -1.
    search: function (from, count) {
      for (var nonce = from; nonce < from + count; nonce++) {
        if (leadingZeroBits(digest(String(nonce))) >= bits) return nonce;
      }
      return -1;
    }
  };
}
`;

/**
 * Drives the solver in slices of about 50 ms with `setTimeout` between them, so the page keeps
 * painting its progress, then submits the form.
 */
const RUNNER_SOURCE = String.raw`
(function () {
  'use strict';
  var form = document.getElementById('aegis-challenge');
  var status = document.getElementById('aegis-status');
  var seed = form.elements.namedItem('seed').value;
  var bits = Number(form.getAttribute('data-bits'));
  var solver = createSolver(seed + ':', bits);
  var expected = Math.pow(2, bits);
  var BATCH = 1024;
  var next = 0;
  var started = Date.now();

  function slice() {
    var until = Date.now() + 50;
    do {
      var found = solver.search(next, BATCH);
      if (found >= 0) return submit(found);
      next += BATCH;
    } while (Date.now() < until);
    // The work is random: 2^bits tries is only the average, so the estimate stops at 99 %.
    status.textContent = 'Checking your browser\u2026 ' + Math.min(99, Math.floor((100 * next) / expected)) + ' %';
    setTimeout(slice, 0);
  }

  function submit(nonce) {
    form.elements.namedItem('nonce').value = String(nonce);
    status.textContent = 'Checked in ' + ((Date.now() - started) / 1000).toFixed(1) + ' s \u2014 continuing\u2026';
    form.submit();
  }

  status.textContent = 'Checking your browser\u2026';
  setTimeout(slice, 0);
})();
`;

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222}' +
  'h1{font-size:1.5rem}.small{color:#666;font-size:.85em}';

export interface ChallengePageInput {
  seed: string;
  difficultyBits: number;
  /** Already sanitised: a same-origin path. */
  returnTo: string;
  /** Action of the form: the reserved challenge path. */
  action: string;
  cspNonce: string;
  requestId: string;
}

export function renderChallengePage(input: ChallengePageInput): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex,nofollow">` +
    `<title>Just a moment…</title><style>${STYLE}</style></head><body>` +
    `<h1>Just a moment…</h1>` +
    `<p>This site checks that visitors are browsers before letting them in. It takes a second or two and happens only now and then.</p>` +
    `<p id="aegis-status" role="status" aria-live="polite"></p>` +
    `<noscript><p><strong>Please enable JavaScript and reload this page:</strong> the check runs in your browser.</p></noscript>` +
    `<form id="aegis-challenge" method="post" action="${escapeHtml(input.action)}" data-bits="${input.difficultyBits}">` +
    `<input type="hidden" name="seed" value="${escapeHtml(input.seed)}">` +
    `<input type="hidden" name="nonce" value="">` +
    `<input type="hidden" name="return_to" value="${escapeHtml(input.returnTo)}">` +
    `</form>` +
    `<p class="small">Request id: <code>${escapeHtml(input.requestId)}</code> · Aegis Shield</p>` +
    `<script nonce="${escapeHtml(input.cspNonce)}">${SOLVER_SOURCE}${RUNNER_SOURCE}</script>` +
    `</body></html>`
  );
}

export function renderFailurePage(input: { message: string; retryHref: string; requestId: string }): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex,nofollow">` +
    `<title>Verification failed</title><style>${STYLE}</style></head><body>` +
    `<h1>Verification failed</h1><p>${escapeHtml(input.message)}</p>` +
    `<p><a href="${escapeHtml(input.retryHref)}">Try again</a></p>` +
    `<p class="small">Request id: <code>${escapeHtml(input.requestId)}</code> · Aegis Shield</p>` +
    `</body></html>`
  );
}
