/**
 * §12.7 Request reconstruction and series: INV-41 … INV-44. INV-41 and INV-42 read the log alone; INV-43
 * (the §10.5 reconstruction theorem) and INV-44 (the summarizer request shape) compare the request capture
 * with the model's derivation at each request's dispatch revision, and are not evaluated without a capture.
 */
import {
  canonicalHeader, COMPACTION_INSTRUCTION, hardeningOf, headersEqual, jsonEqual,
  type CapturedRequest, type ContentBlock, type Dialect, type EpochHeader, type Message, type SessionEvent,
} from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import { RequestCursor } from './requests.ts'
import { at, missingEndSeedNote } from './support.ts'
import type { Applicability, InvariantCheck, Reporter, RunContext } from './types.ts'

type Check = InvariantCheck<CheckerModel>

/** The reasons each dialect writes (§10.3, §14.1). */
const REASONS: Record<Dialect, readonly string[]> = {
  seed: ['initial', 'resume', 'change', 'series'],
  'dsh-0.1.0-rc.8': ['initial', 'resume', 'change'],
}

/** INV-41: headers are canonical; reasons and startsSeries follow §10.3 (rc.8: initial/resume/change only). */
const inv41: Check = {
  id: 'INV-41',
  family: 'reconstruction',
  statement: 'Header canonical form and reasons: canonical headers; initial first, resume first after an end-seed, change iff different, series iff equal with an advanced epoch (or an explicit series request), startsSeries only on resume/change and iff the epoch advanced.',
  create: (ctx, r) => ({
    types: ['request/header'],
    before: (event, item, m) => {
      const e = event as SessionEvent<'request/header'>
      const raw = e.data.header
      if (raw.tools !== undefined && raw.tools.length === 0) r.violation(e.seq, 'the header carries an empty tools list (canonical form drops it)')
      if (raw.adapterDefaults !== undefined && raw.adapterDefaults.reasoningEffort !== true && raw.adapterDefaults.maxTokens !== true) {
        r.violation(e.seq, 'the header carries adapterDefaults without a true marker (canonical form drops it)')
      }
      if (ctx.dialect === 'dsh-0.1.0-rc.8' && raw.system === '') r.violation(e.seq, 'the header carries an empty system (canonical form drops it, §14.1)')
      const reason: string = e.data.reason
      if (!REASONS[ctx.dialect].includes(reason)) return // the input stage reports a reason the dialect does not have
      const folded = m.state.header
      const explicit = ctx.inputs.explicitSeriesHeaders.has(e.seq)
      const advanced = folded !== null && (m.state.seriesEpoch > folded.epochAtHeader || explicit)
      let expected: string
      if (folded === null) expected = 'initial'
      else if (m.headersThisLifecycle === 0 && m.lifecycle > 0) expected = 'resume'
      else if (!headersEqual(folded.header, canonicalHeader(raw, ctx.dialect))) expected = 'change'
      else if (advanced && ctx.dialect === 'seed') expected = 'series'
      else {
        r.violation(e.seq, `reason ${reason}, but the header equals the one in force (${at(folded.seq)}) and ${ctx.dialect === 'seed' ? 'no series boundary happened since' : 'the rc.8 dialect logs only changes'}: nothing is logged (§10.3)${missingEndSeedNote(item, m)}`)
        return
      }
      if (reason !== expected) r.violation(e.seq, `reason ${reason}, expected ${expected}${folded === null ? ' (the first header of the log)' : missingEndSeedNote(item, m)}`)
      if (ctx.dialect !== 'seed') return
      const starts = e.data.startsSeries === true
      const allowed = expected === 'resume' || expected === 'change'
      if (starts && !allowed) r.violation(e.seq, `startsSeries on a ${expected} header (only resume and change carry it)`)
      if (allowed && starts !== advanced) {
        r.violation(e.seq, advanced
          ? `the series epoch advanced since ${at(folded?.seq ?? -1)} (${folded?.epochAtHeader ?? 0} → ${m.state.seriesEpoch}) but the ${expected} header lacks startsSeries`
          : `startsSeries on a ${expected} header although the series epoch did not advance`)
      }
    },
  }),
}

/** INV-42: a dispatch after a series boundary is preceded by a header recording it (seed only). */
const inv42: Check = {
  id: 'INV-42',
  family: 'reconstruction',
  statement: 'Series boundary before dispatch: if the series epoch advanced after a conversation dispatch, a request/header is appended before the next dispatch of the lifecycle.',
  applicability: (ctx) => ctx.dialect === 'seed' ? { kind: 'applies' } : { kind: 'not-applicable', reason: 'the rc.8 dialect has no series records (§14.1)' },
  create: (_ctx, r) => ({
    types: ['assistant/chunk'],
    before: (event, _item, m) => {
      const e = event as SessionEvent<'assistant/chunk'>
      const s = m.step
      if (s === null || s.attemptOpen || s.turn !== e.data.turn || s.step !== e.data.step) return
      const prev = m.lastDispatch
      const epoch = m.state.seriesEpoch
      const recorded = m.state.header?.epochAtHeader ?? 0
      if (prev !== null && epoch > prev.epoch && recorded < epoch) {
        r.violation(e.seq, `dispatch after a series boundary (epoch ${prev.epoch} at dispatch ${at(prev.seq)}, ${epoch} now) without a request/header recording it`)
      }
    },
  }),
}

function needsCapture(ctx: RunContext): Applicability {
  return ctx.requests === null ? { kind: 'not-evaluated', reason: 'no request capture given (--requests)' } : { kind: 'applies' }
}

/** Feeds each captured request to `judge` once the model has folded its dispatch prefix. */
function captureHooks(ctx: RunContext, r: Reporter, judge: (req: CapturedRequest, seq: number, m: CheckerModel) => void): Pick<import('./types.ts').CheckHooks<CheckerModel>, 'input' | 'end'> {
  const cursor = new RequestCursor(ctx.requests ?? [])
  return {
    input: (item, m) => {
      for (const req of cursor.upTo(item.seq)) judge(req, item.seq, m)
    },
    end: (m) => {
      for (const req of cursor.rest()) {
        if (req.logRevisionAtDispatch <= m.lastSeq + 1) judge(req, Math.max(0, m.lastSeq), m)
        else r.skip(req.logRevisionAtDispatch, `request ${req.index} was dispatched at revision ${req.logRevisionAtDispatch}, beyond the ${m.lastSeq + 1} events of the log`)
      }
    },
  }
}

/** Index of the first differing message of two lists (the shorter length when one is a prefix of the other). */
function firstDifference(a: readonly unknown[], b: readonly unknown[]): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (!jsonEqual(a[i], b[i])) return i
  return n
}

const CONFIG_KEYS = ['provider', 'model', 'reasoningEffort', 'temperature', 'maxTokens', 'stop'] as const

/** INV-43: each captured conversation request is the derivation of its dispatch prefix, and extends the previous one within a series. */
const inv43: Check = {
  id: 'INV-43',
  family: 'reconstruction',
  statement: 'Reconstruction theorem: each captured conversation request has messages = deriveMessages(log[0:L]) and the folded header\'s config and tools, and extends the previous request of the lifecycle when no header lies between them.',
  applicability: needsCapture,
  create: (ctx, r) => {
    let previous: { revision: number; messages: readonly Message[]; lifecycle: number; generation: number } | null = null
    return captureHooks(ctx, r, (req, seq, m) => {
      if (req.purpose !== 'conversation') return
      const label = `captured request ${req.index} (revision ${req.logRevisionAtDispatch})`
      const derived = m.derivedNodes().map((d) => d.message)
      if (!jsonEqual(req.messages, derived)) {
        const i = firstDifference(req.messages, derived)
        r.violation(seq, `${label}: messages differ from deriveMessages of the log prefix at message ${i} (${req.messages.length} sent, ${derived.length} derived)`)
      }
      const h: EpochHeader | undefined = m.header
      if (h === undefined) r.violation(seq, `${label}: no request/header is in force, so its configuration is not recoverable from the log`)
      else {
        const config = h.config as unknown as Record<string, unknown>
        const sent = req as unknown as Record<string, unknown>
        for (const key of CONFIG_KEYS) {
          if (!jsonEqual(sent[key], config[key])) r.violation(seq, `${label}: ${key} ${JSON.stringify(sent[key])} differs from the folded header's ${JSON.stringify(config[key])}`)
        }
        if (!jsonEqual(req.tools ?? [], h.tools ?? [])) r.violation(seq, `${label}: tools differ from the folded header's tools`)
      }
      const headerSeq = m.state.header?.seq ?? -1
      const p = previous
      const generation = m.state.surface.replaceGeneration
      // rc.8 writes no header after a replacement (§14 D-05, and INV-42 does not apply there): a replacement between
      // the two requests is that dialect's boundary, so the append-extension clause spans only replacement-free stretches.
      const rc8Boundary = ctx.dialect === 'dsh-0.1.0-rc.8' && p !== null && p.generation !== generation
      if (p !== null && !rc8Boundary && p.lifecycle === m.lifecycle && p.revision < req.logRevisionAtDispatch && !(headerSeq >= p.revision && headerSeq < req.logRevisionAtDispatch)) {
        const prefix = req.messages.length >= p.messages.length && firstDifference(p.messages, req.messages) === p.messages.length
        if (!prefix) r.violation(seq, `${label}: no request/header lies since the previous request (revision ${p.revision}), but its messages are not an append-extension of that request's`)
      }
      previous = { revision: req.logRevisionAtDispatch, messages: req.messages, lifecycle: m.lifecycle, generation }
    })
  },
}

/** What INV-44 remembers of a summary request until its attempt record (summary-error or summary) names the region. */
interface PendingSummaryRequest {
  readonly req: CapturedRequest
  readonly seq: number
  readonly head: Message | null
  readonly byNode: ReadonlyMap<number, Message>
}

/** The instruction as §8.2 sends it: one user-role message; in the seed dialect with exactly the Appendix A text. */
function isInstruction(message: Message | undefined, seed: boolean): boolean {
  if (message === undefined || message.role !== 'user') return false
  if (!seed) return true
  const expected: ContentBlock[] = [{ type: 'text', text: COMPACTION_INSTRUCTION }]
  return jsonEqual(message.content, expected)
}

/** INV-44: each captured compaction request has the purpose, cap, tools, head, region and instruction of its attempt. */
const inv44: Check = {
  id: 'INV-44',
  family: 'reconstruction',
  statement: 'Summarizer request shape: purpose compaction, the policy maxTokens, the folded header\'s tools, and messages [head?] ++ projected region ++ [instruction] for the bracket and attempt it belongs to.',
  applicability: needsCapture,
  create: (ctx, r) => {
    const seed = ctx.dialect === 'seed'
    const clampsCap = hardeningOf(ctx.inputs.policy).summaryRoom !== null
    let bracketSeq = -1
    let pending: PendingSummaryRequest[] = []
    const hooks = captureHooks(ctx, r, (req, seq, m) => {
      if (req.purpose !== 'compaction') return
      const label = `captured compaction request ${req.index} (revision ${req.logRevisionAtDispatch})`
      const b = m.bracket
      if (b === null) {
        r.violation(seq, `${label} was dispatched while no bracket is open`)
        return
      }
      if (b.start.seq !== bracketSeq) {
        bracketSeq = b.start.seq
        pending = []
      }
      const route = m.routedTarget()
      const cap = route === null ? ctx.inputs.policy.maxTokens : m.policy(route).maxTokens
      // Hardened HARD-2 (`hardening.summaryRoom`, issue #19) clamps the cap to the summary route: any cap from 1 to
      // the policy's is accepted then (HARD-2 judges it against the route); otherwise exactly the policy cap.
      const clamped = clampsCap && typeof req.maxTokens === 'number' && Number.isSafeInteger(req.maxTokens) && req.maxTokens >= 1 && req.maxTokens <= cap
      if (req.maxTokens !== cap && !clamped) r.violation(seq, `${label}: maxTokens ${String(req.maxTokens)} differs from the policy cap ${cap}`)
      if (!jsonEqual(req.tools ?? [], m.header?.tools ?? [])) r.violation(seq, `${label}: tools differ from the folded header's tools`)
      if (!isInstruction(req.messages[req.messages.length - 1], seed)) r.violation(seq, `${label}: the last message is not the compaction instruction`)
      const headSeq = m.headCount() === 1 ? m.nodes[0] : undefined
      const head = headSeq === undefined ? null : m.meter.projected(headSeq)
      if (head !== null && !jsonEqual(req.messages[0], head)) r.violation(seq, `${label}: the first message is not the projected system head ${at(headSeq ?? -1)}`)
      const byNode = new Map<number, Message>()
      for (const d of m.derivedNodes()) byNode.set(d.seq, d.message)
      pending.push({ req, seq, head, byNode })
    })
    return {
      ...hooks,
      types: ['compaction/summary-error', 'compaction/summary'],
      before: (event, _item, m) => {
        const e = event as SessionEvent<'compaction/summary' | 'compaction/summary-error'>
        const b = m.bracket
        if (b === null || b.start.seq !== bracketSeq || b.start.data.compactionId !== e.data.compactionId) return
        const p = pending.shift()
        if (p === undefined) return
        const region = e.data.shadowedSeqs.map((s) => p.byNode.get(s)).filter((x): x is Message => x !== undefined)
        const body = p.req.messages.slice(p.head === null ? 0 : 1, -1)
        if (!jsonEqual(body, region)) {
          const i = firstDifference(body, region)
          r.violation(p.seq, `captured compaction request ${p.req.index}: the region messages differ from the projected region ${e.data.shadowedSeqs.length === 0 ? '' : `of ${at(e.seq)} `}at region message ${i} (${body.length} sent, ${region.length} expected)`)
        }
      },
    }
  },
}

/** The §12.7 checks, in id order. */
export const RECONSTRUCTION_CHECKS: readonly Check[] = [inv41, inv42, inv43, inv44]
