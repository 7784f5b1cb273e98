/**
 * Test helper: a strict little XML 1.0 reader, enough to prove JUnit output well-formed and read it back.
 * Accepts one optional XML declaration, elements, attributes in double or single quotes, character data
 * and the five predefined entities plus numeric references. Rejects mismatched or unclosed tags,
 * duplicate attributes, raw `<` or `&` in text or values, unknown entities, characters XML 1.0 forbids
 * (raw or as references) and anything after the root element. Comments, CDATA, PIs and DTDs are not
 * needed by the renderer and are rejected.
 */

/** A parsed element. `text` is the decoded character data directly inside it. */
export interface XmlElement {
  name: string
  attributes: Record<string, string>
  children: XmlElement[]
  text: string
}

const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*/
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

function isXmlChar(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
}

/** Parses `source`; throws an Error naming the offset on any well-formedness problem. */
export function parseXml(source: string): XmlElement {
  for (const char of source) {
    const code = char.codePointAt(0) ?? 0
    if (!isXmlChar(code)) throw new Error(`forbidden character U+${code.toString(16)} in document`)
  }
  let at = 0
  const fail = (what: string): never => {
    throw new Error(`${what} at offset ${at}: ${JSON.stringify(source.slice(at, at + 30))}`)
  }
  const decode = (raw: string): string => raw.replace(/&([^;]*);|&|</g, (match, ref: string | undefined) => {
    if (ref === undefined) return fail(`raw ${match}`)
    if (ref.startsWith('#x')) return fromCode(Number.parseInt(ref.slice(2), 16))
    if (ref.startsWith('#')) return fromCode(Number.parseInt(ref.slice(1), 10))
    return ENTITIES[ref] ?? fail(`unknown entity &${ref};`)
  })
  const fromCode = (code: number): string =>
    Number.isFinite(code) && isXmlChar(code) ? String.fromCodePoint(code) : fail(`bad reference ${code}`)
  const skipSpace = (): void => {
    while (/\s/.test(source.charAt(at))) at += 1
  }
  const name = (): string => {
    const match = NAME.exec(source.slice(at))
    if (match === null) return fail('expected a name')
    at += match[0].length
    return match[0]
  }

  if (source.startsWith('<?xml')) {
    const end = source.indexOf('?>')
    if (end < 0) fail('unterminated declaration')
    at = end + 2
  }
  skipSpace()

  const element = (): XmlElement => {
    if (source.charAt(at) !== '<') fail('expected <')
    at += 1
    const node: XmlElement = { name: name(), attributes: {}, children: [], text: '' }
    for (;;) {
      const before = at
      skipSpace()
      if (source.startsWith('/>', at)) {
        at += 2
        return node
      }
      if (source.charAt(at) === '>') {
        at += 1
        break
      }
      if (at === before) fail('expected whitespace before an attribute')
      const key = name()
      if (key in node.attributes) fail(`duplicate attribute ${key}`)
      skipSpace()
      if (source.charAt(at) !== '=') fail('expected =')
      at += 1
      skipSpace()
      const quote = source.charAt(at)
      if (quote !== '"' && quote !== "'") fail('expected a quote')
      const end = source.indexOf(quote, at + 1)
      if (end < 0) fail('unterminated attribute value')
      node.attributes[key] = decode(source.slice(at + 1, end))
      at = end + 1
    }
    for (;;) {
      const next = source.indexOf('<', at)
      if (next < 0) fail(`unclosed <${node.name}>`)
      node.text += decode(source.slice(at, next))
      at = next
      if (source.startsWith('</', at)) {
        at += 2
        const closing = name()
        if (closing !== node.name) fail(`</${closing}> closes <${node.name}>`)
        skipSpace()
        if (source.charAt(at) !== '>') fail('expected >')
        at += 1
        return node
      }
      if (source.startsWith('<!', at) || source.startsWith('<?', at)) fail('comments, CDATA and PIs are not expected')
      node.children.push(element())
    }
  }

  const root = element()
  skipSpace()
  if (at !== source.length) fail('content after the root element')
  return root
}

/** Every element below `root` (depth first, document order) named `name`. */
export function elementsNamed(root: XmlElement, name: string): XmlElement[] {
  const found: XmlElement[] = []
  const walk = (node: XmlElement): void => {
    for (const child of node.children) {
      if (child.name === name) found.push(child)
      walk(child)
    }
  }
  walk(root)
  return found
}
