import { defineBackground } from 'wxt/utils/define-background';
import browser from 'webextension-polyfill';

export default defineBackground(() => {
  chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(console.error);
  browser.runtime.onMessage.addListener((msg: any) => {
    if (msg?.type === 'ensure') return (async () => {
      const has = await chrome.offscreen.hasDocument();
      if (!has) await chrome.offscreen.createDocument({ url: 'offscreen.html', reasons: [chrome.offscreen.Reason.WORKERS], justification: 'engines' });
      return 'ok';
    })();
    return undefined;
  });
});
