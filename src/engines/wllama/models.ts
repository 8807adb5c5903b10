/**
 * The CPU engine's model picker: small instruct GGUFs that llama.cpp (wllama) runs on a laptop
 * CPU, each under wllama's 2 GB single-file limit. Files are downloaded once from the Hugging
 * Face hub and kept in wllama's OPFS cache; a local `.gguf` file can be opened instead.
 */
import type { ModelOption } from '../../model/engine';

/** Context window the CPU engine loads models with (tokens; also the default `contextSize`). */
export const DEFAULT_WLLAMA_CONTEXT = 4096;

/**
 * Catalog entries. `sizeBytes` is the file size where a pinned listing states it (Qwen2.5-1.5B:
 * 1,117,320,736; Llama-3.2-1B: 807,694,464), else a rounded approximation. `contextWindow` is
 * the window the engine loads with (`DEFAULT_WLLAMA_CONTEXT`); the models' trained windows are
 * larger (Qwen2.5 32k, Llama 3.2 128k, SmolLM2 8k).
 */
export const WLLAMA_MODELS: (ModelOption & { url: string })[] = [
  {
    id: 'qwen2.5-1.5b-instruct-q4_k_m',
    label: 'Qwen2.5 1.5B Instruct (Q4_K_M)',
    url: 'https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf',
    sizeBytes: 1_117_320_736,
    contextWindow: DEFAULT_WLLAMA_CONTEXT,
    languages: ['zh', 'en'],
    recommended: true,
  },
  {
    id: 'qwen2.5-0.5b-instruct-q4_k_m',
    label: 'Qwen2.5 0.5B Instruct (Q4_K_M)',
    url: 'https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf',
    sizeBytes: 491_000_000,
    contextWindow: DEFAULT_WLLAMA_CONTEXT,
    languages: ['zh', 'en'],
  },
  {
    id: 'llama-3.2-1b-instruct-q4_k_m',
    label: 'Llama 3.2 1B Instruct (Q4_K_M)',
    url: 'https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/Llama-3.2-1B-Instruct-Q4_K_M.gguf',
    sizeBytes: 807_694_464,
    contextWindow: DEFAULT_WLLAMA_CONTEXT,
    languages: ['en'],
  },
  {
    id: 'smollm2-360m-instruct-q8_0',
    label: 'SmolLM2 360M Instruct (Q8_0)',
    url: 'https://huggingface.co/HuggingFaceTB/SmolLM2-360M-Instruct-GGUF/resolve/main/smollm2-360m-instruct-q8_0.gguf',
    sizeBytes: 386_000_000,
    contextWindow: DEFAULT_WLLAMA_CONTEXT,
    languages: ['en'],
  },
];
