/**
 * The neutral half of every importer (issue #20 "Importers"): a format reader turns its file into a flat
 * list of `SessionItem`s (system text, user input, assistant content, tool results) and `SessionBuilder`
 * folds them into the fixtures transcript model, reporting everything it cannot carry as a `Dropped` entry.
 *
 * Folding rules (the transcript model is stricter than any real session):
 * - leading system/developer text becomes the system prompt; later system text is dropped;
 * - a user item after the turn's first reply opens a new turn; consecutive user items join one turn;
 * - an assistant item joins the current step until that step has received a tool result (parallel calls
 *   and split messages stay one reply); an item with the step's `messageId` always joins it;
 * - a tool result answers a pending call of the current step, else it is dropped;
 * - a call never answered is dropped from its reply; a turn whose last step still calls tools gets an empty
 *   final reply (reported); a turn without any reply is dropped;
 * - user text that arrives beside tool results (same message) is that step's `steer`.
 */
import type { ContentBlock, ToolSchema } from '@compaction-sim/core'
import { CallId } from '@compaction-sim/core'
import type { Transcript, TranscriptStep, TranscriptToolResult, TranscriptTurn } from '@compaction-sim/fixtures'

/** One thing an importer could not carry into the transcript: where it was, what it was, and why. */
export interface Dropped {
  /** `line 7` (JSONL) or a JSON pointer such as `/messages/3/content/1` (JSON arrays). */
  readonly where: string
  readonly what: string
  readonly why: string
}

/** One entry of the neutral stream a format reader produces. */
export type SessionItem =
  | { readonly kind: 'system'; readonly text: string; readonly where: string }
  | {
    readonly kind: 'user'; readonly blocks: ContentBlock[]; readonly where: string
    /** True when the blocks came in the same message as tool results (a steering message). */
    readonly besideResults?: boolean
  }
  | { readonly kind: 'assistant'; readonly blocks: ContentBlock[]; readonly where: string; readonly messageId?: string }
  | {
    readonly kind: 'tool-result'; readonly callId: string; readonly content: ContentBlock[]
    readonly isError: boolean; readonly where: string
  }

interface OpenStep {
  blocks: ContentBlock[]
  results: TranscriptToolResult[]
  messageId: string | undefined
  steer: ContentBlock[]
  where: string
}

interface OpenTurn {
  user: ContentBlock[]
  steps: TranscriptStep[]
  where: string
}

/** Folds `SessionItem`s into a `Transcript`; collects what it drops. */
export class SessionBuilder {
  readonly dropped: Dropped[] = []
  private readonly system: string[] = []
  private readonly turns: TranscriptTurn[] = []
  private turn: OpenTurn | null = null
  private step: OpenStep | null = null
  private readonly callIds = new Set<string>()
  private tools: ToolSchema[] = []

  drop(where: string, what: string, why: string): void {
    this.dropped.push({ where, what, why })
  }

  /** The tool schemas the session declared (calls of other names add a bare schema). */
  setTools(tools: readonly ToolSchema[]): void {
    this.tools = [...tools]
  }

  push(item: SessionItem): void {
    switch (item.kind) {
      case 'system':
        if (this.turn === null && this.turns.length === 0) this.system.push(item.text)
        else this.drop(item.where, 'system message', 'comes after the first user message; the transcript model has only a leading system prompt')
        return
      case 'user': return this.user(item)
      case 'assistant': return this.assistant(item)
      case 'tool-result': return this.result(item)
      default: {
        const never: never = item
        throw new Error(`unknown session item ${JSON.stringify(never)}`)
      }
    }
  }

  private user(item: Extract<SessionItem, { kind: 'user' }>): void {
    if (item.blocks.length === 0) return
    const step = this.step
    if (item.besideResults === true && step !== null && step.results.length > 0) {
      step.steer.push(...item.blocks)
      return
    }
    if (this.turn !== null && this.turn.steps.length === 0 && this.step === null) {
      this.turn.user.push(...item.blocks)
      return
    }
    this.closeTurn()
    this.turn = { user: [...item.blocks], steps: [], where: item.where }
  }

  private assistant(item: Extract<SessionItem, { kind: 'assistant' }>): void {
    if (this.turn === null) {
      this.drop(item.where, 'assistant message', 'comes before the first user message (a turn starts with user input)')
      return
    }
    const blocks: ContentBlock[] = []
    for (const block of item.blocks) {
      if (block.type === 'tool-call') {
        const id = String(block['id'])
        if (this.callIds.has(id)) {
          this.drop(item.where, `tool call ${id}`, 'repeats a call id seen earlier in the session')
          continue
        }
        this.callIds.add(id)
      }
      blocks.push(block)
    }
    const step = this.step
    const joins = step !== null && (step.results.length === 0 && step.steer.length === 0
      || (item.messageId !== undefined && item.messageId === step.messageId))
    if (step !== null && joins) {
      step.blocks.push(...blocks)
      step.messageId ??= item.messageId
      return
    }
    this.closeStep()
    this.step = { blocks, results: [], messageId: item.messageId, steer: [], where: item.where }
  }

  private result(item: Extract<SessionItem, { kind: 'tool-result' }>): void {
    const step = this.step
    const called = step !== null && step.blocks.some((b) => b.type === 'tool-call' && b['id'] === item.callId)
    if (step === null || !called) {
      this.drop(item.where, `tool result for ${item.callId}`, 'answers no tool call of the reply before it')
      return
    }
    if (step.results.some((r) => r.callId === item.callId)) {
      this.drop(item.where, `tool result for ${item.callId}`, 'answers its call a second time')
      return
    }
    const result: TranscriptToolResult = item.isError ? { callId: item.callId, content: item.content, isError: true }
      : { callId: item.callId, content: item.content }
    step.results.push(result)
  }

  private closeStep(): void {
    const step = this.step
    this.step = null
    if (step === null || this.turn === null) return
    const answered = new Set(step.results.map((r) => r.callId))
    const blocks = step.blocks.filter((b) => {
      if (b.type !== 'tool-call' || answered.has(String(b['id']))) return true
      this.drop(step.where, `tool call ${String(b['id'])} (${String(b['name'])})`, 'has no tool result in the session')
      return false
    })
    if (blocks.length === 0) {
      this.drop(step.where, 'assistant message', 'holds nothing the transcript model carries')
      return
    }
    const out: TranscriptStep = { reply: { blocks }, toolResults: step.results }
    if (step.steer.length > 0) out.steer = step.steer
    this.turn.steps.push(out)
  }

  private closeTurn(): void {
    this.closeStep()
    const turn = this.turn
    this.turn = null
    if (turn === null) return
    // A step without calls ends the turn in the model: later steps of the same turn join its reply.
    const steps: TranscriptStep[] = []
    for (const step of turn.steps) {
      const previous = steps.at(-1)
      if (previous !== undefined && !hasCalls(previous)) {
        previous.reply.blocks.push(...step.reply.blocks)
        previous.toolResults.push(...step.toolResults)
        if (step.steer !== undefined) previous.steer = [...previous.steer ?? [], ...step.steer]
      } else {
        steps.push(step)
      }
    }
    if (steps.length === 0) {
      this.drop(turn.where, 'user message', 'no assistant reply follows it')
      return
    }
    const last = steps.at(-1) as TranscriptStep
    if (hasCalls(last)) {
      this.drop(turn.where, 'final reply', 'the turn ends after tool results without a reply; an empty final reply stands in for it')
      steps.push({ reply: { blocks: [{ type: 'text', text: '' }] }, toolResults: [] })
    } else if (last.steer !== undefined) {
      this.drop(turn.where, 'steering message', 'arrives after the last reply of its turn')
      delete last.steer
    }
    this.turns.push({ user: turn.user, steps })
  }

  /** The transcript; tools declared, plus a bare schema for every called tool that was not. */
  finish(): Transcript {
    this.closeTurn()
    const tools: ToolSchema[] = []
    const seen = new Set<string>()
    for (const tool of this.tools) {
      if (seen.has(tool.name)) continue
      seen.add(tool.name)
      tools.push(tool)
    }
    for (const turn of this.turns) {
      for (const step of turn.steps) {
        for (const block of step.reply.blocks) {
          if (block.type !== 'tool-call' || seen.has(String(block['name']))) continue
          seen.add(String(block['name']))
          tools.push({ name: String(block['name']), description: '', parameters: { type: 'object' } })
        }
      }
    }
    return { systemPrompt: this.system.join('\n\n'), tools, turns: this.turns }
  }
}

function hasCalls(step: TranscriptStep): boolean {
  return step.reply.blocks.some((b) => b.type === 'tool-call')
}

/** A `tool-call` block; `args` is the raw JSON text of the arguments. */
export function toolCall(id: string, name: string, args: string): ContentBlock {
  return { type: 'tool-call', id: CallId(id), name, arguments: args }
}
