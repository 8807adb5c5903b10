/**
 * The `<about_user>` section: the user's short profile ("what Recall knows about me", issue 14
 * item 6; built by `src/memory/long-term/profile-summary`), one `- line` per profile line, at the
 * top of the system message after the instruction. Every line is stored text: it passes the same
 * gate as a memory (`neutralizerFor(counter).stored`, cut to `MAX_INJECTED_TEXT_CHARS`,
 * continuation lines indented), so a line cannot close the section or inject a control token.
 * The section gets at most `PROFILE_SHARE` of the free budget; lines are dropped from the end
 * (the user's pinned lines come first) until it fits. Pure.
 */
import type { TokenCounter } from '../model/tokens';
import type { NeutralizedReport, PromptSection } from '../model/trace';
import { capChars, indentContinuation, MAX_INJECTED_TEXT_CHARS, mergeReports, neutralizerFor } from './neutralize';

/** Delimiter tag of the section (one of the neutralizer's `SECTION_TAGS`, so stored text cannot forge it). */
export const PROFILE_TAG = 'about_user';
const INTRO = 'About the user (profile, standing instructions, preferences; kept by the user):';

/**
 * The profile section for `lines` under `capTokens` (tokens of `counter`, counted as a system-message
 * part: with the "\n\n" separator).
 * @returns the section text (`''` when no line fits or there are none) and its trace entry
 *   (`null` when `lines` is empty).
 */
export function profileSection(lines: readonly string[], counter: TokenCounter, capTokens: number): { text: string; section: PromptSection | null } {
  if (lines.length === 0) return { text: '', section: null };
  const gate = neutralizerFor(counter);
  const items = lines.map((line) => {
    const n = gate.stored(capChars(line.trim(), MAX_INJECTED_TEXT_CHARS));
    return { text: indentContinuation(`- ${n.text}`), report: n as NeutralizedReport };
  });
  const wrap = (body: string) => `<${PROFILE_TAG}>\n${INTRO}\n${body}\n</${PROFILE_TAG}>`;
  const partTokens = (text: string) => counter.count(`\n\n${text}`);
  let kept = items.length;
  let text = wrap(items.map((i) => i.text).join('\n'));
  while (kept > 0 && partTokens(text) > capTokens) {
    kept -= 1;
    text = wrap(
      items
        .slice(0, kept)
        .map((i) => i.text)
        .join('\n'),
    );
  }
  if (kept === 0) return { text: '', section: { kind: 'profile', text: '', tokens: 0, items: 0, dropped: lines.length } };
  const report = mergeReports(items.slice(0, kept).map((i) => i.report));
  return {
    text,
    section: {
      kind: 'profile',
      text,
      tokens: partTokens(text),
      items: kept,
      dropped: lines.length - kept,
      ...(report.count > 0 ? { neutralized: { count: report.count, pieces: report.pieces } } : {}),
    },
  };
}
