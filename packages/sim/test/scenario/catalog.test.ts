/**
 * The scenario catalog (`scenarios/`, issue 6): every file loads and resolves, the catalog is big enough,
 * names are unique and equal their file stems, and every fault id of §13.1 (FAULT-01…17), §13.2
 * (FAULT-20…33), §13.3 (FAULT-40…46), §13.4 (FAULT-50…57), §13.5 (FAULT-60…66), §13.6 (FAULT-70…79) and §13.7
 * (FAULT-80…84) — every id of §13 — is exercised, and no fault of a catalog scenario is refused by the runner
 * (`checkFaultsSimulable`, issue #16).
 *
 * Coverage rule: an id counts as covered when some scenario lists it as a fault `kind`. Ids whose condition
 * is created by the transcript or policy rather than injected (FAULT-33: pressure still high after a
 * successful bracket; FAULT-08: `maxOverflowRetries: 0`) still list their kind — the runner treats such
 * kinds as labels — so coverage needs no side channel. The file name is a second, checked marker: a file of
 * `faults/` or `crash/` is named `fault-NN-<slug>.yaml` and must list FAULT-NN among its kinds, and its header
 * comment must cite that id and a protocol section.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { checkFaultsSimulable, realise } from '../../src/run/world.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { faultTargetOf, resolveScenario, type ResolvedScenario } from '../../src/scenario/resolve.ts'
import { resolveSessions } from '../../src/scenario/resolve-sessions.ts'
import { FAULT_KINDS, type FaultKind } from '../../src/scenario/types.ts'

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))
const CATALOG = join(ROOT, 'scenarios')
const FOLDERS = ['smoke', 'policy', 'faults', 'crash', 'differential', 'cache', 'sweep', 'world', 'sessions', 'restart', 'retention', 'hardened', 'hardened-pairs'] as const
const SCHEMA_LINE = '# yaml-language-server: $schema=../../packages/sim/schema/scenario.schema.json'
const FILES_MIN = 40
const FAULT_FILE = /^fault-(\d{2})-[a-z0-9]+(?:-[a-z0-9]+)*\.yaml$/

/** Every FAULT id of §13 (§13.1–§13.7): each needs a catalog scenario. */
const REQUIRED: readonly FaultKind[] = FAULT_KINDS

interface Entry {
  /** Path relative to the repository root, `/`-separated (as `sim run` names it). */
  file: string
  folder: string
  stem: string
  text: string
  scenario: ResolvedScenario
  /** The scenario as each of its sessions runs it (`sessions:`, issue #16); just `scenario` without the key. */
  sessions: ResolvedScenario[]
}

/** Every `.yaml` file below `scenarios/`, sorted, as repository-relative paths. */
function catalogFiles(): string[] {
  return readdirSync(CATALOG, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.yaml') || name.endsWith('.yml'))
    .map((name) => relative(ROOT, join(CATALOG, name)).split(sep).join('/'))
    .sort()
}

/** The leading comment block of a scenario file (the lines before the first non-comment line). */
function headerComment(text: string): string {
  const lines = text.split('\n')
  const end = lines.findIndex((line) => !line.startsWith('#'))
  return lines.slice(0, end < 0 ? lines.length : end).join('\n')
}

const entries: Entry[] = []

beforeAll(async () => {
  for (const file of catalogFiles()) {
    const path = join(ROOT, file)
    const raw = await loadScenario(path)
    entries.push({
      file,
      folder: file.split('/')[1] ?? '',
      stem: basename(file).replace(/\.ya?ml$/, ''),
      text: readFileSync(path, 'utf8'),
      scenario: resolveScenario(raw, { file }),
      sessions: raw.sessions === undefined ? [resolveScenario(raw, { file })] : resolveSessions(raw, { file }).map((s) => s.scenario),
    })
  }
})

describe('scenario catalog', () => {
  it(`holds at least ${FILES_MIN} scenarios, all in the concern folders`, () => {
    expect(entries.length).toBeGreaterThanOrEqual(FILES_MIN)
    expect(entries.filter((e) => !(FOLDERS as readonly string[]).includes(e.folder)).map((e) => e.file)).toEqual([])
    for (const folder of FOLDERS) expect(entries.some((e) => e.folder === folder), folder).toBe(true)
  })

  it('names every scenario after its file stem, uniquely', () => {
    expect(entries.filter((e) => e.scenario.name !== e.stem).map((e) => `${e.file}: ${e.scenario.name}`)).toEqual([])
    const names = entries.map((e) => e.scenario.name)
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([])
  })

  it('starts every file with the schema line, and the schema it names exists', () => {
    expect(entries.filter((e) => !e.text.startsWith(`${SCHEMA_LINE}\n`)).map((e) => e.file)).toEqual([])
    const schema = SCHEMA_LINE.slice(SCHEMA_LINE.indexOf('=') + 1)
    for (const folder of FOLDERS) expect(existsSync(resolve(CATALOG, folder, schema)), folder).toBe(true)
  })

  it('gives every scenario an expectation besides the default invariants', () => {
    const bare = entries.flatMap((e) => e.sessions.map((s) => ({ file: e.file, scenario: s }))).filter(({ scenario: { expect: x } }) => {
      const counted = Object.values(x.counts).some((range) => range !== null)
      const matched = x.perPreStep !== null || x.summarized.length > 0 || x.warnings.length > 0 || x.rejections !== null || x.requests.length > 0
      return x.outcome === null && !counted && x.events.length === 0 && x.finalPressure === null && x.finalSurfaceNodes === null && !matched
    })
    expect(bare.map((e) => e.file)).toEqual([])
  })

  it('covers every FAULT id of §13 (§13.1–§13.7) as a fault kind', () => {
    expect(REQUIRED).toHaveLength(17 + 14 + 7 + 8 + 7 + 10 + 5)
    const kinds = new Set(entries.flatMap((e) => e.scenario.faults.map((f) => f.kind)))
    expect(REQUIRED.filter((kind) => !kinds.has(kind))).toEqual([])
  })

  it('covers every FAULT id of §13.3 and §13.5 (FAULT-40…46, 60…66) with a scenario none of whose faults is refused', () => {
    const wanted = FAULT_KINDS.filter((kind) => ['config', 'append', 'flush'].includes(faultTargetOf(kind)))
    expect(wanted).toHaveLength(7 + 7)
    const runnable = entries.filter((e) => e.scenario.faults.every((f) => realise(f).kind !== 'refused'))
    const kinds = new Set(runnable.flatMap((e) => e.scenario.faults.map((f) => f.kind)))
    expect(wanted.filter((kind) => !kinds.has(kind))).toEqual([])
  })

  it('names each faults/ and crash/ file after a FAULT id it injects, cited with its § in the header', () => {
    const problems: string[] = []
    for (const e of entries.filter((x) => x.folder === 'faults' || x.folder === 'crash')) {
      const match = FAULT_FILE.exec(basename(e.file))
      if (match === null) {
        problems.push(`${e.file}: not named fault-NN-<slug>.yaml`)
        continue
      }
      const kind = `FAULT-${match[1] ?? ''}` as FaultKind
      const target = FAULT_KINDS.includes(kind) ? faultTargetOf(kind) : null
      const wanted = target !== null && (e.folder === 'crash') === (target === 'crash') // crash faults in crash/, the rest in faults/
      if (!wanted) problems.push(`${e.file}: ${kind} does not belong in ${e.folder}/`)
      if (!e.scenario.faults.some((f) => f.kind === kind)) problems.push(`${e.file}: lists no fault of kind ${kind}`)
      const header = headerComment(e.text)
      if (!header.includes(kind) || !header.includes('§')) problems.push(`${e.file}: the header comment does not cite ${kind} and its §`)
    }
    expect(problems).toEqual([])
  })

  it('cites a protocol section in the header of every policy scenario', () => {
    const policy = entries.filter((e) => e.folder === 'policy')
    expect(policy.length).toBeGreaterThanOrEqual(5)
    expect(policy.filter((e) => !headerComment(e.text).includes('§')).map((e) => e.file)).toEqual([])
  })

  it('resolves every crash scenario with a crash point', () => {
    const crash = entries.filter((e) => e.folder === 'crash')
    const pointless = crash.filter((e) => !e.scenario.faults.some((f) => f.target === 'crash' && f.when.afterEvent !== null))
    expect(crash.length).toBeGreaterThanOrEqual(8)
    expect(pointless.map((e) => e.file)).toEqual([])
  })

  it('refuses no fault of any catalog scenario (§13.6/§13.7 run through concurrent:)', () => {
    const refused = entries.flatMap((e) => {
      try {
        checkFaultsSimulable(e.scenario)
        return []
      } catch (err) {
        return [`${e.file}: ${err instanceof Error ? err.message : String(err)}`]
      }
    })
    expect(refused).toEqual([])
  })
})
