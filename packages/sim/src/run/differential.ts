/**
 * The differential of `sim run --subject reference,dsh` (issue #7): per scenario run under two subjects, what
 * each log did — brackets (count, outcome), shadowed spans compared by message content, prunes, offloads,
 * retries, final surface shape and final pressure — after normalizing the dialect differences of §14. Every
 * remaining difference is `explained` by a named §14 rule (D-nn, or a §14.1 area) or `unexplained`; an
 * unexplained one fails the run. Pure over the two event lists (`compareLogs`); `differentialOf` reads the logs
 * the runner wrote.
 */
import { join } from 'node:path'
import { EventLog, PRUNE_MARKER, TokenMeter, isCompactCheckpointSource, readLog, type ContentBlock, type Dialect, type LogEvent } from '@compaction-sim/core'
import { plural } from '../plural.ts'
import type {
  DifferentialAspect, DifferentialDifference, DifferentialReport, DifferentialScenario, ScenarioReport,
} from '../report/types.ts'

/** What one log did, in the dialect-neutral terms the differential compares. */
export interface LogFacts {
  /** `ok` or `failed` per bracket, in order. */
  brackets: string[]
  /** Per committed bracket: the shadowed messages as `role:content` keys (checkpoints as `checkpoint`). */
  shadowed: string[][]
  /** Per committed bracket: the summary blocks (JSON), which the checkpoint frames (§8.5). */
  summaries: string[]
  /** Tool call ids whose results were pruned, in order. */
  prunes: string[]
  offloads: number
  retries: number
  /** `compaction/summary-error` records (seed only, §14 D-07). */
  summaryErrors: number
  /** Final surface, one kind per node: system, user, assistant, tool, checkpoint. */
  surface: string[]
  /** Final pressure in tokens (the subject's own meter dialect). */
  tokens: number | null
}

/** One side of a comparison: events, dialect and the final pressure the runner measured. */
export interface LogSide {
  subject: string
  events: readonly LogEvent[]
  dialect: Dialect
  tokens: number | null
}

interface MessageLike { role?: string; content?: ContentBlock[]; source?: { kind?: string; callId?: string } }

/** The message an event carries: `data` itself in the seed dialect, `data.message` in rc.8. */
function messageOf(event: LogEvent | undefined): MessageLike | null {
  if (event === undefined) return null
  const data = event.data as MessageLike & { message?: MessageLike }
  if (data.message !== undefined) return data.message
  return data.content === undefined ? null : data
}

/** A message's dialect-neutral kind: checkpoint (§8.5 source), system, tool, user or assistant. */
function kindOf(event: LogEvent | undefined): string {
  if (event === undefined) return 'missing'
  if (event.type === 'system/message') return 'system'
  if (event.type === 'tool/result') return 'tool'
  const message = messageOf(event)
  if (message?.source !== undefined && isCompactCheckpointSource(message.source as never)) return 'checkpoint'
  return message?.role ?? event.type
}

/** The prune marker of the rc.8 engine (§14.1 "Pruning": a fixed 39-code-point string of the §5.1 shape). */
export const RC8_PRUNE_MARKER = '\n\n[... tool result middle pruned ...]\n\n'

/** Both dialects' prune markers as they appear inside JSON text. */
const JSON_MARKERS = [PRUNE_MARKER, RC8_PRUNE_MARKER].map((m) => JSON.stringify(m).slice(1, -1))

/** JSON `text` with either dialect's prune marker replaced by one neutral token (§14.1 "Pruning"). */
function neutralMarker(json: string): string {
  return JSON_MARKERS.reduce((text, marker) => text.replaceAll(marker, '<pruned>'), json)
}

/** True when the message text holds either dialect's prune marker (a pruned tool result, §5.3). */
function isPruned(event: LogEvent | undefined): boolean {
  const json = JSON.stringify(messageOf(event)?.content ?? [])
  return JSON_MARKERS.some((marker) => json.includes(marker))
}

/**
 * `kind:content` of a shadowed message. A checkpoint's framing differs by dialect (§14.1 "Checkpoint framing"), so
 * only its kind counts; prune markers are neutralised (§14.1 "Pruning").
 */
function contentKey(event: LogEvent | undefined): string {
  const kind = kindOf(event)
  if (kind === 'checkpoint' || kind === 'missing') return kind
  const content = messageOf(event)?.content ?? []
  return `${kind}:${neutralMarker(JSON.stringify(content))}`
}

/** The facts of one log (module doc). */
export function factsOf(side: LogSide): LogFacts {
  const { events } = side
  const facts: LogFacts = { brackets: [], shadowed: [], summaries: [], prunes: [], offloads: 0, retries: 0, summaryErrors: 0, surface: [], tokens: side.tokens }
  for (const event of events) {
    const data = event.data as Record<string, unknown>
    switch (event.type) {
      case 'compaction/end': facts.brackets.push(data['error'] === undefined ? 'ok' : 'failed'); break
      case 'compaction/summary': {
        const seqs = (data['shadowedSeqs'] as number[] | undefined) ?? []
        facts.shadowed.push(seqs.map((s) => contentKey(events[s])))
        facts.summaries.push(JSON.stringify(data['summary'] ?? null))
        break
      }
      case 'compaction/prune': {
        const seqs = (data['shadowedSeqs'] as number[] | undefined) ?? []
        for (const s of seqs) facts.prunes.push(messageOf(events[s])?.source?.callId ?? `seq ${s}`)
        break
      }
      case 'image/offload': facts.offloads++; break
      case 'llm/retry': facts.retries++; break
      case 'compaction/summary-error': facts.summaryErrors++; break
      default: break
    }
  }
  const log = EventLog.fromEvents(events, { dialect: side.dialect })
  facts.surface = log.state.surface.nodes.map((seq) => kindOf(events[seq]))
  return facts
}

const show = (v: unknown): string => JSON.stringify(v)

/**
 * Compares the base log (the seed dialect, normally the reference) with another subject's log. Normalizations:
 * system messages leave the base surface (D-02: upstream carries the prompt in the header) — one explained
 * difference; a pressure gap is explained by D-03 when it equals 4 tokens per system message on the base surface
 * (plus the §14.1 checkpoint-framing price gap, computed from the two logs' own checkpoint messages).
 */
export function compareLogs(base: LogSide, other: LogSide): DifferentialDifference[] {
  const a = factsOf(base)
  const b = factsOf(other)
  const diffs: DifferentialDifference[] = []
  const add = (aspect: DifferentialAspect, rule: string | null, note: string, x: unknown, y: unknown): void => {
    diffs.push({
      aspect, base: show(x), other: show(y), verdict: rule === null ? 'unexplained' : 'explained', ...(rule === null ? {} : { rule }), note,
    })
  }
  if (show(a.brackets) !== show(b.brackets)) {
    const edge = thresholdEdge(base, other)
    if (edge === null) add('brackets', null, 'bracket count or outcomes differ', a.brackets, b.brackets)
    else {
      // Everything after a decision that the framing gap alone tipped is its consequence (the logs diverge there).
      add('brackets', edge.rule, edge.note, a.brackets, b.brackets)
      return [...diffs, ...cascade(base, other, edge.rule)]
    }
  }
  if (a.summaryErrors !== b.summaryErrors) {
    const rule = b.summaryErrors === 0 && other.dialect !== 'seed' ? 'D-07' : null
    add('brackets', rule, 'failed summary attempts: the seed logs compaction/summary-error, rc.8 only compaction/end.error (§14 D-07)',
      a.summaryErrors, b.summaryErrors)
  }
  const spans = Math.max(a.shadowed.length, b.shadowed.length)
  for (let i = 0; i < spans; i++) {
    const x = (a.shadowed[i] ?? []).filter((k) => !k.startsWith('system:'))
    const y = b.shadowed[i] ?? []
    if (show(x) !== show(y)) {
      add('shadowed', null, `bracket ${i + 1}: shadowed messages differ by content`, x.map(abbrev), y.map(abbrev))
    }
  }
  for (let i = 0; i < Math.max(a.summaries.length, b.summaries.length); i++) {
    if (a.summaries[i] === b.summaries[i]) continue
    // The mock sizes a summary to a share of its region's price: a region holding a checkpoint prices differently
    // under the two framings (§14.1 "Checkpoint framing"), so its summary may keep more or fewer bullets.
    const framed = (a.shadowed[i] ?? []).includes('checkpoint') && (b.shadowed[i] ?? []).includes('checkpoint')
    const note = framed
      ? `bracket ${i + 1}: summary texts differ; the region holds a checkpoint, priced by each dialect's framing`
      : `bracket ${i + 1}: summary texts differ`
    add('summaries', framed ? '§14.1 checkpoint framing' : null, note, abbrev(a.summaries[i] ?? ''), abbrev(b.summaries[i] ?? ''))
  }
  if (show(a.prunes) !== show(b.prunes)) add('prunes', null, 'pruned tool results differ', a.prunes, b.prunes)
  if (a.offloads !== b.offloads) {
    add('offloads', b.offloads === 0 ? 'D-06' : null, 'upstream has no durable image/offload (§14 D-06)', a.offloads, b.offloads)
  }
  if (a.retries !== b.retries) add('retries', null, 'llm/retry counts differ', a.retries, b.retries)
  const systemNodes = a.surface.filter((k) => k === 'system').length
  const aShape = a.surface.filter((k) => k !== 'system')
  if (show(aShape) !== show(b.surface)) add('surface', null, 'final surface shapes differ (system messages set aside, D-02)', aShape, b.surface)
  else if (systemNodes > 0 && !b.surface.includes('system')) {
    add('surface', 'D-02', `the base surface holds ${plural(systemNodes, 'system message')}; upstream carries the prompt in request/header`, a.surface, b.surface)
  }
  if (a.tokens !== null && b.tokens !== null && a.tokens !== b.tokens) {
    const framing = framedTokens(base, 'checkpoint') - framedTokens(other, 'checkpoint')
    const marker = framedTokens(base, 'pruned') - framedTokens(other, 'pruned')
    // D-03 is a difference of the fixed-rule estimate; under a usage anchor on both sides the provider's usage counts
    // the same wire system message, so only the estimated part (the checkpoint text since the anchor) differs.
    const [baseLine, otherLine] = [baselineOf(base), baselineOf(other)]
    const anchored = baseLine.kind === 'usage' && otherLine.kind === 'usage'
    const d03 = anchored ? 0 : 4 * systemNodes
    // Under two usage anchors, total = usage + (surface − the anchor's surface) (§2.5). The usage figures are the
    // provider's own counts of requests that carried the framed texts — on a route whose tokenizer is not §2.2's the
    // same texts cost the provider a different gap than the meter's — and the surface part holds the framed texts
    // again, in meter units, exactly when they arrived after the anchor's `S` (the surface at its step/start, e.g. an
    // overflow recovery inside the step). So the gap is the usage gap plus 0 or the meter's framing gap, and only
    // when some framed text differs at all.
    const usageGap = anchored ? baseLine.tokens - otherLine.tokens : 0
    const framed = framing !== 0 || marker !== 0
    const rules = [
      ...(d03 === 0 ? [] : ['D-03']), ...(framing === 0 ? [] : ['§14.1 checkpoint framing']), ...(marker === 0 ? [] : ['§14.1 pruning marker']),
    ]
    const gap = a.tokens - b.tokens
    const fits = anchored && usageGap !== 0
      ? framed && (gap === usageGap || gap === usageGap + framing + marker)
      : gap === d03 + framing + marker
    const rule = fits && rules.length > 0 ? rules.join(' + ') : null
    const note = `gap ${a.tokens - b.tokens} tokens; D-03 predicts ${d03} (4 per system message${anchored ? '; both usage-anchored: 0' : ''}), `
      + `checkpoint framing ${framing}, prune marker ${marker}`
      + (anchored && usageGap !== 0 ? `, usage anchors ${usageGap} (the provider's count of the framed texts${framed ? '' : ', but no framed text differs'})` : '')
    add('pressure', rule, note, a.tokens, b.tokens)
  }
  return diffs
}

/** The dialect-framing gap predicted between two logs' meters (D-03, checkpoint framing, prune marker). */
function predictedGap(base: LogSide, other: LogSide): { tokens: number; rules: string[]; note: string } {
  const systemNodes = EventLog.fromEvents(base.events, { dialect: base.dialect }).state.surface.nodes
    .filter((seq) => kindOf(base.events[seq]) === 'system').length
  const anchored = baselineOf(base).kind === 'usage' && baselineOf(other).kind === 'usage'
  const d03 = anchored ? 0 : 4 * systemNodes
  const framing = framedTokens(base, 'checkpoint') - framedTokens(other, 'checkpoint')
  const marker = framedTokens(base, 'pruned') - framedTokens(other, 'pruned')
  const rules = [
    ...(d03 === 0 ? [] : ['D-03']), ...(framing === 0 ? [] : ['§14.1 checkpoint framing']), ...(marker === 0 ? [] : ['§14.1 pruning marker']),
  ]
  return { tokens: d03 + framing + marker, rules, note: `D-03 ${d03}, checkpoint framing ${framing}, prune marker ${marker}` }
}

/**
 * When the bracket sequences diverge because one side's pre-step check opened a bracket the other's did not, and at
 * that check both surfaces are equal but for the dialect framing (same shape, same non-framed messages) and the two
 * meters differ by exactly the predicted framing gap, the decision was tipped by that gap at the threshold: the
 * divergence is explained by the framing rule(s). Otherwise null.
 */
function thresholdEdge(base: LogSide, other: LogSide): { rule: string; note: string } | null {
  const starts = (side: LogSide): Array<{ seq: number; step: string }> => {
    let step = ''
    const out: Array<{ seq: number; step: string }> = []
    for (const e of side.events) {
      const d = e.data as { turn?: number; step?: number }
      if (e.type === 'step/start') step = `${d.turn ?? '?'}/${d.step ?? '?'}`
      if (e.type === 'compaction/start') out.push({ seq: e.seq, step })
    }
    return out
  }
  const x = starts(base)
  const y = starts(other)
  let i = 0
  while (i < x.length && i < y.length && x[i]?.step === y[i]?.step) i++
  const [extra, side, peer] = (x[i]?.step ?? '~') < (y[i]?.step ?? '~') || y[i] === undefined
    ? [x[i], base, other] : [y[i], other, base]
  if (extra === undefined) return null
  // The peer's matching point: its last event before the step/start that follows the same step on its side.
  const stepSeqOf = (s: LogSide, step: string): number => {
    const hit = [...s.events].reverse().find((e) => {
      const d = e.data as { turn?: number; step?: number }
      return e.type === 'step/start' && `${d.turn ?? '?'}/${d.step ?? '?'}` === step
    })
    return hit?.seq ?? -1
  }
  const at = stepSeqOf(side, extra.step)
  const peerAt = stepSeqOf(peer, extra.step)
  if (at < 0 || peerAt < 0) return null
  // The extra bracket opened before the NEXT step/start of its side: compare both sides just before that step.
  const nextStep = (s: LogSide, from: number): number => s.events.find((e) => e.seq > from && e.type === 'step/start')?.seq ?? s.events.length
  const cutSide = Math.min(extra.seq, nextStep(side, at))
  const cutPeer = nextStep(peer, peerAt)
  const prefix = (s: LogSide, n: number): LogSide => ({ ...s, events: s.events.slice(0, n), tokens: null })
  const [pb, po] = side === base ? [prefix(base, cutSide), prefix(other, cutPeer)] : [prefix(base, cutPeer), prefix(other, cutSide)]
  const fa = factsOf(pb)
  const fb = factsOf(po)
  const shape = (f: LogFacts): string => show(f.surface.filter((k) => k !== 'system'))
  if (shape(fa) !== shape(fb) || show(fa.brackets) !== show(fb.brackets)) return null
  const meter = (s: LogSide): number => new TokenMeter({ events: s.events }, { dialect: s.dialect }).measure().totalTokens
  const gap = meter(pb) - meter(po)
  const predicted = predictedGap(pb, po)
  if (gap === 0 || gap !== predicted.tokens || predicted.rules.length === 0) return null
  const rule = predicted.rules.join(' + ')
  return {
    rule,
    note: `threshold edge: after step ${extra.step} only ${side.subject} opened a bracket; the surfaces there differ only by framing `
      + `and the meters by ${gap} tokens = the predicted gap (${predicted.note}); later differences follow from this one`,
  }
}

/** After an explained threshold-edge divergence: every remaining aspect that differs, each explained as its consequence. */
function cascade(base: LogSide, other: LogSide, rule: string): DifferentialDifference[] {
  const a = factsOf(base)
  const b = factsOf(other)
  const out: DifferentialDifference[] = []
  const pairs: Array<[DifferentialAspect, unknown, unknown]> = [
    ['shadowed', a.shadowed.map((s) => s.filter((k) => !k.startsWith('system:')).length), b.shadowed.map((s) => s.length)],
    ['summaries', a.summaries.length, b.summaries.length],
    ['prunes', a.prunes, b.prunes],
    ['retries', a.retries, b.retries],
    ['surface', a.surface.filter((k) => k !== 'system'), b.surface],
    ['pressure', a.tokens, b.tokens],
  ]
  for (const [aspect, x, y] of pairs) {
    if (show(x) === show(y)) continue
    out.push({ aspect, base: show(x), other: show(y), verdict: 'explained', rule, note: 'a consequence of the threshold-edge divergence above' })
  }
  return out
}

/** The meter's baseline at the end of the log (§2.5): its kind (usage, estimated or none) and its tokens. */
function baselineOf(side: LogSide): { kind: string; tokens: number } {
  return new TokenMeter({ events: side.events }, { dialect: side.dialect }).measure().baseline
}

/**
 * ceil(len/4) summed over the text blocks (nested ones included) of the final-surface nodes whose text is framed by
 * the dialect — checkpoints (§14.1 "Checkpoint framing") or pruned tool results (§14.1 "Pruning") — the §2.2 text rule.
 */
function framedTokens(side: LogSide, which: 'checkpoint' | 'pruned'): number {
  const { events } = side
  const log = EventLog.fromEvents(events, { dialect: side.dialect })
  let tokens = 0
  for (const seq of log.state.surface.nodes) {
    const event = events[seq]
    if (which === 'checkpoint' ? kindOf(event) !== 'checkpoint' : !isPruned(event)) continue
    tokens += textTokens(messageOf(event)?.content ?? [])
  }
  return tokens
}

/** ceil(len/4) per text block, recursing into tool-result content. */
function textTokens(blocks: readonly ContentBlock[]): number {
  let tokens = 0
  for (const block of blocks) {
    if (block.type === 'text' && typeof block['text'] === 'string') tokens += Math.ceil([...block['text']].length / 4)
    const nested = (block as { content?: unknown }).content
    if (block.type === 'tool-result' && Array.isArray(nested)) tokens += textTokens(nested as ContentBlock[])
  }
  return tokens
}

function abbrev(key: string): string {
  return key.length > 80 ? `${key.slice(0, 77)}...` : key
}

/** Reads one scenario report's log (null when it has none). */
async function eventsOf(report: ScenarioReport, outDir: string): Promise<LogEvent[] | null> {
  if (report.artifacts === undefined) return null
  return [...(await readLog(join(outDir, report.artifacts.log), { dialect: report.dialect })).events]
}

/**
 * The `differential` section of a run under several subjects: the first subject is the base; every scenario is
 * compared base vs each other subject. A pair where either side did not run (skipped, error) is `skipped`.
 */
export async function differentialOf(reports: readonly ScenarioReport[], outDir: string, subjects: readonly string[]): Promise<DifferentialReport> {
  const [baseName, ...others] = subjects
  const scenarios: DifferentialScenario[] = []
  const byFile = new Map<string, ScenarioReport[]>()
  for (const r of reports) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r])
  for (const [file, runs] of byFile) {
    const base = runs.find((r) => r.subject === baseName)
    for (const otherName of others) {
      const other = runs.find((r) => r.subject === otherName)
      const entry: DifferentialScenario = {
        file, name: base?.name ?? other?.name ?? file, base: baseName ?? '', other: otherName, status: 'compared', differences: [],
      }
      const notRun = [base, other].find((r) => r === undefined || (r.status !== 'passed' && r.status !== 'failed'))
      if (base === undefined || other === undefined || notRun !== undefined) {
        entry.status = 'skipped'
        entry.skipReason = notRun === undefined ? 'a subject did not run' : `${notRun.subject}: ${notRun.skipReason ?? notRun.error ?? notRun.status}`
        scenarios.push(entry)
        continue
      }
      const unreplayable = [base, other].find((r) => r.expectations.some((e) => e.name === 'replay' && !e.passed))
      if (unreplayable !== undefined) {
        entry.status = 'skipped'
        entry.skipReason = `${unreplayable.subject}: its log cannot be replayed (see its violations)`
        scenarios.push(entry)
        continue
      }
      const [x, y] = await Promise.all([eventsOf(base, outDir), eventsOf(other, outDir)])
      if (x === null || y === null) {
        entry.status = 'skipped'
        entry.skipReason = 'a subject left no log'
        scenarios.push(entry)
        continue
      }
      entry.differences = compareLogs(
        { subject: base.subject, events: x, dialect: base.dialect, tokens: base.finalPressure?.tokens ?? null },
        { subject: other.subject, events: y, dialect: other.dialect, tokens: other.finalPressure?.tokens ?? null },
      )
      scenarios.push(entry)
    }
  }
  const compared = scenarios.filter((s) => s.status === 'compared')
  const all = compared.flatMap((s) => s.differences)
  return {
    base: baseName ?? '',
    subjects: [...subjects],
    summary: {
      scenarios: scenarios.length,
      compared: compared.length,
      skipped: scenarios.length - compared.length,
      identical: compared.filter((s) => s.differences.length === 0).length,
      explained: all.filter((d) => d.verdict === 'explained').length,
      unexplained: all.filter((d) => d.verdict === 'unexplained').length,
    },
    scenarios,
  }
}
