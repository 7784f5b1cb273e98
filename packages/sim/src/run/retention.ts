/**
 * The deterministic retention scorer (issue #20). A probe (`scenario/resolve-probes.ts`) is a set of expected
 * strings or regular expressions; it is *visible* on a text when every one of them matches it (`exact`: the text
 * as is; `normalized`: both sides through `normalizeProbeText`).
 *
 * Planting: folding the log in order, a probe is planted at the first message event (user, assistant, tool
 * result, system; never a checkpoint) by which each of its expected strings has matched some message — the
 * scorer finds where the transcript states a fact, whatever the source (generated, imported, inline). A probe
 * never planted is listed in `unplanted` and not scored.
 *
 * Cycles: for each `compaction/summary` event (a committed bracket, §1.4.15), right after the checkpoint node
 * that follows it replaced its span (or at the bracket's `compaction/end`), the surface is derived as the model
 * would see it (`EventLog.deriveMessages`: the checkpoint text plus the retained tail) and every probe
 * planted before that event is checked against the surface's text. Per kind, the cycle's share is visible ÷
 * planted. Of the planted probes, those whose stating event is no longer on the surface (a checkpoint, or a
 * prune, shadowed it) are *compacted*: only a summary can still show them, so `kept` ÷ `compacted` is what the
 * summaries kept, free of what the retained tail shows anyway. A probe invisible at cycle k and at every later
 * cycle is lost at k (`lost`), whether or not it was visible before. Pure: the same events and probes give the
 * same section.
 */
import { EventLog, deriveEventMessage, type ContentBlock, type Dialect, type LogEvent, type Message } from '@compaction-sim/core'
import { PROBE_KINDS } from '@compaction-sim/fixtures'
import type { RetentionCount, RetentionCycle, RetentionKind, RetentionLoss, ScenarioRetention } from '../report/types.ts'
import type { ResolvedProbe } from '../scenario/resolve-probes.ts'
import type { ResolvedStringMatcher } from '../scenario/string-matcher.ts'

/** `text` NFKC-normalized, lower-cased, every run of characters that are neither letters nor digits one space, trimmed. */
export function normalizeProbeText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim()
}

/** The text of content blocks a probe is matched against: text, reasoning, tool-call names and arguments, results. */
export function blocksText(blocks: readonly ContentBlock[]): string {
  const out: string[] = []
  const walk = (list: readonly ContentBlock[]): void => {
    for (const b of list) {
      if (b.type === 'text' || b.type === 'reasoning') out.push(String(b['text']))
      else if (b.type === 'tool-call') out.push(`${String(b['name'])} ${String(b['arguments'])}`)
      else if (b.type === 'tool-result') walk(b['content'] as ContentBlock[])
    }
  }
  walk(blocks)
  return out.join('\n')
}

/** The text of messages, one after the other. */
export function messagesText(messages: readonly Pick<Message, 'content'>[]): string {
  return messages.map((m) => blocksText(m.content)).join('\n')
}

/** A text prepared for matching: its raw form and (computed once, on demand) its normalized form. */
class Haystack {
  private normal: string | undefined
  constructor(readonly raw: string) {}
  get normalized(): string {
    this.normal ??= ` ${normalizeProbeText(this.raw)} `
    return this.normal
  }
}

const regexes = new Map<string, RegExp>()
function regexOf(source: string, flags: string): RegExp {
  const key = `${flags}/${source}`
  let re = regexes.get(key)
  if (re === undefined) {
    if (regexes.size >= 1024) regexes.clear()
    re = new RegExp(source, flags)
    regexes.set(key, re)
  }
  return re
}

/** True when `matcher` matches `text` under the probe's tolerance (module doc). */
export function matcherMatches(matcher: ResolvedStringMatcher, match: ResolvedProbe['match'], text: Haystack | string): boolean {
  const hay = typeof text === 'string' ? new Haystack(text) : text
  if (matcher.kind === 'matches') return regexOf(matcher.source, matcher.flags).test(match === 'exact' ? hay.raw : hay.normalized)
  if (match === 'exact') return hay.raw.includes(matcher.text)
  const needle = normalizeProbeText(matcher.text)
  return needle === '' ? true : hay.normalized.includes(` ${needle} `)
}

/** True when every expected string of `probe` matches `text`. */
export function probeVisible(probe: ResolvedProbe, text: Haystack | string): boolean {
  const hay = typeof text === 'string' ? new Haystack(text) : text
  return probe.expect.every((m) => matcherMatches(m, probe.match, hay))
}

/** True for an event that replaces a span of the surface (a checkpoint, §1.5). */
function isReplacement(event: LogEvent): boolean {
  const op = (event as { surfaceOp?: unknown }).surfaceOp
  return typeof op === 'object' && op !== null && (op as { op?: unknown }).op === 'replace'
}

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000

/**
 * The `retention` section of a run over `events` (module doc); undefined when there are no probes, so a scenario
 * without probes gets no section at all.
 */
export function retentionOf(events: readonly LogEvent[], probes: readonly ResolvedProbe[], dialect: Dialect): ScenarioRetention | undefined {
  if (probes.length === 0) return undefined
  const plantedAt = new Map<string, number>()
  const matched = probes.map((p) => p.expect.map(() => false))
  const log = new EventLog({ dialect })
  const cycles: Array<{ seq: number; turn: number; visible: Set<string>; onSurface: Set<number> }> = []
  let turn = 0
  let committed: number | null = null
  for (const event of events) {
    log.accept(event)
    if (event.type === 'turn/start') turn++
    if (event.type === 'compaction/summary') {
      committed = event.seq
      continue
    }
    if (committed !== null && (isReplacement(event) || event.type === 'compaction/end')) {
      // The checkpoint node (the replacement after the summary) is on the surface now: score it.
      const surface = new Haystack(messagesText(log.deriveMessages()))
      const visible = new Set<string>()
      for (const p of probes) if (plantedAt.has(p.id) && probeVisible(p, surface)) visible.add(p.id)
      cycles.push({ seq: committed, turn, visible, onSurface: new Set(log.nodes) })
      committed = null
      continue
    }
    if (plantedAt.size === probes.length) continue
    const message = deriveEventMessage(event)
    if (message === null) continue
    const hay = new Haystack(blocksText(message.content))
    probes.forEach((p, i) => {
      if (plantedAt.has(p.id)) return
      const seen = matched[i] ?? []
      p.expect.forEach((m, k) => {
        if (seen[k] !== true && matcherMatches(m, p.match, hay)) seen[k] = true
      })
      if (seen.every(Boolean)) plantedAt.set(p.id, event.seq)
    })
  }
  const countAt = (c: (typeof cycles)[number], kind: RetentionKind): RetentionCount => {
    let planted = 0
    let visible = 0
    let compacted = 0
    let kept = 0
    for (const p of probes) {
      if (p.kind !== kind) continue
      const at = plantedAt.get(p.id)
      if (at === undefined || at >= c.seq) continue
      planted++
      const seen = c.visible.has(p.id)
      if (seen) visible++
      if (c.onSurface.has(at)) continue
      compacted++
      if (seen) kept++
    }
    return {
      planted, visible, share: planted === 0 ? null : round4(visible / planted),
      compacted, kept, keptShare: compacted === 0 ? null : round4(kept / compacted),
    }
  }
  const points: RetentionCycle[] = cycles.map((c, i) => ({
    cycle: i + 1, seq: c.seq, turn: c.turn,
    recall: countAt(c, 'recall'), artifact: countAt(c, 'artifact'), continuation: countAt(c, 'continuation'), decision: countAt(c, 'decision'),
  }))
  const lost: RetentionLoss[] = []
  for (const p of probes) {
    const at = plantedAt.get(p.id)
    if (at === undefined) continue
    let lostAt: number | null = null
    for (let k = cycles.length - 1; k >= 0; k--) {
      const c = cycles[k]
      if (c === undefined || c.seq <= at || c.visible.has(p.id)) break
      lostAt = k + 1
    }
    if (lostAt !== null) lost.push({ id: p.id, kind: p.kind, cycle: lostAt, plantedSeq: at })
  }
  lost.sort((a, b) => a.cycle - b.cycle || a.plantedSeq - b.plantedSeq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return {
    probes: probes.length,
    cycles: cycles.length,
    kinds: PROBE_KINDS.map((kind) => {
      const curve = points.map((pt) => pt[kind].share)
      return {
        kind,
        probes: probes.filter((p) => p.kind === kind).length,
        planted: probes.filter((p) => p.kind === kind && plantedAt.has(p.id)).length,
        curve,
        keptCurve: points.map((pt) => pt[kind].keptShare),
        final: curve.at(-1) ?? null,
        lost: lost.filter((l) => l.kind === kind).length,
      }
    }),
    points,
    lost,
    unplanted: probes.filter((p) => !plantedAt.has(p.id)).map((p) => p.id),
  }
}
