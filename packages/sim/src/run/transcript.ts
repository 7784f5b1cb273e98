/**
 * The transcript a scenario replays (design §2 "transcript source"), from any of its five sources:
 * inline (already a fixtures `Transcript` after resolution), a seeded generator of packages/fixtures, an
 * external JSONL transcript file (`scenario/transcript-file.ts`), a real session file read by an importer
 * (`import/index.ts`, issue #20), or a recorded session log whose user
 * inputs, model replies (with usage), steering messages and tool results (with `error` and `meta`) are taken
 * turn by turn. A recorded turn that never completed a step contributes nothing; an unreadable log or file
 * is a `ScenarioError` naming the path; a bad line of a transcript file one naming the file and line.
 */
import {
  assertNever, readLog,
  type ContentBlock, type LogEvent, type SessionEvent, type ToolSchema,
} from '@compaction-sim/core'
import {
  generateTranscript, type Transcript, type TranscriptStep, type TranscriptToolResult, type TranscriptTurn,
} from '@compaction-sim/fixtures'
import { dirname, join } from 'node:path'
import { ScenarioError } from '../scenario/errors.ts'
import { FIXTURES_PREFIX, type ResolvedScenario } from '../scenario/resolve.ts'
import { readTranscriptFile } from '../scenario/transcript-file.ts'

/** The transcript of `scenario` under `seed` (the generator's seed; inline and recorded ignore it). */
export async function scenarioTranscript(scenario: ResolvedScenario, seed: number): Promise<Transcript> {
  const source = scenario.transcript
  switch (source.kind) {
    case 'inline': return structuredClone(source.transcript) as Transcript
    case 'generate': return generateTranscript({ generator: source.generator, seed, params: { ...source.params } })
    case 'recorded': {
      let events: LogEvent[]
      try {
        events = (await readLog(source.path, { dialect: source.dialect })).events
      } catch (err) {
        const reason = `cannot be read as a ${source.dialect} log: ${err instanceof Error ? err.message : String(err)}`
        throw new ScenarioError(scenario.file, [{ code: 'PATH', path: '/transcript/recorded', reason }], { cause: err })
      }
      return transcriptFromEvents(events)
    }
    case 'file': {
      // Named as the user wrote it, below the scenario's folder as the caller named the scenario.
      const shown = source.given.startsWith(FIXTURES_PREFIX) ? source.path : join(dirname(scenario.file), source.given)
      try {
        return await readTranscriptFile(source.path, shown)
      } catch (err) {
        if (err instanceof ScenarioError) throw err
        const why = err instanceof Error ? err.message : String(err)
        const reason = `names a transcript file that cannot be read (got ${JSON.stringify(source.given)}): ${why}`
        throw new ScenarioError(scenario.file, [{ code: 'PATH', path: '/transcript/file', reason }], { cause: err })
      }
    }
    case 'import': {
      // Imported at run start as `sim import` would (issue #20); bad input names the session file and field.
      const shown = source.given.startsWith(FIXTURES_PREFIX) ? source.path : join(dirname(scenario.file), source.given)
      const { importSession } = await import('../import/index.ts')
      try {
        return (await importSession(source.format, source.path, { keepSecrets: source.keepSecrets, shown })).transcript
      } catch (err) {
        if (err instanceof ScenarioError) throw err
        const why = err instanceof Error ? err.message : String(err)
        const reason = `names a ${source.format} session that cannot be imported (got ${JSON.stringify(source.given)}): ${why}`
        throw new ScenarioError(scenario.file, [{ code: 'PATH', path: '/transcript/import/path', reason }], { cause: err })
      }
    }
    default: return assertNever(source, 'transcript source')
  }
}

/**
 * Rebuilds the replayable part of a recorded log: per turn, the user's entered batch (the `user/message`
 * appends of step 1 whose source is the user), each step's final `assistant/message` (with its usage), the
 * `tool/result`s of its calls in logged order (with their `error` and `meta`), and as the step's `steer` the
 * user-sourced `user/message` appends that follow its reply within the turn (their blocks joined into one
 * message); the system prompt from the last `system/message`; tools from the last `request/header`.
 */
export function transcriptFromEvents(events: readonly LogEvent[]): Transcript {
  const turns: TranscriptTurn[] = []
  let systemPrompt = ''
  let tools: ToolSchema[] = []
  let turn: TranscriptTurn | null = null
  let step: TranscriptStep | null = null
  const flushStep = (): void => {
    if (turn !== null && step !== null) turn.steps.push(step)
    step = null
  }
  for (const raw of events) {
    const event = raw as SessionEvent
    switch (event.type) {
      case 'turn/start':
        turn = { user: [], steps: [] }
        break
      case 'turn/end':
        flushStep()
        if (turn !== null && turn.steps.length > 0) turns.push(turn)
        turn = null
        break
      case 'system/message':
        systemPrompt = event.data.content.flatMap((b: ContentBlock) => (b.type === 'text' ? [String(b['text'])] : [])).join('\n')
        break
      case 'request/header':
        tools = structuredClone(event.data.header.tools ?? []) as ToolSchema[]
        break
      case 'user/message': {
        const entered = event.surfaceOp === 'append' && event.data.source?.kind === 'user'
        if (turn !== null && turn.steps.length === 0 && step === null && entered) {
          turn.user.push(...structuredClone(event.data.content))
        } else if (turn !== null && step !== null && entered) {
          // Steering: user input entered after a step's reply, before the next step's request (one message per step).
          const current = step as TranscriptStep
          current.steer = [...current.steer ?? [], ...structuredClone(event.data.content)]
        }
        break
      }
      case 'assistant/message': {
        if (turn === null || event.data.interrupted === true) break
        flushStep()
        const reply = event.data.usage === undefined
          ? { blocks: structuredClone(event.data.message.content) }
          : { blocks: structuredClone(event.data.message.content), usage: { ...event.data.usage } }
        step = { reply, toolResults: [] }
        break
      }
      case 'tool/result': {
        const current = step as TranscriptStep | null
        if (current === null) break
        for (const block of event.data.message.content) {
          if (block.type !== 'tool-result') continue
          const content = structuredClone(block.content) as ContentBlock[]
          const result: TranscriptToolResult = block.isError === true
            ? { callId: String(block.toolCallId), content, isError: true }
            : { callId: String(block.toolCallId), content }
          if (event.data.error !== undefined) result.error = { name: event.data.error.name, code: event.data.error.code }
          if (event.data.meta !== undefined) result.meta = structuredClone(event.data.meta)
          current.toolResults.push(result)
        }
        break
      }
      default:
        break
    }
  }
  return { systemPrompt, tools, turns }
}
