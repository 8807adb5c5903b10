/**
 * The "downloaded models" list of Erase (src/ui/state/downloaded-models.svelte.ts) against a fake
 * messaging api (tests/helpers/fake-api.ts): a model is deleted only once its own question is
 * open, the list is read again afterwards, and a failure becomes a notice.
 */
import { describe, expect, it } from 'vitest';
import type { DownloadedModel } from '../../src/model/engine';
import { createDownloadedModelsStore } from '../../src/ui/state/downloaded-models.svelte';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { createFakeApi } from '../helpers/fake-api';

const QWEN: DownloadedModel = { id: 'webllm:mlc-ai/Qwen', engine: 'webllm', name: 'mlc-ai/Qwen', sizeBytes: 5000, files: 3 };
const GGUF: DownloadedModel = { id: 'local:mine.gguf', engine: 'local', name: 'mine.gguf', sizeBytes: 120, files: 1 };

describe('downloaded models store', () => {
  it('deletes a model only after its own question, then lists again; a failure is a notice', async () => {
    const api = createFakeApi();
    const notices = createNoticesStore();
    let listed = [QWEN, GGUF];
    api.on('models.downloaded', () => listed);
    api.on('models.deleteDownloaded', ({ id }) => {
      listed = listed.filter((m) => m.id !== id);
      return { deleted: 1 };
    });
    const models = createDownloadedModelsStore({ ...api, notices });
    await models.load();
    expect(models.models).toEqual([QWEN, GGUF]);

    // No question open for it: nothing is sent.
    expect(await models.remove(QWEN.id)).toBe(false);
    models.asked = GGUF.id;
    expect(await models.remove(QWEN.id)).toBe(false);
    expect(api.callsOf('models.deleteDownloaded')).toHaveLength(0);

    models.asked = QWEN.id;
    expect(await models.remove(QWEN.id)).toBe(true);
    expect(api.callsOf('models.deleteDownloaded')).toEqual([{ id: QWEN.id }]);
    expect([models.models, models.asked, models.deleting]).toEqual([[GGUF], null, null]);

    api.on('models.deleteDownloaded', () => {
      throw new Error('in use');
    });
    models.asked = GGUF.id;
    expect(await models.remove(GGUF.id)).toBe(false);
    expect(models.asked).toBe(GGUF.id);
    expect(notices.list.map((n) => [n.kind, n.text, n.detail])).toEqual([['error', 'Could not delete the model:', 'in use']]);
  });
});
