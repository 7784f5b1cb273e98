/**
 * Project constants of protocol.md Appendix A ("Recommended project constants"). Every number in the
 * spec's worked examples (prune sizes, checkpoint price, instruction weight) is computed with these
 * exact strings, so they are fixed here once and shared by the core, the checker and the fixtures.
 */

/** Appendix A `PRUNE_MARKER` (§5.1): inserted once between the retained head and tail; 43 code points, ASCII. */
export const PRUNE_MARKER = '\n\n[... middle of tool result omitted ...]\n\n'

/** Appendix A opening checkpoint tag (§8.5); the first framed block ends with it. */
export const CHECKPOINT_OPEN_TAG = '<compacted-summary>'

/** Appendix A closing checkpoint tag (§8.5); it is the whole text of the last framed block. */
export const CHECKPOINT_CLOSE_TAG = '</compacted-summary>'

/** Appendix A `CHECKPOINT_PREAMBLE` (§8.5): followed by `"\n\n" + CHECKPOINT_OPEN_TAG` in the same block. */
export const CHECKPOINT_PREAMBLE =
  'Automatic checkpoint: an earlier part of this conversation was condensed to save context. ' +
  'Treat the summary below as settled background, build on it without repeating it, ' +
  'and continue from the messages that follow without mentioning this checkpoint.'

/** Appendix A `COMPACTION_INSTRUCTION` (§8.3): the summary request's final user message; 1,767 UTF-16 units. */
export const COMPACTION_INSTRUCTION = [
  'You are now the compaction engine for this coding assistant. Condense the conversation above into a structured ' +
    'checkpoint that lets another model continue the work without losing essential context.',
  '',
  'Reply with exactly the Markdown structure below. Keep every section in this order, use short bullets rather than ' +
    'paragraphs, and write "(none)" for a section with nothing to report.',
  '',
  '## Primary Request and Intent',
  '- [what the user asked for, including later changes; quote exact wording when it matters]',
  '',
  '## Key Technical Concepts',
  '- [technologies, frameworks, patterns and conventions involved]',
  '',
  '## Files and Code',
  '- [exact path: why it matters, important changes or snippets]',
  '',
  '## Errors and Fixes',
  '- [each error and how it was resolved, with any user feedback about it]',
  '',
  '## Pending Jobs',
  '- [work the user asked for that is not finished]',
  '',
  '## Current Work',
  '- [exactly what was being done when this checkpoint was taken]',
  '',
  '## Next Step',
  '- [the one next action that follows from the latest request, or "(none)"]',
  '',
  '## Critical Context',
  '- [decisions and reasons, constraints, user preferences, open questions, data needed to continue]',
  '',
  'Rules:',
  '- Use concise English engineering language. Keep exact paths, commands, error messages, identifiers, numbers, ' +
    'signatures and code fragments.',
  '- Record user feedback and explicit instructions faithfully, corrections above all.',
  '- Do not mention this request or that the conversation is being condensed.',
  '- Reply with the checkpoint text only: do not call tools or take any other action.',
  '- If the conversation already contains a <compacted-summary> block, it is an earlier checkpoint: do not copy it ' +
    'verbatim; keep facts that are still true, drop stale ones, and merge newer information into one consolidated ' +
    'checkpoint with the same structure.',
].join('\n')
