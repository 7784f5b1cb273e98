/**
 * Images on import: a session carries them inline (base64, data URLs) or by URL; the transcript model keeps
 * only an attachment reference (§1.2 `ImageAttachmentRef`): a content-derived id, the media type, the byte
 * size and the pixel size read from the image header (PNG, GIF, JPEG, WebP; 0 when unknown). The bytes
 * themselves are never written into an imported scenario.
 */
import { createHash } from 'node:crypto'
import type { ContentBlock } from '@compaction-sim/core'

/** An image block for the decoded `bytes` of type `mediaType`. */
export function imageFromBytes(bytes: Buffer, mediaType: string, name?: string): ContentBlock {
  const { width, height } = imageSize(bytes)
  const attachmentId = `img-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}`
  const attachment = name === undefined ? { attachmentId, mediaType, bytes: bytes.length, width, height }
    : { attachmentId, mediaType, bytes: bytes.length, width, height, name }
  return { type: 'image', attachment }
}

/** An image block for base64 `data` (whitespace ignored). */
export function imageFromBase64(data: string, mediaType: string): ContentBlock {
  return imageFromBytes(Buffer.from(data.replace(/\s+/g, ''), 'base64'), mediaType)
}

const DATA_URL = /^data:([^;,]+)(;base64)?,(.*)$/s

/**
 * An image block for an image URL: a `data:` URL is decoded; any other URL is kept as the attachment's name
 * with size 0 (its bytes are not in the session), and `unknownSize` is true.
 */
export function imageFromUrl(url: string): { block: ContentBlock; unknownSize: boolean } {
  const match = DATA_URL.exec(url)
  if (match !== null) {
    const mediaType = match[1] as string
    const payload = match[3] as string
    const bytes = match[2] === undefined ? Buffer.from(decodeURIComponent(payload), 'utf8') : Buffer.from(payload.replace(/\s+/g, ''), 'base64')
    return { block: imageFromBytes(bytes, mediaType), unknownSize: false }
  }
  const attachmentId = `img-${createHash('sha256').update(url).digest('hex').slice(0, 16)}`
  const mediaType = guessMediaType(url)
  return { block: { type: 'image', attachment: { attachmentId, mediaType, bytes: 0, width: 0, height: 0, name: url } }, unknownSize: true }
}

function guessMediaType(url: string): string {
  const path = url.split(/[?#]/)[0]?.toLowerCase() ?? ''
  if (path.endsWith('.png')) return 'image/png'
  if (path.endsWith('.gif')) return 'image/gif'
  if (path.endsWith('.webp')) return 'image/webp'
  return 'image/jpeg'
}

/** The pixel size from the header of a PNG, GIF, JPEG or WebP image; 0 × 0 for anything else. */
export function imageSize(bytes: Buffer): { width: number; height: number } {
  const none = { width: 0, height: 0 }
  if (bytes.length >= 24 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.toString('latin1', 12, 16) === 'IHDR') {
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) }
  }
  if (bytes.length >= 10 && bytes.toString('latin1', 0, 4) === 'GIF8') {
    return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) }
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) return jpegSize(bytes) ?? none
  if (bytes.length >= 30 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') {
    const chunk = bytes.toString('latin1', 12, 16)
    if (chunk === 'VP8X') return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) }
    if (chunk === 'VP8 ') return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff }
    if (chunk === 'VP8L') {
      const bits = bytes.readUInt32LE(21)
      return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 }
    }
  }
  return none
}

function jpegSize(bytes: Buffer): { width: number; height: number } | null {
  let at = 2
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return null
    const marker = bytes[at + 1] as number
    const length = bytes.readUInt16BE(at + 2)
    const frame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
    if (frame) return { width: bytes.readUInt16BE(at + 7), height: bytes.readUInt16BE(at + 5) }
    at += 2 + length
  }
  return null
}
