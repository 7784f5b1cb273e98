/**
 * The scenario `sim import` writes: a header comment (source, redaction counts, every dropped item), a
 * provider and policy to replay under, the imported transcript inline, and `expect: {invariants: all}`.
 * A transcript too large for the scenario size limit goes to a sidecar JSONL transcript file
 * (`<scenario>.transcript.jsonl`, the `transcript: {file}` format) beside the scenario.
 */
import type { Transcript } from '@compaction-sim/fixtures'
import { stringify } from 'yaml'
import { SCENARIO_BYTES_MAX } from '../scenario/load.ts'
import type { Dropped, ImportFormat, RedactionCounts } from './index.ts'

/** What the scenario is written from. */
export interface ImportedScenarioInput {
  readonly format: ImportFormat
  /** The session file as named on the command line (shown in the header). */
  readonly source: string
  readonly name: string
  readonly transcript: Transcript
  readonly dropped: readonly Dropped[]
  readonly redacted: RedactionCounts
  readonly keepSecrets: boolean
  readonly wire: 'openai' | 'anthropic'
  readonly contextWindow: number
  /** File name (no folder) of the sidecar transcript, used when the inline form would be too large; null = always inline. */
  readonly sidecar: string | null
}

/** The written scenario, and the sidecar transcript's text when one is needed. */
export interface ImportedScenario {
  readonly yaml: string
  readonly sidecarText: string | null
}

/** Bytes kept free below the scenario size limit for the header comment and the other keys. */
const INLINE_MARGIN_BYTES = 64 * 1024

/** Grouped dropped entries as lines `where[, where …] (n): what — why`, at most `limit` places each. */
export function droppedLines(dropped: readonly Dropped[], limit = 5): string[] {
  const groups = new Map<string, { what: string; why: string; places: string[] }>()
  for (const d of dropped) {
    const key = `${d.what}\u0000${d.why}`
    const group = groups.get(key) ?? { what: d.what, why: d.why, places: [] }
    group.places.push(d.where)
    groups.set(key, group)
  }
  return [...groups.values()].map((g) => {
    const shown = g.places.slice(0, limit).join(', ')
    const more = g.places.length > limit ? `, … (${g.places.length} in all)` : ''
    return oneLine(`${shown}${more}: ${g.what} — ${g.why}`)
  })
}

/** One line of redaction counts, e.g. `2 openai-key, 1 email`; `none` when nothing was redacted. */
export function redactionLine(counts: RedactionCounts): string {
  const parts = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)).map(([kind, n]) => `${n} ${kind}`)
  return parts.length === 0 ? 'none' : parts.join(', ')
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ')
}

/** Builds the scenario text (and sidecar) for an import. */
export function importedScenario(input: ImportedScenarioInput): ImportedScenario {
  const header = [
    `Imported by \`sim import ${input.format} ${oneLine(input.source)}\`.`,
    input.keepSecrets ? 'Secrets: kept (--keep-secrets).' : `Secrets redacted: ${redactionLine(input.redacted)}.`,
    `Turns: ${input.transcript.turns.length}.`,
    input.dropped.length === 0 ? 'Dropped: nothing.' : `Dropped (${input.dropped.length}):`,
    ...droppedLines(input.dropped).map((line) => `  ${line}`),
  ].map((line) => (line === '' ? '#' : `# ${line}`)).join('\n')
  const base = {
    name: input.name,
    description: `Imported ${input.format} session (${input.transcript.turns.length} turns).`,
    seed: 1,
    provider: { wire: input.wire, model: 'mock-imported', contextWindow: input.contextWindow },
    policy: { thresholdRatio: 0.8 },
  }
  const expect = { expect: { invariants: 'all' } }
  // The JSON text is a cheap lower bound of the YAML size: a transcript already too large skips the YAML.
  const fits = (text: string): boolean => Buffer.byteLength(header) + Buffer.byteLength(text) <= SCENARIO_BYTES_MAX - INLINE_MARGIN_BYTES
  if (input.sidecar === null || fits(JSON.stringify(input.transcript))) {
    const inline = stringify({ ...base, transcript: { inline: input.transcript }, ...expect }, { lineWidth: 0 })
    if (input.sidecar === null || fits(inline)) return { yaml: `${header}\n${inline}`, sidecarText: null }
  }
  const { turns, ...head } = input.transcript
  const sidecarText = [JSON.stringify(head), ...turns.map((turn) => JSON.stringify(turn))].join('\n') + '\n'
  const yaml = stringify({ ...base, transcript: { file: input.sidecar }, ...expect }, { lineWidth: 0 })
  return { yaml: `${header}\n${yaml}`, sidecarText }
}
