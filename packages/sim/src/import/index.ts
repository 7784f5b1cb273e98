/**
 * Importers (issue #20): a real session file of one of `IMPORT_FORMATS` becomes a fixtures `Transcript`
 * (what `sim run` replays), with what could not be carried listed as `Dropped` entries and, unless
 * `keepSecrets`, every secret of `SECRET_PATTERNS` replaced by `[REDACTED:<kind>]`. Used by `sim import`
 * and by the scenario source `transcript: {import: {format, path}}`.
 *
 * Bad input throws a `ScenarioError` naming the file: `file:line: /field reason` for the JSONL formats,
 * `file: /json/path reason` for the JSON ones (an input error, exit 2). A DSH log that cannot be read
 * throws the core's `LogError` (`file:line: reason`, also exit 2).
 */
import { readFile } from 'node:fs/promises'
import { readLog } from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'
import { transcriptFromEvents } from '../run/transcript.ts'
import { ScenarioError } from '../scenario/errors.ts'
import { readAnthropicMessages } from './anthropic.ts'
import { ImportInputError, parseJsonDocument } from './input.ts'
import { readClaudeCode, readCodex } from './jsonl.ts'
import { readOpenAiChat, readOpenAiResponses } from './openai.ts'
import { redactTranscript, type RedactionCounts } from './redact.ts'
import { SessionBuilder, type Dropped } from './session.ts'

export type { Dropped } from './session.ts'
export { SECRET_PATTERNS, type RedactionCounts } from './redact.ts'

/** The session formats `sim import` reads (a closed list; the scenario schema's `import.format` enum). */
export const IMPORT_FORMATS = ['openai-chat', 'openai-responses', 'anthropic-messages', 'claude-code', 'codex', 'dsh'] as const

/** One import format. */
export type ImportFormat = (typeof IMPORT_FORMATS)[number]

/** What one import produced. */
export interface ImportResult {
  readonly transcript: Transcript
  readonly dropped: readonly Dropped[]
  /** Secrets replaced, per pattern kind (empty with `keepSecrets`). */
  readonly redacted: RedactionCounts
}

/** Options of `importSession`. */
export interface ImportOptions {
  /** Keep secrets as they are (`--keep-secrets`); default false: redact. */
  readonly keepSecrets?: boolean
  /** How the file is named in error messages (default `path`). */
  readonly shown?: string
}

/** Imports the session at `path` as `format`. */
export async function importSession(format: ImportFormat, path: string, options: ImportOptions = {}): Promise<ImportResult> {
  const shown = options.shown ?? path
  const { transcript, dropped } = format === 'dsh' ? await importDsh(path) : await importText(format, path, shown)
  if (options.keepSecrets === true) return { transcript, dropped, redacted: {} }
  const redacted = redactTranscript(transcript)
  return { transcript: redacted.transcript, dropped, redacted: redacted.counts }
}

async function importText(format: Exclude<ImportFormat, 'dsh'>, path: string, shown: string): Promise<{ transcript: Transcript; dropped: Dropped[] }> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    const missing = error instanceof Error && 'code' in error && error.code === 'ENOENT'
    const reason = missing ? 'no such file' : `cannot be read: ${error instanceof Error ? error.message : String(error)}`
    throw new ScenarioError(shown, [{ code: 'READ', path: '', reason }], { cause: error })
  }
  const builder = new SessionBuilder()
  try {
    switch (format) {
      case 'openai-chat': readOpenAiChat(parseJsonDocument(text), builder); break
      case 'openai-responses': readOpenAiResponses(parseJsonDocument(text), builder); break
      case 'anthropic-messages': readAnthropicMessages(parseJsonDocument(text), builder); break
      case 'claude-code': readClaudeCode(text, builder); break
      case 'codex': readCodex(text, builder); break
      default: {
        const never: never = format
        throw new Error(`unknown import format ${String(never)}`)
      }
    }
  } catch (error) {
    if (!(error instanceof ImportInputError)) throw error
    const code = error.line !== undefined && error.path === '' ? 'JSONL' : 'SCHEMA'
    const issue = error.line === undefined ? { code, path: error.path, reason: error.reason } as const
      : { code, path: error.path, reason: error.reason, line: error.line } as const
    throw new ScenarioError(shown, [issue], { cause: error })
  }
  const transcript = builder.finish()
  if (transcript.turns.length === 0) {
    throw new ScenarioError(shown, [{ code: 'SEMANTIC', path: '', reason: `holds no complete turn (a user message answered by the assistant) as ${format}` }])
  }
  return { transcript, dropped: builder.dropped }
}

/** A DSH session log, read by the core (dialect `dsh-0.1.0-rc.8`) and rebuilt as `sim run` replays recorded logs. */
async function importDsh(path: string): Promise<{ transcript: Transcript; dropped: Dropped[] }> {
  const { events } = await readLog(path, { dialect: 'dsh-0.1.0-rc.8' })
  const transcript = transcriptFromEvents(events)
  const dropped: Dropped[] = []
  // A pruned result is logged again (its replacement): the step keeps the first, original, result of each call.
  let relogged = 0
  for (const turn of transcript.turns) {
    for (const step of turn.steps) {
      const seen = new Set<string>()
      step.toolResults = step.toolResults.filter((result) => {
        if (!seen.has(result.callId)) return seen.add(result.callId)
        relogged++
        return false
      })
    }
  }
  if (relogged > 0) {
    dropped.push({ where: 'log', what: `${relogged} re-logged tool/result events`, why: 'a later copy of a result (a prune replacement); the original result is kept' })
  }
  const compaction = events.filter((e) => e.type.startsWith('compaction/')).length
  if (compaction > 0) {
    dropped.push({ where: 'log', what: `${compaction} compaction/* events`, why: 'the session is replayed uncompacted: the subject under test compacts it' })
  }
  return { transcript, dropped }
}
