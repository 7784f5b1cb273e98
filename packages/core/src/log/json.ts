/** Lossless JSON values (§1.1 rule 2): what a log may hold, and nothing else. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

/** A JSON object value. */
export type JsonObject = { [key: string]: JsonValue }

/** Structural equality of two lossless JSON values (object key order ignored, array order kept). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ak = Object.keys(a)
  const bk = Object.keys(b)
  if (ak.length !== bk.length) return false
  for (const k of ak) {
    if (!Object.hasOwn(b, k)) return false
    if (!jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false
  }
  return true
}

/** Recursively freezes a JSON value in place (§1.1 rule 3) and returns it. */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v !== 'object' || v === null || Object.isFrozen(v)) continue
    Object.freeze(v)
    // Children by index or key, not `Object.values`: a value list of a long array is a large-object allocation.
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) if (typeof v[i] === 'object') stack.push(v[i])
    } else {
      for (const key of Object.keys(v)) stack.push((v as Record<string, unknown>)[key])
    }
  }
  return value
}
