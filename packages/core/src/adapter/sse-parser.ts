/**
 * A small incremental Server-Sent Events parser (WHATWG HTML "event stream interpretation") for the HTTP
 * adapters. Hand-written on purpose: core has no runtime dependency beyond Node built-ins (design §2), and
 * the few rules it needs fit here. It is tested against `eventsource-parser` 3.x on random chunkings.
 */

/** One dispatched event. `event` (empty = unset) and `id` are undefined when the event did not set them. */
export interface SseEvent {
  event: string | undefined
  id: string | undefined
  data: string
}

/** Why the parser refused its input. */
export type SseParseErrorCode = 'LINE_TOO_LONG' // a single line (or an undispatched event) grew past `maxEventChars`

/** Thrown by `SseParser.feed` when the input breaks a bound; the stream cannot be trusted after it. */
export class SseParseError extends Error {
  override readonly name = 'SseParseError'
  readonly code: SseParseErrorCode

  constructor(code: SseParseErrorCode, message: string) {
    super(message)
    this.code = code
  }
}

/**
 * Incremental parser: `feed` any split of the decoded text, get back the events completed so far, in order.
 * Lines end in CRLF, LF or CR (a CR at the end of one piece and an LF at the start of the next are one line
 * end); `:` lines are comments; `data` lines join with `\n`; an event is dispatched on a blank line only
 * when it has data; an incomplete event at the end of the stream is dropped (as browsers do). A leading
 * BOM is ignored. `retry` and unknown fields are ignored. Bounded: a line or pending event longer than
 * `maxEventChars` UTF-16 units throws `SseParseError('LINE_TOO_LONG')`.
 */
export class SseParser {
  private readonly maxEventChars: number
  private pending = ''
  private skipLf = false
  private atStart = true
  private data: string[] = []
  private dataChars = 0
  private hasData = false
  private eventType: string | undefined
  private eventId: string | undefined

  constructor(maxEventChars = 16 * 1024 * 1024) {
    this.maxEventChars = maxEventChars
  }

  /** Parses the next piece of text; returns the events it completed. Throws `SseParseError`. */
  feed(text: string): SseEvent[] {
    let input = text
    if (this.atStart && input.length > 0) {
      this.atStart = false
      if (input.charCodeAt(0) === 0xfeff) input = input.slice(1)
    }
    const out: SseEvent[] = []
    let from = 0
    if (this.skipLf && input.length > 0) {
      if (input.charCodeAt(0) === 10) from = 1
      this.skipLf = false
    }
    for (let i = from; i < input.length; i++) {
      const ch = input.charCodeAt(i)
      if (ch !== 10 && ch !== 13) continue
      this.line(this.pending + input.slice(from, i), out)
      this.pending = ''
      if (ch === 13) {
        if (i + 1 < input.length) {
          if (input.charCodeAt(i + 1) === 10) i++
        } else {
          this.skipLf = true
        }
      }
      from = i + 1
    }
    if (from < input.length) this.pending += input.slice(from)
    if (this.pending.length + this.dataChars > this.maxEventChars) {
      throw new SseParseError('LINE_TOO_LONG', `an SSE event exceeds ${this.maxEventChars} characters`)
    }
    return out
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.hasData) out.push({ event: this.eventType, id: this.eventId, data: this.data.join('\n') })
      this.data = []
      this.dataChars = 0
      this.hasData = false
      this.eventType = undefined
      this.eventId = undefined
      return
    }
    if (line.charCodeAt(0) === 58) return
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.charCodeAt(0) === 32) value = value.slice(1)
    switch (field) {
      case 'data':
        this.data.push(value)
        this.dataChars += value.length + 1
        this.hasData = true
        break
      case 'event':
        this.eventType = value === '' ? undefined : value
        break
      case 'id':
        if (!value.includes('\u0000')) this.eventId = value
        break
      default:
        break
    }
  }
}
