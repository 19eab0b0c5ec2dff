/**
 * NPI check digit: Luhn over the 9-digit base prefixed with 80840 (CMS, "Requirements for
 * National Provider Identifier check digit", ISO/IEC 7812).
 */
export function npiCheckDigit(base9: string): number {
  const digits = `80840${base9}`.split('').map(Number);
  let sum = 0;
  for (let i = digits.length - 1, double = true; i >= 0; i--, double = !double) {
    let d = digits[i]!;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

/** True when `npi` is 10 digits with a valid check digit. */
export function isValidNpi(npi: string): boolean {
  return /^[12]\d{9}$/.test(npi) && npiCheckDigit(npi.slice(0, 9)) === Number(npi[9]);
}
