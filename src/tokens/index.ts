/**
 * Token counting: the active model's own tokenizer when one is available (Hugging Face
 * `tokenizer.json` for WebLLM/transformers.js models, the GGUF header for wllama models), else a
 * measured estimator. All counts are tokens.
 */
export { createTokenEstimator, estimateTokens } from './estimator';
export { createHfTokenCounter, TokenizerLoadError } from './hf';
export { createGgufTokenCounter, readGgufMetadata } from './gguf';
export { GgufReadError } from '../gguf/header';
export { countPromptTokens } from './prompt';
export { isChatTokenCounter, type ChatTokenCounter } from './counter';
export { detectChatTemplate, renderChat, type ChatTemplateFamily, type ChatTemplateInfo, type RenderedChat } from './chat-template';
