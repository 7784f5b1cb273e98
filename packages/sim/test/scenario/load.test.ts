/**
 * `parseScenario` / `loadScenario`: the smoke examples load; each class of bad input is a `ScenarioError`
 * (CLI exit 2) whose message names `file:line:column`, the JSON path and what was expected.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ScenarioError, formatScenarioIssue, scenarioErrorTitle, type ScenarioErrorCode } from '../../src/scenario/errors.ts'
import { SCENARIO_BYTES_MAX, loadScenario, parseScenario } from '../../src/scenario/load.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'

const SMOKE_DIR = fileURLToPath(new URL('../../../../scenarios/smoke/', import.meta.url))
const FILE = 'scenarios/x.yaml'

const MINIMAL = `name: minimal
seed: 1
provider:
  wire: openai
  model: mock
  contextWindow: 4000
transcript:
  inline:
    turns:
      - user: hi
        steps:
          - reply: hello
`

/** The ScenarioError `parseScenario(text)` throws (fails the test when it returns or throws anything else). */
function errorOf(text: string, file = FILE): ScenarioError {
  try {
    parseScenario(text, file)
  } catch (error) {
    if (error instanceof ScenarioError) return error
    throw error
  }
  throw new Error('expected a ScenarioError')
}

async function loadError(path: string): Promise<ScenarioError> {
  try {
    await loadScenario(path)
  } catch (error) {
    if (error instanceof ScenarioError) return error
    throw error
  }
  throw new Error('expected a ScenarioError')
}

describe('valid scenarios', () => {
  it.each(['basic-pressure.yaml', 'no-pressure.yaml', 'overflow-recovery.yaml'])('scenarios/smoke/%s loads and resolves', async (name) => {
    const file = join(SMOKE_DIR, name)
    const scenario = await loadScenario(file)
    expect(scenario.name).toBe(name.replace(/\.yaml$/, ''))
    const resolved = resolveScenario(scenario, { file })
    expect(Object.isFrozen(resolved)).toBe(true)
    expect(resolved.transcript.kind).toBe('inline')
  })

  it('parses a minimal scenario to exactly its data', () => {
    expect(parseScenario(MINIMAL, FILE)).toEqual({
      name: 'minimal', seed: 1, provider: { wire: 'openai', model: 'mock', contextWindow: 4000 },
      transcript: { inline: { turns: [{ user: 'hi', steps: [{ reply: 'hello' }] }] } },
    })
  })

  it('accepts anchors and aliases within the limit', () => {
    const text = `${MINIMAL}faults:\n  - &overflow { kind: FAULT-01, when: { requestIndex: 0 } }\n  - *overflow\n`
    const fault = { kind: 'FAULT-01', when: { requestIndex: 0 } }
    expect(parseScenario(text, FILE).faults).toEqual([fault, fault])
  })
})

describe('untrusted keys', () => {
  it('keeps __proto__ in free-form values as plain data, without touching any prototype', () => {
    const text = `${MINIMAL}expect:\n  events:\n    - { type: turn/end, data: { __proto__: { polluted: true } } }\n`
    const data = resolveScenario(parseScenario(text, FILE), { file: FILE }).expect.events[0]?.data
    expect(data !== null && data !== undefined && Object.hasOwn(data, '__proto__')).toBe(true)
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype)
  })
})

describe('each error class names file:line:column', () => {
  it('YAML syntax error', () => {
    const error = errorOf('name: [minimal\nseed: 1\n')
    expect(error.code).toBe('YAML')
    expect(error.message).toMatchInlineSnapshot(`"scenarios/x.yaml:2:1: Flow sequence in block collection must be sufficiently indented and end with a ]"`)
  })

  it('duplicate key', () => {
    expect(errorOf('name: a\nseed: 1\nname: b\n').message).toMatchInlineSnapshot(`"scenarios/x.yaml:3:1: Map keys must be unique"`)
  })

  it('custom and YAML 1.1 tags are refused', () => {
    expect(errorOf('name: !!binary aGk=\n').message).toMatchInlineSnapshot(`"scenarios/x.yaml:1:7: Unresolved tag: tag:yaml.org,2002:binary"`)
    expect(errorOf('name: !js/function x\n').code).toBe('YAML')
  })

  it('wrong type', () => {
    const error = errorOf(MINIMAL.replace('contextWindow: 4000', 'contextWindow: 4k'))
    expect(error.code).toBe('SCHEMA')
    expect(error.message).toMatchInlineSnapshot(`"scenarios/x.yaml:6:18: /provider/contextWindow must be integer (got "4k")"`)
    expect(error.issues).toEqual([{ code: 'SCHEMA', path: '/provider/contextWindow', reason: 'must be integer (got "4k")', line: 6, column: 18 }])
  })

  it('unknown key, with a suggestion', () => {
    expect(errorOf(MINIMAL.replace('contextWindow:', 'contextWindw:')).message).toMatchInlineSnapshot(`"scenarios/x.yaml:6:3: /provider has unknown key "contextWindw" (did you mean "contextWindow"?)"`)
    expect(errorOf(`${MINIMAL}colour: red\n`).message).toMatchInlineSnapshot(`"scenarios/x.yaml:13:1: / has unknown key "colour"; allowed keys: name, description, tags, seed, subject, dialect, provider, policy, pruner, transcript, faults, manual, concurrent, sessions, restart, probes, expect"`)
  })

  it('enum violation', () => {
    expect(errorOf(MINIMAL.replace('wire: openai', 'wire: gemini')).message).toMatchInlineSnapshot(`"scenarios/x.yaml:4:9: /provider/wire must be one of "openai", "deepseek", "anthropic" (got "gemini")"`)
  })

  it('bad fault id', () => {
    expect(errorOf(`${MINIMAL}faults:\n  - kind: FAULT-18\n`).message).toMatchInlineSnapshot(`"scenarios/x.yaml:14:11: /faults/0/kind must be a fault id of protocol §13 (FAULT-01…17, 20…33, 40…46, 50…57, 60…66, 70…79, 80…84) (got "FAULT-18")"`)
  })

  it('missing required keys and a transcript without a source', () => {
    expect(errorOf('name: x\ntranscript: {}\n').message).toMatchInlineSnapshot(`
      "scenarios/x.yaml:1:1: / must have the key "seed"
      scenarios/x.yaml:1:1: / must have the key "provider"
      scenarios/x.yaml:2:13: /transcript must have exactly one of the keys recorded, generate, inline, file, import"
    `)
  })

  it('reports every schema problem at once, in file order', () => {
    const text = MINIMAL.replace('seed: 1', 'seed: -1').replace('wire: openai', 'wire: 3').replace('- reply: hello', '- reply: [hello]')
    expect(errorOf(text).message).toMatchInlineSnapshot(`
      "scenarios/x.yaml:2:7: /seed must be >= 0 (got -1)
      scenarios/x.yaml:4:9: /provider/wire must be string (got 3)
      scenarios/x.yaml:12:20: /transcript/inline/turns/0/steps/0/reply must be string or object (got a list)"
    `)
  })

  it('path escape from transcript.recorded', () => {
    const text = MINIMAL.replace(/transcript:[\s\S]*$/, 'transcript:\n  recorded: ../../../etc/passwd\n')
    const error = errorOf(text)
    expect(error.code).toBe('PATH')
    expect(error.message).toMatchInlineSnapshot(`"scenarios/x.yaml:8:13: /transcript/recorded escapes the scenario's folder (got "../../../etc/passwd"): use a path inside the folder of the scenario file, or "fixtures:<path>" for packages/fixtures/transcripts"`)
    expect(errorOf(text.replace('../../../etc/passwd', 'fixtures:../../../etc/passwd')).message).toMatch(/^scenarios\/x\.yaml:8:13: \/transcript\/recorded escapes/)
    expect(errorOf(text.replace('../../../etc/passwd', '/etc/passwd')).code).toBe('PATH')
  })

  it('policy semantic error from resolveCompactionConfig, mapped to its YAML path', () => {
    const text = `${MINIMAL}policy:\n  thresholdRatio: 0.5\n  modelPolicies:\n    - provider: openai\n      model: mock\n      retainRatio: 0.7\n`
    const error = errorOf(text)
    expect(error.code).toBe('POLICY')
    expect(error.message).toMatchInlineSnapshot(`"scenarios/x.yaml:18:20: /policy/modelPolicies/0/retainRatio breaks the retention rule: retainRatio 0.7 must be strictly below thresholdRatio 0.5 (§3.2 rule 7)"`)
    expect(errorOf(`${MINIMAL}policy:\n  retainRatio: 0.1\n  retainTokens: 10\n`).message).toMatchInlineSnapshot(`"scenarios/x.yaml:15:17: /policy/retainTokens cannot be combined with retainRatio in the same scope (§3.2 rule 4)"`)
    expect(errorOf(`${MINIMAL}policy:\n  thresholdRatio: 1.5\n`).message).toMatchInlineSnapshot(`"scenarios/x.yaml:14:19: /policy/thresholdRatio must be a finite number in (0, 1], got 1.5 (§3.2 rule 2)"`)
  })

  it('pruner semantic error from resolvePruneConfig, mapped to its YAML path', () => {
    expect(errorOf(`${MINIMAL}pruner:\n  thresholdChars: 100\n  headChars: 90\n`).message).toMatchInlineSnapshot(`"scenarios/x.yaml:14:19: /pruner/thresholdChars headChars 90 + marker 43 + tailChars 1024 = 1157 exceeds thresholdChars 100; a pruned result could still exceed the threshold (§5.1)"`)
  })

  it('generator errors from the fixtures registry, mapped to their YAML paths', () => {
    const generate = (body: string): string => MINIMAL.replace(/transcript:[\s\S]*$/, `transcript:\n  generate:\n${body}`)
    expect(errorOf(generate('    generator: nope\n    turns: 2\n')).message).toMatchInlineSnapshot(`"scenarios/x.yaml:9:16: /transcript/generate/generator unknown generator "nope" (known: coding-session, shaped)"`)
    expect(errorOf(generate('    generator: coding-session\n    turns: 2\n    params:\n      stepsPerTurn: [3, 1]\n')).message)
      .toMatchInlineSnapshot(`"scenarios/x.yaml:12:21: /transcript/generate/params/stepsPerTurn min 3 is greater than max 1"`)
    expect(errorOf(generate('    generator: coding-session\n    turns: 2\n    params: { turns: 3 }\n')).message).toMatchInlineSnapshot(`"scenarios/x.yaml:11:22: /transcript/generate/params/turns is set by generate.turns; remove it from params"`)
    expect(parseScenario(generate('    generator: coding-session\n    turns: 2\n'), FILE).transcript).toEqual({ generate: { generator: 'coding-session', turns: 2 } })
  })

  it('cross-field rules of the format', () => {
    const text = `${MINIMAL}faults:\n  - kind: FAULT-50\n    params: { status: 500 }\nexpect:\n  outcome: [completed, completed]\n`
    expect(errorOf(text).message).toMatchInlineSnapshot(`
      "scenarios/x.yaml:15:23: /faults/0/params/status applies only to request faults (FAULT-01…33), not to FAULT-50
      scenarios/x.yaml:17:12: /expect/outcome lists 2 outcomes for 1 turn"
    `)
  })

  it('a provider world that contradicts itself (issue #15)', () => {
    const routes = (lines: string): string => MINIMAL.replace('  model: mock\n  contextWindow: 4000\n', lines)
    expect(errorOf(routes('  routes:\n    - { model: big, contextWindow: 8000 }\n    - { model: big }\n  summary: small\n')).message)
      .toMatchInlineSnapshot(`
        "scenarios/x.yaml:7:16: /provider/routes/1/model repeats the route model "big" of /provider/routes/0
        scenarios/x.yaml:8:12: /provider/summary names the route "small", which provider.routes does not declare (declared: "big", "big")"
      `)
    expect(errorOf(routes('  routes:\n    - { model: big }\n  conversation: other\n')).message)
      .toMatchInlineSnapshot(`"scenarios/x.yaml:7:17: /provider/conversation names the route "other", which provider.routes does not declare (declared: "big")"`)
    expect(errorOf(MINIMAL.replace('contextWindow: 4000', 'contextWindow: -5')).message)
      .toMatchInlineSnapshot(`"scenarios/x.yaml:6:18: /provider/contextWindow must be >= 1 (got -5)"`)
    expect(errorOf(routes('  routes:\n    - { model: big, contextWindow: 0, maxOutputTokens: 0 }\n')).message).toMatchInlineSnapshot(`
      "scenarios/x.yaml:6:36: /provider/routes/0/contextWindow must be >= 1 (got 0)
      scenarios/x.yaml:6:56: /provider/routes/0/maxOutputTokens must be >= 1 (got 0)"
    `)
    expect(errorOf(`${MINIMAL.replace('contextWindow: 4000', 'contextWindow: 4000\n  limits: { imagesPerRequest: 0, requestImageBytes: 0 }')}`).message)
      .toMatchInlineSnapshot(`
        "scenarios/x.yaml:7:31: /provider/limits/imagesPerRequest must be >= 1 (got 0)
        scenarios/x.yaml:7:53: /provider/limits/requestImageBytes must be >= 1 (got 0)"
      `)
    expect(errorOf(MINIMAL.replace('  contextWindow: 4000\n', '  enforce: { window: prompt-plus-max-tokens }\n')).message)
      .toMatchInlineSnapshot(`"scenarios/x.yaml:6:22: /provider/enforce/window sets window: prompt-plus-max-tokens, but the route "mock" has no contextWindow to count against"`)
    expect(errorOf(MINIMAL.replace('  contextWindow: 4000\n', '  contextWindow: 4000\n  enforce: sometimes\n')).message)
      .toMatchInlineSnapshot(`"scenarios/x.yaml:7:12: /provider/enforce must be one of "on", "off" (got "sometimes")"`)
    expect(errorOf(MINIMAL.replace('  model: mock\n', '  model: mock\n  routes: [{ model: b }]\n')).message).toMatchInlineSnapshot(`"scenarios/x.yaml:4:3: /provider must have exactly one of the keys model (one route) or routes"`)
    const image = '{ type: image, attachment: { attachmentId: a1, mediaType: image/png, bytes: 2048, width: 8, height: 8 } }'
    const withImage = MINIMAL.replace('contextWindow: 4000', 'contextWindow: 4000\n  limits: { imageBytes: 1000 }')
      .replace('- user: hi', `- user: [{ type: text, text: hi }, ${image}]`)
    expect(errorOf(withImage).message).toMatchInlineSnapshot(`"scenarios/x.yaml:7:25: /provider/limits/imageBytes is 1000 bytes, below the largest image the transcript carries (2048 bytes): it could never be sent"`)
  })

  it('alias bombs, non-finite numbers and deep nesting', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]', 'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]'].join('\n')
    expect(errorOf(bomb).message).toMatchInlineSnapshot(`"scenarios/x.yaml:2:8: expands aliases too often (limit 100): Excessive alias count indicates a resource exhaustion attack"`)
    expect(errorOf('name: x\nseed: .nan\n').message).toMatchInlineSnapshot(`"scenarios/x.yaml:2:7: /seed must be a finite number (got NaN)"`)
    expect(errorOf(`x: ${'['.repeat(100)}${']'.repeat(100)}\n`).message).toMatchInlineSnapshot(`"scenarios/x.yaml:1:67: nests deeper than 64 levels"`)
    expect(errorOf('['.repeat(20000)).code).toBe('YAML')
  })

  it('size limit', () => {
    const error = errorOf(`# ${'x'.repeat(SCENARIO_BYTES_MAX)}\n`)
    expect(error.code).toBe('TOO_LARGE')
    expect(error.message).toMatchInlineSnapshot(`"scenarios/x.yaml: is larger than 1048576 bytes"`)
  })

  it('every code has a title and formats without a position when none is known', () => {
    const codes: ScenarioErrorCode[] = ['READ', 'TOO_LARGE', 'YAML', 'SCHEMA', 'POLICY', 'PATH', 'SEMANTIC']
    expect(codes.map(scenarioErrorTitle)).toHaveLength(7)
    expect(formatScenarioIssue('f.yaml', { code: 'SCHEMA', path: '', reason: 'must be object' })).toBe('f.yaml: / must be object')
    expect(() => new ScenarioError('f.yaml', [])).toThrow(TypeError)
  })
})

describe('loadScenario on disk', () => {
  let dir = ''
  let outside = ''

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'scenario-'))
    outside = await mkdtemp(join(tmpdir(), 'outside-'))
    await mkdir(join(dir, 'logs'))
    await writeFile(join(dir, 'logs', 'a.jsonl'), '')
    await writeFile(join(outside, 'secret.jsonl'), '')
    await symlink(join(outside, 'secret.jsonl'), join(dir, 'logs', 'link.jsonl'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
    await rm(outside, { recursive: true, force: true })
  })

  const recorded = (path: string): string => MINIMAL.replace(/transcript:[\s\S]*$/, `transcript:\n  recorded: ${path}\n`)

  it('resolves a recorded log inside the scenario folder', async () => {
    const file = join(dir, 'ok.yaml')
    await writeFile(file, recorded('logs/a.jsonl'))
    const resolved = resolveScenario(await loadScenario(file), { file })
    expect(resolved.transcript).toEqual({ kind: 'recorded', path: join(dir, 'logs', 'a.jsonl'), root: 'scenario', given: 'logs/a.jsonl', dialect: 'seed' })
  })

  it('refuses a missing recorded log, naming its line', async () => {
    const file = join(dir, 'missing.yaml')
    await writeFile(file, recorded('logs/none.jsonl'))
    const error = await loadError(file)
    expect(error.code).toBe('PATH')
    expect(error.message.replace(dir, '<tmp>')).toMatch(/^<tmp>\/missing\.yaml:8:13: \/transcript\/recorded names a file that cannot be read/)
  })

  it('refuses a symbolic link that leads outside', async () => {
    const file = join(dir, 'link.yaml')
    await writeFile(file, recorded('logs/link.jsonl'))
    expect((await loadError(file)).message.replace(dir, '<tmp>')).toMatchInlineSnapshot(`"<tmp>/link.yaml:8:13: /transcript/recorded resolves through a symbolic link outside the scenario's folder and the fixtures transcripts (got "logs/link.jsonl")"`)
  })

  it('refuses a missing scenario file and a directory with READ', async () => {
    const missing = await loadError(join(dir, 'nope.yaml'))
    expect([missing.code, missing.message.replace(dir, '<tmp>')]).toEqual(['READ', '<tmp>/nope.yaml: no such file'])
    expect((await loadError(dir)).code).toBe('READ')
  })

  it('refuses an oversized file before reading it', async () => {
    const file = join(dir, 'big.yaml')
    await writeFile(file, `# ${'x'.repeat(SCENARIO_BYTES_MAX)}\n`)
    expect((await loadError(file)).code).toBe('TOO_LARGE')
  })
})
