/**
 * Fault targeting (issue #15) at the plan: every `when` selector fires on the request it names and on no
 * other (turn/step, route, the request predicates, virtual time, occurrence among matches), `codes` answer
 * one code per firing, a raw body is answered verbatim, `after-timeout` answers only once the caller gave
 * up, and counts carried over (`prior`) never restart. Requests are handcrafted `ParsedRequest`s; the mock
 * provider renders the outcomes where the wire matters.
 */
import { describe, expect, it } from 'vitest'
import type { ContentBlock } from '@compaction-sim/core'
import {
  FaultInjectingPlan, faultOutcome, parseFaultSchedule, type RequestContext, type TargetedFaultSpec,
} from '../../src/provider/faults.ts'
import { MockProvider } from '../../src/provider/mock-provider.ts'
import type { DecodedMessage, ParsedRequest, PlannedOutcome, ReplyPlan } from '../../src/provider/types.ts'
import { CLOCK, MODELS } from './support.ts'

const FINE: ReplyPlan = { next: (): PlannedOutcome => ({ kind: 'reply', reply: { blocks: [{ type: 'text', text: 'fine' }] } }) }

const text = (t: string): DecodedMessage => ({ role: 'user', content: [{ type: 'text', text: t }] })
const IMAGE: ContentBlock = { type: 'image', attachment: { attachmentId: 'sha256:1', mediaType: 'image/png', bytes: 1, width: 1, height: 1 } }

let nextIndex = 0
function request(extra: Partial<ParsedRequest> = {}): ParsedRequest {
  return {
    index: nextIndex++, wire: 'openai', purpose: 'conversation', model: 'mock-8k', modelInfo: undefined, messages: [text('hi')],
    stream: true, includeUsage: true, ...extra,
  }
}

function spec(when: TargetedFaultSpec['when'], params: TargetedFaultSpec['params'] = { code: 'SERVER' }, target: 'conversation' | 'compaction' = 'conversation'): TargetedFaultSpec {
  return { id: 'f', kind: 'FAULT-16', target, when, params }
}

/** Feeds `requests` (each with its context) to a plan with `faults`; returns the 0-based positions that fired. */
function firings(faults: TargetedFaultSpec[], requests: Array<[Partial<ParsedRequest>, Partial<RequestContext>?]>): number[] {
  nextIndex = 0
  let context: RequestContext = { turn: null, step: null, virtualMs: null }
  const plan = new FaultInjectingPlan(FINE, faults, { context: () => context })
  return requests.flatMap(([extra, ctx], i) => {
    context = { turn: null, step: null, virtualMs: null, ...ctx }
    return plan.next(request(extra)).kind === 'reply' ? [] : [i]
  })
}

describe('fault targeting selectors', () => {
  it('occurrence counts the requests of the fault target that match every other condition', () => {
    const compaction = { purpose: 'compaction' as const }
    const reqs: Array<[Partial<ParsedRequest>]> = [[{}], [compaction], [{}], [compaction], [compaction]]
    expect(firings([spec({ occurrence: 2 }, { code: 'SERVER' }, 'compaction')], reqs)).toEqual([3])
    expect(firings([spec({ occurrence: 2 })], reqs)).toEqual([2])
  })

  it('turn and step select the request of that turn and step only (a compaction of the step included)', () => {
    const reqs: Array<[Partial<ParsedRequest>, Partial<RequestContext>]> = [
      [{}, { turn: 1, step: 2 }], [{}, { turn: 2, step: 1 }], [{}, { turn: 2, step: 2 }], [{}, { turn: 2, step: 2 }], [{}, { turn: 3, step: 2 }],
    ]
    expect(firings([spec({ turn: 2, step: 2 })], reqs)).toEqual([2])
    expect(firings([spec({ turn: 2, step: 2, occurrence: 2 })], reqs)).toEqual([3])
    expect(firings([spec({ step: 2, occurrence: 3 })], reqs)).toEqual([3])
    expect(firings([spec({ turn: 2 })], reqs)).toEqual([1])
    // Without a context (e.g. `sim serve`) a turn never matches.
    expect(firings([spec({ turn: 1 })], [[{}], [{}]])).toEqual([])
  })

  it('route selects requests for that model only', () => {
    const reqs: Array<[Partial<ParsedRequest>]> = [[{ model: 'mock-8k' }], [{ model: 'mock-summary' }], [{ model: 'mock-8k' }]]
    expect(firings([spec({ route: 'mock-summary' })], reqs)).toEqual([1])
    expect(firings([spec({ route: 'mock-8k', occurrence: 2 })], reqs)).toEqual([2])
  })

  it('promptTokensAtLeast compares the provider count, inclusive', () => {
    const reqs: Array<[Partial<ParsedRequest>]> = [[{ providerPromptTokens: 99 }], [{}], [{ providerPromptTokens: 100 }], [{ providerPromptTokens: 500 }]]
    expect(firings([spec({ promptTokensAtLeast: 100 })], reqs)).toEqual([2])
  })

  it('maxTokensAbove is strict, and a request without max_tokens never matches', () => {
    const reqs: Array<[Partial<ParsedRequest>]> = [[{}], [{ maxTokens: 50 }], [{ maxTokens: 51 }]]
    expect(firings([spec({ maxTokensAbove: 50 })], reqs)).toEqual([2])
  })

  it('hasImages sees images nested in tool results; false selects image-free requests', () => {
    const nested: DecodedMessage = { role: 'user', content: [{ type: 'tool-result', toolCallId: 'c1', content: [IMAGE] } as ContentBlock] }
    const reqs: Array<[Partial<ParsedRequest>]> = [[{}], [{ messages: [text('look'), nested] }], [{}]]
    expect(firings([spec({ hasImages: true })], reqs)).toEqual([1])
    expect(firings([spec({ hasImages: false, occurrence: 2 })], reqs)).toEqual([2])
  })

  it('atVirtualMs fires on the first matching request at or after that time, and not without a clock', () => {
    const reqs: Array<[Partial<ParsedRequest>, Partial<RequestContext>]> = [
      [{}, { virtualMs: 500 }], [{}, { virtualMs: 999 }], [{}, { virtualMs: 1000 }], [{}, { virtualMs: 1500 }],
    ]
    expect(firings([spec({ atVirtualMs: 1000 })], reqs)).toEqual([2])
    expect(firings([spec({ atVirtualMs: 990 })], reqs)).toEqual([1])
    expect(firings([spec({ atVirtualMs: 0 })], [[{}], [{}]])).toEqual([])
  })

  it('a fault with count n fires on n consecutive matches; two faults due on one request: the first takes it, the other misses', () => {
    const reqs: Array<[Partial<ParsedRequest>, Partial<RequestContext>]> = [
      [{}, { turn: 1 }], [{}, { turn: 2 }], [{}, { turn: 1 }], [{}, { turn: 2 }], [{}, { turn: 2 }], [{}, { turn: 2 }],
    ]
    expect(firings([spec({ turn: 2 }, { code: 'SERVER', times: 2 })], reqs)).toEqual([1, 3])
    nextIndex = 0
    const plan = new FaultInjectingPlan(FINE, [{ ...spec({ occurrence: 1 }), id: 'a' }, { ...spec({ occurrence: 1 }), id: 'b' }])
    plan.next(request())
    plan.next(request())
    expect(plan.fired).toEqual([['a', 0]])
    expect(plan.counters().faults['b']?.missed).toEqual({ requestIndex: 0, by: 'fault a' })
  })
})

describe('fault targeting params and counting', () => {
  it('codes: the i-th firing answers the i-th code (count = their number)', () => {
    nextIndex = 0
    const plan = new FaultInjectingPlan(FINE, [spec({ occurrence: 1 }, { codes: ['SERVER', 'RATE_LIMIT'], times: 2 })])
    const outcomes = [plan.next(request()), plan.next(request()), plan.next(request())]
    expect(outcomes.map((o) => [o.kind, o.kind === 'reject' ? o.rejection.status : null, o.expectedCode ?? null])).toEqual([
      ['reject', 500, 'SERVER'], ['reject', 429, 'RATE_LIMIT'], ['reply', null, null],
    ])
    expect(() => parseFaultSchedule({ code: 'SERVER', codes: ['SERVER'] }, 'f')).toThrow(/code or codes/)
    expect(() => new FaultInjectingPlan(FINE, [spec({}, { codes: ['SERVER', 'SERVER'], times: 3 })])).toThrow(/must equal the number of codes/)
  })

  it('a raw body is answered verbatim with its status and headers', async () => {
    const body = '<html><body>502 Bad Gateway</body></html>'
    const plan = new FaultInjectingPlan(FINE, [spec({}, { code: 'SERVER', body, status: 502, headers: { 'X-Upstream': 'lb-1' } })])
    const p = new MockProvider({ wire: 'openai', plan, clock: CLOCK, models: MODELS })
    const post = (): Request => new Request('http://direct.mock/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock-8k', messages: [{ role: 'user', content: 'hi' }] }),
    })
    const response = await p.handle(post())
    expect([response.status, response.headers.get('content-type'), response.headers.get('x-upstream'), await response.text()])
      .toEqual([502, 'text/plain; charset=utf-8', 'lb-1', body])
    expect(p.captured[0]?.expectedFailureCode).toBe('SERVER')
    // A JSON body is sent as JSON, and only the fault's request gets it.
    const json = { error: { message: 'Maximum context length is 8192 tokens', type: 'invalid_request_error', code: null } }
    const p2 = new MockProvider({
      wire: 'deepseek', plan: new FaultInjectingPlan(FINE, [spec({}, { code: 'CONTEXT_WINDOW_EXCEEDED', body: json, status: 400 })]), clock: CLOCK, models: MODELS,
    })
    const first = await p2.handle(post())
    expect([first.status, first.headers.get('content-type'), await first.json()]).toEqual([400, 'application/json', json])
    expect((await p2.handle(post())).status).toBe(200)
  })

  it('after-timeout: the request hangs until the caller aborts, then the late answer is rendered; the caller must report TIMEOUT', async () => {
    nextIndex = 0
    const outcome = faultOutcome(parseFaultSchedule({ code: 'CONTEXT_WINDOW_EXCEEDED', delivery: 'after-timeout' }, 'f')[0]!, request(), undefined, 10)
    expect([outcome.kind, outcome.expectedCode, outcome.kind === 'hang' ? outcome.late?.kind : null]).toEqual(['hang', 'TIMEOUT', 'reject'])
    const plan = new FaultInjectingPlan(FINE, [spec({}, { code: 'CONTEXT_WINDOW_EXCEEDED', delivery: 'after-timeout' })])
    const p = new MockProvider({ wire: 'openai', plan, clock: CLOCK, models: MODELS })
    const caller = new AbortController()
    let settled = false
    const answer = p.handle(new Request('http://direct.mock/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' }, signal: caller.signal,
      body: JSON.stringify({ model: 'mock-8k', messages: [{ role: 'user', content: 'hi' }] }),
    })).then((r) => { settled = true; return r })
    await new Promise((resolve) => { setImmediate(resolve) })
    expect(settled).toBe(false) // nothing arrives before the caller's timeout
    caller.abort(new Error('TIMEOUT'))
    const late = await answer
    expect([late.status, ((await late.json()) as { error: { code: string } }).error.code]).toEqual([400, 'context_length_exceeded'])
    expect(p.captured[0]?.expectedFailureCode).toBe('TIMEOUT')
  })

  it('counts carried over (prior) continue: a one-shot fault that fired does not fire again, requestIndex keeps counting', () => {
    nextIndex = 0
    const faults = [{ ...spec({ occurrence: 1 }), id: 'once' }, { ...spec({ requestIndex: 3 }, { code: 'RATE_LIMIT' }), id: 'at-3' }]
    const first = new FaultInjectingPlan(FINE, faults)
    expect([first.next(request()).kind, first.next(request()).kind]).toEqual(['reject', 'reply'])
    nextIndex = 0 // a restored process: its provider numbers requests from 0 again
    const second = new FaultInjectingPlan(FINE, faults, { prior: first.counters() })
    const kinds = [second.next(request()), second.next(request()), second.next(request())].map((o) => o.expectedCode ?? o.kind)
    expect(kinds).toEqual(['reply', 'RATE_LIMIT', 'reply'])
    expect(second.fired).toEqual([['at-3', 3]])
    expect(second.counters().faults['once']).toMatchObject({ fired: 1, seen: 5 })
  })

  it('a request the provider answered itself (observe) counts, and a fault due on it misses instead of firing later', () => {
    nextIndex = 0
    const plan = new FaultInjectingPlan(FINE, [spec({ occurrence: 2 })])
    plan.next(request())
    plan.observe(request())
    expect(plan.next(request()).kind).toBe('reply')
    expect(plan.counters().faults['f']).toMatchObject({ fired: 0, seen: 3, missed: { requestIndex: 1, by: 'the provider\'s own enforcement' } })
  })
})
