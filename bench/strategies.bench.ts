/**
 * Benchmark of the short-term context strategies and of token counting (issue 3).
 *
 * Strategies: a deterministic 200-exchange bilingual conversation (bench/data/bilingual-conversation.ts)
 * is replayed through each of the seven real strategies (real Dexie via fake-indexeddb, real job
 * queue, real prompts and parsing). At turn t the strategy builds the context for exchange t's user
 * message from exchanges 1…t−1; the prompt is rendered like the prompt assembler lays it out
 * (system instruction + summary/entity/retrieved sections in the system message, recent turns,
 * the user message) with no context-window truncation, and counted with the real Qwen2.5
 * tokenizer and ChatML template (`countPromptTokens`). After each exchange the background jobs
 * are drained, i.e. the summarizer keeps up between turns.
 *
 * The LLM is scripted (no instruction-following model runs here): the summarizer keeps one fact
 * sentence per folded exchange (the exchange's key fact, 15–40 tokens, in its language) appended
 * to the previous summary, and drops the oldest facts when the summary exceeds the length the
 * prompt asks for (512 tokens for `summary`; 40% of the limit, ≤ 512, for `summary-buffer`), so a
 * long conversation's summary sits at that cap, as a model filling its allowance would. The
 * entity extractor returns the exchange's entity with its note grown by the new fact (≤ 80
 * tokens). The vector search is lexical cosine (words and CJK bigrams) over all stored exchanges,
 * standing in for the embedding search: the prompt cost depends on top-k and exchange length.
 *
 * Token counting: the fallback estimator against the Qwen2.5 tokenizer on the corpus texts, the
 * generated conversation and (when ../shared is present) real English ChatGPT messages; and
 * counting throughput.
 */
import 'fake-indexeddb/auto';
import { existsSync, readFileSync } from 'node:fs';
import type { ChatEngine, ChatRequest, ChatResult } from '../src/engines/types';
import type { ChatMessage } from '../src/model/engine';
import { createStrategy, registerShortTermJobs } from '../src/memory/short-term';
import type { RetrievedExchange, ShortTermContext } from '../src/model/context';
import { type StrategyConfig, STRATEGIES, strategyInfo } from '../src/model/strategies';
import en from '../src/ui/i18n/locales/en.json';
import { countPromptTokens, createGgufTokenCounter, createTokenEstimator, estimateTokens } from '../src/tokens';
import { generateConversation, type GeneratedExchange } from './data/bilingual-conversation';
import { qwenCounter } from './data/qwen-tokenizer';
import { createHarness } from './data/strategy-harness';
import { defineBench } from './lib/bench';

const SYSTEM =
  'You are Recall, a private assistant running on this device. Answer in the language of the user. Be concise and accurate; say so when you do not know.';
const TURNS_REPORTED = [10, 50, 100, 200];

/** Prompt messages as the assembler lays them out (same section wrappers). */
function render(ctx: ShortTermContext, userText: string): { messages: ChatMessage[]; parts: Record<string, string> } {
  const wrap = (tag: string, intro: string, body: string) => `<${tag}>\n${intro}\n${body}\n</${tag}>`;
  const parts: Record<string, string> = {};
  if (ctx.summary) parts.summary = wrap('conversation_summary', 'Summary of the earlier part of this conversation:', ctx.summary);
  if (ctx.entities.length)
    parts.entities = wrap('entities', 'Notes on people, places and things mentioned:', ctx.entities.map((e) => `- ${e.name}: ${e.summary}`).join('\n'));
  if (ctx.retrieved.length)
    parts.retrieved = wrap('related_past_exchanges', 'Related exchanges from past conversations:', ctx.retrieved.map((r) => r.text).join('\n'));
  const system = [SYSTEM, ...Object.values(parts)].join('\n\n');
  return {
    messages: [{ role: 'system', content: system }, ...ctx.recent.map((m) => ({ role: m.role, content: m.content })), { role: 'user', content: userText }],
    parts,
  };
}

/** Cuts whole sentences from the front of `sentences` until their join fits `maxTokens`. */
function capFront(sentences: string[], maxTokens: number, count: (s: string) => number): string[] {
  const out = [...sentences];
  while (out.length > 1 && count(out.join(' ')) > maxTokens) out.shift();
  return out;
}

/** The scripted summarizer + entity extractor (see module doc). */
function scriptedModel(conversation: GeneratedExchange[]): ChatEngine & { calls: { kind: string; promptTokens: number }[] } {
  const byText = new Map<string, GeneratedExchange>();
  for (const x of conversation) {
    byText.set(x.user.trim(), x);
    byText.set(x.assistant.trim(), x);
  }
  const qwen = qwenCounter();
  const calls: { kind: string; promptTokens: number }[] = [];
  const lineText = (line: string) => line.replace(/^(User|Assistant|System): /, '').trim();
  return {
    kind: 'scripted',
    modelId: 'scripted-summarizer',
    calls,
    contextWindow: () => 32_768,
    tokenCounter: () => qwen,
    isLoaded: () => true,
    async unload() {},
    async complete(request: ChatRequest): Promise<ChatResult> {
      const system = request.messages[0]!.content;
      const user = request.messages[1]!.content;
      const words = Number(/At most (\d+) words/.exec(system)?.[1] ?? 300);
      const maxTokens = Math.floor(words / 0.7);
      if (system.includes('running summary')) {
        calls.push({ kind: 'summary', promptTokens: countPromptTokens(qwen, request.messages) });
        const previous = user.split('Previous summary:\n')[1]!.split('\n\nNew lines of conversation:')[0]!;
        const lines = user.split('New lines of conversation:\n')[1]!.split('\n\nReturn the JSON')[0]!.split('\n');
        const facts = previous === '(none)' ? [] : previous.split('\n');
        for (const line of lines) {
          const x = byText.get(lineText(line));
          if (x && !facts.includes(x.fact)) facts.push(x.fact);
        }
        return { content: JSON.stringify({ summary: capFront(facts, maxTokens, (s) => qwen.count(s)).join('\n') }), finishReason: 'stop', usage: null };
      }
      calls.push({ kind: 'entity', promptTokens: countPromptTokens(qwen, request.messages) });
      const exchangeLines = user.split('Exchange:\n')[1]!.split('\n\nReturn the JSON')[0]!.split('\n');
      const x = byText.get(lineText(exchangeLines[0]!));
      const known = user.split('Known notes:\n')[1]!.split('\n\nExchange:')[0]!;
      const entities = (x?.entities ?? []).map((e) => {
        const prev = known
          .split('\n')
          .find((l) => l.startsWith(`- ${e.name}: `))
          ?.slice(e.name.length + 4);
        const sentences = prev ? [prev, e.fact] : [e.fact];
        return { name: e.name, summary: capFront(sentences, 80, (s) => qwen.count(s)).join(' ') };
      });
      return { content: JSON.stringify({ entities }), finishReason: 'stop', usage: null };
    },
  };
}

/** Lexical stand-in for the embedding search: cosine over word and CJK-bigram counts. */
function lexicalSearch(getExchanges: () => { text: string; conversationId: string; messageIds: string[] }[]) {
  const features = (text: string) => {
    const v = new Map<string, number>();
    const lower = text.toLowerCase();
    for (const w of lower.match(/[a-z0-9]+/g) ?? []) v.set(w, (v.get(w) ?? 0) + 1);
    const cjk = lower.match(/[\u4e00-\u9fff]+/g) ?? [];
    for (const run of cjk) for (let i = 0; i + 1 < run.length; i++) v.set(run.slice(i, i + 2), (v.get(run.slice(i, i + 2)) ?? 0) + 1);
    return v;
  };
  const cos = (a: Map<string, number>, b: Map<string, number>) => {
    let dot = 0,
      na = 0,
      nb = 0;
    for (const [k, x] of a) {
      na += x * x;
      dot += x * (b.get(k) ?? 0);
    }
    for (const x of b.values()) nb += x * x;
    return na && nb ? dot / Math.sqrt(na * nb) : 0;
  };
  return async ({ text, k }: { text: string; k: number }): Promise<RetrievedExchange[]> => {
    const q = features(text);
    return getExchanges()
      .map((x) => ({ ...x, similarity: cos(q, features(x.text)) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, k);
  };
}

interface StrategyResult {
  config: StrategyConfig;
  label: string;
  promptTokens: Record<number, number>;
  /** Breakdown of the turn-200 prompt (tokens of each part's text; `template` = the rest). */
  turn200: Record<string, number>;
  backgroundCalls: number;
  meanBackgroundPromptTokens: number | null;
  seconds: number;
}

async function runStrategy(config: StrategyConfig, conversation: GeneratedExchange[]): Promise<StrategyResult> {
  const started = performance.now();
  const qwen = qwenCounter();
  const engine = scriptedModel(conversation);
  const stored: { text: string; conversationId: string; messageIds: string[] }[] = [];
  const h = createHarness({ counter: qwen, engine, searchExchanges: lexicalSearch(() => stored) });
  registerShortTermJobs(h.jobs, h.deps);
  await h.addConversation('bench', config);
  await h.jobs.start();
  const strategy = createStrategy(config, h.deps);
  const promptTokens: Record<number, number> = {};
  let turn200: Record<string, number> = {};
  for (let t = 1; t <= conversation.length; t++) {
    const x = conversation[t - 1]!;
    const ctx = await strategy.load('bench', { userText: x.user, budgetTokens: 1_000_000 });
    const { messages, parts } = render(ctx, x.user);
    const total = countPromptTokens(qwen, messages);
    if (TURNS_REPORTED.includes(t)) promptTokens[t] = total;
    if (t === conversation.length) {
      const recent = ctx.recent.reduce((a, m) => a + qwen.count(m.content), 0);
      const sections = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, qwen.count(v)]));
      const named = qwen.count(SYSTEM) + Object.values(sections).reduce((a, b) => a + b, 0) + recent + qwen.count(x.user);
      turn200 = { system: qwen.count(SYSTEM), ...sections, recent, recentMessages: ctx.recent.length, user: qwen.count(x.user), template: total - named };
    }
    const ids = await h.addExchange('bench', x.user, x.assistant);
    stored.push({ text: `User: ${x.user}\nAssistant: ${x.assistant}`, conversationId: 'bench', messageIds: [ids.userMessageId, ids.assistantMessageId] });
    await strategy.onExchange('bench', ids);
    await h.jobs.drain();
  }
  const failed = await h.db.jobs.where('status').equals('failed').count();
  if (failed > 0) throw new Error(`${config.kind}: ${failed} background jobs failed`);
  await h.close();
  const calls = engine.calls;
  return {
    config,
    label: en.strategies[config.kind].label,
    promptTokens,
    turn200,
    backgroundCalls: calls.length,
    meanBackgroundPromptTokens: calls.length ? Math.round(calls.reduce((a, c) => a + c.promptTokens, 0) / calls.length) : null,
    seconds: (performance.now() - started) / 1000,
  };
}

interface ErrorStats {
  texts: number;
  totalError: number;
  meanAbsError: number;
  maxAbsError: number;
}

function estimatorErrors(texts: string[]): ErrorStats {
  const q = qwenCounter();
  let est = 0,
    real = 0,
    abs = 0,
    max = 0;
  for (const t of texts) {
    const r = q.count(t);
    const e = estimateTokens(t);
    est += e;
    real += r;
    const err = Math.abs(e - r) / r;
    abs += err;
    max = Math.max(max, err);
  }
  return { texts: texts.length, totalError: (est - real) / real, meanAbsError: abs / texts.length, maxAbsError: max };
}

/** Characters per second counting `texts` once each (after a warm-up on the first 20). */
function throughput(count: (t: string) => number, texts: string[]): number {
  for (const t of texts.slice(0, 20)) count(`warm-up ${t}`);
  const started = performance.now();
  let chars = 0;
  for (const t of texts) ((chars += t.length), count(t));
  return chars / ((performance.now() - started) / 1000);
}

async function tokenCounting(conversation: GeneratedExchange[]) {
  const corpus = JSON.parse(readFileSync(new URL('./data/token-corpus.json', import.meta.url), 'utf8'));
  const sets: Record<string, string[]> = {
    'corpus calibration en': corpus.calibration.en,
    'corpus calibration zh': corpus.calibration.zh,
    'corpus held-out en': corpus.heldOut.en,
    'corpus held-out zh': corpus.heldOut.zh,
    'generated conversation en': conversation.filter((x) => x.language === 'en').flatMap((x) => [x.user, x.assistant]),
    'generated conversation zh': conversation.filter((x) => x.language === 'zh').flatMap((x) => [x.user, x.assistant]),
  };
  const exportFile = new URL('../../shared/fixtures/chat-exports/chatgpt/chatgpt-export.json', import.meta.url);
  if (existsSync(exportFile)) {
    const texts: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        if (Array.isArray(o.parts)) for (const p of o.parts) if (typeof p === 'string' && p.trim().length > 40) texts.push(p);
        Object.values(o).forEach(walk);
      }
    };
    walk(JSON.parse(readFileSync(exportFile, 'utf8')));
    sets['ChatGPT export en (real)'] = texts;
  } else console.log('(../shared absent: skipping the ChatGPT-export set)');
  const errors = Object.fromEntries(Object.entries(sets).map(([k, v]) => [k, estimatorErrors(v)]));

  // Throughput on distinct texts (no cache hits): each message with its index appended.
  const distinct = conversation.flatMap((x) => [x.user, x.assistant]).map((t, i) => `${t} ${i}`);
  const { loadQwenTokenizerFiles } = await import('./data/qwen-tokenizer');
  const { createHfTokenCounter } = await import('../src/tokens');
  const files = loadQwenTokenizerFiles();
  const loadStarted = performance.now();
  const fresh = createHfTokenCounter(files.tokenizerJson, files.tokenizerConfig);
  const hfLoadMs = performance.now() - loadStarted;
  const speed: Record<string, number> = {
    'Qwen2.5 (HF tokenizer)': throughput(fresh.count, distinct),
    estimator: throughput(
      createTokenEstimator().count,
      distinct.map((t) => `${t} x`),
    ),
  };
  const stories = new URL('../../shared/fixtures/models/stories260K/stories260K.gguf', import.meta.url);
  if (existsSync(stories)) {
    const spm = await createGgufTokenCounter(new Blob([readFileSync(stories)]));
    if (spm)
      speed['stories260K GGUF (SPM)'] = throughput(
        spm.count,
        distinct.map((t) => `${t} y`),
      );
  }
  return { errors, charsPerSecond: speed, hfLoadMs };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export default defineBench({
  name: 'strategies',
  title: 'Context strategies and token counting',
  method:
    'A deterministic 200-exchange bilingual conversation replayed through the seven real strategies with default parameters (real Dexie on fake-indexeddb, real job queue, scripted summarizer/entity model); whole prompts counted with the Qwen2.5 tokenizer and ChatML template. Token counting: the fallback estimator against the Qwen2.5 tokenizer, and counting throughput (see "Context strategies" and "Token counting" below for the full method and assumptions).',
  quick: {},
  full: {},
  async run() {
    const conversation = generateConversation(200);
    const configs: StrategyConfig[] = STRATEGIES.map((s) => strategyInfo(s.kind).defaults);
    const strategies: StrategyResult[] = [];
    for (const config of configs) strategies.push(await runStrategy(config, conversation));
    const full = strategies.find((r) => r.config.kind === 'full-buffer')!;
    const sb = strategies.find((r) => r.config.kind === 'summary-buffer')!;
    const compression = full.promptTokens[200]! / sb.promptTokens[200]!;
    const tokens = await tokenCounting(conversation);
    const params = (r: StrategyResult) =>
      JSON.stringify(r.config)
        .replace(/"kind":"[^"]+",?/, '')
        .replace(/[{}"]/g, '')
        .replace(/:/g, ' = ');
    return {
      tables: [
        {
          title: `Prompt tokens per turn (whole prompt, Qwen2.5 tokenizer + ChatML). Summary + buffer vs full buffer at turn 200: ${full.promptTokens[200]!.toLocaleString('en')} / ${sb.promptTokens[200]!.toLocaleString('en')} = **${compression.toFixed(1)}× fewer prompt tokens** (target ≥ 5×).`,
          columns: ['strategy (defaults)', ...TURNS_REPORTED.map((t) => `turn ${t}`), 'background LLM calls', 'mean tokens per background call'],
          rows: strategies.map((r) => [
            `${r.label}${params(r) ? `, ${params(r)}` : ''}`,
            ...TURNS_REPORTED.map((t) => r.promptTokens[t]!),
            r.backgroundCalls,
            r.meanBackgroundPromptTokens ?? '–',
          ]),
        },
        {
          title: 'Turn-200 prompt breakdown (tokens of each part\'s text; "template" is the chat template\'s markers):',
          columns: ['strategy', 'system', 'summary / notes / retrieved', 'recent (messages)', 'user', 'template'],
          rows: strategies.map((r) => {
            const b = r.turn200;
            const section = b.summary ?? b.entities ?? b.retrieved;
            return [
              r.config.kind,
              b.system!,
              section === undefined ? '–' : section,
              `${b.recent!.toLocaleString('en')} (${b.recentMessages})`,
              b.user!,
              b.template!,
            ];
          }),
        },
        {
          title: 'Fallback estimator vs the Qwen2.5 tokenizer:',
          columns: ['text set', 'texts', 'total (signed)', 'mean |error| per text', 'max |error|'],
          rows: Object.entries(tokens.errors).map(([k, e]) => [k, e.texts, pct(e.totalError), pct(e.meanAbsError), pct(e.maxAbsError)]),
        },
        {
          title: `Counting throughput (characters per second, distinct texts, uncached; Qwen2.5 \`tokenizer.json\` load ${tokens.hfLoadMs.toFixed(0)} ms):`,
          columns: ['counter', 'characters / s'],
          rows: Object.entries(tokens.charsPerSecond).map(([k, v]) => [k, Math.round(v)]),
        },
      ],
      headline: [
        {
          what: 'prompt tokens at turn 200: full buffer vs summary + buffer (defaults)',
          measured: `${full.promptTokens[200]!.toLocaleString('en')} tokens`,
          reference: `summary + buffer ${sb.promptTokens[200]!.toLocaleString('en')} tokens`,
          ratio: compression,
        },
      ],
      raw: { strategies, compression, tokens },
    };
  },
});
