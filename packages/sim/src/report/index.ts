/**
 * The `report/` module: the canonical `RunReport` contract, its validator against the published schema,
 * and the renderers that are pure functions of it (pretty for stdout, Markdown, JUnit XML, the HTML page).
 */
export {
  RUN_REPORT_SCHEMA_VERSION,
  type ExpectationResult, type FinalPressure, type ReportedFault, type ReportedOutcome, type ReportedViolation, type RunReport,
  type RunSummary, type ScenarioArtifacts, type ScenarioCounts, type ScenarioReport, type ScenarioStatus,
} from './types.ts'
export type { ReportedPath, ScenarioTimeline, TimelineMarker, TimelineMarkerKind, TimelinePoint } from './types.ts'
export {
  renderPretty, renderPrettyFooter, renderPrettyHeader, renderPrettyScenario, renderSummaryLine, PRETTY_HEADLINE_CHARS_MAX, type PrettyOptions,
} from './pretty.ts'
export { renderMarkdown, markdownCell, markdownCode, markdownFence } from './markdown.ts'
export { renderJunit, xmlAttribute, xmlText, JUNIT_MESSAGE_CHARS_MAX } from './junit.ts'
export { renderHtml, htmlText, inlineJson, failedFirst, artifactHref } from './html.ts'
export { lineChartSvg, stackedBarChartSvg, escapeXml, niceAxis, svgNumber, tickLabel } from './svg.ts'
export { validateRunReport, isRunReport, jsonPath } from './validate.ts'
