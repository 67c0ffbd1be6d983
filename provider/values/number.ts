// Exact conversions between Terraform numbers (arbitrary-precision decimals in cty) and the wire
// forms msgpack offers (int64, float64, decimal text). Terraform compares planned values with
// config exactly, so a number must go back in a form that denotes the very same value: 0.1 from
// config arrives as the text "0.1" (no float64 is exactly 0.1) and must not come back as a double.

/** A decimal normalised to sign × digits × 10^exp with no trailing zeros in digits. */
interface Decimal {
  negative: boolean;
  digits: bigint;
  exp: number;
}

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function parseDecimal(text: string): Decimal | null {
  const match = DECIMAL.exec(text);
  if (!match) return null;
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  let digits = BigInt(whole + fraction);
  let exp = Number(exponent) - fraction.length;
  if (!Number.isSafeInteger(exp)) return null;
  if (digits === 0n) return { negative: false, digits: 0n, exp: 0 };
  while (digits % 10n === 0n) {
    digits /= 10n;
    exp += 1;
  }
  return { negative: sign === '-', digits, exp };
}

function sameDecimal(a: Decimal, b: Decimal): boolean {
  return a.negative === b.negative && a.digits === b.digits && a.exp === b.exp;
}

/** The exact decimal expansion of a finite double (1.5 → "1.5", 0.1 → "0.1000000000000000055511151231257827021181583404541015625"). */
export function exactDecimalOfDouble(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  if (Number.isInteger(value)) return BigInt(value).toString();
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  // value = mantissa × 2^-shift, and with shift > 0 (non-integers): mantissa × 5^shift / 10^shift.
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const shift = biased === 0 ? 1074 : 1075 - biased;
  const scaled = (mantissa * 5n ** BigInt(shift)).toString().padStart(shift + 1, '0');
  const whole = scaled.slice(0, scaled.length - shift);
  const decimals = scaled.slice(scaled.length - shift).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${decimals ? `.${decimals}` : ''}`;
}

/**
 * The msgpack form of a Terraform number given as decimal text: an integer when it is an exact
 * int64 (bigint beyond 2^53), a double when the double is exactly that value, else the text.
 */
export function numberToWire(text: string): number | bigint | string {
  const decimal = parseDecimal(text);
  if (!decimal) return text;
  if (decimal.exp >= 0 && decimal.exp <= 19) {
    const integer = (decimal.negative ? -decimal.digits : decimal.digits) * 10n ** BigInt(decimal.exp);
    if (integer >= INT64_MIN && integer <= INT64_MAX) {
      return integer >= BigInt(Number.MIN_SAFE_INTEGER) && integer <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(integer) : integer;
    }
  }
  const double = Number(text);
  if (Number.isFinite(double)) {
    const exact = parseDecimal(exactDecimalOfDouble(double));
    if (exact && sameDecimal(exact, decimal)) return double;
  }
  return text;
}

/** Decimal text of a number as msgpack decoded it. */
export function numberFromWire(value: number | bigint): string {
  return typeof value === 'bigint' ? value.toString() : exactDecimalOfDouble(value);
}
