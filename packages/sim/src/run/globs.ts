/**
 * Expands the file arguments of `sim run` (Node 20 has no `fs.globSync`): a plain path is kept as given;
 * a pattern with `*`, `?` or `**` is matched segment by segment against the file tree (no dot-files unless
 * the pattern names them, `**` spans any number of folders, including none). Results are POSIX paths,
 * de-duplicated and sorted; a pattern that matches nothing is a `UsageError`-worthy empty list for the caller.
 */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Bound on the files one pattern may visit (a runaway `**` under a huge tree). */
export const GLOB_VISITS_MAX = 200_000

/** True when `arg` contains a glob metacharacter. */
export function isGlob(arg: string): boolean {
  return /[*?[]/.test(arg)
}

/** The files matching `pattern` (relative to `cwd` unless absolute), sorted. */
export function expandGlob(pattern: string, cwd: string): string[] {
  const posix = pattern.replaceAll('\\', '/')
  const absolute = posix.startsWith('/')
  const segments = posix.split('/').filter((s, i) => s !== '' && !(s === '.' && i === 0))
  const out = new Set<string>()
  let visits = 0
  const walk = (dir: string, shown: string, rest: readonly string[]): void => {
    if (++visits > GLOB_VISITS_MAX) throw new Error(`glob ${pattern} visits more than ${GLOB_VISITS_MAX} entries`)
    const [head, ...tail] = rest
    if (head === undefined) return
    if (head === '**') {
      walk(dir, shown, tail)
      for (const entry of entries(dir)) {
        if (!entry.dir || entry.name.startsWith('.') || entry.name === 'node_modules') continue
        walk(join(dir, entry.name), join2(shown, entry.name), rest)
      }
      return
    }
    if (!isGlob(head)) {
      const path = join(dir, head)
      if (tail.length === 0) { if (isFile(path)) out.add(join2(shown, head)) } else walk(path, join2(shown, head), tail)
      return
    }
    const re = segmentRegExp(head)
    for (const entry of entries(dir)) {
      if (!re.test(entry.name) || (entry.name.startsWith('.') && !head.startsWith('.'))) continue
      if (tail.length > 0) {
        if (entry.dir) walk(join(dir, entry.name), join2(shown, entry.name), tail)
      } else if (!entry.dir) out.add(join2(shown, entry.name))
    }
  }
  walk(absolute ? '/' : cwd, absolute ? '' : '', segments)
  return [...out].map((p) => (absolute ? `/${p}` : p)).sort()
}

function join2(a: string, b: string): string {
  return a === '' ? b : `${a}/${b}`
}

function entries(dir: string): Array<{ name: string; dir: boolean }> {
  try {
    return readdirSync(dir, { withFileTypes: true }).map((d) => ({ name: d.name, dir: d.isDirectory() }))
  } catch {
    return [] // an unreadable or vanished folder matches nothing
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false // missing: the caller reports an unmatched argument
  }
}

/** A RegExp for one path segment: `*` any run, `?` one character, `[...]` a class; everything else literal. */
function segmentRegExp(segment: string): RegExp {
  let source = ''
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] as string
    if (c === '*') source += '[^/]*'
    else if (c === '?') source += '[^/]'
    else if (c === '[') {
      const close = segment.indexOf(']', i + 1)
      if (close < 0) source += '\\['
      else {
        source += `[${segment.slice(i + 1, close).replace(/^!/, '^').replaceAll('\\', '\\\\')}]`
        i = close
      }
    } else source += c.replace(/[.+^${}()|\\]/g, '\\$&')
  }
  return new RegExp(`^${source}$`)
}
