/**
 * What the model pickers show: the models this package and GPU can run and the GGUF files the
 * user stored. Leaf module: imports nothing from `src/` but other model files.
 */
import type { ModelOption } from './engine';
import type { LocalModelRecord } from './records';

/** The model pickers' contents. */
export interface ModelCatalog {
  /** WebLLM models whose WebGPU library ships in this package (variant ids for this GPU); `[]` when none ships. */
  webllm: ModelOption[];
  wllama: ModelOption[];
  /** GGUF files the user opened or downloaded before (stored in OPFS). */
  localFiles: LocalModelRecord[];
  /** WebLLM model id to use by default for this GPU (q4f32 when `shader-f16` is missing); `''` when no GPU model ships. */
  defaultWebllmModel: string;
}
