/**
 * A fake of the one WebLLM boundary that cannot run in Node: the `MLCEngine` inside the service
 * worker (it needs WebGPU and downloads weights from model hubs). Everything around it is real:
 * the test wires our proxy engine (`createWebLLMEngine`) through a pair of in-memory ports to
 * WebLLM's real `ExtensionServiceWorkerMLCEngineHandler` (registered by our
 * `registerWebLLMServiceWorker`), and only the handler's `engine` is this fake. Messages cross
 * the fake port as JSON, like `chrome.runtime` ports.
 *
 * The fake reproduces WebLLM 0.2.86's observable behaviour: progress report texts, stream chunks
 * (`chat.completion.chunk` with `delta.content`, a final chunk with `finish_reason`, then a
 * usage-only chunk when `stream_options.include_usage`), `finish_reason: "abort"` after
 * `interruptGenerate()`.
 */
import { registerWebLLMServiceWorker, type IncomingWebLLMPort, type MLCEngineLike, type WebLLMPort } from '../../src/engines/webllm';

type Listener<T extends unknown[]> = (...args: T) => void;

function event<T extends unknown[]>() {
  const listeners: Listener<T>[] = [];
  return {
    listeners,
    addListener: (l: Listener<T>) => void listeners.push(l),
    fire: (...args: T) => listeners.slice().forEach((l) => l(...args)),
  };
}

/** Two connected port ends with Chrome's semantics (JSON messages, async delivery, one-sided onDisconnect). */
export interface PortPair {
  client: WebLLMPort;
  server: IncomingWebLLMPort;
  /** Messages the server end received, in order. */
  received: unknown[];
  /** Simulates the service worker stopping: the client's `onDisconnect` fires. */
  kill(): void;
  readonly closed: boolean;
}

/** Creates a connected pair of fake `chrome.runtime` ports. */
export function createPortPair(name: string, sender: IncomingWebLLMPort['sender']): PortPair {
  let closed = false;
  const received: unknown[] = [];
  const clientMessage = event<[unknown]>();
  const clientDisconnect = event<[]>();
  const serverMessage = event<[unknown]>();
  const serverDisconnect = event<[]>();
  const send = (target: ReturnType<typeof event<[unknown]>>, message: unknown, record: boolean) => {
    if (closed) throw new Error('Attempting to use a disconnected port object');
    const copy = JSON.parse(JSON.stringify(message ?? null)) as unknown;
    queueMicrotask(() => {
      if (closed) return;
      if (record) received.push(copy);
      target.fire(copy);
    });
  };
  const pair: PortPair = {
    client: {
      name,
      postMessage: (m) => send(serverMessage, m, true),
      disconnect: () => {
        if (closed) return;
        closed = true;
        serverDisconnect.fire();
      },
      onMessage: clientMessage,
      onDisconnect: clientDisconnect,
    },
    server: {
      name,
      sender,
      postMessage: (m) => send(clientMessage, m, false),
      disconnect: () => {
        if (closed) return;
        closed = true;
        clientDisconnect.fire();
      },
      onMessage: serverMessage,
      onDisconnect: serverDisconnect,
    },
    received,
    kill: () => {
      if (closed) return;
      closed = true;
      clientDisconnect.fire();
      serverDisconnect.fire();
    },
    get closed() {
      return closed;
    },
  };
  return pair;
}

/** A WebLLM stream chunk (`ChatCompletionChunk`). */
export function chunk(content: string | null, finishReason: string | null = null, usage?: { prompt_tokens: number; completion_tokens: number }) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'fake',
    choices:
      content === null && finishReason === null
        ? []
        : [{ index: 0, delta: content === null ? {} : { role: 'assistant', content }, finish_reason: finishReason, logprobs: null }],
    ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
  };
}

/** The progress texts WebLLM 0.2.86 reports for a first (downloading) load, as `[progress, text]`. */
export const WEBLLM_PROGRESS_SCRIPT: [number, string][] = [
  [0, 'Start to fetch params'],
  [
    0.25,
    'Fetching param cache[1/4]: 100MB fetched. 25% completed, 1 secs elapsed. It can take a while when we first visit this page to populate the cache. Later refreshes will become faster.',
  ],
  [
    1,
    'Fetching param cache[4/4]: 400MB fetched. 100% completed, 4 secs elapsed. It can take a while when we first visit this page to populate the cache. Later refreshes will become faster.',
  ],
  [0.5, 'Loading model from cache[2/4]: 200MB loaded. 50% completed, 5 secs elapsed.'],
  [0.5, 'Loading GPU shader modules[20/40]: 50% completed, 6 secs elapsed.'],
  [1, 'Finish loading on WebGPU - fake adapter'],
];

/** Fake `MLCEngine` (see module doc). Tests script replies and failures through its fields. */
export class FakeMLCEngine {
  reloads: { modelId: string[]; chatOpts: unknown }[] = [];
  requests: Record<string, unknown>[] = [];
  appConfigs: { model_list: { model_id: string; model_lib: string }[] }[] = [];
  interrupts = 0;
  unloads = 0;
  /** Reply streamed by the next `chatCompletion` (split into pieces). */
  reply: string[] = ['Hello', ', ', 'world', '.'];
  usage = { prompt_tokens: 12, completion_tokens: 4 };
  /** When set, `reload` throws it. */
  reloadError: Error | null = null;
  /** When set, `chatCompletion` throws it. */
  completionError: Error | null = null;
  /** When `true`, the stream waits forever after the first piece (until interrupted). */
  hangAfterFirst = false;
  /** When `true`, `reload` never finishes. */
  hangReload = false;
  private progress: ((report: { progress: number; timeElapsed: number; text: string }) => void) | undefined;
  private interrupted = false;

  setInitProgressCallback(cb: typeof this.progress) {
    this.progress = cb;
  }
  getInitProgressCallback() {
    return this.progress;
  }
  setAppConfig(config: FakeMLCEngine['appConfigs'][number]) {
    this.appConfigs.push(config);
  }
  setLogLevel() {}
  async reload(modelId: string[], chatOpts?: unknown) {
    this.reloads.push({ modelId, chatOpts });
    if (this.reloadError) throw this.reloadError;
    if (this.hangReload) await new Promise(() => undefined);
    for (const [progress, text] of WEBLLM_PROGRESS_SCRIPT) this.progress?.({ progress, timeElapsed: 1, text });
  }
  async chatCompletion(request: Record<string, unknown>) {
    this.requests.push(request);
    if (this.completionError) throw this.completionError;
    this.interrupted = false;
    const pieces = [...this.reply];
    const usage = this.usage;
    const self = this;
    return (async function* () {
      let sent = 0;
      for (const piece of pieces) {
        if (self.interrupted) break;
        yield chunk(piece);
        sent += 1;
        if (self.hangAfterFirst) {
          while (!self.interrupted) await new Promise((r) => setTimeout(r, 5));
        }
      }
      const finish = self.interrupted ? 'abort' : 'stop';
      yield chunk('', finish);
      if ((request.stream_options as { include_usage?: boolean } | undefined)?.include_usage) {
        yield chunk(null, null, { prompt_tokens: usage.prompt_tokens, completion_tokens: sent });
      }
    })();
  }
  interruptGenerate() {
    this.interrupts += 1;
    this.interrupted = true;
  }
  async unload() {
    this.unloads += 1;
  }
}

/** Extension id used by the fake world. */
export const FAKE_EXTENSION_ID = 'abcdefghijklmnopabcdefghijklmnop';

/**
 * A fake "browser": a service worker running our real registration (with WebLLM's real handler
 * around a `FakeMLCEngine`), and a `connect()` for the proxy. Connecting to a stopped worker
 * starts it again, like Chrome does.
 */
export function createWebLLMWorld(
  sender: IncomingWebLLMPort['sender'] = { id: FAKE_EXTENSION_ID, url: `chrome-extension://${FAKE_EXTENSION_ID}/offscreen.html` },
) {
  let onConnect = event<[IncomingWebLLMPort]>();
  let running = false;
  const engines: FakeMLCEngine[] = [];
  const pairs: PortPair[] = [];
  const startServiceWorker = () => {
    onConnect = event<[IncomingWebLLMPort]>();
    registerWebLLMServiceWorker({
      onConnect,
      extensionId: FAKE_EXTENSION_ID,
      createEngine: () => {
        const engine = new FakeMLCEngine();
        engines.push(engine);
        return engine as unknown as MLCEngineLike;
      },
    });
    running = true;
  };
  startServiceWorker();
  return {
    engines,
    pairs,
    /** The current service worker's engine (created on its first connection). */
    get engine(): FakeMLCEngine {
      const e = engines.at(-1);
      if (!e) throw new Error('no engine yet');
      return e;
    },
    connect: (): WebLLMPort => {
      if (!running) startServiceWorker();
      const pair = createPortPair('web_llm_service_worker', sender);
      pairs.push(pair);
      onConnect.fire(pair.server);
      return pair.client;
    },
    /** Stops the service worker: every port disconnects and the engine (and model) are gone. */
    stopServiceWorker: () => {
      pairs.forEach((p) => p.kill());
      running = false;
    },
    /** Lets queued port messages and stream steps run. */
    settle: async (ms = 20) => new Promise((r) => setTimeout(r, ms)),
  };
}
