/**
 * `plural(1, 'violation')` → `1 violation`, `plural(2, 'violation')` → `2 violations`: counts in human
 * output read as English instead of `1 violation(s)`. Only the regular `-s` plural unless `many` is given.
 */

/**
 * `count` followed by `one` (count 1) or `many` (any other count; default `one` + `s`).
 * @param count a number shown as is (no rounding).
 */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`
}
