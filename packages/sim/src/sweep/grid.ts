/**
 * The policy grid of `sim sweep` (issue #10): read from a YAML file (every error is `file:line:column` and
 * exits 2) or from inline flags (`--threshold 0.6:0.9:0.1`), expanded into cells in a fixed order (window,
 * pruner on before off, threshold, retain), each checked against §3.2/§3.3 by the core's own resolvers, so an
 * invalid combination is skipped with the rule it breaks instead of silently dropped.
 */
import { readFile } from 'node:fs/promises'
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml'
import {
  CompactionConfigError, HARDENING_RULES, TargetPressureConfigError, resolveCompactSpec, resolveCompactionConfig, resolveTargetPolicy,
} from '@compaction-sim/core'
import { UsageError } from '../cli/exit-codes.ts'
import type { SweepGrid, SweepPolicy, SweepProfile } from './types.ts'
import type { ScenarioIssue } from '../scenario/errors.ts'
import { resolveSummarizer } from '../scenario/resolve-summarizer.ts'
import type { SummarizerConfig } from '../scenario/types.ts'

/** Default of `compactionsPerTurnMax`: a recommended policy compacts at most once every two turns. */
export const COMPACTIONS_PER_TURN_MAX_DEFAULT = 0.5

/** Upper bound on grid cells (every loop has a bound). */
export const GRID_CELLS_MAX = 10_000

/** Upper bound on the values one `a:b:step` range expands to. */
const RANGE_VALUES_MAX = 1000

/** The keys a grid file may hold. */
const GRID_KEYS = [
  'thresholdRatio', 'retainRatio', 'pruner', 'contextWindow', 'seeds', 'compactionsPerTurnMax', 'summarizer', 'objective', 'profile',
  'ownPolicy',
] as const

/** The four policy axes, which `ownPolicy` leaves to each scenario. */
const POLICY_AXES = ['thresholdRatio', 'retainRatio', 'pruner', 'contextWindow'] as const

/**
 * The values of the `profile` axis (issue #19), in cell order: the two profiles, then each HARD rule alone (its
 * config key, in HARD-id order). `all` in a profile list stands for every one of them.
 */
export const SWEEP_PROFILES: readonly SweepProfile[] = ['faithful', 'hardened', ...HARDENING_RULES]

/** What a `profile` value may be, for error messages. */
const PROFILE_VALUES_TEXT = `faithful, hardened, a rule (${HARDENING_RULES.join(', ')}) or all`

/** The values of `objective` (issue #20). */
export const SWEEP_OBJECTIVES = ['cost', 'retention'] as const

/** A grid cell before it runs: its position, id, policy and — when invalid — the §3.2 reason. */
export interface GridCell {
  index: number
  id: string
  policy: SweepPolicy
  /** Null for a valid cell. */
  invalidReason: string | null
}

/** `value` rounded to 6 decimals (a range's steps must not drift: 0.6 + 3 × 0.1 is 0.9, not 0.8999999999999999). */
function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6
}

/**
 * Expands `a:b:step` (inclusive, ascending) or a comma list into numbers; throws `Error` with the reason
 * (callers add where it came from).
 */
export function parseNumberList(text: string): number[] {
  const range = /^\s*([^:]+):([^:]+):([^:]+)\s*$/.exec(text)
  if (range !== null) {
    const [from, to, step] = [Number(range[1]), Number(range[2]), Number(range[3])]
    if (![from, to, step].every(Number.isFinite) || step <= 0 || to < from) {
      throw new Error(`expected a range from:to:step with from ≤ to and step > 0, got ${JSON.stringify(text)}`)
    }
    const count = Math.round((to - from) / step)
    if (count + 1 > RANGE_VALUES_MAX) throw new Error(`range ${JSON.stringify(text)} expands to more than ${RANGE_VALUES_MAX} values`)
    const values: number[] = []
    for (let i = 0; i <= count; i++) values.push(round6(from + i * step))
    return values
  }
  const values = text.split(',').map((part) => part.trim())
  const numbers = values.map(Number)
  if (values.some((v) => v === '') || numbers.some((n) => !Number.isFinite(n))) {
    throw new Error(`expected numbers separated by commas or a range from:to:step, got ${JSON.stringify(text)}`)
  }
  return numbers
}

/** Parses `on,off` (also true/false, 1/0) into booleans; throws `Error` with the reason. */
export function parsePrunerList(text: string): boolean[] {
  return text.split(',').map((part) => {
    const v = part.trim().toLowerCase()
    if (v === 'on' || v === 'true' || v === '1') return true
    if (v === 'off' || v === 'false' || v === '0') return false
    throw new Error(`expected on or off, got ${JSON.stringify(part.trim())}`)
  })
}

/** Sorted, de-duplicated copy (grid axes are ascending so cell order does not depend on how they were written). */
function axis(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b)
}

/** Inline axes of `sim sweep` (each a comma list or a range); missing axes take the defaults named in the README. */
export interface GridFlags {
  threshold?: string
  retain?: string
  pruner?: string
  window?: string
  seeds?: string
  /** `cost` (default) or `retention` (issue #20). */
  objective?: string
  /** `faithful`, `hardened`, rule keys or `all`, comma-separated (issue #19). */
  profile?: string
  /** Each scenario keeps its own policy and windows (issue #19); excludes threshold, retain, pruner and window. */
  ownPolicy?: boolean
}

/** The grid of inline flags; throws `UsageError` naming the flag. */
export function gridFromFlags(flags: GridFlags): SweepGrid {
  const numbers = (flag: string, text: string | undefined, fallback: number[]): number[] => {
    if (text === undefined) return fallback
    try {
      return parseNumberList(text)
    } catch (err) {
      throw new UsageError(`--${flag}: ${(err as Error).message}`)
    }
  }
  if (flags.ownPolicy === true) {
    const given = (['threshold', 'retain', 'pruner', 'window'] as const).filter((f) => flags[f] !== undefined)
    if (given.length > 0) {
      throw new UsageError(`--own-policy cannot be combined with ${given.map((f) => `--${f}`).join(', ')}: each scenario keeps its own policy`)
    }
  }
  let pruner = [true, false]
  if (flags.pruner !== undefined) {
    try {
      pruner = parsePrunerList(flags.pruner)
    } catch (err) {
      throw new UsageError(`--pruner: ${(err as Error).message}`)
    }
  }
  const own = flags.ownPolicy === true
  return checkedGrid({
    thresholdRatio: own ? [] : axis(numbers('threshold', flags.threshold, [0.8])),
    retainRatio: own ? [] : axis(numbers('retain', flags.retain, [0.16])),
    pruner: own ? [] : orderedPruner(pruner),
    contextWindow: own ? [] : axis(numbers('window', flags.window, [8000])),
    seeds: axis(numbers('seeds', flags.seeds, [])),
    compactionsPerTurnMax: COMPACTIONS_PER_TURN_MAX_DEFAULT,
    ...objectiveOf(flags.objective, '--objective'),
    ...(flags.profile === undefined ? {} : { profile: profileAxis(flags.profile.split(','), '--profile') }),
    ...(own ? { ownPolicy: true as const } : {}),
  }, (key) => GRID_KEY_FLAGS[key] ?? '--threshold/--retain/--pruner/--window')
}

/** `{ objective: 'retention' }`, nothing for `cost` or absent; throws `UsageError` naming `where` for another value. */
function objectiveOf(value: unknown, where: string): Pick<SweepGrid, 'objective'> {
  if (value === undefined || value === 'cost') return {}
  if (value === 'retention') return { objective: 'retention' }
  throw new UsageError(`${where}: expected one of ${SWEEP_OBJECTIVES.join(', ')}, got ${JSON.stringify(value)}`)
}

/**
 * The `summarizer` axis of a grid file (issue #20): a list of summarizer definitions as a scenario writes them
 * (a preset word or an object), each checked by the scenario resolver's own rules.
 */
function summarizerAxis(node: Node | null, at: (offset: number) => string): SummarizerConfig[] {
  const items: Node[] = isSeq(node) ? node.items as Node[] : node === null ? [] : [node]
  if (items.length === 0) throw new UsageError(`${at(node?.range?.[0] ?? 0)}: summarizer: expected at least one summarizer`)
  return items.map((item) => {
    const value = item.toJSON() as SummarizerConfig
    const issues: ScenarioIssue[] = []
    const shaped = typeof value === 'string' || (typeof value === 'object' && value !== null && !Array.isArray(value))
    if (shaped) resolveSummarizer(value, '', issues)
    const first = issues[0]
    if (!shaped || first !== undefined) {
      const reason = first === undefined ? 'expected a preset name or an object with one of fixed, ratio, script' : `${first.path === '' ? '' : `${first.path.slice(1)} `}${first.reason}`
      throw new UsageError(`${at(item.range?.[0] ?? 0)}: summarizer: ${reason}`)
    }
    return value
  })
}

/**
 * The `profile` axis (issue #19): each value `faithful`, `hardened`, one rule's config key (that rule alone on top
 * of faithful) or `all` (every one of those), de-duplicated, in `SWEEP_PROFILES` order; throws `UsageError` naming
 * `where` for another value or an empty list.
 */
export function profileAxis(values: readonly unknown[], where: string): SweepProfile[] {
  const words = values.map((v) => (typeof v === 'string' ? v.trim() : v))
  for (const w of words) {
    if (w !== 'all' && !(SWEEP_PROFILES as readonly unknown[]).includes(w)) {
      throw new UsageError(`${where}: expected ${PROFILE_VALUES_TEXT}, got ${JSON.stringify(w)}`)
    }
  }
  if (words.length === 0) throw new UsageError(`${where}: expected ${PROFILE_VALUES_TEXT}`)
  return SWEEP_PROFILES.filter((p) => words.includes('all') || words.includes(p))
}

/** The inline flag of each grid key (`sim sweep --threshold` sets `thresholdRatio`), for error messages. */
const GRID_KEY_FLAGS: Readonly<Record<string, string>> = {
  thresholdRatio: '--threshold', retainRatio: '--retain', pruner: '--pruner', contextWindow: '--window', seeds: '--seeds',
}

/** Pruner axis in the fixed order on, off. */
function orderedPruner(values: readonly boolean[]): boolean[] {
  return [true, false].filter((v) => values.includes(v))
}

/** Reads and validates a grid file; every problem is a `UsageError` `file:line:column: reason` (exit 2). */
export async function loadGridFile(path: string): Promise<SweepGrid> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new UsageError(`${path}: cannot read the grid file (${(err as NodeJS.ErrnoException).code ?? String(err)})`)
  }
  return parseGrid(text, path)
}

/** Parses grid YAML `text` (named `file` in errors). */
export function parseGrid(text: string, file: string): SweepGrid {
  const lines = new LineCounter()
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false })
  const at = (offset: number): string => {
    const pos = lines.linePos(offset)
    return `${file}:${pos.line}:${pos.col}`
  }
  const first = doc.errors[0]
  if (first !== undefined) throw new UsageError(`${at(first.pos[0])}: invalid YAML: ${first.message.split('\n')[0] ?? ''}`)
  const root = doc.contents
  if (!isMap(root)) throw new UsageError(`${at(root?.range?.[0] ?? 0)}: expected a mapping with keys ${GRID_KEYS.join(', ')}`)
  const raw: Partial<Record<(typeof GRID_KEYS)[number], unknown>> = {}
  const where = new Map<string, string>()
  for (const pair of root.items) {
    const keyNode = pair.key as Node | null
    const key = isScalar(keyNode) ? String(keyNode.value) : ''
    const keyAt = at(keyNode?.range?.[0] ?? 0)
    if (!(GRID_KEYS as readonly string[]).includes(key)) {
      throw new UsageError(`${keyAt}: unknown key ${JSON.stringify(key)}; expected one of ${GRID_KEYS.join(', ')}`)
    }
    const valueNode = pair.value as Node | null
    const valueAt = at(valueNode?.range?.[0] ?? keyNode?.range?.[1] ?? 0)
    where.set(key, valueAt)
    if (key === 'summarizer') raw.summarizer = summarizerAxis(valueNode, at)
    else if (key === 'profile') {
      const value: unknown = valueNode === null ? [] : valueNode.toJSON()
      raw.profile = profileAxis(Array.isArray(value) ? value : [value], `${valueAt}: profile`)
    }
    else if (key === 'ownPolicy') {
      if (!isScalar(valueNode) || typeof valueNode.value !== 'boolean') throw new UsageError(`${valueAt}: ownPolicy: expected true or false`)
      raw.ownPolicy = valueNode.value
    }
    else if (key === 'objective') raw.objective = objectiveOf(isScalar(valueNode) ? valueNode.value : valueNode?.toJSON(), `${valueAt}: objective`).objective ?? 'cost'
    else raw[key as (typeof GRID_KEYS)[number]] = gridValue(key, valueNode, at)
  }
  const get = <T>(key: (typeof GRID_KEYS)[number], fallback: T): T => (raw[key] === undefined ? fallback : raw[key] as T)
  const perTurn = get<number[]>('compactionsPerTurnMax', [COMPACTIONS_PER_TURN_MAX_DEFAULT])
  if (perTurn.length !== 1) throw new UsageError(`${where.get('compactionsPerTurnMax') ?? file}: expected one number`)
  const own = raw.ownPolicy === true
  if (own) {
    const given = POLICY_AXES.find((k) => raw[k] !== undefined)
    if (given !== undefined) throw new UsageError(`${where.get(given) ?? file}: ${given}: not allowed with ownPolicy: true (each scenario keeps its own policy)`)
  }
  return checkedGrid({
    thresholdRatio: own ? [] : axis(get('thresholdRatio', [0.8])),
    retainRatio: own ? [] : axis(get('retainRatio', [0.16])),
    pruner: own ? [] : orderedPruner(get('pruner', [true, false])),
    contextWindow: own ? [] : axis(get('contextWindow', [8000])),
    seeds: axis(get('seeds', [])),
    compactionsPerTurnMax: perTurn[0] ?? COMPACTIONS_PER_TURN_MAX_DEFAULT,
    ...(raw.summarizer === undefined ? {} : { summarizer: raw.summarizer as SummarizerConfig[] }),
    ...(raw.objective === 'retention' ? { objective: 'retention' as const } : {}),
    ...(raw.profile === undefined ? {} : { profile: raw.profile as SweepProfile[] }),
    ...(own ? { ownPolicy: true as const } : {}),
  }, (key) => (key === 'cells' ? file : `${where.get(key) ?? file}: ${key}`))
}

/** One grid value: a list, a scalar or a range string, as numbers (or booleans for `pruner`). */
function gridValue(key: string, node: Node | null, at: (offset: number) => string): number[] | boolean[] {
  const items: Node[] = isSeq(node) ? node.items as Node[] : node === null ? [] : [node]
  const out: Array<number | boolean> = []
  for (const item of items) {
    const where = at(item.range?.[0] ?? 0)
    if (!isScalar(item)) throw new UsageError(`${where}: ${key}: expected a number, a list or a range from:to:step`)
    const value = item.value
    try {
      if (key === 'pruner') out.push(...(typeof value === 'boolean' ? [value] : parsePrunerList(String(value))))
      else if (typeof value === 'number') out.push(value)
      else out.push(...parseNumberList(String(value)))
    } catch (err) {
      throw new UsageError(`${where}: ${key}: ${(err as Error).message}`)
    }
  }
  if (out.length === 0) throw new UsageError(`${node === null ? at(0) : at(node.range?.[0] ?? 0)}: ${key}: expected at least one value`)
  return out as number[] | boolean[]
}

/**
 * Checks value domains; returns the grid. `where(key)` names the source of a key in the message: `file:line:col: key`
 * for a grid file, the flag (`--threshold`) for inline axes.
 */
function checkedGrid(grid: SweepGrid, where: (key: string) => string): SweepGrid {
  const bad = (key: string, reason: string): never => {
    throw new UsageError(`${where(key)}: ${reason}`)
  }
  for (const v of grid.thresholdRatio) if (!(v > 0 && v <= 1)) bad('thresholdRatio', `expected ratios in (0, 1], got ${v}`)
  for (const v of grid.retainRatio) if (!(v > 0 && v < 1)) bad('retainRatio', `expected ratios in (0, 1), got ${v}`)
  for (const v of grid.contextWindow) if (!Number.isSafeInteger(v) || v <= 0) bad('contextWindow', `expected positive integers, got ${v}`)
  for (const v of grid.seeds) if (!Number.isSafeInteger(v) || v < 0 || v > 0xffffffff) bad('seeds', `expected uint32 seeds, got ${v}`)
  if (!(grid.compactionsPerTurnMax >= 0)) bad('compactionsPerTurnMax', `expected a number ≥ 0, got ${grid.compactionsPerTurnMax}`)
  const own = grid.ownPolicy === true
  if (!own && grid.pruner.length === 0) bad('pruner', 'expected on, off or both')
  const cells = (own ? 1 : grid.thresholdRatio.length * grid.retainRatio.length * grid.pruner.length * grid.contextWindow.length)
    * (grid.summarizer?.length ?? 1) * (grid.profile?.length ?? 1)
  if (cells > GRID_CELLS_MAX) bad('cells', `the grid has ${cells} cells, more than ${GRID_CELLS_MAX}`)
  return grid
}

/**
 * The id of a cell: `w<window>-t<threshold>-r<retain>-p<1|0>`, then `-s<k>` (k = the summarizer's 1-based place
 * in the grid's `summarizer` list) when the grid has that axis, then `-faithful`/`-hardened` when the policy has a
 * profile (the `profile` axis, issue #19).
 */
export function cellIdOf(policy: SweepPolicy, summarizerIndex?: number): string {
  const base = policy.contextWindow === undefined
    ? 'own'
    : `w${policy.contextWindow}-t${policy.thresholdRatio}-r${policy.retainRatio}-p${policy.pruner === true ? 1 : 0}`
  const withSummarizer = summarizerIndex === undefined ? base : `${base}-s${summarizerIndex + 1}`
  return policy.profile === undefined ? withSummarizer : `${withSummarizer}-${policy.profile}`
}

/**
 * Every cell of `grid` in the fixed order (window, pruner on/off, threshold, retain, then the summarizers in list
 * order, then the profiles faithful before hardened), each checked by §3.2/§3.3.
 */
export function gridCells(grid: SweepGrid): GridCell[] {
  const cells: GridCell[] = []
  // Under `ownPolicy` the four policy axes are empty: one base policy with none of their fields.
  const bases: SweepPolicy[] = grid.ownPolicy === true ? [{}] : grid.contextWindow.flatMap((contextWindow) =>
    grid.pruner.flatMap((pruner) => grid.thresholdRatio.flatMap((thresholdRatio) =>
      grid.retainRatio.map((retainRatio) => ({ thresholdRatio, retainRatio, pruner, contextWindow })))))
  for (const base of bases) {
    const summarizers: Array<[SweepPolicy, number | undefined]> = grid.summarizer === undefined
      ? [[base, undefined]]
      : grid.summarizer.map((summarizer, k) => [{ ...base, summarizer: structuredClone(summarizer) }, k])
    for (const [withSummarizer, k] of summarizers) {
      const profiles: SweepPolicy[] = grid.profile === undefined
        ? [withSummarizer]
        : grid.profile.map((profile) => ({ ...withSummarizer, profile }))
      for (const policy of profiles) {
        cells.push({ index: cells.length, id: cellIdOf(policy, k), policy, invalidReason: invalidReasonOf(policy) })
      }
    }
  }
  return cells
}

/** Why `policy` cannot run (§3.2 via `resolveCompactionConfig`, §3.3 via `resolveCompactSpec`), or null. */
export function invalidReasonOf(policy: SweepPolicy): string | null {
  // An own-policy cell runs each scenario's own policy, which the scenario's own load already checked.
  if (policy.thresholdRatio === undefined || policy.retainRatio === undefined || policy.contextWindow === undefined) return null
  try {
    const spec = resolveCompactionConfig({ thresholdRatio: policy.thresholdRatio, retainRatio: policy.retainRatio })
    resolveCompactSpec(resolveTargetPolicy(spec, { provider: 'sweep', model: 'sweep' }), policy.contextWindow)
    return null
  } catch (err) {
    if (err instanceof CompactionConfigError) return err.message
    if (err instanceof TargetPressureConfigError) return `${err.message} (§3.3)`
    throw err
  }
}
