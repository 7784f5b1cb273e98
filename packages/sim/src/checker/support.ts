/**
 * Small pure helpers shared by the invariant families: recognising checkpoints and their bracket summary,
 * comparing seq lists, rendering seqs for messages, and reading the manifest's fault declarations (§13).
 */
import { hardeningOf, type ContentBlock, type FaultSpec, type HardeningRule, type LogEvent, type MessageSource, type SessionEvent } from '@compaction-sim/core'
import { resumesWithoutEndSeed, type CheckerModel } from './model.ts'
import type { Applicability, FoldItem, RunContext, RunInputs } from './types.ts'

/** True for a compact checkpoint source (§1.6 `isCompactCheckpointSource`). */
export function isCheckpointSource(source: MessageSource | undefined): boolean {
  return source !== undefined && source.kind === 'plugin' && sourceField(source, 'plugin') === 'compact'
}

/** True when `e` is a `user/message` whose source is a compact checkpoint (§1.6). */
export function isCheckpointEvent(e: LogEvent): e is SessionEvent<'user/message'> {
  return e.type === 'user/message' && isCheckpointSource((e as SessionEvent<'user/message'>).data.source)
}

/**
 * The summary a checkpoint lands for (§7.7): when `e` is a `user/message` replacement and the line right
 * before it is a folded `compaction/summary`, that summary; else null. Correlation (ids, spans) is INV-14's job.
 */
export function summaryBefore(e: LogEvent, m: CheckerModel): SessionEvent<'compaction/summary'> | null {
  if (e.type !== 'user/message' || !('surfaceOp' in e) || typeof e.surfaceOp !== 'object') return null
  const prev = m.prevItem
  if (prev === null || prev.duplicate || prev.event === null || prev.event.type !== 'compaction/summary') return null
  if (prev.event.seq !== e.seq - 1) return null
  return prev.event as SessionEvent<'compaction/summary'>
}

/** True when two seq lists are equal element by element. */
export function sameSeqs(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** `[3, 10, 15]` rendered for messages, cut after `max` entries. */
export function seqList(seqs: readonly number[], max = 12): string {
  const shown = seqs.slice(0, max).join(', ')
  return seqs.length > max ? `[${shown}, … ${seqs.length - max} more]` : `[${shown}]`
}

/** `#n` for messages. */
export function at(seq: number): string {
  return `#${seq}`
}

/** True when the manifest declares a fault of one of `kinds` (e.g. `FAULT-63`) or one matching `match`. */
export function hasFault(inputs: RunInputs, kinds: readonly string[], match?: (f: FaultSpec) => boolean): boolean {
  return inputs.faults.some((f) => kinds.includes(f.kind) || (match !== undefined && match(f)))
}

/** A field of a message source (checkpoint sources carry `compactionId` and `sourceCommandId`, §1.6). */
export function sourceField(source: MessageSource, key: string): unknown {
  return (source as Record<string, unknown>)[key]
}

/** The `text` of a text or reasoning block, else undefined. */
export function blockText(block: ContentBlock | undefined): string | undefined {
  if (block === undefined || (block.type !== 'text' && block.type !== 'reasoning')) return undefined
  const text: unknown = (block as Record<string, unknown>)['text']
  return typeof text === 'string' ? text : undefined
}

/** True when a text has a non-whitespace character. */
export function hasNonWhitespace(text: string): boolean {
  return /\S/.test(text)
}

/**
 * The cause to name when a violation is a consequence of a restore that appended no `session/end-seed`
 * (§11.4): without it no new lifecycle began, so an orphan bracket stays live and the next header is no
 * `resume`. Empty when the log shows no such restore before (or at) `item`.
 */
export function missingEndSeedNote(item: FoldItem, m: CheckerModel): string {
  const s = m.unsealedRestore ?? (resumesWithoutEndSeed(item, m) ? item.seq : null)
  return s === null ? '' : `; a restore resumed the log at ${at(s)} without appending session/end-seed (§11.4), so no new lifecycle began`
}

/**
 * The applicability of a hardened check (issue #19): it applies only when the run's manifest turns `rule` on;
 * otherwise it is not applicable, and `faithful` names what the protocol does instead (e.g. `faithful §8.2 cap`).
 */
export function hardenedRuleOn(rule: HardeningRule, faithful: string): (ctx: RunContext) => Applicability {
  return (ctx) => hardeningOf(ctx.inputs.policy)[rule] !== null
    ? { kind: 'applies' }
    : { kind: 'not-applicable', reason: `hardening.${rule} is off for this run (${faithful})` }
}
