/**
 * The transcript-driven reply plan: conversation requests get the transcript's model replies in order
 * (turn by turn, step by step); compaction requests get the deterministic summarizer's checkpoint;
 * session-title requests get a short title from the first user line. It never fails by itself — faults
 * are layered on top by `FaultInjectingPlan`, which does not consume a reply for a failed request.
 */
import { assertNever, type ContentBlock, type TokenUsage } from '@compaction-sim/core'
import { deterministicSummary, type SummaryOptions } from './deterministic-summary.ts'
import type { ParsedRequest, PlannedOutcome, PlannedReply, ReplyPlan } from './types.ts'

/** The part of a fixtures `Transcript` the plan reads (structural, so sim needs no runtime dependency on fixtures). */
export interface TranscriptReplies {
  turns: ReadonlyArray<{ steps: ReadonlyArray<{ reply: { blocks: ContentBlock[]; usage?: TokenUsage } }> }>
}

/** Options of `TranscriptReplyPlan`. */
export interface TranscriptPlanOptions {
  /** Options of the deterministic summarizer. */
  summary?: SummaryOptions
  /**
   * The scenario's summary routes (issue #15, `run/summaries.ts`): when given, compaction requests get their
   * route's summarizer at its attempt number instead of the deterministic summary, and each one served counts.
   */
  summaries?: { reply(request: ParsedRequest): PlannedReply; count(request: ParsedRequest): void }
}

/** Thrown when the subject asks for more conversation replies than the transcript has (a scenario bug). */
export class ReplyPlanExhaustedError extends Error {
  override readonly name = 'ReplyPlanExhaustedError'
  readonly code = 'PLAN_EXHAUSTED'
}

const TITLE_CHARS_MAX = 60

function titleOf(request: ParsedRequest): string {
  for (const m of request.messages) {
    if (m.role !== 'user') continue
    for (const b of m.content) {
      if (b.type !== 'text') continue
      const line = String(b['text'])
        .split('\n')
        .map((l) => l.trim())
        .find((l) => l !== '')
      if (line !== undefined) return line.length <= TITLE_CHARS_MAX ? line : `${line.slice(0, TITLE_CHARS_MAX - 1)}…`
    }
  }
  return 'Session'
}

/** Serves a transcript's replies in order (module doc). Deterministic; `remaining` counts unserved replies. */
export class TranscriptReplyPlan implements ReplyPlan {
  private readonly replies: PlannedReply[]
  private readonly summary: SummaryOptions
  private readonly summaries: TranscriptPlanOptions['summaries']
  private position = 0

  constructor(transcript: TranscriptReplies, options: TranscriptPlanOptions = {}) {
    this.replies = transcript.turns.flatMap((t) =>
      t.steps.map(
        (s): PlannedReply => (s.reply.usage === undefined ? { blocks: s.reply.blocks } : { blocks: s.reply.blocks, usage: s.reply.usage }),
      ),
    )
    this.summary = options.summary ?? {}
    this.summaries = options.summaries
  }

  /** Conversation replies not yet served. */
  get remaining(): number {
    return this.replies.length - this.position
  }

  /** The reply for `request`; throws `ReplyPlanExhaustedError` when a conversation request finds none left. */
  peek(request: ParsedRequest): PlannedReply {
    switch (request.purpose) {
      case 'compaction':
        return this.summaries?.reply(request) ?? { blocks: [{ type: 'text', text: deterministicSummary(request, this.summary) }] }
      case 'session-title':
        return { blocks: [{ type: 'text', text: titleOf(request) }] }
      case 'conversation': {
        const reply = this.replies[this.position]
        if (reply === undefined)
          throw new ReplyPlanExhaustedError(
            `conversation request #${request.index} asks for reply ${this.position + 1}, the transcript has ${this.replies.length}`,
          )
        return reply
      }
      default:
        return assertNever(request.purpose, 'request purpose')
    }
  }

  /** Serves `peek(request)` and consumes it when it is a conversation reply. */
  next(request: ParsedRequest): PlannedOutcome {
    const reply = this.peek(request)
    if (request.purpose === 'conversation') this.position++
    if (request.purpose === 'compaction') this.summaries?.count(request)
    return { kind: 'reply', reply }
  }
}
