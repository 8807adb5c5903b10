/**
 * Turns WebLLM's `InitProgressReport`s (`{ progress, timeElapsed, text }`, where `progress`
 * restarts at 0 in each phase) into our `LoadProgress` (a stage, a fraction of the whole load,
 * bytes where the text states them).
 *
 * WebLLM 0.2.86 reports these phases (texts from `@mlc-ai/web-llm` lib/index.js, tvmjs
 * `fetchTensorCacheInternal` and the shader loader):
 * - `Start to fetch params`
 * - `Fetching param cache[i/n]: <MB>MB fetched. <p>% completed, <s> secs elapsed. …` (download)
 * - `Loading model from cache[i/n]: <MB>MB loaded. <p>% completed, <s> secs elapsed.` (cache → GPU)
 * - `Loading GPU shader modules[i/n]: <p>% completed, <s> secs elapsed.` (compile)
 * - `Finish loading on WebGPU - <adapter>` (ready)
 */
import type { LoadProgress, LoadStage } from '../../model/engine';

/** The report WebLLM posts (same shape as `InitProgressReport` in `@mlc-ai/web-llm`). */
export interface WebLLMInitReport {
  progress: number;
  timeElapsed: number;
  text: string;
}

const MB = 1024 * 1024;

/**
 * Share of the whole load given to each phase when the weights must be downloaded first:
 * download 0–85 %, moving weights to the GPU 85–95 %, shader compilation 95–100 %. When the
 * weights are already cached (no download phase), cache 0–80 %, compile 80–100 %. These weights
 * are a UI choice (downloads dominate the first load; compilation is short), not a measurement.
 */
const SPANS_WITH_DOWNLOAD: Record<'download' | 'cache' | 'compile', [number, number]> = {
  download: [0, 0.85],
  cache: [0.85, 0.95],
  compile: [0.95, 1],
};
const SPANS_CACHED: Record<'download' | 'cache' | 'compile', [number, number]> = {
  download: [0, 0.8],
  cache: [0, 0.8],
  compile: [0.8, 1],
};

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

/**
 * Creates a stateful mapper for one load. The returned fraction never decreases within a load.
 * Byte counts come from the "<n>MB" in WebLLM's text (WebLLM rounds them up to whole MiB, so
 * they are accurate to 1 MiB); `totalBytes` is derived as loaded / progress when progress > 0.
 * @returns a function that maps one report (never throws; unknown texts map to stage `init`).
 */
export function createWebLLMProgressMapper(): (report: WebLLMInitReport) => LoadProgress {
  let sawDownload = false;
  let last = 0;
  return (report) => {
    const text = typeof report.text === 'string' ? report.text : '';
    const p = clamp01(report.progress);
    let stage: LoadStage = 'init';
    let loadedBytes: number | undefined;
    let totalBytes: number | undefined;
    const mb = /:\s*(\d+)MB (?:fetched|loaded)/.exec(text);
    if (/^Fetching param cache/.test(text) || /^Start to fetch params/.test(text)) {
      stage = 'download';
      sawDownload = sawDownload || /^Fetching/.test(text);
    } else if (/^Loading model from cache/.test(text)) {
      stage = 'cache';
    } else if (/^Loading GPU shader modules/.test(text)) {
      stage = 'compile';
    } else if (/^Finish loading/.test(text)) {
      stage = 'ready';
    }
    if (mb) {
      loadedBytes = Number(mb[1]) * MB;
      if (p > 0) totalBytes = Math.max(loadedBytes, Math.round(loadedBytes / p));
    }
    let fraction: number | null;
    if (stage === 'ready') fraction = 1;
    else if (stage === 'init') fraction = null;
    else {
      const [from, to] = (sawDownload ? SPANS_WITH_DOWNLOAD : SPANS_CACHED)[stage];
      fraction = Math.max(last, from + (to - from) * p);
    }
    if (fraction !== null) last = fraction;
    const out: LoadProgress = { stage, fraction, text };
    if (loadedBytes !== undefined) out.loadedBytes = loadedBytes;
    if (totalBytes !== undefined) out.totalBytes = totalBytes;
    return out;
  };
}
