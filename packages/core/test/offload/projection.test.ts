/** The image-offload projection and its placeholder (§6.2, §6.5, Appendix A). */
import { describe, expect, it } from 'vitest'
import type { ContentBlock, UserMessage } from '../../src/log/llm.ts'
import {
  countImages, harnessReadOnlyPath, imageOffloadProjection, isOffloadPlaceholder, offloadPlaceholder,
} from '../../src/offload/projection.ts'

const ci1 = { attachmentId: `sha256:${'1'.repeat(64)}`, mediaType: 'image/png', bytes: 48213, width: 1024, height: 768, name: 'ci-1.png' }
const ci2 = { ...ci1, attachmentId: `sha256:${'2'.repeat(64)}`, name: 'ci-2.png' }

describe('offload placeholder (Appendix A)', () => {
  it('matches the running example: 169 UTF-16 units for ci-1.png with its harness path', () => {
    const path = harnessReadOnlyPath(ci1)
    expect(path).toBe('attachments/111111111111.png')
    const text = offloadPlaceholder(ci1, path)
    expect(text).toBe("[image omitted from this request to stay within the provider's image budget: ci-1.png; read-only copy: attachments/111111111111.png. Read it again if you still need it.]")
    expect(text.length).toBe(169)
    expect(isOffloadPlaceholder(text)).toBe(true)
  })

  it('labels by attachment id without a name and omits the path when there is none', () => {
    const { name: _name, ...anonymous } = ci1
    const text = offloadPlaceholder(anonymous, undefined)
    expect(text).toBe(`[image omitted from this request to stay within the provider's image budget: ${ci1.attachmentId}. Ask for it again if you still need it.]`)
    expect(isOffloadPlaceholder(text)).toBe(true)
    expect(isOffloadPlaceholder('[image omitted from this request')).toBe(false)
    expect(isOffloadPlaceholder('plain tool output')).toBe(false)
  })

  it('derives the extension from the media subtype up to + or ;', () => {
    expect(harnessReadOnlyPath({ ...ci1, mediaType: 'image/svg+xml' })).toBe('attachments/111111111111.svg')
    expect(harnessReadOnlyPath({ ...ci1, mediaType: 'image/jpeg; q=1' })).toBe('attachments/111111111111.jpeg')
    expect(harnessReadOnlyPath({ ...ci1, attachmentId: 'blob:1' })).toBeUndefined()
  })
})

describe('image-offload projection (§6.5)', () => {
  const message: UserMessage = {
    id: 'm-u2' as never, role: 'user', source: { kind: 'user' },
    content: [{ type: 'text', text: 'Here are two screenshots of the failing CI run.' }, { type: 'image', attachment: ci1 }, { type: 'image', attachment: ci2 }],
  }

  it('replaces exactly the offloaded depth-first index in place (§6.10 step 6)', () => {
    const projected = imageOffloadProjection(message, new Set([0]))
    expect(projected.content.map((b) => b.type)).toEqual(['text', 'text', 'image'])
    expect(projected.content[1]).toEqual({ type: 'text', text: offloadPlaceholder(ci1, 'attachments/111111111111.png') })
    expect(projected.content[2]).toBe(message.content[2])
    expect(projected.id).toBe(message.id)
    expect(message.content[1]?.type).toBe('image')
  })

  it('walks into tool-result blocks and keeps indexes stable', () => {
    const nested: ContentBlock[] = [{ type: 'tool-result', toolCallId: 'c' as never, content: [{ type: 'image', attachment: ci1 }, { type: 'text', text: 't' }, { type: 'image', attachment: ci2 }] }]
    expect(countImages(nested)).toBe(2)
    const m = { ...message, content: nested }
    const projected = imageOffloadProjection(m, new Set([1]))
    const inner = (projected.content[0] as { content: ContentBlock[] }).content
    expect(inner.map((b) => b.type)).toEqual(['image', 'text', 'text'])
    expect(isOffloadPlaceholder((inner[2] as { text: string }).text)).toBe(true)
  })

  it('returns the message itself when nothing is offloaded', () => {
    expect(imageOffloadProjection(message, new Set())).toBe(message)
  })
})
