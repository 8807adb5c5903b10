/**
 * LLM-driven memory on a real model that cannot follow instructions: the CPU engine (wllama) runs
 * the fixture GGUF (stories260K writes children's stories, never a summary or valid facts), and
 * the summary, summary + buffer and entity strategies plus long-term extraction run their
 * background jobs on it for real, in the built extension. Nothing may break: every turn completes,
 * no message is lost or dropped from the prompt before it is summarized, the memory store stays
 * consistent, and failures are recorded rather than thrown at the user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callCore,
  FIXTURE_GGUF as GGUF,
  idbGetAll as readTable,
  loadFixtureGguf,
  startExtensionSession,
  waitForJobsIdle as jobsIdle,
  type ExtensionSession,
} from './harness';
if (!GGUF) console.warn('[e2e] ../shared/fixtures is absent: skipping the LLM-jobs test (it needs the fixture GGUF).');

describe.skipIf(!GGUF)('LLM-driven strategies and extraction on a real model that cannot follow instructions', () => {
  let session: ExtensionSession;
  beforeAll(async () => void (session = await startExtensionSession()));
  afterAll(() => session?.dispose());

  it('keeps every turn and a consistent store while background jobs get unusable replies', async () => {
    const page = await session.browser.openPanel();
    await loadFixtureGguf(page);
    await callCore(page, 'settings.set', { maxAnswerTokens: 48 });

    const strategies = [
      { kind: 'summary-buffer', maxTokens: 200 }, // 200 is the smallest limit: the second exchange overflows it
      { kind: 'summary' },
      { kind: 'entity', k: 1 },
    ];
    const texts = ['My dog Bruno loves the beach in Xiamen.', '我妹妹小雨下个月去杭州读书。', 'What do you remember about Bruno and 小雨?'];
    const conversations: { id: string; kind: string }[] = [];
    for (const strategy of strategies) {
      const conversation = await callCore<{ id: string }>(page, 'conversations.create', { strategy });
      conversations.push({ id: conversation.id, kind: strategy.kind });
      for (const [i, text] of texts.entries()) {
        const turn = await callCore<{ assistantMessage: { id: string; status: string; content: string } }>(page, 'chat.send', {
          conversationId: conversation.id,
          text,
          requestId: `${strategy.kind}-${i}`,
        });
        expect(turn.assistantMessage.status).toBe('complete');
        expect(turn.assistantMessage.content.length).toBeGreaterThan(0);
        await jobsIdle(page); // the background jobs of this exchange ran (and failed or produced nothing)
      }
    }

    for (const { id, kind } of conversations) {
      const messages = await callCore<{ id: string; role: string; status: string; content: string }[]>(page, 'messages.list', { conversationId: id });
      expect(messages.map((m) => [m.role, m.status])).toEqual(
        texts.flatMap(() => [
          ['user', 'complete'],
          ['assistant', 'complete'],
        ]),
      );
      expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(texts);
      // No summary was accepted from story text, so nothing was folded away: the last prompt
      // still holds both earlier exchanges verbatim (the entity strategy keeps its last k = 1).
      const trace = await callCore<{ sections: { kind: string; items: number; dropped: number; text: string }[] }>(page, 'trace.get', {
        messageId: messages[5]!.id,
      });
      const recent = trace.sections.find((s) => s.kind === 'recent');
      expect(recent?.items, kind).toBe(kind === 'entity' ? 2 : 4);
      expect(recent?.dropped ?? 0, kind).toBe(0);
      if (kind !== 'entity') expect(recent!.text).toContain('Bruno');
    }

    // Strategy state holds nothing but well-formed summaries (or nothing at all).
    const states = await readTable<{ strategy: string; state: { summary?: unknown } }>(page, 'strategyState');
    for (const s of states) if (s.state && 'summary' in s.state) expect(typeof s.state.summary === 'string' || s.state.summary === null).toBe(true);
    // Entity notes, if any survived validation, name something the user actually wrote.
    const entities = await readTable<{ name: string; conversationId: string }>(page, 'entities');
    for (const e of entities) expect(texts.join(' ')).toContain(e.name);

    // Long-term store: every exchange kept as an episodic memory with its sources and a vector;
    // every memory has its ADD in the history; nothing is half-written.
    const memories = await readTable<{ id: string; kind: string; sourceMessageIds: string[]; embedding: unknown; sourceConversationId: string }>(
      page,
      'memories',
    );
    const episodic = memories.filter((m) => m.kind === 'episodic');
    expect(episodic).toHaveLength(strategies.length * texts.length);
    for (const m of episodic) {
      expect(m.sourceMessageIds).toHaveLength(2);
      expect(conversations.map((c) => c.id)).toContain(m.sourceConversationId);
      expect(m.embedding).not.toBeNull();
    }
    const history = await readTable<{ memoryId: string; event: string }>(page, 'memoryHistory');
    for (const m of memories) expect(history.some((h) => h.memoryId === m.id && (h.event === 'ADD' || h.event === 'MERGE'))).toBe(true);
    const jobs = await readTable<{ type: string; status: string; attempts: number; lastError?: string }>(page, 'jobs');
    // The LLM-driven jobs really ran on the model (they are not just waiting for one).
    for (const type of ['short-term.fold', 'short-term.summary', 'short-term.entities', 'ltm.extract']) {
      expect(
        jobs.some((j) => j.type === type && j.attempts > 0),
        type,
      ).toBe(true);
    }
    expect(jobs.filter((j) => j.status === 'running')).toEqual([]);
    for (const j of jobs.filter((x) => x.status === 'failed')) expect(j.lastError, j.type).toBeTruthy();

    // And the assistant still answers afterwards.
    const after = await callCore<{ assistantMessage: { status: string } }>(page, 'chat.send', {
      conversationId: conversations[0]!.id,
      text: 'one more',
      requestId: 'last',
    });
    expect(after.assistantMessage.status).toBe('complete');
    expect(session.browser.console.errors).toEqual([]);
  });
});
