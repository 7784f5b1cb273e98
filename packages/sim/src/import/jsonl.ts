/**
 * The JSONL formats (issue #20): `claude-code` session files and `codex` CLI rollouts.
 *
 * Claude Code: one record per line. `user`/`assistant` records carry `message {role, content}` with Messages
 * API blocks (an assistant message is split over several lines sharing `message.id`: they join one reply);
 * `uuid`/`parentUuid` (and `logicalParentUuid` across a compaction boundary) link records, and only the
 * branch ending at the last record is replayed (records on abandoned branches, after an edit or a rewind,
 * are dropped). Dropped and reported: `summary` lines (titles), sidechain records (sub-agents), `system`,
 * `file-history-snapshot` and other bookkeeping records, `toolUseResult` (a structured duplicate of the
 * tool_result), and usage.
 *
 * Codex: `{timestamp, type, payload}` lines. `session_meta` gives the instructions (system prompt);
 * `response_item` payloads are Responses items; `event_msg` (UI events duplicating the items), `turn_context`
 * and `compacted` lines are dropped and reported.
 */
import { anthropicMessageItems } from './anthropic.ts'
import { Fields, isObj, jsonlLines, type Obj } from './input.ts'
import { responsesItem } from './openai.ts'
import type { SessionBuilder } from './session.ts'

interface ClaudeRecord {
  readonly line: number
  readonly value: Obj
}

/** Reads a `claude-code` session file. */
export function readClaudeCode(text: string, b: SessionBuilder): void {
  const records: ClaudeRecord[] = []
  const byUuid = new Map<string, Obj>()
  for (const { line, value } of jsonlLines(text)) {
    const f = new Fields(line)
    const record = f.obj(value, '', 'a JSON object (a session record with a type)')
    const type = f.str(record['type'], '/type', 'the record type (user, assistant, summary, system, …)')
    if (typeof record['uuid'] === 'string') byUuid.set(record['uuid'], record)
    if (type === 'summary') {
      b.drop(f.where(''), 'summary line', 'a session title, not part of the conversation')
      continue
    }
    if (type !== 'user' && type !== 'assistant') {
      b.drop(f.where(''), `${type} record`, 'bookkeeping of Claude Code, not sent to the model as a message')
      continue
    }
    const message = f.obj(record['message'], '/message', 'an object {role, content}')
    f.str(message['role'], '/message/role', 'user or assistant')
    if (message['content'] === undefined) f.fail('/message/content', 'is missing: a string or an array of content blocks')
    if (record['isSidechain'] === true) {
      b.drop(f.where(''), `sidechain ${type} record`, 'a sub-agent conversation, not the main session')
      continue
    }
    records.push({ line, value: record })
  }
  const onBranch = mainBranch(records, byUuid)
  for (const { line, value } of records) {
    const f = new Fields(line)
    if (onBranch !== null && !onBranch.has(value['uuid'] as string) && !resultsOnly(value)) {
      b.drop(f.where(''), `${String(value['type'])} record`, 'on an abandoned branch (not an ancestor of the last message)')
      continue
    }
    const message = value['message'] as Obj
    const role = value['type'] as 'user' | 'assistant'
    if (value['toolUseResult'] !== undefined) b.drop(f.where('/toolUseResult'), 'toolUseResult', 'a structured copy of the tool_result for the UI; the tool_result itself is kept')
    if (message['usage'] !== undefined) b.drop(f.where('/message/usage'), 'usage', 'the mock provider counts usage from the replayed request')
    const messageId = typeof message['id'] === 'string' ? message['id'] : undefined
    for (const item of anthropicMessageItems(f, b, role, message['content'], '/message', messageId)) b.push(item)
  }
}

/**
 * True for a user record holding only tool_result blocks: kept off the branch too, since Claude Code may
 * parent each result of parallel calls on its own tool_use line (the builder drops a result without a call).
 */
function resultsOnly(record: Obj): boolean {
  const content = (record['message'] as Obj)['content']
  return record['type'] === 'user' && Array.isArray(content) && content.length > 0
    && content.every((block) => isObj(block) && block['type'] === 'tool_result')
}

/** The uuids on the chain ending at the last record, or null when records lack uuids (all are kept). */
function mainBranch(records: readonly ClaudeRecord[], byUuid: ReadonlyMap<string, Obj>): Set<string> | null {
  const last = records.at(-1)
  if (last === undefined || records.some((r) => typeof r.value['uuid'] !== 'string')) return null
  const chain = new Set<string>()
  let at: Obj | undefined = last.value
  while (at !== undefined && typeof at['uuid'] === 'string' && !chain.has(at['uuid'])) {
    chain.add(at['uuid'])
    const parent: unknown = typeof at['parentUuid'] === 'string' ? at['parentUuid'] : at['logicalParentUuid']
    at = typeof parent === 'string' ? byUuid.get(parent) : undefined
  }
  return chain
}

/** Reads a `codex` rollout file. */
export function readCodex(text: string, b: SessionBuilder): void {
  for (const { line, value } of jsonlLines(text)) {
    const f = new Fields(line)
    const record = f.obj(value, '', 'a JSON object {timestamp, type, payload}')
    const type = f.str(record['type'], '/type', 'the line type (session_meta, response_item, event_msg, turn_context)')
    const payload = f.obj(record['payload'], '/payload', 'the payload object')
    switch (type) {
      case 'session_meta': {
        const base = isObj(payload['base_instructions']) ? payload['base_instructions']['text'] : undefined
        const instructions = f.optStr(payload['instructions'], '/payload/instructions', 'a string') ?? (typeof base === 'string' ? base : undefined)
        if (instructions !== undefined && instructions !== '') b.push({ kind: 'system', text: instructions, where: f.where('/payload') })
        break
      }
      case 'response_item':
        responsesItem(f, b, payload, '/payload')
        break
      case 'event_msg':
        b.drop(f.where(''), `event_msg ${typeof payload['type'] === 'string' ? payload['type'] : ''}`.trim(), 'a UI event; the conversation is read from response_item lines')
        break
      case 'turn_context':
        b.drop(f.where(''), 'turn_context', 'per-turn settings (model, sandbox, cwd), not a message')
        break
      case 'compacted':
        b.drop(f.where(''), 'compacted', 'a Codex compaction summary; the session is replayed uncompacted')
        break
      default:
        b.drop(f.where(''), `${type} line`, 'not a line type of a Codex rollout this importer reads')
    }
  }
}
