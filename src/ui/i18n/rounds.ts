/**
 * Episodic rounds in the UI language: the stored `User: …\nAssistant: …` labels shown translated
 * (or as the speakers' names), and mapped back when an edit is saved. Reactive through `t()`; the
 * pure mapping is `src/ui/lib/round-labels.ts`.
 */
import { roundPrefixes, roundTextForDisplay, roundTextForStorage, type RoundLabelPrefixes, type RoundText } from '../lib/round-labels';
import { t } from './index.svelte';

/** The label prefixes `memory` is shown with in the current UI language (`用户：`, or `Anna：` when named). */
export function shownRoundPrefixes(memory: RoundText): RoundLabelPrefixes {
  return roundPrefixes(memory, { user: t('memory.roundUser'), assistant: t('memory.roundAssistant') }, (name) => t('memory.roundSpeaker', { name }));
}

/** A memory's text as the user reads it: an episodic round's labels in the UI language; other kinds as stored. */
export function shownMemoryText(memory: RoundText): string {
  return roundTextForDisplay(memory, shownRoundPrefixes(memory));
}

/** An edited text of `memory` in its stored form (the shown round labels back to `User: ` / `Assistant: `). */
export function storedMemoryText(memory: RoundText, edited: string): string {
  return roundTextForStorage(memory.kind, edited, shownRoundPrefixes(memory));
}
