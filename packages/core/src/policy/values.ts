/** Value helpers shared by the policy configs' validators (`config.ts`, `hardening.ts`). */

/** True for `{}`-literal-like objects (prototype Object or null), never arrays or class instances. */
export function isPlainObject(v: unknown): v is Readonly<Record<string, unknown>> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const proto: unknown = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/** A short description of a bad value for an error message: the value itself when scalar, else its kind. */
export function describe(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return String(v)
  if (typeof v === 'string') return JSON.stringify(v)
  if (Array.isArray(v)) return 'an array'
  return typeof v === 'object' ? 'an object' : typeof v
}
