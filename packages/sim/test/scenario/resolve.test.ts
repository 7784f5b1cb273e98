/**
 * `resolveScenario`: every default applied in one step, a deep-frozen result, the inline transcript
 * converted to a fixtures `Transcript`, §13 fault families and defaults, `transcript.recorded` containment,
 * and the cross-field rules reported as JSON-path issues.
 */
import { join, resolve } from 'node:path'
import { COMPACTION_DEFAULTS, PRUNE_DEFAULTS } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { ScenarioError, type ScenarioIssue } from '../../src/scenario/errors.ts'
import { ENFORCE_ALL, ENFORCE_OFF, NO_IMAGE_LIMITS } from '../../src/provider/enforce.ts'
import { BUILTIN_SUMMARIZER } from '../../src/provider/summarizers.ts'
import {
  DEFAULT_FIXTURES_DIR, faultSpecOf, faultTargetOf, isInside, jsonPointer, resolveEnforce, resolveScenario,
} from '../../src/scenario/resolve.ts'
import { FAULT_KINDS, type Scenario } from '../../src/scenario/types.ts'

const FILE = '/work/scenarios/smoke/x.yaml'
const BASE: Scenario = {
  name: 'base',
  seed: 3,
  provider: { wire: 'openai', model: 'mock', contextWindow: 4000 },
  transcript: { inline: { turns: [{ user: 'hi', steps: [{ reply: 'hello' }] }] } },
}

function issuesOf(scenario: Scenario, file = FILE): Array<Pick<ScenarioIssue, 'code' | 'path' | 'reason'>> {
  try {
    resolveScenario(scenario, { file })
  } catch (error) {
    if (error instanceof ScenarioError) return error.issues.map(({ code, path, reason }) => ({ code, path, reason }))
    throw error
  }
  throw new Error('expected a ScenarioError')
}

describe('defaults', () => {
  it('fills every optional key explicitly and freezes the result deeply', () => {
    const resolved = resolveScenario(BASE, { file: FILE })
    expect(resolved).toMatchObject({
      file: FILE, name: 'base', description: '', seed: 3, subject: { kind: 'reference' }, dialect: 'seed',
      provider: { wire: 'openai', name: 'openai', model: 'mock', contextWindow: 4000, imageTokens: null },
      policyConfig: {}, prunerConfig: null, pruner: null, faults: [], manual: [],
      expect: {
        invariants: 'all', outcome: null, finalPressure: null, events: [], finalSurfaceNodes: null,
        counts: { brackets: null, failedBrackets: null, prunes: null, offloads: null, retries: null, summaryErrors: null, checkpoints: null },
      },
    })
    expect(resolved.policy.thresholdRatio).toBe(COMPACTION_DEFAULTS.thresholdRatio)
    expect(resolved.policy.retention).toEqual({ kind: 'ratio', retainRatio: COMPACTION_DEFAULTS.retainRatio })
    expect(Object.isFrozen(resolved.provider)).toBe(true)
    expect(Object.isFrozen(resolved.expect.counts)).toBe(true)
    if (resolved.transcript.kind !== 'inline') throw new Error('inline expected')
    expect(Object.isFrozen(resolved.transcript.transcript.turns[0]?.user[0])).toBe(true)
  })

  it('does not modify or freeze its input', () => {
    const input = structuredClone(BASE)
    resolveScenario(input, { file: FILE })
    expect(input).toEqual(BASE)
    expect(Object.isFrozen(input.provider)).toBe(false)
  })

  it('resolves the pruner: true = §5.1 defaults, an object = overrides', () => {
    expect(resolveScenario({ ...BASE, pruner: true }, { file: FILE }).pruner).toMatchObject(PRUNE_DEFAULTS)
    const custom = resolveScenario({ ...BASE, pruner: { thresholdChars: 2000, headChars: 500, tailChars: 100 } }, { file: FILE })
    expect(custom.pruner).toMatchObject({ thresholdChars: 2000, headChars: 500, tailChars: 100 })
    expect(custom.prunerConfig).toEqual({ thresholdChars: 2000, headChars: 500, tailChars: 100 })
  })

  it('resolves counts, outcomes, event patterns and manual actions', () => {
    const resolved = resolveScenario({
      ...BASE,
      manual: [{ action: 'compactNow', afterTurn: 1 }, { action: 'compactRegion', turn: 1, start: 0, end: -1 }],
      expect: {
        invariants: ['INV-01'], outcome: ['completed'],
        counts: { brackets: 2, prunes: { min: 1 }, offloads: { max: 0 } },
        finalPressure: { ratioMax: 0.8 },
        events: ['turn/start', { type: 'turn/end', data: { turn: 1 } }],
        finalSurfaceNodes: 3,
      },
    }, { file: FILE })
    expect(resolved.manual).toEqual([
      { kind: 'compactNow', afterTurn: 1, sourceCommandId: null },
      { kind: 'compactRegion', turn: 1, beforeStep: 1, start: 0, end: -1 },
    ])
    expect(resolved.expect).toMatchObject({
      invariants: ['INV-01'],
      outcome: [{ kind: 'completed', code: null }],
      counts: { brackets: { min: 2, max: 2 }, prunes: { min: 1, max: null }, offloads: { min: 0, max: 0 }, retries: null },
      finalPressure: { ratioMin: null, ratioMax: 0.8, tokensMin: null, tokensMax: null },
      events: [{ type: 'turn/start', data: null }, { type: 'turn/end', data: { turn: 1 } }],
      finalSurfaceNodes: { min: 3, max: 3 },
    })
  })
})

describe('inline transcript', () => {
  it('expands the compact form: text blocks, call ids, results paired with calls in the order given, derived tools', () => {
    const resolved = resolveScenario({
      ...BASE,
      transcript: {
        inline: {
          turns: [{
            user: 'fix it',
            steps: [
              {
                reply: { reasoning: 'look first', text: 'reading', toolCalls: [{ name: 'read', arguments: { path: 'a' } }, { name: 'ls' }] },
                toolResults: [{ callId: 'call-1-1-2', content: 'a b' }, { content: 'file a', isError: true }],
              },
              { reply: { text: 'done', usage: { inputTokens: 5, outputTokens: 1 } } },
            ],
          }],
        },
      },
    }, { file: FILE })
    if (resolved.transcript.kind !== 'inline') throw new Error('inline expected')
    expect(resolved.transcript.transcript).toEqual({
      systemPrompt: '',
      tools: [
        { name: 'read', description: '', parameters: { type: 'object' } },
        { name: 'ls', description: '', parameters: { type: 'object' } },
      ],
      turns: [{
        user: [{ type: 'text', text: 'fix it' }],
        steps: [
          {
            reply: { blocks: [
              { type: 'reasoning', text: 'look first' },
              { type: 'text', text: 'reading' },
              { type: 'tool-call', id: 'call-1-1-1', name: 'read', arguments: '{"path":"a"}' },
              { type: 'tool-call', id: 'call-1-1-2', name: 'ls', arguments: '{}' },
            ] },
            toolResults: [
              { callId: 'call-1-1-2', content: [{ type: 'text', text: 'a b' }] },
              { callId: 'call-1-1-1', content: [{ type: 'text', text: 'file a' }], isError: true },
            ],
          },
          { reply: { blocks: [{ type: 'text', text: 'done' }], usage: { inputTokens: 5, outputTokens: 1 } }, toolResults: [] },
        ],
      }],
    })
  })

  it('passes a full fixtures Transcript through unchanged', () => {
    const transcript = {
      systemPrompt: 'sys',
      tools: [{ name: 'ls', description: 'list', parameters: { type: 'object' } }],
      facts: ['f'],
      turns: [{
        user: [{ type: 'text' as const, text: 'hi' }],
        steps: [
          {
            reply: { blocks: [{ type: 'tool-call' as const, id: 'c1', name: 'ls', arguments: '{}' }] },
            toolResults: [{ callId: 'c1', content: [{ type: 'text' as const, text: 'x' }] }],
          },
          { reply: { blocks: [{ type: 'text' as const, text: 'ok' }] }, toolResults: [] },
        ],
      }],
    }
    const resolved = resolveScenario({ ...BASE, transcript: { inline: transcript } }, { file: FILE })
    expect(resolved.transcript).toEqual({ kind: 'inline', transcript })
  })

  it('reports structural problems with their JSON paths', () => {
    const turns = [
      {
        user: 'a',
        steps: [
          { reply: { text: 'x', toolCalls: [{ id: 'dup', name: 't' }] } },
          { reply: 'no calls, not last' },
          { reply: { blocks: [], text: 'both' } },
        ],
      },
      { user: 'b', steps: [{ reply: { toolCalls: [{ id: 'dup', name: 't' }] }, toolResults: [{ callId: 'zzz', content: 'r' }] }] },
    ]
    expect(issuesOf({ ...BASE, transcript: { inline: { tools: [{ name: 't' }, { name: 't' }], turns } } })).toEqual([
      { code: 'SEMANTIC', path: '/transcript/inline/turns/0/steps/0', reason: 'has 0 tool results for 1 tool call; give one per call' },
      { code: 'SEMANTIC', path: '/transcript/inline/turns/0/steps/1/reply', reason: 'has no tool calls but is not the last step of its turn (a reply without tool calls ends the turn)' },
      { code: 'SEMANTIC', path: '/transcript/inline/turns/0/steps/2/reply/text', reason: 'cannot be combined with blocks (blocks is the full form)' },
      { code: 'SEMANTIC', path: '/transcript/inline/turns/1/steps/0/reply/toolCalls/0', reason: 'repeats the tool call id "dup" of /transcript/inline/turns/0/steps/0/reply/toolCalls/0' },
      { code: 'SEMANTIC', path: '/transcript/inline/turns/1/steps/0/reply', reason: 'calls tools but is the last step of its turn (add a step with the final reply)' },
      { code: 'SEMANTIC', path: '/transcript/inline/turns/1/steps/0/toolResults/0/callId', reason: 'names no tool call of this reply (got "zzz")' },
      { code: 'SEMANTIC', path: '/transcript/inline/tools/1/name', reason: 'repeats the tool name "t"' },
    ])
  })
})

describe('faults', () => {
  it('maps every §13 id to its family', () => {
    const families: Record<string, string[]> = {}
    for (const kind of FAULT_KINDS) (families[faultTargetOf(kind)] ??= []).push(kind)
    expect(Object.fromEntries(Object.entries(families).map(([k, v]) => [k, [v[0], v.at(-1), v.length]]))).toEqual({
      conversation: ['FAULT-01', 'FAULT-17', 17],
      compaction: ['FAULT-20', 'FAULT-33', 14],
      config: ['FAULT-40', 'FAULT-46', 7],
      crash: ['FAULT-50', 'FAULT-57', 8],
      append: ['FAULT-60', 'FAULT-66', 5],
      flush: ['FAULT-64', 'FAULT-65', 2],
      concurrent: ['FAULT-70', 'FAULT-79', 10],
      signal: ['FAULT-80', 'FAULT-84', 5],
    })
  })

  it('applies the kind defaults and builds the manifest FaultSpec', () => {
    const resolved = resolveScenario({
      ...BASE,
      faults: [
        { kind: 'FAULT-02' },
        { kind: 'FAULT-21', params: { delivery: 'after-chunks' } },
        { id: 'crash', kind: 'FAULT-53' },
        { kind: 'FAULT-41', params: { contextWindow: 0.5 } },
      ],
    }, { file: FILE })
    expect(resolved.faults.map((f) => [f.id, f.target, f.when.purpose, f.when.afterEvent, f.params.code, f.params.delivery, f.params.chunks])).toEqual([
      ['fault-1', 'conversation', 'conversation', null, 'CONTEXT_WINDOW_EXCEEDED', 'after-headers', 0],
      ['fault-2', 'compaction', 'compaction', null, 'TIMEOUT', 'after-chunks', 1],
      ['crash', 'crash', null, 'checkpoint', null, 'before-headers', 0],
      ['fault-4', 'config', null, null, null, 'before-headers', 0],
    ])
    const [, , crash] = resolved.faults
    if (crash === undefined) throw new Error('fault expected')
    expect(faultSpecOf(crash)).toEqual({
      id: 'crash', kind: 'FAULT-53', target: 'crash', when: { occurrence: 1, eventType: 'checkpoint' },
      params: { delivery: 'before-headers', chunks: 0, count: 1 },
    })
  })

  it('reports fault rules with their JSON paths', () => {
    expect(issuesOf({
      ...BASE,
      dialect: 'dsh-0.1.0-rc.8',
      faults: [
        { id: 'a', kind: 'FAULT-01', when: { purpose: 'compaction' } },
        { id: 'a', kind: 'FAULT-70', params: { delivery: 'after-headers' } },
        { kind: 'FAULT-51' },
        { kind: 'FAULT-01', params: { contextWindow: 10 } },
      ],
    })).toEqual([
      { code: 'SEMANTIC', path: '/faults/0/when/purpose', reason: 'must be conversation: FAULT-01 is a conversation-request fault (§13)' },
      { code: 'SEMANTIC', path: '/faults/1/params/delivery', reason: 'applies only to request faults (FAULT-01…33), not to FAULT-70' },
      { code: 'SEMANTIC', path: '/faults/2/when/afterEvent', reason: 'names compaction/summary-error, which the dsh-0.1.0-rc.8 dialect never writes (§14)' },
      { code: 'SEMANTIC', path: '/faults/3/params/contextWindow', reason: 'applies only to configuration faults (FAULT-40…46), not to FAULT-01' },
      { code: 'SEMANTIC', path: '/faults/1/id', reason: 'repeats the fault id "a" of /faults/0' },
    ])
  })
})

describe('expectations and manual actions', () => {
  it('reports bounds, dialect and turn-count rules', () => {
    expect(issuesOf({
      ...BASE,
      provider: { wire: 'openai', model: 'mock' },
      dialect: 'dsh-0.1.0-rc.8',
      manual: [{ action: 'compactNow', afterTurn: 2 }, { action: 'compactRegion', turn: 1, beforeStep: 2, start: 0, end: 0 }],
      expect: {
        outcome: [{ kind: 'completed', code: 'SERVER' }],
        counts: { brackets: { min: 2, max: 1 } },
        finalPressure: { ratioMax: 0.5, tokensMin: 10, tokensMax: 5 },
        events: ['image/offload'],
      },
    })).toEqual([
      { code: 'SEMANTIC', path: '/manual/0/afterTurn', reason: 'is after the last turn (the transcript has 1)' },
      { code: 'SEMANTIC', path: '/manual/1/beforeStep', reason: 'names a step turn 1 does not have (it has 1)' },
      { code: 'SEMANTIC', path: '/expect/outcome/0/code', reason: 'applies only to kind error (got kind "completed")' },
      { code: 'SEMANTIC', path: '/expect/counts/brackets', reason: 'has min 2 above max 1' },
      { code: 'SEMANTIC', path: '/expect/events/0', reason: 'names image/offload, which the dsh-0.1.0-rc.8 dialect never writes (§14)' },
      { code: 'SEMANTIC', path: '/expect/finalPressure', reason: 'bounds a ratio, but provider.contextWindow is not set (no capacity, no ratio)' },
      { code: 'SEMANTIC', path: '/expect/finalPressure', reason: 'has tokensMin 10 above tokensMax 5' },
    ])
  })

  it('maps core policy and pruner errors to JSON paths', () => {
    expect(issuesOf({ ...BASE, policy: { summarizationProvider: 'x' }, pruner: { headChars: 9000 } })).toEqual([
      { code: 'POLICY', path: '/policy/summarizationModel', reason: 'must be set together with summarizationProvider (they form one route) (§3.2 rule 5)' },
      { code: 'POLICY', path: '/pruner/thresholdChars', reason: expect.stringContaining('exceeds thresholdChars 8192') as unknown as string },
    ])
  })
})

describe('transcript.recorded', () => {
  const fixtures = resolve('/repo/packages/fixtures/transcripts')
  const recorded = (path: string, file = FILE): ReturnType<typeof resolveScenario>['transcript'] =>
    resolveScenario({ ...BASE, transcript: { recorded: path } }, { file, fixturesDir: fixtures }).transcript

  it('resolves relative to the scenario folder, fixtures: inside the fixtures transcripts', () => {
    expect(recorded('logs/a.jsonl')).toEqual({ kind: 'recorded', path: '/work/scenarios/smoke/logs/a.jsonl', root: 'scenario', given: 'logs/a.jsonl', dialect: 'seed' })
    expect(recorded('fixtures:recorded/x.jsonl')).toMatchObject({ path: '/repo/packages/fixtures/transcripts/recorded/x.jsonl', root: 'fixtures' })
    expect(recorded('/repo/packages/fixtures/transcripts/spec/a.jsonl')).toMatchObject({ root: 'fixtures' })
    expect(recorded('/work/scenarios/smoke/a.jsonl')).toMatchObject({ root: 'scenario' })
  })

  it('takes the recorded dialect, else the scenario dialect', () => {
    const file = FILE
    const withDialect = resolveScenario({ ...BASE, dialect: 'seed', transcript: { recorded: 'a.jsonl', dialect: 'dsh-0.1.0-rc.8' } }, { file })
    expect(withDialect.transcript).toMatchObject({ dialect: 'dsh-0.1.0-rc.8' })
  })

  it.each([
    '../a.jsonl', '../../etc/passwd', '/etc/passwd', 'fixtures:../x.jsonl', 'fixtures:/etc/passwd', '.', 'fixtures:', 'a\0b',
  ])('refuses %j', (path) => {
    const issues = issuesOf({ ...BASE, transcript: { recorded: path } })
    expect(issues.map((i) => [i.code, i.path])).toEqual([['PATH', '/transcript/recorded']])
  })

  it('defaults the fixtures root to packages/fixtures/transcripts of this workspace', () => {
    expect(DEFAULT_FIXTURES_DIR.endsWith(join('packages', 'fixtures', 'transcripts') + '/')).toBe(true)
  })
})

describe('helpers', () => {
  it('jsonPointer escapes ~ and /, isInside is strict', () => {
    expect(jsonPointer('a/b', 'c~d', 0)).toBe('/a~1b/c~0d/0')
    expect(isInside('/a', '/a/b')).toBe(true)
    expect(isInside('/a', '/a')).toBe(false)
    expect(isInside('/a', '/ab')).toBe(false)
    expect(isInside('/a', '/a/..b')).toBe(true)
  })
})

describe('provider routes (issue #15)', () => {
  const ROUTED: Scenario = {
    ...BASE,
    provider: {
      wire: 'openai', name: 'acme',
      routes: [{ model: 'big', contextWindow: 128000 }, { model: 'small', contextWindow: 16000, maxOutputTokens: 2048 }],
    },
  }
  const provider = (scenario: Scenario): ReturnType<typeof resolveScenario>['provider'] => resolveScenario(scenario, { file: FILE }).provider

  it('the single-model shorthand is exactly one route with the defaults', () => {
    const p = provider(BASE)
    expect(p.routes).toEqual([{
      model: 'mock', wire: 'openai', contextWindow: 4000, maxOutputTokens: null, imageTokens: null, tokenizer: 'heuristic',
      enforce: ENFORCE_ALL, imageLimits: NO_IMAGE_LIMITS, usage: 'reported', summarizer: BUILTIN_SUMMARIZER,
    }])
    expect(p.conversationRoute).toBe(p.routes[0])
    expect(p.summaryRoute).toBe(p.routes[0])
    const same = provider({ ...BASE, provider: { wire: 'openai', routes: [{ model: 'mock', contextWindow: 4000 }] } })
    expect(same).toEqual(p)
  })

  it('the shorthand carries the route keys; routes take theirs', () => {
    const p = provider({
      ...BASE,
      provider: {
        wire: 'openai', model: 'mock', contextWindow: 4000, imageTokens: 85, maxOutputTokens: 512, tokenizer: 'dense', enforce: 'off',
        limits: { imagesPerRequest: 2 }, usage: 'late', summarizer: 'builtin',
      },
    })
    expect(p.routes).toEqual([{
      model: 'mock', wire: 'openai', contextWindow: 4000, maxOutputTokens: 512, imageTokens: 85, tokenizer: 'dense', enforce: ENFORCE_OFF,
      imageLimits: { imagesPerRequestMax: 2, imageBytesMax: null, requestImageBytesMax: null }, usage: 'late', summarizer: BUILTIN_SUMMARIZER,
    }])
    expect([p.model, p.contextWindow, p.imageTokens]).toEqual(['mock', 4000, 85])
  })

  it('enforce: on and absent are every rule, off none; an object turns rules off and keeps the rest on', () => {
    expect([resolveEnforce(undefined), resolveEnforce('on'), resolveEnforce('off')]).toEqual([ENFORCE_ALL, ENFORCE_ALL, ENFORCE_OFF])
    expect(resolveEnforce({})).toEqual(ENFORCE_ALL)
    expect(resolveEnforce({ window: false, images: false })).toEqual({ window: null, pairing: true, images: false, maxOutput: true })
    expect(resolveEnforce({ window: true, pairing: false })).toEqual({ window: 'prompt', pairing: false, images: true, maxOutput: true })
    expect(resolveEnforce({ window: 'prompt-plus-max-tokens' }).window).toBe('prompt-plus-max-tokens')
  })

  it('provider.enforce is the default of every route; a route enforce replaces it', () => {
    const p = provider({ ...ROUTED, provider: { ...ROUTED.provider, enforce: 'off', routes: [{ model: 'big' }, { model: 'small', enforce: { pairing: false } }] } })
    expect(p.routes.map((r) => r.enforce)).toEqual([ENFORCE_OFF, { window: 'prompt', pairing: false, images: true, maxOutput: true }])
  })

  it('conversation defaults to the first route and summary to the conversation route; a different summary sets the policy route', () => {
    const plain = resolveScenario(ROUTED, { file: FILE })
    expect([plain.provider.conversationRoute.model, plain.provider.summaryRoute.model, plain.provider.model]).toEqual(['big', 'big', 'big'])
    expect(plain.policyConfig).toEqual({})
    const split = resolveScenario({ ...ROUTED, provider: { ...ROUTED.provider, conversation: 'small', summary: 'big' } }, { file: FILE })
    expect([split.provider.conversationRoute.model, split.provider.summaryRoute.model, split.provider.contextWindow]).toEqual(['small', 'big', 16000])
    expect(split.policyConfig).toEqual({ summarizationProvider: 'acme', summarizationModel: 'big' })
    expect(split.policy.summarization).toEqual({ provider: 'acme', model: 'big' })
  })

  it('a policy that names a declared route makes it the summary route; provider.summary must then agree', () => {
    const policy = { summarizationProvider: 'acme', summarizationModel: 'small' }
    expect(provider({ ...ROUTED, policy }).summaryRoute.model).toBe('small')
    expect(provider({ ...ROUTED, policy, provider: { ...ROUTED.provider, summary: 'small' } }).summaryRoute.model).toBe('small')
    expect(issuesOf({ ...ROUTED, policy, provider: { ...ROUTED.provider, summary: 'big' } })).toEqual([{
      code: 'SEMANTIC', path: '/policy/summarizationModel',
      reason: 'names the summary route "small", but provider.summary is "big"; they must agree',
    }])
    expect(issuesOf({ ...ROUTED, policy: { summarizationProvider: 'acme', summarizationModel: 'nope' } })).toEqual([{
      code: 'SEMANTIC', path: '/policy/summarizationModel', reason: 'names the route "nope", which the provider does not declare (declared: "big", "small")',
    }])
    expect(issuesOf({ ...ROUTED, policy: { summarizationProvider: 'other', summarizationModel: 'small' } })[0]?.path).toBe('/policy/summarizationProvider')
  })

  it('refuses a world that contradicts itself, each problem at its JSON path', () => {
    const bad: Scenario = {
      ...BASE,
      provider: {
        wire: 'openai', summary: 'tiny', conversation: 'ghost', contextWindow: 10,
        routes: [{ model: 'a', enforce: { window: 'prompt-plus-max-tokens' } }, { model: 'a', wire: 'deepseek' }],
      },
    }
    expect(issuesOf(bad)).toEqual([
      { code: 'SEMANTIC', path: '/provider/contextWindow', reason: 'belongs in each route when provider.routes is given' },
      { code: 'SEMANTIC', path: '/provider/routes/0/enforce/window', reason: 'sets window: prompt-plus-max-tokens, but the route "a" has no contextWindow to count against' },
      { code: 'SEMANTIC', path: '/provider/routes/1/model', reason: 'repeats the route model "a" of /provider/routes/0' },
      {
        code: 'SEMANTIC', path: '/provider/routes/1/wire',
        reason: 'is "deepseek", but the provider\'s wire is "openai": one provider serves one wire (routes of mixed wires are not supported)',
      },
      { code: 'SEMANTIC', path: '/provider/conversation', reason: 'names the route "ghost", which provider.routes does not declare (declared: "a", "a")' },
      { code: 'SEMANTIC', path: '/provider/summary', reason: 'names the route "tiny", which provider.routes does not declare (declared: "a", "a")' },
    ])
    expect(issuesOf({ ...BASE, provider: { ...BASE.provider, summary: 'mock' } })).toEqual([
      { code: 'SEMANTIC', path: '/provider/summary', reason: 'applies only with provider.routes (the shorthand declares one route)' },
    ])
  })

  it('refuses image byte limits below the largest image of an inline transcript', () => {
    const image = { attachmentId: 'a1', mediaType: 'image/png', bytes: 5000, width: 10, height: 10 }
    const withImage: Scenario = {
      ...BASE,
      provider: { ...BASE.provider, limits: { imageBytes: 4999, requestImageBytes: 5000 } },
      transcript: { inline: { turns: [{ user: [{ type: 'text', text: 'look' }, { type: 'image', attachment: image }], steps: [{ reply: 'ok' }] }] } },
    }
    expect(issuesOf(withImage)).toEqual([{
      code: 'SEMANTIC', path: '/provider/limits/imageBytes',
      reason: 'is 4999 bytes, below the largest image the transcript carries (5000 bytes): it could never be sent',
    }])
  })

  it('FAULT-44 switchTo names a declared route and excludes contextWindow', () => {
    const sw = resolveScenario({ ...ROUTED, faults: [{ kind: 'FAULT-44', params: { switchTo: 'small' } }] }, { file: FILE })
    expect(sw.faults[0]?.params.switchTo).toBe('small')
    expect(issuesOf({ ...ROUTED, faults: [{ kind: 'FAULT-44', params: { switchTo: 'huge', contextWindow: 5 } }] })).toEqual([
      { code: 'SEMANTIC', path: '/faults/0/params/switchTo', reason: 'names the route "huge", which provider.routes does not declare (declared: "big", "small")' },
      { code: 'SEMANTIC', path: '/faults/0/params/contextWindow', reason: 'cannot be combined with switchTo (the declared route has its own window)' },
    ])
  })
})
