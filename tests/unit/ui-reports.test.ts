/**
 * What the panel says about prompts, background work and imports (src/ui/lib/prompt-notices.ts,
 * jobs.ts, import-report.ts): translated sentences by code and by meaning, the core's English
 * text only as detail. The import report is checked on the real export/import code
 * (src/backup/ on fake-indexeddb): importing the same file twice says "nothing new".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { exportAll, importAll } from '../../src/backup';
import { storeOf } from '../helpers/ltm-test-store';
import { EPISODIC_JOB } from '../../src/memory/long-term';
import { EXTRACT_JOB, MAINTENANCE_JOB, REEMBED_JOB } from '../../src/memory/long-term/jobs';
import { PROFILE_JOB } from '../../src/memory/long-term/profile-summary';
import { ENTITY_JOB, FOLD_JOB, SUMMARY_JOB } from '../../src/memory/short-term';
import { changeUiLanguage, i18n, translate } from '../../src/ui/i18n/instance';
import { importReportView } from '../../src/ui/lib/import-report';
import { formatCount } from '../../src/ui/lib/format';
import { transferRecordsText, transferView } from '../../src/ui/lib/transfer';
import { currentJobPercent, JOB_LABELS, jobFailureViews, jobLabelKey } from '../../src/ui/lib/jobs';
import { promptNoticeViews } from '../../src/ui/lib/prompt-notices';
import type { PromptNotice } from '../../src/model/trace';

/** `true` when `key` exists in both locales without falling back. */
function inBothLocales(key: string): boolean {
  return i18n.exists(key, { lng: 'en', fallbackLng: false }) && i18n.exists(key, { lng: 'zh-CN', fallbackLng: false });
}

describe('promptNoticeViews', () => {
  it('translates summary_pending with its count and keeps the rejection reason as detail', async () => {
    const notices: PromptNotice[] = [
      { code: 'summary_pending', messages: 6, lastError: ' The summary dropped every user fact. ' },
      { code: 'keyword_memory_only' },
    ];
    const views = promptNoticeViews(notices);
    expect(views).toEqual([
      {
        code: 'summary_pending',
        key: 'context.notice.summary_pending',
        params: { count: 6 },
        detail: 'The summary dropped every user fact.',
        detailLabel: 'context.notice.rejectedBecause',
        note: null,
      },
      { code: 'keyword_memory_only', key: 'context.notice.keyword_memory_only', params: {}, detail: null, detailLabel: null, note: null },
    ]);
    await changeUiLanguage('en');
    expect(translate(views[0]!.key, views[0]!.params)).toMatch(/^6 messages are due to be folded into the summary/);
    expect(translate(views[0]!.key, { count: 1 })).toMatch(/^1 message is due/);
    await changeUiLanguage('zh-CN');
    expect(translate(views[0]!.key, views[0]!.params)).toMatch(/^有 6 条消息本应并入摘要/);
    expect(translate(views[1]!.key)).toBe('当时没有加载嵌入模型，长期记忆只按关键词检索。');
    await changeUiLanguage('en');
  });

  it('words it for the strategy and counts the pending messages the context window left out', async () => {
    const notices: PromptNotice[] = [{ code: 'summary_pending', messages: 8, lastError: null }];
    const section = (dropped: number) => ({ kind: 'recent' as const, text: '', tokens: 0, items: 4, dropped });
    // Running summary: 8 messages not summarized yet, the 4 oldest did not fit (the section says "4 left out").
    const summary = promptNoticeViews(notices, { strategy: { kind: 'summary' }, sections: [section(4)] })[0]!;
    expect(summary).toMatchObject({
      key: 'context.notice.summary_behind',
      params: { count: 8 },
      note: { key: 'context.notice.pendingLeftOut', params: { count: 4 } },
    });
    await changeUiLanguage('en');
    expect(translate(summary.key, summary.params)).toMatch(/^8 messages are not in the summary yet .* kept word for word for now\.$/);
    expect(translate(summary.note!.key, summary.note!.params)).toBe("4 of them did not fit the model's context window and were left out of this prompt.");
    // Summary + buffer: the section dropped more than were pending (older, already summarized turns don't count).
    const buffer = promptNoticeViews([{ code: 'summary_pending', messages: 3, lastError: null }], {
      strategy: { kind: 'summary-buffer', maxTokens: 500 },
      sections: [section(5)],
    })[0]!;
    expect(buffer).toMatchObject({ key: 'context.notice.summary_pending', params: { count: 3 }, note: { params: { count: 3 } } });
    // Nothing dropped: no note.
    expect(promptNoticeViews(notices, { strategy: { kind: 'summary' }, sections: [section(0)] })[0]!.note).toBeNull();
    for (const key of ['context.notice.summary_behind_other', 'context.notice.pendingLeftOut_other']) expect(inBothLocales(key), key).toBe(true);
  });

  it('has no detail when the summarizer was simply not run yet', () => {
    expect(promptNoticeViews([{ code: 'summary_pending', messages: 2, lastError: null }])[0]).toMatchObject({ detail: null, detailLabel: null });
  });

  it('gives nothing for traces of older versions and skips codes it does not know', () => {
    expect(promptNoticeViews(undefined)).toEqual([]);
    expect(promptNoticeViews([{ code: 'something_new' } as unknown as PromptNotice, { code: 'keyword_memory_only' }]).map((v) => v.code)).toEqual([
      'keyword_memory_only',
    ]);
  });
});

describe('the import progress line (transferView, transferRecordsText)', () => {
  it('shows records checked, then records written of the total, in English and Chinese; nothing for an export', async () => {
    const format = (n: number) => formatCount(n, 'en');
    const checking = transferView({ phase: 'check', done: 1_000_000, total: 4_000_000, records: 2500 });
    expect(checking).toEqual({ phase: 'check', fraction: 0.25, records: { done: 2500, total: null } });
    const writing = transferView({ phase: 'write', done: 10_020, total: 10_020 });
    expect(writing).toEqual({ phase: 'write', fraction: 1, records: { done: 10_020, total: 10_020 } });
    const one = transferRecordsText(transferView({ phase: 'check', done: 10, total: 100, records: 1 }), format)!;
    await changeUiLanguage('en');
    const line = (v: ReturnType<typeof transferView>) => {
      const text = transferRecordsText(v, format)!;
      return translate(text.key, text.options);
    };
    expect(line(checking)).toBe('2,500 records checked');
    expect(translate(one.key, one.options)).toBe('1 record checked');
    expect(line(writing)).toBe('10,020 of 10,020 records');
    await changeUiLanguage('zh-CN');
    expect(line(checking)).toBe('已检查 2,500 条记录');
    expect(line(writing)).toBe('已导入 10,020 / 10,020 条记录');
    await changeUiLanguage('en');
    expect(transferRecordsText(transferView({ phase: 'export', done: 3, total: 9 }), format)).toBeNull();
  });
});

describe('job labels and failures', () => {
  it("label every job type the core registers, by the core's own constants", async () => {
    const types = [EPISODIC_JOB, EXTRACT_JOB, REEMBED_JOB, MAINTENANCE_JOB, PROFILE_JOB, SUMMARY_JOB, FOLD_JOB, ENTITY_JOB];
    expect(Object.keys(JOB_LABELS).sort()).toEqual([...types].sort());
    for (const type of types) {
      expect(jobLabelKey(type)).not.toBe('jobs.types.other');
      expect(inBothLocales(jobLabelKey(type)), type).toBe(true);
    }
    expect(jobLabelKey('made.up')).toBe('jobs.types.other');
    expect(jobLabelKey('toString')).toBe('jobs.types.other');
  });

  it('list the recent failures with a translated label and the reason as given', () => {
    const views = jobFailureViews({
      recentFailures: [
        { type: 'short-term.summary', lastError: ' Summary rejected: no user words kept ', at: 2_000 },
        { type: 'ltm.future', lastError: '', at: 1_000 },
        {
          type: 'ltm.reembed',
          lastError: '3 memories still lack a vector',
          lastErrorInfo: { domain: 'jobs', code: 'reembed_incomplete', params: { remaining: 3 } },
          at: 500,
        },
      ],
    });
    expect(views).toEqual([
      { label: 'jobs.types.short-term_summary', reason: 'Summary rejected: no user words kept', reasonView: null, at: 2_000 },
      { label: 'jobs.types.other', reason: '', reasonView: null, at: 1_000 },
      {
        label: 'jobs.types.ltm_reembed',
        reason: '3 memories still lack a vector',
        reasonView: { key: 'errorCodes.jobs.reembed_incomplete', params: { remaining: 3 } },
        at: 500,
      },
    ]);
    expect(jobFailureViews(null)).toEqual([]);
    expect(jobFailureViews({} as never)).toEqual([]);
  });

  it('show the current job progress as a whole percent, rounded down', () => {
    expect(currentJobPercent({ current: { type: 'ltm.reembed', progress: 0.429 } })).toBe(42);
    expect(currentJobPercent({ current: { type: 'ltm.reembed', progress: null } })).toBeNull();
    expect(currentJobPercent({ current: null })).toBeNull();
    expect(currentJobPercent(null)).toBeNull();
  });
});

describe('importReportView', () => {
  it('names each count by meaning and leaves zero counts out', async () => {
    const view = importReportView({ added: 3, updated: 1, skipped: 12, errors: [] });
    expect(view).toEqual({
      title: 'memory.importReport.title',
      lines: [
        { key: 'memory.importReport.added', count: 3 },
        { key: 'memory.importReport.updated', count: 1 },
        { key: 'memory.importReport.upToDate', count: 12 },
      ],
      errors: [],
    });
    await changeUiLanguage('en');
    expect(view.lines.map((l) => translate(l.key, { count: l.count }))).toEqual([
      '3 new records added',
      '1 record updated to the newer version in the file',
      '12 records already up to date (the same or a newer version is here)',
    ]);
    for (const line of view.lines) expect(inBothLocales(`${line.key}_other`)).toBe(true);
  });

  it('says when records were rejected, with the reasons', () => {
    const reason = 'Message m9 was not imported: position 3 of conversation c1 already holds message m3.';
    expect(importReportView({ added: 0, updated: 0, skipped: 2, errors: [reason] })).toEqual({
      title: 'memory.importReport.titleWithErrors',
      lines: [
        { key: 'memory.importReport.upToDate', count: 2 },
        { key: 'memory.importReport.rejected', count: 1 },
      ],
      errors: [reason],
    });
  });

  it('says "empty" for a file without records', () => {
    expect(importReportView({ added: 0, updated: 0, skipped: 0, errors: [] })).toEqual({
      title: 'memory.importReport.titleEmpty',
      lines: [{ key: 'memory.importReport.empty', count: 0 }],
      errors: [],
    });
  });

  describe('on the real import', () => {
    const dbs: RecallDB[] = [];
    afterEach(async () => {
      await Promise.all(dbs.splice(0).map((d) => d.delete()));
    });
    const open = () => {
      const db = new RecallDB(`ui-import-${crypto.randomUUID()}`);
      dbs.push(db);
      return db;
    };
    const T0 = Date.UTC(2025, 0, 2);

    it('reports a first import as added and the same file again as nothing new (all up to date)', async () => {
      const source = open();
      await source.conversations.add({
        id: 'c1',
        title: '篮球',
        namespace: 'default',
        strategy: { kind: 'summary-buffer', maxTokens: 2000 },
        createdAt: T0,
        updatedAt: T0,
      });
      await source.messages.bulkAdd([
        { id: 'm1', conversationId: 'c1', seq: 0, role: 'user', content: '我喜欢打篮球', createdAt: T0, status: 'complete' },
        { id: 'm2', conversationId: 'c1', seq: 1, role: 'assistant', content: '好的！', createdAt: T0 + 1, status: 'complete' },
      ]);
      const { json } = await exportAll(source, { now: () => T0 });
      const target = open();
      const store = await storeOf(target);

      const first = importReportView(await importAll(target, store, new Blob([json]), { now: () => T0 }));
      expect(first.title).toBe('memory.importReport.title');
      expect(first.lines).toEqual([{ key: 'memory.importReport.added', count: 3 }]); // 1 conversation + 2 messages

      const again = importReportView(await importAll(target, store, new Blob([json]), { now: () => T0 }));
      expect(again.title).toBe('memory.importReport.titleNothingNew');
      expect(again.lines).toEqual([{ key: 'memory.importReport.upToDate', count: 3 }]);
    });
  });
});
