/**
 * The project config of `sim run`: `sim.config.json` or `sim.config.yaml` in the working directory, or else a
 * `"sim"` object in its `package.json`. It sets defaults for four flags — `subject`, `reporters`, `outDir`,
 * `seed` — and a flag given on the command line overrides the config's value. Both config files at once is
 * ambiguous and refused. Every problem (unreadable or malformed file, unknown key, wrong type) is a
 * `UsageError` (exit 2) naming the file and the field; nothing here has a default of its own.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { UsageError } from './exit-codes.ts'
import { UINT32_MAX } from './flags.ts'

/** The formats of `sim run`: stdout formats, and `html`, which writes `index.html` into the output folder instead. */
export const REPORTERS = ['pretty', 'json', 'markdown', 'junit', 'html', 'github'] as const

/** One `sim run` format. */
export type Reporter = (typeof REPORTERS)[number]

/** The config files looked for, in the working directory, in this order (then `package.json` → `"sim"`). */
export const RUN_CONFIG_FILES = ['sim.config.json', 'sim.config.yaml'] as const

/** The keys a config may set. */
export const RUN_CONFIG_KEYS = ['subject', 'reporters', 'outDir', 'seed'] as const

/** A validated config: each key optional, each value as its flag would give it. */
export interface RunConfig {
  /** As `--subject`: one value or several (each may be a comma list). */
  subject?: string[]
  /** As `--reporter`, repeatable. */
  reporters?: Reporter[]
  /** As `--out-dir`, relative to the working directory. */
  outDir?: string
  /** As `--seed`: a uint32. */
  seed?: number
}

/** A config that was found and read. */
export interface LoadedRunConfig {
  /** Where it came from, as shown to the user: `sim.config.json`, `sim.config.yaml` or `package.json ("sim")`. */
  source: string
  config: RunConfig
}

/**
 * Finds and validates the config in `cwd`; null when there is none.
 * @throws UsageError for both config files at once, an unreadable or malformed file, an unknown key or a bad value.
 */
export function loadRunConfig(cwd: string): LoadedRunConfig | null {
  const present = RUN_CONFIG_FILES.filter((name) => existsSync(join(cwd, name)))
  if (present.length > 1) throw new UsageError(`${present.join(' and ')} both exist: keep one config file`)
  const file = present[0]
  if (file !== undefined) {
    const text = readText(join(cwd, file), file)
    let doc: unknown
    try {
      doc = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text)
    } catch (err) {
      throw new UsageError(`${file}: invalid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${firstLine(err)}`)
    }
    return { source: file, config: validateRunConfig(doc, file) }
  }
  const manifest = join(cwd, 'package.json')
  if (!existsSync(manifest)) return null
  let pkg: unknown
  try {
    pkg = JSON.parse(readText(manifest, 'package.json'))
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError(`package.json: invalid JSON: ${firstLine(err)}`)
  }
  if (typeof pkg !== 'object' || pkg === null || !('sim' in pkg)) return null
  const source = 'package.json ("sim")'
  return { source, config: validateRunConfig(pkg.sim, source, 'sim.') }
}

/**
 * One line for `sim run --help` saying which config was read: its source and keys, that none was found, or
 * why the one found is refused (so `--help` still works with a broken config).
 */
export function describeRunConfig(cwd: string): string {
  let loaded: LoadedRunConfig | null
  try {
    loaded = loadRunConfig(cwd)
  } catch (err) {
    return `Config: refused, ${(err as Error).message}`
  }
  if (loaded === null) return `Config: none (${RUN_CONFIG_FILES.join(', ')}, package.json "sim")`
  const keys = Object.keys(loaded.config)
  return `Config: read ${loaded.source}${keys.length === 0 ? ' (empty)' : ` (sets ${keys.join(', ')})`}`
}

/**
 * Checks `doc` against the config's shape. `source` names the file in messages, `prefix` the path to the
 * object inside it (`sim.` for package.json).
 * @throws UsageError naming `source` and the field for an unknown key or a value of the wrong type.
 */
export function validateRunConfig(doc: unknown, source: string, prefix = ''): RunConfig {
  if (doc === null || doc === undefined) return {}
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new UsageError(`${source}: ${prefix === '' ? 'the config' : prefix.slice(0, -1)}: expected an object with keys ${RUN_CONFIG_KEYS.join(', ')}`)
  }
  const raw = doc as Record<string, unknown>
  const bad = (key: string, expected: string): never => {
    throw new UsageError(`${source}: ${prefix}${key}: expected ${expected}, got ${JSON.stringify(raw[key]) ?? String(raw[key])}`)
  }
  for (const key of Object.keys(raw)) {
    if (!(RUN_CONFIG_KEYS as readonly string[]).includes(key)) {
      throw new UsageError(`${source}: ${prefix}${key}: unknown key; allowed keys: ${RUN_CONFIG_KEYS.join(', ')}`)
    }
  }
  const config: RunConfig = {}
  if (raw['subject'] !== undefined) {
    const subject = stringList(raw['subject'])
    if (subject === null) bad('subject', 'a subject (reference, dsh or module:<path>) or a list of them')
    else config.subject = subject
  }
  if (raw['reporters'] !== undefined) {
    const reporters = stringList(raw['reporters'])
    if (reporters === null || !reporters.every((r) => (REPORTERS as readonly string[]).includes(r))) {
      bad('reporters', `one of ${REPORTERS.join(', ')} or a list of them`)
    } else config.reporters = reporters as Reporter[]
  }
  if (raw['outDir'] !== undefined) {
    if (typeof raw['outDir'] !== 'string' || raw['outDir'] === '') bad('outDir', 'a folder path (a non-empty string)')
    else config.outDir = raw['outDir']
  }
  if (raw['seed'] !== undefined) {
    const seed = raw['seed']
    if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0 || seed > UINT32_MAX) {
      bad('seed', `an unsigned 32-bit integer (0 … ${UINT32_MAX})`)
    } else config.seed = seed
  }
  return config
}

/** A non-empty string or a non-empty list of non-empty strings, as a list; null for anything else. */
function stringList(value: unknown): string[] | null {
  const list = Array.isArray(value) ? value : [value]
  if (list.length === 0 || !list.every((v) => typeof v === 'string' && v !== '')) return null
  return list as string[]
}

function readText(path: string, shown: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    throw new UsageError(`${shown}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`)
  }
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''
}
