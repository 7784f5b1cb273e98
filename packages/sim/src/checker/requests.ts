/**
 * Walks the request capture (§1.1) in step with the fold: a request dispatched at log revision L is judged
 * when the model has folded exactly the prefix `log[0:L]`, i.e. just before the event with seq L (or at the
 * end of the log for L = length).
 */
import type { CapturedRequest } from '@compaction-sim/core'

/** Hands out captured requests in order of their dispatch revision (then dispatch index), each once. */
export class RequestCursor {
  private readonly list: readonly CapturedRequest[]
  private next = 0

  constructor(requests: readonly CapturedRequest[]) {
    this.list = [...requests].sort((a, b) => a.logRevisionAtDispatch - b.logRevisionAtDispatch || a.index - b.index)
  }

  /** The requests not yet handed out whose dispatch revision is at most `revision`. */
  upTo(revision: number): CapturedRequest[] {
    const out: CapturedRequest[] = []
    while (this.next < this.list.length) {
      const r = this.list[this.next] as CapturedRequest
      if (r.logRevisionAtDispatch > revision) break
      out.push(r)
      this.next++
    }
    return out
  }

  /** Every request not yet handed out. */
  rest(): CapturedRequest[] {
    const out = this.list.slice(this.next)
    this.next = this.list.length
    return out
  }
}
