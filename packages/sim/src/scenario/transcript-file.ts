/**
 * External transcript files (`transcript: {file: 'long-session.jsonl'}`): a JSONL file of any size, outside
 * the 1 MiB scenario limit, read as a stream and validated line by line. Format (UTF-8, one JSON object per
 * line, `\n` or `\r\n` line ends, a final newline optional, no blank lines):
 *
 *   line 1 (optional)  {"systemPrompt": "…", "tools": [ … ], "facts": [ … ]}      `#/definitions/TranscriptFileHeader`
 *   every other line   {"user": "…", "steps": [ … ]}                            `#/definitions/InlineTurn`
 *
 * A first line without `user` and `steps` is the header; each turn line has exactly the shape of one turn of
 * an inline transcript (compact replies, results matched to calls, `error`/`meta`, `steer`) and the same
 * cross-field rules apply, call ids being unique across the whole file. Every problem becomes a
 * `ScenarioError` issue naming the JSONL file, the 1-based line and the JSON pointer of the field within
 * that line (`long-session.jsonl:7: /steps/0/toolResults/1/callId names no tool call …`): an input error,
 * exit 2. Reading stops after `SCENARIO_ISSUES_MAX` problems.
 */
import { createReadStream } from 'node:fs'
import { createRequire } from 'node:module'
import type { ValidateFunction } from 'ajv'
import type { Transcript, TranscriptTurn } from '@compaction-sim/fixtures'
import { ScenarioError, type ScenarioIssue } from './errors.ts'
import { SCENARIO_ISSUES_MAX, schemaIssues } from './load.ts'
import { inlineContext, inlineTools, inlineTurn, type InlineContext } from './resolve.ts'
import type { InlineTurn, TranscriptFileHeader } from './types.ts'

/** Most turn lines one transcript file may hold. */
export const TRANSCRIPT_FILE_TURNS_MAX = 100_000

const require = createRequire(import.meta.url)
const validators = require('./validate-transcript-line.generated.cjs') as {
  turn: ValidateFunction<InlineTurn>
  header: ValidateFunction<TranscriptFileHeader>
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The state of one read: what was collected so far and where problems go. */
interface FileRead {
  readonly issues: ScenarioIssue[]
  readonly context: InlineContext
  readonly turns: TranscriptTurn[]
  header: TranscriptFileHeader | null
  /** 1-based number of the line being judged. */
  line: number
}

/**
 * Reads and validates the transcript file at `path`; `shown` names it in messages. Resolves with the
 * transcript; rejects with a `ScenarioError` whose `file` is `shown` (every issue has its line, except
 * "holds no turn") — or, when the file cannot be opened or read, with the Node error (the caller names the
 * scenario field).
 */
export async function readTranscriptFile(path: string, shown: string): Promise<Transcript> {
  const issues: ScenarioIssue[] = []
  const context = inlineContext(issues, (pointer) => `line ${read.line} ${pointer}`)
  const read: FileRead = { issues, context, turns: [], header: null, line: 0 }
  const full = (): boolean => issues.length >= SCENARIO_ISSUES_MAX
  // Split on the byte 0x0A (never part of a multi-byte UTF-8 sequence), then decode each line on its own, so
  // a bad byte is reported at its line; a long line's pieces are joined once, when its newline arrives.
  const parts: Buffer[] = []
  const stream = createReadStream(path)
  try {
    reading: for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0
      for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
        parts.push(chunk.subarray(start, nl))
        judgeLine(read, parts.length === 1 ? parts[0] as Buffer : Buffer.concat(parts))
        parts.length = 0
        start = nl + 1
        if (full()) break reading
      }
      if (start < chunk.length) parts.push(chunk.subarray(start))
    }
  } finally {
    stream.destroy()
  }
  if (!full() && parts.length > 0) judgeLine(read, Buffer.concat(parts))
  if (issues.length === 0 && read.turns.length === 0) {
    issues.push({ code: 'SEMANTIC', path: '', reason: 'holds no turn (one {user, steps} object per line)' })
  }
  const before = issues.length
  const tools = issues.length === 0 ? inlineTools(read.header?.tools, '', read.context) : []
  // repeated names of the header's tools
  for (let i = before; i < issues.length; i++) issues[i] = { ...(issues[i] as ScenarioIssue), line: 1 }
  if (issues.length > 0) throw new ScenarioError(shown, full() ? [...issues.slice(0, SCENARIO_ISSUES_MAX), stopped(read.line)] : issues)
  const transcript: Transcript = { systemPrompt: read.header?.systemPrompt ?? '', tools, turns: read.turns }
  if (read.header?.facts !== undefined) transcript.facts = [...read.header.facts]
  return transcript
}

const NEWLINE = 0x0a

function stopped(line: number): ScenarioIssue {
  return { code: 'JSONL', path: '', reason: `stopped reading after ${SCENARIO_ISSUES_MAX} problems`, line }
}

function issue(read: FileRead, line: number, code: ScenarioIssue['code'], path: string, reason: string): void {
  read.issues.push({ code, path, reason, line })
}

/** Judges the next line's bytes: the header (line 1 only) or one turn; problems are issues at that line. */
function judgeLine(read: FileRead, bytes: Buffer): void {
  read.line++
  const line = read.line
  let raw: string
  try {
    raw = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return issue(read, line, 'JSONL', '', 'is not valid UTF-8') // the decoder's TypeError says no more than that
  }
  const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw
  if (text.trim() === '') return issue(read, line, 'JSONL', '', 'is empty (one JSON object per line, no blank lines)')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return issue(read, line, 'JSONL', '', `is not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (!isPlainObject(value)) {
    return issue(read, line, 'JSONL', '', 'must be a JSON object: a turn {user, steps} (or the header {systemPrompt, tools, facts} on line 1)')
  }
  if (line === 1 && !('user' in value) && !('steps' in value)) {
    if (!validators.header(value)) return schemaProblems(read, line, validators.header.errors)
    read.header = value
    return
  }
  if (read.turns.length >= TRANSCRIPT_FILE_TURNS_MAX) {
    const reason = `is turn ${read.turns.length + 1}; a transcript file holds at most ${TRANSCRIPT_FILE_TURNS_MAX} turns`
    return issue(read, line, 'JSONL', '', reason)
  }
  if (!validators.turn(value)) return schemaProblems(read, line, validators.turn.errors)
  const before = read.issues.length
  const turn = inlineTurn(value, read.turns.length, '', read.context)
  for (let i = before; i < read.issues.length; i++) read.issues[i] = { ...(read.issues[i] as ScenarioIssue), line }
  read.turns.push(turn)
}

function schemaProblems(read: FileRead, line: number, errors: ValidateFunction['errors']): void {
  for (const found of schemaIssues(errors ?? [])) {
    const { key: _key, ...rest } = found
    read.issues.push({ ...rest, line })
  }
}
