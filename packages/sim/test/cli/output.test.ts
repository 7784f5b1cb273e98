import { describe, expect, it } from 'vitest'
import { resolveColorLevel } from '../../src/cli/output.ts'

describe('resolveColorLevel', () => {
  const cases: Array<[string, boolean | undefined, Record<string, string>, boolean, number]> = [
    ['plain pipe', undefined, {}, false, 0],
    ['plain TTY', undefined, {}, true, 1],
    ['TTY with 256-colour TERM', undefined, { TERM: 'xterm-256color' }, true, 2],
    ['TTY with truecolor', undefined, { COLORTERM: 'truecolor' }, true, 3],
    ['dumb terminal', undefined, { TERM: 'dumb' }, true, 0],
    ['NO_COLOR on a TTY (chalk 5 would ignore it)', undefined, { NO_COLOR: '1' }, true, 0],
    ['NO_COLOR empty is unset', undefined, { NO_COLOR: '' }, true, 1],
    ['FORCE_COLOR=1 on a pipe', undefined, { FORCE_COLOR: '1' }, false, 1],
    ['FORCE_COLOR=3', undefined, { FORCE_COLOR: '3' }, false, 3],
    ['FORCE_COLOR empty means level 1', undefined, { FORCE_COLOR: '' }, false, 1],
    ['FORCE_COLOR=0 on a TTY', undefined, { FORCE_COLOR: '0' }, true, 0],
    ['FORCE_COLOR beats NO_COLOR', undefined, { FORCE_COLOR: '2', NO_COLOR: '1' }, false, 2],
    ['--no-color beats FORCE_COLOR', false, { FORCE_COLOR: '3' }, true, 0],
    ['--color beats NO_COLOR', true, { NO_COLOR: '1' }, false, 1],
    ['--color keeps a richer TTY level', true, { TERM: 'xterm-256color' }, true, 2],
  ]
  it.each(cases)('%s', (_name, flag, env, isTTY, expected) => {
    expect(resolveColorLevel(flag, { env, isTTY })).toBe(expected)
  })
})
