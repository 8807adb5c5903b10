/**
 * The WebLLM model picker: a few small prebuilt MLC models (0.5B–3B parameters) from WebLLM
 * 0.2.86's `prebuiltAppConfig`, and the rule that swaps an f16 variant for its f32 twin when the
 * GPU adapter lacks the `shader-f16` feature.
 */
import type { GpuInfo, ModelOption } from '../../model/engine';

/**
 * Approximate download size of an MLC 4-bit model (bytes): parameters × bits per parameter / 8.
 * `q4f16_1` stores 4-bit weights with one f16 scale per group of 32 (4 + 16/32 = 4.5 bits per
 * weight); `q4f32_1` uses an f32 scale (4 + 32/32 = 5 bits). Group size 32 and the scale types
 * are MLC-LLM's quantization schemes (mlc-ai/mlc-llm `python/mlc_llm/quantization/quantization.py`).
 * Parameter counts are from each model card (Qwen2.5 technical report; Meta Llama 3.2 model card).
 */
function mlcQ4SizeBytes(parameters: number, scaleBits: 16 | 32 = 16): number {
  return Math.round((parameters * (4 + scaleBits / 32)) / 8);
}

/**
 * Models offered in the picker, by their `q4f16_1` ("base") WebLLM ids. Context windows are
 * WebLLM's prebuilt `context_window_size` (4,096 tokens for all of these). `languages` lists the
 * languages each model handles well: Qwen2.5 is trained on Chinese and English (and 27 more);
 * Llama 3.2 officially supports 8 languages, not Chinese.
 */
export const WEBLLM_MODELS: ModelOption[] = [
  {
    id: 'Qwen2.5-1.5B-Instruct-q4f16_1-MLC',
    label: 'Qwen2.5 1.5B Instruct',
    sizeBytes: mlcQ4SizeBytes(1.54e9),
    contextWindow: 4096,
    languages: ['zh', 'en'],
    recommended: true,
  },
  {
    id: 'Qwen2.5-0.5B-Instruct-q4f16_1-MLC',
    label: 'Qwen2.5 0.5B Instruct',
    sizeBytes: mlcQ4SizeBytes(0.49e9),
    contextWindow: 4096,
    languages: ['zh', 'en'],
  },
  {
    id: 'Qwen2.5-3B-Instruct-q4f16_1-MLC',
    label: 'Qwen2.5 3B Instruct',
    sizeBytes: mlcQ4SizeBytes(3.09e9),
    contextWindow: 4096,
    languages: ['zh', 'en'],
  },
  {
    id: 'Llama-3.2-1B-Instruct-q4f16_1-MLC',
    label: 'Llama 3.2 1B Instruct',
    sizeBytes: mlcQ4SizeBytes(1.24e9),
    contextWindow: 4096,
    languages: ['en'],
  },
  {
    id: 'Llama-3.2-3B-Instruct-q4f16_1-MLC',
    label: 'Llama 3.2 3B Instruct',
    sizeBytes: mlcQ4SizeBytes(3.21e9),
    contextWindow: 4096,
    languages: ['en'],
  },
];

/** Default WebLLM model (good at Chinese and English): Qwen2.5-1.5B-Instruct, q4f16 id. */
export const DEFAULT_WEBLLM_MODEL = 'Qwen2.5-1.5B-Instruct-q4f16_1-MLC';

/** Matches the quantization part of an MLC model id with f16 activations, e.g. `-q4f16_1-MLC`. */
const F16_VARIANT = /-q(\d)f16(_\d+)?-MLC/;

/**
 * The model id to load on this GPU: an f16 variant (`q4f16_1`, `q0f16`) becomes its f32 twin
 * (`q4f32_1`, `q0f32`) when the adapter lacks `shader-f16`, because WebGPU cannot compile the
 * f16 kernels there (WebLLM throws `ShaderF16SupportError`). Other ids are returned unchanged,
 * so the function is idempotent.
 * @param modelId a WebLLM model id, e.g. `Qwen2.5-1.5B-Instruct-q4f16_1-MLC`.
 * @param gpu the probe result (see `src/platform/gpu.ts`).
 */
export function webllmVariantFor(modelId: string, gpu: GpuInfo): string {
  if (gpu.shaderF16) return modelId;
  return modelId.replace(F16_VARIANT, (_match, bits: string, suffix: string | undefined) => `-q${bits}f32${suffix ?? ''}-MLC`);
}

/**
 * Path, inside the package, of the generated list of WebLLM model libraries the build ships
 * (written by `wxt.config.ts` from `public/runtime/webllm/*.wasm`). Shape: `PackagedWebllmLibs`.
 */
export const PACKAGED_WEBLLM_MANIFEST_PATH = '/runtime/webllm/packaged.json';

/** Contents of the packaged-libraries manifest: the library file names (`*-webgpu.wasm`), sorted. */
export interface PackagedWebllmLibs {
  libraries: string[];
}

/** File name of a model library URL or path: the part after the last `/` (`…/x-webgpu.wasm` → `x-webgpu.wasm`). */
export function webllmLibraryFileName(modelLibUrl: string): string {
  return modelLibUrl.slice(modelLibUrl.lastIndexOf('/') + 1);
}

/**
 * The picker's models that this package can run on this GPU: each model's variant id (see
 * `webllmVariantFor`) whose compiled library ships in the package. An extension may not run
 * WebAssembly fetched at run time, so a model whose library is missing is not offered at all.
 * @param models picker models (base ids), e.g. `WEBLLM_MODELS`.
 * @param gpu the probe result (picks f16 or f32 variants).
 * @param modelList WebLLM's model records (`prebuiltAppConfig.model_list`): id → `model_lib` URL.
 * @param packagedLibs library file names the package ships (`PackagedWebllmLibs.libraries`).
 * @returns the offered models with their variant ids, in picker order; `[]` when none ships.
 */
export function shippedWebllmModels(
  models: readonly ModelOption[],
  gpu: GpuInfo,
  modelList: readonly { model_id: string; model_lib: string }[],
  packagedLibs: readonly string[],
): ModelOption[] {
  const shipped = new Set(packagedLibs);
  return models
    .map((m) => ({ ...m, id: webllmVariantFor(m.id, gpu) }))
    .filter((m) => {
      const record = modelList.find((r) => r.model_id === m.id);
      return record !== undefined && shipped.has(webllmLibraryFileName(record.model_lib));
    });
}
